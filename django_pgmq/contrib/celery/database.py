"""The transport's PostgreSQL sessions: where it connects, and how it runs its statements.

Every transport owns a command session (autocommit; reads, acks, declarations) and,
once it consumes, a listener session (LISTEN, and the advisory lock that says this
consumer is alive). ``django-pgmq://`` derives both from a Django database alias and sends
messages on Django's own connection of the calling thread, so a publish inside
``transaction.atomic()`` commits or rolls back with it. ``django-pgmq+postgresql://...``
(or ``django-pgmq://user:pass@host/db``) needs neither Django settings nor Django's connection.
"""

from __future__ import annotations

import contextlib
import os
import select
import threading
from collections.abc import Callable, Iterable
from typing import Any

import psycopg
from kombu.utils.json import dumps as kombu_dumps
from kombu.utils.json import loads as kombu_loads
from psycopg.types.json import set_json_loads

from django_pgmq import sqlrun
from django_pgmq.errors import FeatureNotAvailable, InvalidArgument, PgmqError
from django_pgmq.isolation import own_session_read_committed
from django_pgmq.names import notify_channel

# Keys of Django's connection parameters that only Django's own cursor understands.
_DJANGO_ONLY = ("cursor_factory", "context")


def dump(value: Any) -> str:
    """JSON for a kombu payload: kombu's encoder keeps bytes, datetimes and UUIDs typed."""
    return kombu_dumps(value)


def _missing_schema(text: str) -> PgmqError:
    return FeatureNotAvailable(
        "the Celery transport's SQL is not installed in this database "
        f"({text}): run `manage.py migrate django_pgmq`"
    )


# A function the installed SQL lacks (42883), or no schema pgmq (3F000), is a missing
# schema; the rest goes through the SQLSTATE registry, as for the manager.
ERRORS = sqlrun.Errors(missing=_missing_schema, missing_states=frozenset({"42883", "3F000"}))


def _queue_of(params: dict[str, Any]) -> str | None:
    queue = params.get("queue")
    return queue if isinstance(queue, str) else None


def run(conn: Any, name: str, params: dict[str, Any], fetch: str = sqlrun.ALL) -> list[tuple]:
    """Run a named statement on a psycopg connection (or Django's) and return its rows
    (``fetch``: `sqlrun.MESSAGES` for message rows, read by column name)."""
    return sqlrun.run(conn, name, params, fetch=fetch, queue=_queue_of(params), errors=ERRORS)


def refused(
    run: Callable[[str, dict[str, Any]], list[tuple]], name: str, params: dict[str, Any]
) -> list[tuple]:
    """Run a publish; one the target queue's attributes refuse (a message larger than its
    ``max_message_size``, a bad ``deduplication_id``) raises `InvalidArgument` with the
    database's one-line reason, which names the queue."""
    try:
        return run(name, params)
    except InvalidArgument as exc:
        cause = exc.__cause__
        if cause is not None and not isinstance(cause, psycopg.Error):
            cause = cause.__cause__  # Django's error wraps psycopg's
        if not isinstance(cause, psycopg.Error):
            raise
        raise InvalidArgument(str(cause).splitlines()[0]) from None


def _connect(kwargs: dict[str, Any], conninfo: str) -> psycopg.Connection:
    conn = psycopg.connect(conninfo, autocommit=True, **kwargs)
    set_json_loads(kombu_loads, conn)
    # Reads claim with SKIP LOCKED: READ COMMITTED whatever the server's default level
    # (at a higher one they fail with 40001; django_pgmq/isolation.py).
    return own_session_read_committed(conn)


class Sessions:
    """The command and listener sessions of one transport, safe across ``fork()``."""

    def __init__(self, conninfo: str = "", **kwargs: Any) -> None:
        self._conninfo = conninfo
        self._kwargs = kwargs
        self._pid = os.getpid()
        self._command: psycopg.Connection | None = None
        self._listener: psycopg.Connection | None = None
        self._listening: set[str] = set()
        self._lock = threading.Lock()
        self.session_id: int | None = None

    def _forked(self) -> bool:
        """True in a child process: the parent's sockets must be left alone."""
        if os.getpid() == self._pid:
            return False
        self._command = self._listener = None
        self._listening = set()
        self.session_id = None
        self._pid = os.getpid()
        return True

    @property
    def command(self) -> psycopg.Connection:
        """The autocommit session for reads, acks and declarations (opened on first use)."""
        self._forked()
        conn = self._command
        if conn is None or conn.closed:
            with self._lock:
                if self._command is None or self._command.closed:
                    self._command = _connect(self._kwargs, self._conninfo)
                conn = self._command
        return conn

    def run(self, name: str, params: dict[str, Any], fetch: str = sqlrun.ALL) -> list[tuple]:
        """Run a named statement on the command session."""
        return run(self.command, name, params, fetch)

    def consumer_session(self) -> int:
        """This transport's consumer session id, opening the listener session on first use."""
        self._forked()
        if self._listener is None or self._listener.closed:
            self._listener = _connect(self._kwargs, self._conninfo)
            self._listening = set()
            self.session_id = run(self._listener, "celery_open_session", {})[0][0]
        assert self.session_id is not None
        return self.session_id

    def listen(self, queues: Iterable[str]) -> None:
        """LISTEN to exactly these pgmq queues' insert channels."""
        self.consumer_session()
        assert self._listener is not None
        wanted = set(queues)
        for queue in wanted - self._listening:
            channel = {"channel": notify_channel(queue)}
            sqlrun.run(self._listener, "listen", identifiers=channel, fetch=sqlrun.NOTHING)
        for queue in self._listening - wanted:
            channel = {"channel": notify_channel(queue)}
            sqlrun.run(self._listener, "unlisten", identifiers=channel, fetch=sqlrun.NOTHING)
        self._listening = wanted

    def wait(self, timeout: float, wakeup_fd: int) -> bool:
        """Block until a notification, a byte on ``wakeup_fd``, or ``timeout`` seconds.

        Returns True when woken (something may have changed), False on timeout.
        """
        fds = [wakeup_fd]
        listener = self._listener if self._listening else None
        if listener is not None and not listener.closed:
            fds.append(listener.fileno())
        readable, _, _ = select.select(fds, [], [], max(timeout, 0))
        if listener is not None and listener.fileno() in readable:
            for _ in listener.notifies(timeout=0):
                pass  # any notification means "read again"; which one does not matter
        if wakeup_fd in readable:
            with contextlib.suppress(BlockingIOError):
                os.read(wakeup_fd, 4096)
        return bool(readable)

    def close(self) -> None:
        """Close both sessions (in a forked child, only forget the parent's)."""
        if self._forked():
            return
        for conn in (self._command, self._listener):
            if conn is not None and not conn.closed:
                conn.close()
        self._command = self._listener = None
        self._listening = set()
        self.session_id = None


class DjangoSender:
    """Publishes on Django's connection of the calling thread when it is in a transaction.

    Inside ``transaction.atomic()`` (or with autocommit off) the message is part of the
    caller's transaction; otherwise it goes through the transport's own session, which
    spares a worker from opening a Django connection per task just to publish a result.
    """

    def __init__(self, alias: str, own: Sessions) -> None:
        self.alias = alias
        self.own = own

    def run(self, name: str, params: dict[str, Any]) -> list[tuple]:
        from django.db import connections

        wrapper = connections[self.alias]
        if wrapper.connection is None or (not wrapper.in_atomic_block and wrapper.get_autocommit()):
            return self.own.run(name, params)
        return run(wrapper, name, params)


def django_connection_kwargs(
    alias: str | None = None, queue_name_prefix: str = ""
) -> tuple[dict[str, Any], str]:
    """psycopg keyword arguments for a Django database alias.

    Without an alias: the database ``PGMQ["QUEUE_DATABASES"]`` routes the pgmq queue of
    Celery's default queue (``<queue_name_prefix>celery``) to, else ``PGMQ["DATABASE"]``.
    One transport talks to one database: its exchanges route in SQL, on one server.
    """
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured
    from django.db import connections

    if not settings.configured:
        raise ImproperlyConfigured(
            "django-pgmq:// uses the Django database, but Django settings are not configured: "
            "set DJANGO_SETTINGS_MODULE, or use django-pgmq+postgresql://user:pass@host/dbname"
        )
    if alias is None:
        from django_pgmq import routing

        from .naming import pgmq_queue_name

        alias = routing.database_for(pgmq_queue_name("celery", queue_name_prefix))
    if alias not in connections.databases:
        raise ImproperlyConfigured(f"django-pgmq:// database alias {alias!r} is not in DATABASES")
    wrapper = connections[alias]
    if wrapper.vendor != "postgresql":
        raise ImproperlyConfigured(f"django-pgmq:// database alias {alias!r} is not PostgreSQL")
    params = dict(wrapper.get_connection_params())
    for key in _DJANGO_ONLY:
        params.pop(key, None)
    if "prepare_threshold" not in wrapper.settings_dict.get("OPTIONS", {}):
        params.pop("prepare_threshold", None)  # Django disables it; ours may prepare
    return params, alias


def plain_connection_kwargs(
    hostname: str | None, port: int | None, user: str | None, password: str | None, dbname: str
) -> dict[str, Any]:
    """psycopg keyword arguments from a ``django-pgmq://user:pass@host:port/db`` URL's parts."""
    parts = {"host": hostname, "port": port, "user": user, "password": password, "dbname": dbname}
    return {key: value for key, value in parts.items() if value not in (None, "", "/")}
