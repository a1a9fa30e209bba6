"""Handlers for the worker tests, imported by ``pgmq_consume --handler tests.handlers.<name>``.

Each message's payload says what to do: ``sleep`` seconds, fail while
``read_ct <= fail_times``, ``poison`` (dead-letter at once). Every run is
recorded as a `HandlerRun`; in `handle` (atomic) the record commits only with
the archive, in `handle_outside` (not atomic) it is written at once.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any

from django.utils import timezone

import django_pgmq
from django_pgmq import Message
from django_pgmq.worker import PoisonMessage
from example_project.demo.models import HandlerRun


def _payload(message: Message) -> dict[str, Any]:
    return message.message if isinstance(message.message, dict) else {}


def _new_run(message: Message) -> HandlerRun:
    return HandlerRun(
        msg_id=message.msg_id,
        read_ct=message.read_ct,
        payload=message.message,
        pid=os.getpid(),
        thread=threading.current_thread().name,
        started_at=timezone.now(),
    )


def _act(message: Message) -> None:
    payload = _payload(message)
    time.sleep(float(payload.get("sleep", 0)))
    if payload.get("poison"):
        raise PoisonMessage("this message can never succeed")
    if message.read_ct <= int(payload.get("fail_times", 0)):
        raise RuntimeError(f"planned failure on read {message.read_ct}")


def handle(message: Message) -> None:
    """Atomic: the run's record commits together with the archive, or not at all."""
    run = _new_run(message)
    _act(message)
    run.finished_at = timezone.now()
    run.save()


def handle_write_then_fail(message: Message) -> None:
    """Atomic: writes its record first, then fails as planned (the write must roll back)."""
    run = _new_run(message)
    run.finished_at = run.started_at
    run.save()
    _act(message)


@django_pgmq.consumer(atomic=False)
def handle_outside(message: Message) -> None:
    """Not atomic: the run's start is recorded at once, its end after the work."""
    run = _new_run(message)
    run.save()
    try:
        _act(message)
    finally:
        run.finished_at = timezone.now()
        run.save(update_fields=["finished_at"])


@django_pgmq.consumer(batch_handler=True, batch=5)
def handle_batch(messages: list[Message]) -> None:
    """A batch handler: records every message, fails the batch if one asks to."""
    for message in messages:
        handle(message)


@django_pgmq.consumer(decode=lambda payload: {**payload, "n": int(payload["n"])})
def handle_number(message: Message) -> None:
    """Needs ``{"n": <int>}``; anything else cannot be decoded and is dead-lettered."""
    _act(message)
    run = _new_run(message)
    run.finished_at = run.started_at
    run.save()


def handle_plain(message: Message) -> None:
    """Not atomic with any record: acts as the payload says, then the message is archived.

    For queues in another database than the demo app's table (the two-server tests).
    """
    _act(message)


def handle_returning(message: Message) -> dict[str, Any]:
    """Atomic, acts as `handle`, and returns what it saw: a workflow step's result."""
    _act(message)
    workflow = (message.headers or {}).get("workflow", {})
    return {"message": message.message, "results": workflow.get("results")}


@django_pgmq.consumer(atomic=False)
def handle_returning_outside(message: Message) -> dict[str, Any]:
    """Not atomic: as `handle_returning`, its result recorded before its own acknowledgement."""
    return handle_returning(message)
