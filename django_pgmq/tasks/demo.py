"""The Django tasks of ``manage.py pgmq_demo``: enqueued in one transaction, run by a worker.

Shown when ``TASKS["default"]`` is a `PgmqBackend` whose QUEUES include
``demo_tasks`` (the example project's does).
"""

from __future__ import annotations

import asyncio

from django.core.management import call_command
from django.core.management.base import OutputWrapper
from django.db import transaction

from .compat import TaskResult, task

QUEUE = "demo_tasks"


@task(queue_name=QUEUE)
def add(x: int, y: int) -> int:
    """A plain task."""
    return x + y


@task(queue_name=QUEUE)
async def greet(name: str) -> str:
    """An ``async def`` task: the worker runs it on an event loop."""
    await asyncio.sleep(0.01)
    return f"hello, {name}"


def run(out: OutputWrapper, database: str) -> None:
    """Enqueue a few tasks in one transaction, run them with a worker, print their results."""
    with transaction.atomic(using=database):
        results: list[tuple[str, TaskResult]] = [
            ("add(2, 3)", add.enqueue(2, 3)),
            ("add(40, 2), priority 90", add.using(priority=90).enqueue(40, 2)),
            ('greet("world"), async', greet.enqueue("world")),
        ]
    out.write(f"Django tasks: {len(results)} enqueued on queue {QUEUE!r}; running them...")
    call_command(
        "pgmq_consume", "--tasks", QUEUE, "--until-empty", "--poll-interval", "0.1", verbosity=0
    )
    for label, result in results:
        result.refresh()
        if result.status == "SUCCESSFUL":
            outcome = f"-> {result.return_value!r}"
        else:
            outcome = f"-> {result.errors[-1].exception_class_path}" if result.errors else ""
        out.write(f"  {label:<26} {result.status:<10} {outcome}")
