"""The worker wakes on NOTIFY, not on its poll interval, and survives losing its listener."""

from __future__ import annotations

import signal

import pytest
from django.db import connection

import django_pgmq as pgmq
from example_project.demo.models import HandlerRun
from tests.worker_process import start_worker_fixture  # noqa: F401

pytestmark = pytest.mark.slow

HANDLER = ("--handler", "tests.handlers.handle")
ONE_DONE = r"1 message\(s\) in .*: 1 done"


def test_a_message_sent_while_idle_is_handled_through_notify(queue, start_worker):
    first = pgmq.send(queue, {"n": 1})
    worker = start_worker(queue, *HANDLER, "--poll-interval", "3600", "-v", "2")
    worker.wait_for(ONE_DONE)
    # From here on the worker sleeps for its poll interval, an hour: only NOTIFY wakes it.
    idle = worker.wait_for(rf"{queue}: idle; next poll in 3600s")
    second = pgmq.send(queue, {"n": 2})
    worker.wait_for(ONE_DONE, after=idle)

    assert sorted(HandlerRun.objects.values_list("msg_id", flat=True)) == [first, second]
    assert pgmq.metrics(queue).queue_length == 0
    worker.signal(signal.SIGTERM)
    assert worker.wait() == 0


def test_the_listener_reconnects_when_its_connection_is_killed(queue, start_worker):
    worker = start_worker(queue, *HANDLER, "--poll-interval", "3600", "-v", "2")
    worker.wait_for(r"listening on \d+ channel")
    idle = worker.wait_for(rf"{queue}: idle; next poll in 3600s")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s",
            [f"pgmq_consume listener (pid {worker.pid})"],
        )
        assert cursor.fetchall() == [(True,)]
    reconnected = worker.wait_for(r"listener reconnected", after=idle)
    worker.wait_for(rf"{queue}: idle; next poll in 3600s", after=reconnected)
    msg_id = pgmq.send(queue, {"n": 1})
    worker.wait_for(ONE_DONE, after=reconnected)

    assert list(HandlerRun.objects.values_list("msg_id", flat=True)) == [msg_id]
    worker.signal(signal.SIGTERM)
    assert worker.wait() == 0
