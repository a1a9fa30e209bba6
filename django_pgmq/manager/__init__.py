"""QueueManager: the user API, every queue operation on a Django database connection.

This package is the only code that sends SQL for queue operations (``plumbing.py``;
the statements live in ``sql/queries.sql``). Because it uses Django's connection, a
call made inside ``transaction.atomic()`` commits or rolls back with the caller's
data. Each ``*_ops`` module holds the methods of one concern; `QueueManager`
combines them. What only the worker, the admin and the Tasks backend call is the
internal layer, `django_pgmq.internal.InternalManager`, which builds on this one.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from .async_ops import AsyncOps
from .attribute_ops import AttributeOps
from .index_ops import IndexOps
from .message_ops import MessageOps
from .notify_ops import NotifyOps
from .partition_ops import PartitionOps
from .plumbing import refuse_unfit_arguments
from .queue_ops import QueueOps
from .role_ops import RoleOps
from .routing_ops import RoutingOps
from .schedule_ops import ScheduleOps
from .workflow_ops import WorkflowOps


class QueueManager(
    QueueOps,
    AttributeOps,
    MessageOps,
    NotifyOps,
    RoutingOps,
    PartitionOps,
    RoleOps,
    IndexOps,
    ScheduleOps,
    WorkflowOps,
    AsyncOps,
):
    """Queue operations on one database alias (default: ``PGMQ["DATABASE"]``).

    Every public method (``django_pgmq.api.PUBLIC_METHODS``) has an async twin named
    with an ``a`` in front (``asend``, ``aread``, ...).
    """


def _checked(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
    """``method`` whose unfit arguments raise InvalidArgument naming ``QueueManager.<name>``."""

    @functools.wraps(method)
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except TypeError as exc:
            refuse_unfit_arguments(f"QueueManager.{name}", method, (self, *args), kwargs, exc)
            raise

    call.unchecked = method  # type: ignore[attr-defined]  # the module-level twins' own names
    return call


# Every public method of the user API: wrong arguments are an InvalidArgument naming it,
# like a wrong value (an async twin raises it from the sync method it runs).
for _name in [n for n in dir(QueueManager) if not n.startswith("_")]:
    _method = inspect.getattr_static(QueueManager, _name)  # a staticmethod stays as it is
    if inspect.isfunction(_method) and not inspect.iscoroutinefunction(_method):
        setattr(QueueManager, _name, _checked(_name, _method))

__all__ = ["QueueManager"]
