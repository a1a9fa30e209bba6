"""django-pgmq: durable message queues in the project's own PostgreSQL, pgmq-compatible.

Module-level functions act on the database alias in ``PGMQ["DATABASE"]``
(default ``"default"``); use ``QueueManager(using=alias)`` for another one.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .errors import (
    FeatureNotAvailable,
    InvalidArgument,
    InvalidPayload,
    InvalidQueueName,
    PgmqError,
    QueueNameConflict,
    QueueNotFound,
)
from .manager import QueueManager
from .messages import Message, QueueInfo, QueueMetrics
from .worker import consumer

__version__ = "0.1.0"


def _on_default_database(name: str) -> Callable[..., Any]:
    """A module-level twin of ``QueueManager.<name>`` that uses the default alias."""
    method = getattr(QueueManager, name)

    @functools.wraps(method)
    def call(*args: Any, **kwargs: Any) -> Any:
        return method(QueueManager(), *args, **kwargs)

    return call


create_queue = _on_default_database("create_queue")
drop_queue = _on_default_database("drop_queue")
purge_queue = _on_default_database("purge_queue")
list_queues = _on_default_database("list_queues")
send = _on_default_database("send")
send_batch = _on_default_database("send_batch")
read = _on_default_database("read")
read_with_poll = _on_default_database("read_with_poll")
pop = _on_default_database("pop")
archive = _on_default_database("archive")
delete = _on_default_database("delete")
set_vt = _on_default_database("set_vt")
metrics = _on_default_database("metrics")
metrics_all = _on_default_database("metrics_all")

__all__ = [
    "FeatureNotAvailable",
    "InvalidArgument",
    "InvalidPayload",
    "InvalidQueueName",
    "Message",
    "PgmqError",
    "QueueInfo",
    "QueueManager",
    "QueueMetrics",
    "QueueNameConflict",
    "QueueNotFound",
    "archive",
    "consumer",
    "create_queue",
    "delete",
    "drop_queue",
    "list_queues",
    "metrics",
    "metrics_all",
    "pop",
    "purge_queue",
    "read",
    "read_with_poll",
    "send",
    "send_batch",
    "set_vt",
]
