"""The one way django-pgmq runs SQL from Python: named statements and one runner.

Every statement Python sends is named once, in the named-query file (`FILES`:
``sql/queries.sql``, in sections by caller), under a ``-- name:`` line; `statements`
reads it into one registry, and a name defined twice is an error. Where a statement calls one SQL
function it takes that function's name (without a leading underscore), and so does
the Python method that runs it (CONTRIBUTING.md, "How to add a command").

`run` sends a named statement on a psycopg connection: Django's (a
``DatabaseWrapper``: the manager, the internal layer, the Tasks backend, Celery's
publishes inside ``transaction.atomic()``) or a plain one (Celery's sessions, the
Spark executors, which have no Django settings, the worker's listener). Whatever the
connection, a database error goes through `translate` (the SQLSTATE registry of
`errors.lookup`) and the statement runs in a tracing span when the caller is traced.

The manager's hot path (`manager.plumbing`) uses the pieces below directly
(`statement`, `rows`, `prepared_rows`, `django_error`) so that a send or a read pays
no extra layer per call. This module imports without Django settings.
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC
from typing import Any

import psycopg
from psycopg import sql as psql
from psycopg.types.array import ListBinaryDumper

from . import sqlfiles, tracing
from .errors import FeatureNotAvailable, PgmqError, from_sqlstate

FILES = ("queries.sql",)  # one file, in sections by caller
MAX_CURSORS = 100  # psycopg cursors kept per Django connection (see _cursor)
MAX_KEPT = 64  # queue statements kept per Django connection (see kept_rows)
PLAN_SECONDS = 1.0  # a queue statement's plan is made again this often (see _KeptStatement)

# What `run` returns: every row (tuples), the first row (or None), every row as a dict
# by column name, the affected row count, or nothing.
ALL, ONE, NAMED, ROWCOUNT, NOTHING = "all", "one", "named", "rowcount", "nothing"
MESSAGES = "messages"  # message rows, by column name (`message_rows`)
# pgmq's message_record, in its order: what every message-returning statement selects.
MESSAGE_COLUMNS = ("msg_id", "read_ct", "enqueued_at", "last_read_at", "vt", "message", "headers")


class DuplicateStatement(PgmqError):
    """A statement name is defined twice (in one named-query file, or in two)."""


# -- the registry -----------------------------------------------------------------


def collect(files: Mapping[str, Iterable[tuple[str, str]]]) -> dict[str, str]:
    """One registry from each file's statements (file name -> (name, text) pairs); a name
    defined twice, in two files or in one, raises `DuplicateStatement` naming both places."""
    found: dict[str, str] = {}
    where: dict[str, str] = {}
    for filename, named in files.items():
        for name, text in named:
            if name in where:
                raise DuplicateStatement(
                    f"SQL statement {name!r} is defined in {where[name]} and in {filename}: "
                    "a name is defined once"
                )
            found[name], where[name] = text, filename
    return found


@functools.cache
def statements() -> dict[str, str]:
    """Every named statement of every file in `FILES`, by name."""
    return collect({filename: sqlfiles.parse(sqlfiles.read(filename)) for filename in FILES})


def text(name: str) -> str:
    """The statement named ``name``."""
    try:
        return statements()[name]
    except KeyError:
        raise KeyError(f"no SQL statement named {name!r} in {', '.join(FILES)}") from None


@functools.lru_cache(maxsize=256)
def statement(
    name: str, identifiers: tuple[tuple[str, str], ...] = (), commit: bool = False
) -> str:
    """A named statement with its ``{slot}`` s filled by quoted identifiers, maybe a COMMIT."""
    query = text(name)
    if identifiers:
        slots = {slot: psql.Identifier(value) for slot, value in identifiers}
        query = psql.SQL(query).format(**slots).as_string(None)
    # One simple-protocol query string (Django's client-side binding cursor): the
    # first result holds the rows.
    return query.rstrip().rstrip(";") + ";\nCOMMIT" if commit else query


def compose(name: str, **parts: psql.Composable) -> psql.Composed:
    """A named statement with its ``{slot}`` s filled by composed SQL (identifiers, literals)."""
    return psql.SQL(text(name)).format(**parts)


# -- errors -----------------------------------------------------------------------


def _default_missing(text: str) -> PgmqError:
    return FeatureNotAvailable(
        f"the pgmq SQL API is not installed in this database ({text}): "
        "run manage.py migrate django_pgmq"
    )


@dataclass(frozen=True)
class Errors:
    """How one caller words what the SQLSTATE registry leaves to it.

    ``missing`` words a missing schema (SQLSTATEs ``missing_states``: no schema pgmq,
    a function the installed SQL lacks); ``redact`` takes secrets out of a text;
    ``wrap_all`` turns every other database error into a `PgmqError` naming the queue,
    with its cause hidden (the Spark executors', whose tracebacks reach Spark's logs).
    """

    missing: Callable[[str], PgmqError] = _default_missing
    missing_states: frozenset[str] = field(default=frozenset({"3F000"}))
    redact: Callable[[str], str] | None = None
    wrap_all: bool = False


DEFAULT = Errors()


def sqlstate(exc: BaseException) -> str | None:
    """The SQLSTATE of a psycopg error, or of the one Django's error wraps."""
    cause = exc if isinstance(exc, psycopg.Error) else (exc.__cause__ or exc)
    return getattr(cause, "sqlstate", None)


def error_text(exc: BaseException) -> str:
    """The first line of a database error, with its DETAIL when it has one."""
    cause = exc if isinstance(exc, psycopg.Error) else (exc.__cause__ or exc)
    lines = str(cause).splitlines()
    text = lines[0] if lines else type(cause).__name__
    detail = getattr(getattr(cause, "diag", None), "message_detail", None)
    return f"{text} ({detail})" if detail else text


def translate(exc: BaseException, queue: str | None, errors: Errors = DEFAULT) -> PgmqError | None:
    """The django-pgmq error a database error stands for, or None to re-raise it as it is."""
    state = sqlstate(exc)
    text = error_text(exc)
    if errors.redact is not None:
        text = errors.redact(text)
    if state in errors.missing_states:
        return errors.missing(text)
    known = from_sqlstate(state, text, queue or None)
    if known is None and errors.wrap_all:
        return PgmqError(f'queue "{queue}": {text}' if queue else text)
    return known


def _raise(exc: BaseException, queue: str | None, errors: Errors) -> None:
    translated = translate(exc, queue, errors)
    if translated is None:
        raise exc
    if errors.wrap_all:
        raise translated from None
    raise translated from exc


# -- tracing ----------------------------------------------------------------------


span = tracing.statement  # a CLIENT span ``pgmq <name>`` inside a traced operation


# -- running ----------------------------------------------------------------------


def _fetch(cursor: Any, fetch: str) -> Any:
    if fetch == ALL:
        return cursor.fetchall() if cursor.description else []
    if fetch == ONE:
        return cursor.fetchone() if cursor.description else None
    if fetch == NAMED:
        return by_name(cursor)
    if fetch == MESSAGES:
        return message_rows(cursor)
    if fetch == ROWCOUNT:
        return cursor.rowcount
    return None


def _is_django(conn: Any) -> bool:
    return hasattr(conn, "wrap_database_errors")


def run(
    conn: Any,
    name: str,
    params: Mapping[str, Any] | Sequence[Any] | None = None,
    *,
    identifiers: Mapping[str, str] | None = None,
    parts: Mapping[str, psql.Composable] | None = None,
    fetch: str = ALL,
    queue: str | None = None,
    errors: Errors = DEFAULT,
    prepare: bool | None = None,
) -> Any:
    """Run the statement ``name`` on ``conn`` and return what ``fetch`` asks for.

    ``conn`` is Django's connection (a ``DatabaseWrapper``: the statement joins its
    transaction, Django's execute wrappers and query log see it) or a plain psycopg
    connection. ``identifiers`` fill the statement's ``{slot}`` s with quoted names,
    ``parts`` with composed SQL; ``params`` are bound. A database error becomes the
    `PgmqError` its SQLSTATE stands for (naming ``queue``), worded by ``errors``;
    one the registry does not know is raised as it is.
    """
    if parts:
        query: Any = compose(name, **parts)
    elif identifiers:
        query = statement(name, tuple(identifiers.items()))
    else:
        query = text(name)
    with span(name):
        if _is_django(conn):
            if isinstance(query, psql.Composable):
                query = query.as_string(None)
            try:
                return rows(conn, query, params, lambda cursor: _fetch(cursor, fetch))
            except Exception as exc:
                if not django_error(exc):
                    raise
                _raise(exc, queue, errors)
        try:
            return _fetch(conn.execute(query, params, prepare=prepare), fetch)
        except psycopg.Error as exc:
            _raise(exc, queue, errors)
    raise AssertionError("unreachable")  # pragma: no cover


def run_many(
    conn: psycopg.Connection,
    name: str,
    params: Iterable[Mapping[str, Any]],
    *,
    queue: str | None = None,
    errors: Errors = DEFAULT,
) -> None:
    """Run the statement ``name`` once per parameter set, in one pipeline (plain psycopg)."""
    with span(name), conn.cursor() as cursor:
        try:
            cursor.executemany(text(name), params)
        except psycopg.Error as exc:
            _raise(exc, queue, errors)


@contextlib.contextmanager
def copy(
    conn: psycopg.Connection,
    name: str,
    *,
    parts: Mapping[str, psql.Composable] | None = None,
    queue: str | None = None,
    errors: Errors = DEFAULT,
) -> Iterator[psycopg.Copy]:
    """A ``COPY`` statement's stream (plain psycopg), errors translated as `run` does."""
    query = compose(name, **parts) if parts else psql.SQL(text(name))
    with span(name), conn.cursor() as cursor:
        try:
            with cursor.copy(query) as stream:
                yield stream
        except psycopg.Error as exc:
            _raise(exc, queue, errors)


# -- Django's connection: the manager's fast path -------------------------------------


def django_error(exc: BaseException) -> bool:
    """Whether ``exc`` is one of Django's database errors (imported only when needed)."""
    from django.db import DatabaseError

    return isinstance(exc, DatabaseError)


def by_name(cursor: Any) -> list[dict[str, Any]]:
    """A cursor's rows as dicts keyed by its columns' names."""
    found = cursor.fetchall()
    names = [column[0] for column in cursor.description or ()]
    return [dict(zip(names, row, strict=True)) for row in found]


def message_rows(cursor: Any) -> list[tuple]:
    """A cursor's message rows, each a tuple in `MESSAGE_COLUMNS` order, read by name.

    The hot path (reads, pops): the columns' names are compared with `MESSAGE_COLUMNS`
    once per statement, and rows that already come in that order are returned as they
    are, at no cost per row; a result whose columns are moved, or that has more, is
    picked by name. A message column missing is a schema the code does not match.
    """
    found = cursor.fetchall()
    names = tuple(column[0] for column in cursor.description or ())
    if names == MESSAGE_COLUMNS:
        return found
    missing = [name for name in MESSAGE_COLUMNS if name not in names]
    if missing:
        raise PgmqError(
            f"the database's message rows have no column {', '.join(missing)} "
            f"(they have {', '.join(names) or 'none'}): is the schema migrated?"
        )
    at = [names.index(name) for name in MESSAGE_COLUMNS]
    return [tuple(row[i] for i in at) for row in found]


def _all(cursor: Any) -> list[tuple]:
    return cursor.fetchall()


def rows(connection: Any, sql: str, params: Any, fetch: Any = _all) -> Any:
    """Run ``sql`` on Django's connection (in its transaction, if any); its rows, as
    ``fetch`` reads them from the cursor (tuples by default).

    The plain case (no execute wrapper, queries not logged) skips Django's cursor
    wrapper but does what it does: health check, connecting, refusing to run in a
    broken atomic block, Django's database exceptions. Otherwise Django's wrapper runs
    (wrappers see the query, DEBUG logs it). Both use the cursor `_cursor` keeps for
    the statement; opening it on a dead connection raises Django's `OperationalError`,
    as any query does.
    """
    if connection.execute_wrappers or connection.queries_logged:
        connection.close_if_health_check_failed()
        connection.ensure_connection()
        with connection.wrap_database_errors:  # a dead connection fails here already
            cursor = _cursor(connection, sql)
        if connection.queries_logged:
            wrapped = connection.make_debug_cursor(cursor)
        else:
            wrapped = connection.make_cursor(cursor)
        wrapped.execute(sql, params)
        return fetch(wrapped)
    if connection.connection is None or connection.health_check_enabled:
        connection.close_if_health_check_failed()
        connection.ensure_connection()
    connection.validate_no_broken_transaction()
    with connection.wrap_database_errors:
        cursor = _cursor(connection, sql)
        cursor.execute(sql, params)
        return fetch(cursor)


def _kept_on(connection: Any, attribute: str) -> dict:
    """The dict kept on Django's ``connection`` under ``attribute``: a new one on first use
    and whenever Django's psycopg connection is a new one (cursors and statements are
    the old connection's)."""
    pg = connection.connection
    kept = getattr(connection, attribute, None)
    if kept is None or kept[0] is not pg:
        kept = (pg, {})
        setattr(connection, attribute, kept)
    return kept[1]


def _preparing(connection: Any) -> Any:
    """Django's psycopg connection, ready for a statement of ours to prepare (Django's
    checks done: health check, connecting, a broken atomic block refused), or None when
    the project leaves prepared statements off or Django's wrappers must see the query."""
    if connection.execute_wrappers or connection.queries_logged:
        return None
    if connection.connection is None or connection.health_check_enabled:
        connection.close_if_health_check_failed()
        connection.ensure_connection()
    pg = connection.connection
    if pg.prepare_threshold is None:
        return None
    connection.validate_no_broken_transaction()
    return pg


def prepared_rows(connection: Any, sql: str, params: Any) -> list[tuple] | None:
    """Run ``sql`` as a server-side prepared statement, when the project allows them.

    Django binds parameters on the client and leaves psycopg's prepared statements off
    (``prepare_threshold`` None) so that PgBouncer in transaction mode works; a project
    that sets ``OPTIONS["prepare_threshold"]`` has turned them on, and then a statement
    that is parsed and planned on every call (a task's enqueue) is planned once per
    connection. None (nothing run) when they are off, or when Django's wrappers must
    see the query: the caller runs it as usual.
    """
    pg = _preparing(connection)
    if pg is None:
        return None
    with connection.wrap_database_errors:
        cursors: dict[str, Any] = _kept_on(connection, "_pgmq_prepared")
        cursor = cursors.get(sql)
        if cursor is None or cursor.closed:
            cursor = cursors[sql] = psycopg.Cursor(pg)
        cursor.execute(sql, params, prepare=True)
        return cursor.fetchall()


def kept_rows(
    connection: Any, fetch_sql: str, key: tuple[str, str, int], params: Sequence[Any]
) -> list[tuple] | None:
    """Run a queue's own statement prepared on Django's connection, when the project allows
    prepared statements (as `prepared_rows`): its rows, or None when nothing was run.

    ``key`` is (queue, op, qty); ``fetch_sql`` fetches the statement's text once per
    connection (``pgmq._queue_ops_client_sql``: the kept statement, with the attribute
    guard, the quantity as a constant and ``params`` as $1). psycopg prepares it, and
    PostgreSQL keeps its generic plan: a read at batch 10 without the PL/pgSQL around the
    server's own kept statements. None as well for an op or qty the server does not
    take (the text is NULL).
    """
    pg = _preparing(connection)
    if pg is None:
        return None
    with connection.wrap_database_errors:
        statements: dict[tuple[str, str, int], _KeptStatement] = _kept_on(connection, "_pgmq_kept")
        found = statements.get(key)
        if found is None or found.cursor.closed:
            queue, op, qty = key
            with pg.cursor() as fetch:
                text = fetch.execute(fetch_sql, {"queue": queue, "op": op, "qty": qty}).fetchone()
            if text is None or text[0] is None:
                return None
            _make_room(statements, MAX_KEPT)
            cursor = psycopg.RawCursor(pg)  # the text's parameters are PostgreSQL's $1
            _load_timestamps_as_django(connection, cursor)
            # lists (a send's messages and headers, JSON text) go in binary: the text
            # form quotes every element with a regular expression, about 80 us for ten
            # messages against 6
            cursor.adapters.register_dumper(list, ListBinaryDumper)
            found = statements[key] = _KeptStatement(text[0], cursor)
        found.cursor.execute(found.current(pg), params, prepare=True)
        return found.cursor.fetchall()


@dataclass
class _KeptStatement:
    """A queue's own statement on one connection: its text, the cursor that runs it, and
    the text of this plan period (see `current`)."""

    text: str
    cursor: Any
    period: int = -1
    sql: str = ""

    def close(self) -> None:
        self.cursor.close()

    def current(self, pg: Any) -> str:
        """The statement's text with the plan period's number in a closing comment: a new
        text, so a new prepared statement and a new plan, every `PLAN_SECONDS`.

        PostgreSQL keeps a prepared statement's generic plan until the table's statistics
        change (vacuum, analyze). One made while the queue was empty after a vacuum sorts
        a sequential scan (measured: 16 ms for a read of 10 once the queue held 20,000
        messages, against 1.5 ms), and would stay until the next vacuum; made again each
        period, a plan is at most that old, and one made on a table that holds messages
        walks the primary key.
        """
        period = int(time.monotonic() // PLAN_SECONDS)
        if period != self.period:
            self.period = period
            comment = psql.SQL("\n-- plan period {}").format(psql.Literal(period))
            self.sql = psql.Composed([psql.SQL(self.text), comment]).as_string(pg)
        return self.sql


def _load_timestamps_as_django(connection: Any, cursor: Any) -> None:
    """Make ``cursor`` load timestamps as Django's own cursors do (aware, in the
    connection's time zone), with psycopg's C loader when that zone is UTC."""
    if _load_utc_timestamps_fast(connection, cursor):
        return
    from django.db.backends.postgresql.psycopg_any import register_tzloader

    pg = connection.connection
    tzloader = pg.adapters.get_loader(_TIMESTAMPTZ_OID, psycopg.pq.Format.TEXT)
    if connection.timezone != tzloader.timezone:  # what Django's create_cursor does
        register_tzloader(connection.timezone, cursor)


def _load_utc_timestamps_fast(connection: Any, cursor: Any) -> bool:
    """Give ``cursor`` psycopg's C loader for timestamps when both Django's and the
    connection's time zone are UTC (same values and ``tzinfo`` as Django's pure-Python
    loader); whether it did."""
    if connection.timezone is UTC and connection.connection.info.timezone is UTC:
        cursor.adapters.register_loader("timestamptz", _UTC_LOADER)
        return True
    return False


def _make_room(kept: dict[Any, Any], most: int) -> None:
    """Close and forget everything in ``kept`` (cursors, statements) once it holds
    ``most``: e.g. a statement per queue name, start afresh."""
    if len(kept) >= most:
        for old in kept.values():
            old.close()
        kept.clear()


def _cursor(connection: Any, sql: str) -> Any:
    """The psycopg cursor that runs ``sql`` on ``connection``: one per statement and connection.

    A psycopg cursor that runs the same statement again keeps the loaders and
    dumpers it set up the time before; one cursor shared by statements taking
    turns (lock, acknowledge, read) would set them up on every call. Each loads
    timestamps as Django's own cursors do (aware, in the connection's time
    zone); when that zone is UTC, with psycopg's C loader rather than Django's
    pure-Python one, which was most of the cost of reading a message.
    """
    cursors: dict[str, Any] = _kept_on(connection, "_pgmq_cursors")
    cursor = cursors.get(sql)
    if cursor is not None and not cursor.closed:
        return cursor
    _make_room(cursors, MAX_CURSORS)
    cursor = cursors[sql] = connection.create_cursor()  # Django's cursor class and adapters
    _load_utc_timestamps_fast(connection, cursor)  # otherwise create_cursor's loader
    return cursor


_TIMESTAMPTZ_OID = psycopg.postgres.types["timestamptz"].oid
_UTC_LOADER = psycopg.adapters.get_loader(_TIMESTAMPTZ_OID, psycopg.pq.Format.TEXT)
