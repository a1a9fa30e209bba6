"""Connections of the Spark source (plain psycopg, no Django) and their errors, made readable."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg

from ...errors import PgmqError, from_sqlstate
from .conninfo import ConnectionInfo


def translate(exc: psycopg.Error, queue: str | None, info: ConnectionInfo) -> PgmqError:
    """The django-pgmq error a database error stands for; its text never holds a secret."""
    text = info.redact(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
    known = from_sqlstate(getattr(exc, "sqlstate", None), text, queue or None)
    return known or PgmqError(f'queue "{queue}": {text}' if queue else text)


def one_row(cursor: psycopg.Cursor[Any]) -> tuple[Any, ...]:
    """The row of a statement that always returns one (an aggregate, ``now()``, a function)."""
    row = cursor.fetchone()
    if row is None:
        raise PgmqError("the database returned no row where one is always returned")
    return row


@contextmanager
def connection(info: ConnectionInfo, queue: str | None = None) -> Iterator[psycopg.Connection]:
    """An autocommit connection whose database errors come out as `PgmqError` subclasses."""
    with info.connect() as conn:
        try:
            yield conn
        except psycopg.Error as exc:
            raise translate(exc, queue, info) from None
