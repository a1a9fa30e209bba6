"""Connections of the Spark source (plain psycopg, no Django) and their errors, made readable."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import psycopg

from ...errors import InvalidArgument, InvalidPayload, InvalidQueueName, PgmqError, QueueNotFound
from .conninfo import ConnectionInfo

_BY_SQLSTATE: dict[str, type[PgmqError]] = {
    "PQ001": InvalidQueueName,
    "PQ004": InvalidArgument,
    "22P02": InvalidPayload,
}


def translate(exc: psycopg.Error, queue: str | None, info: ConnectionInfo) -> PgmqError:
    """The django-pgmq error a database error stands for; its text never holds a secret."""
    state = getattr(exc, "sqlstate", None)
    if state in ("PQ002", "42P01") and queue:
        return QueueNotFound(queue)
    text = info.redact(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
    prefix = f'queue "{queue}": ' if queue else ""
    return _BY_SQLSTATE.get(state or "", PgmqError)(prefix + text)


@contextmanager
def connection(info: ConnectionInfo, queue: str | None = None) -> Iterator[psycopg.Connection]:
    """An autocommit connection whose database errors come out as `PgmqError` subclasses."""
    with info.connect() as conn:
        try:
            yield conn
        except psycopg.Error as exc:
            raise translate(exc, queue, info) from None
