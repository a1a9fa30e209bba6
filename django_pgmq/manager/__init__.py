"""QueueManager: the user API, every queue operation on a Django database connection.

This package is the only code that sends SQL for queue operations (``plumbing.py``;
the statements live in ``sql/queries.sql``). Because it uses Django's connection, a
call made inside ``transaction.atomic()`` commits or rolls back with the caller's
data. Each ``*_ops`` module holds the methods of one concern; `QueueManager`
combines them. What only the worker, the admin and the Tasks backend call is the
internal layer, `django_pgmq.internal.InternalManager`, which builds on this one.
"""

from __future__ import annotations

from .async_ops import AsyncOps
from .attribute_ops import AttributeOps
from .message_ops import MessageOps
from .notify_ops import NotifyOps
from .partition_ops import PartitionOps
from .queue_ops import QueueOps
from .routing_ops import RoutingOps
from .schedule_ops import ScheduleOps


class QueueManager(
    QueueOps,
    AttributeOps,
    MessageOps,
    NotifyOps,
    RoutingOps,
    PartitionOps,
    ScheduleOps,
    AsyncOps,
):
    """Queue operations on one database alias (default: ``PGMQ["DATABASE"]``).

    The everyday operations (``async_ops.TWINNED``: send, read, archive, ...) have an
    async twin named with an ``a`` in front (``asend``, ``aread``, ...).
    """


__all__ = ["QueueManager"]
