"""Django tasks the tests enqueue (module-level, so a worker process can import them).

Runs are recorded in the demo's HandlerRun table (queue = the task's name), so a
test can see what ran, in which order, how often.
"""

from __future__ import annotations

import asyncio
import os
import threading

from django.utils import timezone

from django_pgmq.tasks.compat import TaskContext, task
from example_project.demo.models import HandlerRun


def _record(name: str, n: int = 0) -> None:
    HandlerRun.objects.create(
        msg_id=n,
        read_ct=0,
        payload={"task": name},
        pid=os.getpid(),
        thread=threading.current_thread().name,
        started_at=timezone.now(),
    )


def runs(name: str) -> list[int]:
    """The ``n`` of each recorded run of task ``name``, in the order they started."""
    return list(
        HandlerRun.objects.filter(payload__task=name)
        .order_by("id")
        .values_list("msg_id", flat=True)
    )


@task()
def echo(value):
    """Return the argument (the benchmark's task, too)."""
    return value


@task(queue_name="emails")
def add(x: int, y: int) -> int:
    return x + y


@task()
def mark(n: int) -> int:
    """Record that it ran, with ``n``: the order tests read these back."""
    _record("mark", n)
    return n


@task()
def boom(text: str = "boom") -> None:
    raise ValueError(text)


@task()
async def async_add(x: int, y: int) -> int:
    await asyncio.sleep(0.01)
    return x + y


@task(takes_context=True)
def with_context(context: TaskContext, value: int) -> dict:
    return {"attempt": context.attempt, "id": context.task_result.id, "value": value}


@task()
def non_json() -> object:
    return object()


@task()
def sleepy(seconds: float) -> float:
    """Record a start, sleep, return: for RUNNING and SIGTERM tests."""
    _record("sleepy", 0)
    import time

    time.sleep(seconds)
    return seconds


@task(backend="retrying", queue_name="retrying", takes_context=True)
def flaky(context: TaskContext, failures: int) -> int:
    """Fail on the first ``failures`` attempts, then return the attempt."""
    if context.attempt <= failures:
        raise RuntimeError(f"attempt {context.attempt} fails")
    return context.attempt


@task()
def double(x: int) -> int:
    """A workflow step: twice its parent's value."""
    return 2 * x


@task()
def collect(values: list, *rest: object) -> list:
    """A chord's callback: its parents' return values (in order), then its own arguments."""
    return [values, *rest]


@task()
def tally(values: list) -> int:
    """A chord's callback that records each run (a test counts them): how many values."""
    _record("tally", len(values))
    return len(values)
