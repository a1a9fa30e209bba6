"""``async def`` handlers for the worker tests (``--handler tests.async_handlers.<name>``).

Like tests/handlers.py: the payload says what to do (fail while ``read_ct <=
fail_times``, ``poison``); each run writes a `HandlerRun` with Django's async ORM.
"""

from __future__ import annotations

import asyncio
import os
import threading

from django.utils import timezone

from django_pgmq import Message
from django_pgmq.worker import PoisonMessage
from example_project.demo.models import HandlerRun


async def handle(message: Message) -> None:
    """Atomic: its record commits with the acknowledgement, or rolls back with a failure."""
    payload = message.message if isinstance(message.message, dict) else {}
    await HandlerRun.objects.acreate(
        msg_id=message.msg_id,
        read_ct=message.read_ct,
        payload=message.message,
        pid=os.getpid(),
        thread=threading.current_thread().name,
        started_at=timezone.now(),
    )
    await asyncio.sleep(float(payload.get("sleep", 0)))
    if payload.get("poison"):
        raise PoisonMessage("this message can never succeed")
    if message.read_ct <= int(payload.get("fail_times", 0)):
        raise RuntimeError(f"planned failure on read {message.read_ct}")


async def handle_batch(messages: list[Message]) -> None:
    """A batch handler: one record per message."""
    for message in messages:
        await handle(message)
