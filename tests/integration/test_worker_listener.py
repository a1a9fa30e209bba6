"""The listener thread on a real connection: notifications in, and its liveness check."""

from __future__ import annotations

import threading
import time

import psycopg
import pytest
from psycopg import sql

import django_pgmq as pgmq
from django_pgmq.names import notify_channel
from django_pgmq.worker.listener import Listener

WAIT = 20.0  # a safety net for a hung test, not a threshold


class Calls:
    """What a listener reported: queue names, None for "(re)connected, read everything"."""

    def __init__(self) -> None:
        self.items: list[str | None] = []
        self.changed = threading.Condition()

    def __call__(self, queue: str | None) -> None:
        with self.changed:
            self.items.append(queue)
            self.changed.notify_all()

    def wait_for(self, check) -> None:
        deadline = time.monotonic() + WAIT
        with self.changed:
            while not check(self.items):
                assert time.monotonic() < deadline, f"listener calls so far: {self.items}"
                self.changed.wait(0.1)


@pytest.fixture
def run_listener():
    stops: list[tuple[threading.Event, Listener]] = []

    def start(listener_class=Listener, **kwargs) -> tuple[Listener, Calls]:
        calls, stopping = Calls(), threading.Event()
        listener = listener_class("default", on_notify=calls, stopping=stopping, **kwargs)
        listener.start()
        stops.append((stopping, listener))
        return listener, calls

    yield start
    for stopping, listener in stops:
        stopping.set()
        listener.join(5)


def test_a_committed_send_reaches_the_listener_as_its_queue(queue, run_listener):
    pgmq.QueueManager().enable_notify(queue, 0)
    listener, calls = run_listener(channels={notify_channel(queue): queue})
    calls.wait_for(lambda items: items == [None])  # connected: read everything once
    pgmq.send(queue, {"n": 1})
    calls.wait_for(lambda items: items[1:] == [queue])
    assert listener.connects == 1


class DeafListener(Listener):
    """Never hears its own probe: as when notifications stop arriving unnoticed."""

    def _listen(self, conn: psycopg.Connection) -> None:
        self.probe_channel = f"{self.probe_channel}.unheard"
        super()._listen(conn)
        conn.execute(sql.SQL("UNLISTEN {}").format(sql.Identifier(self.probe_channel)))


def test_a_listener_whose_own_notify_does_not_come_back_reconnects(queue, run_listener, caplog):
    listener, calls = run_listener(
        DeafListener, channels={notify_channel(queue): queue}, probe_every=0.2, probe_timeout=0.3
    )
    calls.wait_for(lambda items: items.count(None) >= 2)  # connected, then reconnected
    assert listener.connects >= 2
    assert "did not come back within 0.3s" in caplog.text
