"""Async twins of the public QueueManager methods (``asend``, ``aread``, ...), for ASGI code.

Each runs its sync twin with ``sync_to_async(thread_sensitive=True)``: on the
thread that holds Django's connections for async code, so it never raises
SynchronousOnlyOperation, and a twin called inside ``sync_to_async``-wrapped
``transaction.atomic()`` work shares that transaction, like the ORM's own
async methods.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine
from typing import Any

from asgiref.sync import sync_to_async

# The public methods that get an ``a``-prefixed twin.
TWINNED = (
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
    "send_topic",
    "send_batch_topic",
    "read_grouped",
    "read_grouped_with_poll",
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


def _twin(name: str) -> Callable[..., Coroutine[Any, Any, Any]]:
    """An async method that runs the sync method ``name`` on Django's sync thread."""

    async def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        return await sync_to_async(getattr(self, name), thread_sensitive=True)(*args, **kwargs)

    method.__name__ = method.__qualname__ = f"a{name}"
    method.__doc__ = f"Async twin of `{name}` (run with sync_to_async, thread-sensitive)."
    return method


class AsyncOps:
    """``a<name>`` coroutines for the public methods in `TWINNED`."""


for _name in TWINNED:
    setattr(AsyncOps, f"a{_name}", _twin(_name))


def module_twin(sync_call: Callable[..., Any]) -> Callable[..., Coroutine[Any, Any, Any]]:
    """An async twin of a module-level function (``django_pgmq.asend`` of ``send``)."""

    @functools.wraps(sync_call)
    async def call(*args: Any, **kwargs: Any) -> Any:
        return await sync_to_async(sync_call, thread_sensitive=True)(*args, **kwargs)

    call.__name__ = call.__qualname__ = f"a{sync_call.__name__}"
    return call
