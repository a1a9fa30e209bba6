"""``pgmq_consume --tasks``: the queue settings that make the worker run a backend's tasks."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from django.core.exceptions import ImproperlyConfigured

from ..internal import InternalManager
from ..worker.config import QueueSettings, resolve
from ..worker.registry import Consumer
from .backend import PgmqBackend
from .compat import task_backends
from .runner import TaskRunner

# Task queues notify on every commit that sends to them (PostgreSQL folds a
# transaction's notifications into one), so an idle worker starts a task at once.
NOTIFY_THROTTLE_MS = 0


def backend_named(alias: str) -> PgmqBackend:
    """The ``TASKS`` backend ``alias``, which must be a `PgmqBackend`."""
    known = list(task_backends.settings)
    if alias not in known:
        raise ImproperlyConfigured(
            f"task backend {alias!r} is not an alias of the TASKS setting "
            f"(known: {', '.join(map(repr, known)) or 'none'})"
        )
    try:
        backend = task_backends[alias]
    except Exception as exc:  # InvalidTaskBackend(Error): unknown alias, unimportable class
        raise ImproperlyConfigured(f"task backend {alias!r}: {exc}") from exc
    if not isinstance(backend, PgmqBackend):
        raise ImproperlyConfigured(
            f"task backend {alias!r} is {type(backend).__module__}.{type(backend).__name__}, "
            "not django_pgmq.tasks.PgmqBackend"
        )
    return backend


def plan(
    backend: PgmqBackend, queues: Sequence[str], overrides: Mapping[str, Any] | None = None
) -> list[QueueSettings]:
    """Settings for each task queue to run (all the backend's QUEUES when none is named).

    Each queue is made a task queue first (created if missing, priority index,
    notifications without throttle unless they are on already). Tasks are not
    atomic (their result says RUNNING while they run), never dead-lettered (the
    runner decides when a failure is final: the result is FAILED), deleted by the
    runner with their verdict (the result row is their record), read by priority.
    """
    names = list(dict.fromkeys(queues)) or sorted(backend.queues)
    if not names:
        raise ImproperlyConfigured(
            f"task backend {backend.alias!r} has no QUEUES: name the queues to run"
        )
    unknown = [q for q in names if backend.queues and q not in backend.queues]
    if unknown:
        raise ImproperlyConfigured(
            f"queue(s) {', '.join(map(repr, unknown))} not in task backend {backend.alias!r}'s "
            f"QUEUES ({', '.join(sorted(backend.queues))})"
        )
    notifying: dict[str, set[str]] = {}
    result = []
    for queue in names:
        manager = InternalManager(backend.database_for(queue))
        if manager.using not in notifying:
            notifying[manager.using] = set(manager.notify_throttles())
        manager.enable_task_queue(queue)
        if (
            queue not in notifying[manager.using]
        ):  # every commit wakes the worker (one NOTIFY per transaction)
            manager.enable_notify(queue, NOTIFY_THROTTLE_MS)
        runner = TaskRunner(backend, queue)
        consumer = Consumer(
            runner.run,
            queue=queue,
            max_receive_count=0,
            on_success="delete",
            retry_delay=float(backend.retry_delay),
            atomic=False,
            acknowledges=True,
            batch_scope=runner.batch,
        )
        settings = resolve(queue, consumer, overrides or {}, None)
        result.append(
            dataclasses.replace(
                settings, priority=True, synchronous_commit=backend.synchronous_commit
            )
        )
    return result
