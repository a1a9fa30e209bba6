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

from ..api import PUBLIC_METHODS, twin

# Every public method gets an ``a``-prefixed twin (declared once in django_pgmq.api).
TWINNED = PUBLIC_METHODS


def _twin(name: str) -> Callable[..., Coroutine[Any, Any, Any]]:
    """An async method that runs the sync method ``name`` on Django's sync thread."""

    async def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        return await sync_to_async(getattr(self, name), thread_sensitive=True)(*args, **kwargs)

    method.__name__ = method.__qualname__ = twin(name)
    method.__doc__ = f"Async twin of `{name}` (run with sync_to_async, thread-sensitive)."
    return method


class AsyncOps:
    """``a<name>`` coroutines for the public methods in `TWINNED`."""


for _name in TWINNED:
    setattr(AsyncOps, twin(_name), _twin(_name))


def module_twin(sync_call: Callable[..., Any]) -> Callable[..., Coroutine[Any, Any, Any]]:
    """An async twin of a module-level function (``django_pgmq.asend`` of ``send``)."""

    @functools.wraps(sync_call)
    async def call(*args: Any, **kwargs: Any) -> Any:
        return await sync_to_async(sync_call, thread_sensitive=True)(*args, **kwargs)

    call.__name__ = call.__qualname__ = twin(sync_call.__name__)
    return call
