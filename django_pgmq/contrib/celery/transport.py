"""The kombu transport behind ``django-pgmq://``: Celery's broker in the project's PostgreSQL.

Consumers sleep on LISTEN (the insert channels of their queues) and a wake-up pipe
that acks write to, never on a fixed poll: an idle worker wakes when a message is
committed, when its next delayed or timed-out message becomes visible, when an ack
opens its prefetch window, or after ``polling_interval`` as a safety net. While it
waits it renews the visibility of the messages it holds, so only a dead worker's
messages time out, and it periodically drops queues that dead consumers left behind.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections import Counter
from queue import Empty
from time import monotonic
from typing import Any

import psycopg
from django.db import utils as django_db
from kombu.transport import virtual

from django_pgmq.errors import PgmqError

from .channel import Channel as PgmqChannel
from .database import (
    DjangoSender,
    Sessions,
    django_connection_kwargs,
    plain_connection_kwargs,
)
from .transport_options import Options

logger = logging.getLogger(__name__)

# Shortest idle wait when a visible message was skipped (locked by another reader).
MIN_WAIT = 0.05
_URI_SCHEMES = ("postgresql://", "postgres://")


def open_sessions(client: Any, options: Options) -> tuple[Sessions, Any]:
    """The transport's sessions and the object that runs its publishes, from the URL.

    ``django-pgmq+postgresql://...`` and ``django-pgmq://user@host/db`` connect directly; a bare
    ``django-pgmq://`` uses a Django database alias and publishes on Django's connection.
    """
    host = client.hostname or ""
    if host.startswith(_URI_SCHEMES):
        sessions = Sessions(host)
        return sessions, sessions
    if host:
        kwargs = plain_connection_kwargs(
            host, client.port, client.userid, client.password, client.virtual_host
        )
        sessions = Sessions(**kwargs)
        return sessions, sessions
    kwargs, alias = django_connection_kwargs(options.database, options.queue_name_prefix)
    sessions = Sessions(**kwargs)
    return sessions, DjangoSender(alias, sessions)


class Transport(virtual.Transport):
    """kombu transport whose queues are pgmq queues."""

    Channel = PgmqChannel
    default_port = 5432
    driver_type = "pgmq"
    driver_name = "psycopg"
    implements = virtual.Transport.implements.extend(
        asynchronous=False,
        exchange_type=frozenset(["direct", "topic", "fanout"]),
        heartbeats=False,
    )
    connection_errors = (
        *virtual.Transport.connection_errors,
        psycopg.OperationalError,
        psycopg.InterfaceError,
        django_db.OperationalError,
        django_db.InterfaceError,
    )
    channel_errors = (*virtual.Transport.channel_errors, PgmqError)

    def __init__(self, client: Any, **kwargs: Any) -> None:
        self.options = Options.from_transport_options(client.transport_options)
        super().__init__(client, **kwargs)
        self.polling_interval = self.options.polling_interval
        self.sessions, self.sender = open_sessions(client, self.options)
        self._pid = os.getpid()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._draining = False
        self._ack_lock = threading.Lock()
        self._consumed: Counter[str] = Counter()
        self._next_renewal = 0.0
        self._next_cleanup = 0.0
        # Until then an empty look found nothing due and no notification or ack came.
        self._quiet_until = 0.0

    def driver_version(self) -> str:
        return psycopg.__version__

    @property
    def default_connection_params(self) -> dict[str, Any]:
        """No default host: a bare ``django-pgmq://`` (and its clones) means the Django database."""
        return {}

    # -- connection life ----------------------------------------------------

    def establish_connection(self) -> Any:
        """Connect now, so an unreachable database fails here and Celery retries."""
        self.sessions.command  # noqa: B018
        return super().establish_connection()

    def close_connection(self, connection: Any) -> None:
        """Cancel consumers, release held messages, close the sessions."""
        if os.getpid() != self._pid:
            return  # a forked child: the parent's sessions and messages are not ours
        try:
            super().close_connection(connection)
        finally:
            self.sessions.close()
            for fd in (self._wake_r, self._wake_w):
                with contextlib.suppress(OSError):
                    os.close(fd)
            self._wake_r = self._wake_w = -1

    def wakeup(self) -> None:
        """Wake a waiting ``drain_events`` (an ack opened the prefetch window)."""
        if self._draining and self._wake_w >= 0:
            # A full pipe means a wake-up is already pending.
            with contextlib.suppress(OSError):
                os.write(self._wake_w, b"\0")

    def defer_acks(self, channel: PgmqChannel, tags: list[str]) -> bool:
        """Leave acks to the running drain loop, which sends them together; False if none runs.

        Called from pool threads. The lock makes the choice exact: either the loop is
        still running and will flush these tags before it returns, or the caller sends
        them itself.
        """
        with self._ack_lock:
            if not self._draining:
                return False
            channel.pending_acks.extend(tags)
        self.wakeup()
        return True

    def _flush_acks(self) -> None:
        for channel in list(self.channels):
            channel.flush_acks()

    # -- consumers ----------------------------------------------------------

    def consumer_added(self, queue: str) -> None:
        """Register this session as a consumer of a pgmq queue and LISTEN to it."""
        first = self.sessions.session_id is None
        session = self.sessions.consumer_session()
        if first:
            self._cleanup()  # a restarted worker clears what its predecessor left
        if not self._consumed[queue]:
            self.sessions.run("celery_consume", {"queue": queue, "session": session})
        self._consumed[queue] += 1
        self._listen()

    def consumer_removed(self, queue: str) -> None:
        """The last consumer of a queue left: an auto-delete queue is dropped."""
        if os.getpid() != self._pid or not self._consumed[queue]:
            return
        self._consumed[queue] -= 1
        if self._consumed[queue]:
            return
        del self._consumed[queue]
        if self.sessions.session_id is not None:
            self.sessions.run(
                "celery_cancel", {"queue": queue, "session": self.sessions.session_id}
            )
        self._listen()

    def _listen(self) -> None:
        self.poke()  # the set of queues changed: look at them now
        if self.options.notify:
            self.sessions.listen(self._consumed)

    # -- the loop -----------------------------------------------------------

    def drain_events(self, connection: Any, timeout: float | None = None) -> None:
        """Deliver messages from some queue, waiting up to ``timeout`` seconds for one."""
        with self._ack_lock:
            self._draining = True  # from here on, acks are batched and wake this loop
        try:
            self._drain(timeout)
        finally:
            with self._ack_lock:
                self._draining = False
            self._flush_acks()

    def _drain(self, timeout: float | None) -> None:
        deadline = None if timeout is None else monotonic() + timeout
        while True:
            self._flush_acks()
            self._housekeeping()
            now = monotonic()
            if now >= self._quiet_until:  # else nothing can have arrived since the last look
                try:
                    self.cycle.get(self._deliver, timeout=timeout)
                except Empty:
                    self._quiet_until = now + self._idle_wait()
                else:
                    return
            now = monotonic()
            if deadline is None or now < deadline:
                wait = min(self._quiet_until - now, self._next_renewal - now)
                if deadline is not None:
                    wait = min(wait, deadline - now)
                if self.sessions.wait(max(wait, 0.0), self._wake_r):
                    self.poke()  # a notification or an ack
            if deadline is not None and monotonic() >= deadline:
                raise TimeoutError()

    def _idle_wait(self) -> float:
        """Seconds until a message could be due, at most ``polling_interval``."""
        waits = [self.polling_interval]
        queues = sorted({q for channel in self.channels for q in channel.active_pgmq_queues()})
        if queues:
            seconds = self.sessions.run("celery_next_visible", {"queues": queues})[0][0]
            if seconds is not None:
                waits.append(max(float(seconds), MIN_WAIT))
        return min(waits)

    def poke(self) -> None:
        """Something changed in a queue this process consumes: look at the queues again."""
        self._quiet_until = 0.0

    def _housekeeping(self) -> None:
        """Renew held messages' visibility and clean up, each when due."""
        now = monotonic()
        if now >= self._next_renewal:
            self._next_renewal = now + self.options.renew_every
            for channel in list(self.channels):
                channel.renew()
        if self.sessions.session_id is not None and now >= self._next_cleanup:
            self._cleanup()

    def _cleanup(self) -> None:
        self._next_cleanup = monotonic() + self.options.cleanup_interval
        try:
            dropped = self.sessions.run("celery_cleanup", {})[0][0]
        except psycopg.OperationalError:
            raise
        except (psycopg.Error, PgmqError) as exc:
            logger.warning("pgmq celery cleanup failed: %s", exc)
            return
        if dropped:
            logger.info("dropped %d unused pgmq queue(s) left by gone consumers", dropped)
