"""The demo's consumers, found by ``pgmq_consume`` (autodiscovery of ``consumers.py``).

manage.py pgmq_create demo_events
manage.py pgmq_send demo_events '{"event": "signup"}'
manage.py pgmq_consume demo_events
"""

from __future__ import annotations

import os
import threading

from django.utils import timezone

import django_pgmq
from django_pgmq import Message

from .models import HandlerRun


@django_pgmq.consumer("demo_events", batch=20, vt=30, max_receive_count=3)
def record_event(message: Message) -> None:
    """Record the event; the row commits together with the message's archive."""
    now = timezone.now()
    HandlerRun.objects.create(
        msg_id=message.msg_id,
        read_ct=message.read_ct,
        payload=message.message,
        pid=os.getpid(),
        thread=threading.current_thread().name,
        started_at=now,
        finished_at=now,
    )
