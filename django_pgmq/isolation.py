"""Consumers read at READ COMMITTED, whatever isolation level the project runs at.

A read claims rows with ``FOR UPDATE SKIP LOCKED`` and updates them. At REPEATABLE READ
or SERIALIZABLE, a reader whose snapshot predates another reader's committed claim of a
row gets SQLSTATE 40001 ("could not serialize access due to concurrent update") instead
of skipping it: with a few concurrent readers most reads fail. At READ COMMITTED the
lock is taken on the row's latest version, and a row claimed meanwhile is skipped.

Two ways a project raises the level, and what each consumer does about it:

- Django's ``DATABASES[...]["OPTIONS"]["isolation_level"]``: psycopg begins each
  transaction Django opens with ``BEGIN ISOLATION LEVEL ...``; statements in autocommit
  are not affected. The worker's own transactions (an atomic handler's chunk, in which
  the next batch is read) begin at READ COMMITTED instead (`read_committed`).
- The server's ``default_transaction_isolation`` (``ALTER DATABASE/ROLE ... SET``, or
  ``-c`` in the connection's ``options``): every transaction, autocommit statements
  included. The worker's reads in autocommit then run in a transaction of their own
  begun at READ COMMITTED (`read_committed` with ``autocommit_too``); the Celery
  transport's, the Spark source's and the listener's own connections are set to READ
  COMMITTED for their session (`own_session_read_committed`).

At READ COMMITTED (the default everywhere) none of this sends anything.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import psycopg
from django.db import connections, transaction

from . import sqlrun

READ_COMMITTED = "read committed"
_CACHE = "_pgmq_default_isolation"


def server_default(connection: Any) -> str:
    """``default_transaction_isolation`` of a Django connection's session, asked once per
    psycopg connection (SHOW takes no snapshot: safe first thing in a transaction)."""
    connection.ensure_connection()
    pg = connection.connection
    cached = getattr(connection, _CACHE, None)
    if cached is not None and cached[0] is pg:
        return cached[1]
    row = sqlrun.run(connection, "default_transaction_isolation", fetch=sqlrun.ONE)
    level = str(row[0]).lower() if row else READ_COMMITTED
    setattr(connection, _CACHE, (pg, level))
    return level


def transaction_level(connection: Any) -> str:
    """The level a transaction Django begins on ``connection`` runs at: Django's
    ``OPTIONS["isolation_level"]`` (psycopg's ``isolation_level``), else the server's."""
    connection.ensure_connection()
    level = connection.connection.isolation_level
    if level is None:
        return server_default(connection)
    return level.name.replace("_", " ").lower()


@contextlib.contextmanager
def _begin_read_committed(connection: Any) -> Iterator[None]:
    """psycopg begins the next transaction at READ COMMITTED (``BEGIN ISOLATION LEVEL READ
    COMMITTED``: no round trip of its own); the connection's level is put back after."""
    pg = connection.connection
    before = pg.isolation_level
    pg.isolation_level = psycopg.IsolationLevel.READ_COMMITTED
    try:
        yield
    finally:
        # The block is over (committed or rolled back): the connection is idle again.
        with contextlib.suppress(psycopg.Error):
            pg.isolation_level = before


@contextlib.contextmanager
def read_committed(using: str, *, autocommit_too: bool = False) -> Iterator[None]:
    """A transaction on Django's connection ``using`` at READ COMMITTED, for a consumer.

    Without ``autocommit_too``: ``transaction.atomic(using)``, begun at READ COMMITTED when
    the project's level is higher and this block is the outermost one (a block inside a
    caller's transaction cannot change its level: it is the caller's). With it: for a
    statement that would run in autocommit: nothing when the server's default level is
    READ COMMITTED (autocommit statements run at it, whatever Django's option), else the
    statement runs in its own transaction begun at READ COMMITTED.
    """
    connection = connections[using]
    if autocommit_too:
        if connection.in_atomic_block or server_default(connection) == READ_COMMITTED:
            yield
            return
        with _begin_read_committed(connection), transaction.atomic(using=using):
            yield
        return
    if connection.in_atomic_block or transaction_level(connection) == READ_COMMITTED:
        with transaction.atomic(using=using):
            yield
        return
    with _begin_read_committed(connection), transaction.atomic(using=using):
        yield


def own_session_read_committed(conn: psycopg.Connection) -> psycopg.Connection:
    """A consumer's own connection (autocommit) set to READ COMMITTED for its session when
    the server's default is higher: one SHOW per connection, a SET only then."""
    if not conn.autocommit:  # psycopg begins each transaction: at READ COMMITTED, then
        conn.isolation_level = psycopg.IsolationLevel.READ_COMMITTED
        return conn
    row = sqlrun.run(conn, "default_transaction_isolation", fetch=sqlrun.ONE)
    if row is not None and str(row[0]).lower() != READ_COMMITTED:
        sqlrun.run(conn, "session_read_committed", fetch=sqlrun.NOTHING)
    conn.isolation_level = psycopg.IsolationLevel.READ_COMMITTED
    return conn
