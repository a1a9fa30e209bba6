"""django-pgmq: durable message queues in the project's own PostgreSQL, pgmq-compatible.

Module-level functions act on the database ``PGMQ["QUEUE_DATABASES"]`` routes each
queue to (else ``PGMQ["DATABASE"]``, default ``"default"``); use
``QueueManager(using=alias)`` to name the alias yourself.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from importlib import metadata as _metadata
from typing import TYPE_CHECKING, Any

from .errors import (
    CrossDatabaseTransaction,
    FeatureNotAvailable,
    InsufficientPrivilege,
    InvalidArgument,
    InvalidPayload,
    InvalidQueueName,
    PgmqError,
    QueueNameConflict,
    QueueNotFound,
    ScheduleNotFound,
    WorkflowNotFound,
)
from .records import (  # the public records (records.__all__)
    Message,
    NotifyThrottle,
    Partition,
    PartitionChange,
    QueueInfo,
    QueueLimits,
    QueueMetrics,
    RetentionResult,
    Schedule,
    ScheduledSend,
    ScheduleTick,
    TopicBinding,
    TopicDelivery,
    TopicRoute,
    WorkflowInfo,
    WorkflowStep,
)

if TYPE_CHECKING:
    from .manager import QueueManager
    from .worker import consumer

try:  # one version source: the installed package's metadata (pyproject.toml)
    __version__ = _metadata.version("django-pgmq")
except _metadata.PackageNotFoundError:  # a checkout used without installing it
    __version__ = "0+unknown"

# Imported on first use: Spark executors and plain Celery apps import this package
# without Django settings, and should not pay for loading Django's ORM.
_LAZY = {"QueueManager": ".manager", "consumer": ".worker"}
_ON_DEFAULT_DATABASE = (
    "create_queue",
    "drop_queue",
    "purge_queue",
    "list_queues",
    "send",
    "send_batch",
    "read",
    "read_with_poll",
    "pop",
    "archive",
    "delete",
    "set_vt",
    "metrics",
    "metrics_all",
    "get_queue_attributes",
    "set_queue_attributes",
    "create_schedule",
    "drop_schedule",
    "enable_schedule",
    "run_schedule_now",
    "list_schedules",
    "next_ticks",
    "enqueue_due_schedules",
    "create_workflow",
    "complete",
    "fail",
    "workflow_status",
    "cancel_workflow",
    "list_workflows",
)


def _on_default_database(name: str) -> Callable[..., Any]:
    """A module-level twin of ``QueueManager.<name>`` that uses the default alias."""
    from .manager.plumbing import refuse_unfit_arguments

    manager_class = __getattr__("QueueManager")
    checked = getattr(manager_class, name)
    method = getattr(checked, "unchecked", checked)  # its errors name django_pgmq.<name>

    @functools.wraps(method)
    def call(*args: Any, **kwargs: Any) -> Any:
        manager = manager_class()
        try:
            return method(manager, *args, **kwargs)
        except TypeError as exc:
            refuse_unfit_arguments(f"django_pgmq.{name}", method, (manager, *args), kwargs, exc)
            raise

    return call


def __getattr__(name: str) -> Any:
    """Resolve the lazily imported names (PEP 562), once."""
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
    elif name in _ON_DEFAULT_DATABASE:
        value = _on_default_database(name)
    elif name.startswith("a") and name[1:] in _ON_DEFAULT_DATABASE:  # asend, aread, ...
        from .manager.async_ops import module_twin

        value = module_twin(__getattr__(name[1:]))
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


__all__ = [
    "CrossDatabaseTransaction",
    "FeatureNotAvailable",
    "InsufficientPrivilege",
    "InvalidArgument",
    "InvalidPayload",
    "InvalidQueueName",
    "Message",
    "NotifyThrottle",
    "Partition",
    "PartitionChange",
    "PgmqError",
    "QueueInfo",
    "QueueLimits",
    "QueueManager",
    "QueueMetrics",
    "QueueNameConflict",
    "QueueNotFound",
    "RetentionResult",
    "Schedule",
    "ScheduleNotFound",
    "ScheduleTick",
    "ScheduledSend",
    "TopicBinding",
    "TopicDelivery",
    "TopicRoute",
    "WorkflowInfo",
    "WorkflowNotFound",
    "WorkflowStep",
    "aarchive",
    "acancel_workflow",
    "acomplete",
    "acreate_queue",
    "acreate_workflow",
    "adelete",
    "adrop_queue",
    "afail",
    "aget_queue_attributes",
    "alist_queues",
    "alist_workflows",
    "ametrics",
    "ametrics_all",
    "apop",
    "apurge_queue",
    "archive",
    "aread",
    "aread_with_poll",
    "asend",
    "asend_batch",
    "aset_queue_attributes",
    "aset_vt",
    "aworkflow_status",
    "cancel_workflow",
    "complete",
    "consumer",
    "create_queue",
    "create_schedule",
    "create_workflow",
    "delete",
    "drop_queue",
    "drop_schedule",
    "enable_schedule",
    "enqueue_due_schedules",
    "fail",
    "get_queue_attributes",
    "list_queues",
    "list_schedules",
    "list_workflows",
    "metrics",
    "metrics_all",
    "next_ticks",
    "pop",
    "purge_queue",
    "read",
    "read_with_poll",
    "run_schedule_now",
    "send",
    "send_batch",
    "set_queue_attributes",
    "set_vt",
    "workflow_status",
]
