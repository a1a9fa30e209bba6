"""Demo Celery tasks, run by ``celery -A example_project worker`` on the pgmq broker.

Each run of ``record`` (and its variants) writes an event to the pgmq queue
``demo_task_events``, so a test or a curious user can see what ran, where, and how
often: the worker's own Django connection writes it, in the same database.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any

from celery import shared_task

import django_pgmq as pgmq

EVENTS_QUEUE = "demo_task_events"


def record_event(event: str, key: str, task: Any, **extra: Any) -> None:
    """Append ``{"event", "key", "task_id", "attempt", "pid", ...}`` to the events queue."""
    payload = {
        "event": event,
        "key": key,
        "task_id": task.request.id,
        "attempt": task.request.retries,
        "redelivered": bool((task.request.delivery_info or {}).get("redelivered")),
        "hostname": task.request.hostname,
        "pid": os.getpid(),
        "thread": threading.current_thread().name,
        **extra,
    }
    try:
        pgmq.send(EVENTS_QUEUE, payload)
    except pgmq.QueueNotFound:
        pgmq.create_queue(EVENTS_QUEUE)
        pgmq.send(EVENTS_QUEUE, payload)


@shared_task
def add(x: int, y: int) -> int:
    """The classic: its result comes back through the rpc:// backend."""
    return x + y


def _start_sleep_end(task: Any, key: str, seconds: float) -> str:
    record_event("start", key, task)
    time.sleep(seconds)
    record_event("end", key, task)
    return key


@shared_task(bind=True)
def record(self: Any, key: str, seconds: float = 0.0) -> str:
    """Record a start, sleep, record an end; returns the key."""
    return _start_sleep_end(self, key, seconds)


@shared_task(bind=True, acks_late=True)
def record_late(self: Any, key: str, seconds: float = 0.0) -> str:
    """Like `record`, acknowledged only after it returns: a killed worker's run is redone."""
    return _start_sleep_end(self, key, seconds)


@shared_task(bind=True, rate_limit="2/s")
def record_limited(self: Any, key: str) -> str:
    """Like `record`, at most two per second per worker: the rest wait, prefetched."""
    return _start_sleep_end(self, key, 0.0)


@shared_task(bind=True, max_retries=5)
def flaky(self: Any, key: str, failures: int, countdown: float = 1.0) -> int:
    """Fail ``failures`` times, retrying after ``countdown`` seconds; returns the attempt."""
    record_event("attempt", key, self)
    if self.request.retries < failures:
        raise self.retry(countdown=countdown)
    return self.request.retries


@shared_task
def total(values: list[int]) -> int:
    """A chord's callback: the sum of its header's results (given in the header's order)."""
    return sum(values)


@shared_task
def listed(values: list[Any]) -> list[Any]:
    """A chord's callback that returns what it got, so a test sees the order."""
    return list(values)
