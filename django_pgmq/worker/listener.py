"""The LISTEN connection: wakes the readers on pgmq's insert notifications.

One dedicated autocommit psycopg connection, built from Django's settings of
the alias, listens on each queue's channel. Every `PROBE_EVERY` seconds it
notifies itself; no answer within `PROBE_TIMEOUT` (or any connection error)
means notifications are not arriving, so it reconnects, with backoff, and
wakes every queue to catch up on what it may have missed.
"""

from __future__ import annotations

import logging
import os
import random
import threading
from collections.abc import Callable, Mapping
from time import monotonic

import psycopg

from .. import sqlrun
from ..conf import connection_params
from ..errors import PgmqError, first_line
from ..isolation import own_session_read_committed
from . import signals

log = logging.getLogger("django_pgmq.worker")

PROBE_EVERY = 30.0
PROBE_TIMEOUT = 10.0
TICK = 0.25  # how often the thread looks at its stop flag
FIRST_BACKOFF = 0.1
MAX_BACKOFF = 10.0


class ListenerStale(Exception):
    """The listener's own NOTIFY did not come back: notifications are not arriving."""


class Listener(threading.Thread):
    """Calls ``on_notify(queue)`` per notification, ``on_notify(None)`` after (re)connecting."""

    def __init__(
        self,
        using: str,
        channels: Mapping[str, str],
        on_notify: Callable[[str | None], None],
        stopping: threading.Event,
        *,
        probe_every: float = PROBE_EVERY,
        probe_timeout: float = PROBE_TIMEOUT,
    ) -> None:
        super().__init__(name="pgmq-listener", daemon=True)
        self.params = connection_params(using, f"pgmq_consume listener (pid {os.getpid()})")
        self.channels = dict(channels)  # channel -> queue
        self.on_notify = on_notify
        self.stopping = stopping
        self.probe_every = probe_every
        self.probe_timeout = probe_timeout
        self.probe_channel = f"pgmq.worker.{os.getpid()}.{id(self):x}"
        self.ready = threading.Event()
        self.connects = 0

    def run(self) -> None:
        signals.block_in_this_thread()
        delay = FIRST_BACKOFF
        while not self.stopping.is_set():
            try:
                # READ COMMITTED whatever the server's default (it only listens, but the
                # rule is one for every consumer's own connection: django_pgmq/isolation.py).
                with own_session_read_committed(psycopg.connect(**self.params)) as conn:
                    self._listen(conn)
                    delay = FIRST_BACKOFF
                    self._pump(conn)
            except (psycopg.Error, PgmqError, ListenerStale) as exc:
                if self.stopping.is_set():
                    break
                log.warning("listener: %s; reconnecting in %.1fs", first_line(exc), delay)
                self.stopping.wait(delay * (1 + random.random() / 2))
                delay = min(delay * 2, MAX_BACKOFF)

    def _listen(self, conn: psycopg.Connection) -> None:
        for channel in [*self.channels, self.probe_channel]:
            sqlrun.run(conn, "listen", identifiers={"channel": channel}, fetch=sqlrun.NOTHING)
        self.connects += 1
        if self.connects == 1:
            log.info("listening on %d channel(s)", len(self.channels))
        else:
            log.info("listener reconnected (connection #%d); reading every queue", self.connects)
        self.ready.set()
        self.on_notify(None)  # catch up on anything sent while not listening

    def _pump(self, conn: psycopg.Connection) -> None:
        """Deliver notifications until stopped; raise when the connection or probe fails."""
        next_probe = monotonic() + self.probe_every
        answer_by: float | None = None
        while not self.stopping.is_set():
            for note in conn.notifies(timeout=TICK):
                if note.channel == self.probe_channel:
                    answer_by = None
                elif note.channel in self.channels:
                    self.on_notify(self.channels[note.channel])
            now = monotonic()
            if answer_by is not None and now > answer_by:
                raise ListenerStale(
                    f"its own NOTIFY did not come back within {self.probe_timeout:g}s"
                )
            if answer_by is None and now >= next_probe:
                sqlrun.run(
                    conn,
                    "worker_listener_probe",
                    {"channel": self.probe_channel},
                    fetch=sqlrun.NOTHING,
                )
                answer_by = now + self.probe_timeout
                next_probe = now + self.probe_every
