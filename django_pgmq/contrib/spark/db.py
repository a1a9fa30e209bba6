"""Connections of the Spark source (plain psycopg, no Django) and their errors, made readable.

Every statement runs through the one runner (`django_pgmq.sqlrun`): named in
``sql/queries.sql`` (its Spark section), its errors translated by the SQLSTATE registry, with the
connection's secrets taken out of their text.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from typing import Any, TypeVar

import psycopg
from psycopg import sql

from ... import sqlrun
from ...errors import PgmqError
from .conninfo import ConnectionInfo

R = TypeVar("R")


def errors(info: ConnectionInfo) -> sqlrun.Errors:
    """How the Spark source's errors read: the registry's classes, every other database
    error a `PgmqError` too, no secret of ``info`` in any text, no psycopg cause shown."""
    return sqlrun.Errors(missing_states=frozenset(), redact=info.redact, wrap_all=True)


def translate(exc: psycopg.Error, queue: str | None, info: ConnectionInfo) -> PgmqError:
    """The django-pgmq error a database error stands for; its text never holds a secret."""
    translated = sqlrun.translate(exc, queue, errors(info))
    assert translated is not None  # wrap_all: every error is translated
    return translated


def one_row(row: R | None) -> R:
    """The row of a statement that always returns one (an aggregate, ``now()``, a function)."""
    if row is None:
        raise PgmqError("the database returned no row where one is always returned")
    return row


class Db:
    """A plain psycopg connection of the Spark source, running named statements."""

    def __init__(self, conn: psycopg.Connection, info: ConnectionInfo, queue: str | None) -> None:
        self.conn = conn
        self.errors = errors(info)
        self.queue = queue

    def run(
        self,
        name: str,
        params: Mapping[str, Any] | None = None,
        *,
        fetch: str = sqlrun.ALL,
        **parts: sql.Composable,
    ) -> Any:
        """`sqlrun.run` on this connection; ``parts`` fill the statement's ``{slots}``."""
        return sqlrun.run(
            self.conn,
            name,
            params,
            parts=parts or None,
            fetch=fetch,
            queue=self.queue,
            errors=self.errors,
        )

    def row(
        self, name: str, params: Mapping[str, Any] | None = None, **parts: sql.Composable
    ) -> tuple[Any, ...]:
        """The one row a statement always returns."""
        return one_row(self.run(name, params, fetch=sqlrun.ONE, **parts))

    def named_row(
        self, name: str, params: Mapping[str, Any] | None = None, **parts: sql.Composable
    ) -> dict[str, Any]:
        """The one row a statement always returns, by column name."""
        rows = self.run(name, params, fetch=sqlrun.NAMED, **parts)
        return one_row(rows[0] if rows else None)

    def run_many(self, name: str, params: Iterable[Mapping[str, Any]]) -> None:
        sqlrun.run_many(self.conn, name, params, queue=self.queue, errors=self.errors)

    def copy(self, name: str, **parts: sql.Composable) -> AbstractContextManager[psycopg.Copy]:
        return sqlrun.copy(self.conn, name, parts=parts, queue=self.queue, errors=self.errors)

    def transaction(self) -> AbstractContextManager[Any]:
        return self.conn.transaction()


@contextmanager
def connection(info: ConnectionInfo, queue: str | None = None) -> Iterator[Db]:
    """An autocommit connection whose database errors come out as `PgmqError` subclasses."""
    with info.connect() as conn:
        try:
            yield Db(conn, info, queue)
        except psycopg.Error as exc:
            raise translate(exc, queue, info) from None
