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

from . import api
from . import records as _records

# "X as X" marks an explicit re-export for type checkers (isort would split the blocks).
# isort: off
from .errors import (
    CrossDatabaseTransaction as CrossDatabaseTransaction,
    FeatureNotAvailable as FeatureNotAvailable,
    InsufficientPrivilege as InsufficientPrivilege,
    InvalidArgument as InvalidArgument,
    InvalidPayload as InvalidPayload,
    InvalidQueueName as InvalidQueueName,
    PgmqError as PgmqError,
    QueueNameConflict as QueueNameConflict,
    QueueNotFound as QueueNotFound,
    ScheduleNotFound as ScheduleNotFound,
    WorkflowNotFound as WorkflowNotFound,
)
from .records import (  # the public records (records.__all__)
    Message as Message,
    NotifyThrottle as NotifyThrottle,
    Partition as Partition,
    PartitionChange as PartitionChange,
    QueueInfo as QueueInfo,
    QueueLimits as QueueLimits,
    QueueMetrics as QueueMetrics,
    RetentionResult as RetentionResult,
    Schedule as Schedule,
    ScheduledSend as ScheduledSend,
    ScheduleTick as ScheduleTick,
    TopicBinding as TopicBinding,
    TopicDelivery as TopicDelivery,
    TopicRoute as TopicRoute,
    WorkflowInfo as WorkflowInfo,
    WorkflowStep as WorkflowStep,
)
# isort: on

if TYPE_CHECKING:
    from .manager import QueueManager as QueueManager
    from .worker import consumer as consumer

try:  # one version source: the installed package's metadata (pyproject.toml)
    __version__ = _metadata.version("django-pgmq")
except _metadata.PackageNotFoundError:  # a checkout used without installing it
    __version__ = "0+unknown"


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
    if name in api.LAZY:
        value = getattr(importlib.import_module(api.LAZY[name], __name__), name)
    elif name in api.MODULE_FUNCTIONS:
        value = _on_default_database(name)
    elif name.startswith("a") and name[1:] in api.MODULE_FUNCTIONS:  # asend, aread, ...
        from .manager.async_ops import module_twin

        value = module_twin(__getattr__(name[1:]))
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


__all__ = api.package_all(_records.__all__)  # one declaration: api.py
