"""The one way django-pgmq runs SQL from Python: named statements and one runner.

Every statement Python sends is named once, in the named-query file (`FILES`:
``sql/queries.sql``, in sections by caller), under a ``-- name:`` line; `statements`
reads it into one registry, and a name defined twice is an error. Where a statement calls one SQL
function it takes that function's name (without a leading underscore), and so does
the Python method that runs it (CONTRIBUTING.md, "A SQL statement").

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
from collections import OrderedDict
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
MAX_KEPT = 32  # queue statements prepared per Django connection (see _KeptStatements)
MAX_TEXTS = 4096  # queue statements' texts kept per Django connection (about 1 kB each)
PLAN_SECONDS = 1.0  # a queue statement's plan is made again this often (see _KeptStatements)

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

    ``key`` is (queue, op, qty); ``fetch_sql`` fetches the statement's text
    (``pgmq._queue_ops_client_sql``: the kept statement, with the attribute guard, the
    quantity as a constant and ``params`` as $1), once per connection while the text stays
    among the `MAX_TEXTS` used last. psycopg prepares it, and PostgreSQL keeps its generic
    plan: a read at batch 10 without the PL/pgSQL around the server's own kept statements.
    At most `MAX_KEPT` statements are prepared per connection, each planned again once a
    `PLAN_SECONDS` period (see `_KeptStatements`); past that, a statement runs unprepared.
    None as well for an op or qty the server does not take (the text is NULL).
    """
    pg = _preparing(connection)
    if pg is None:
        return None
    with connection.wrap_database_errors:
        kept = _kept_statements(connection)
        text = kept.texts.get(key, _MISSING)
        if text is _MISSING:
            queue, op, qty = key
            with pg.cursor() as fetch:
                found = fetch.execute(fetch_sql, {"queue": queue, "op": op, "qty": qty}).fetchone()
            text = kept.remember(key, found[0] if found else None)
        else:
            kept.texts.move_to_end(key)
        if text is None:
            return None
        cursor, prepare = kept.cursor(connection, key, text)
        cursor.execute(text, params, prepare=prepare)
        return cursor.fetchall()


_MISSING: Any = object()


@dataclass
class _KeptStatement:
    """A queue's own statement prepared on one connection: the cursor that runs it and the
    plan period it was (last) prepared in."""

    text: str
    cursor: Any
    period: int


@dataclass
class _KeptStatements:
    """A connection's queue statements: their texts (an LRU of `MAX_TEXTS`) and the ones
    prepared (at most `MAX_KEPT`, least recently used first).

    **One plan per statement, made again each period.** PostgreSQL keeps a prepared
    statement's generic plan until the table's statistics change (vacuum, analyze). One
    made while the queue was empty after a vacuum sorts a sequential scan (measured: 16 ms
    for a read of 10 once the queue held 20,000 messages, against 1.5 ms), and would stay
    until autovacuum analyzes the table again (a minute or more). So a statement first run
    in a new `PLAN_SECONDS` period has its prepared statement closed (a protocol-level
    Close, `_unprepare`) and is prepared again, with the same text: a plan is at most a
    period old, one made on a table that holds messages walks the primary key, and the
    connection holds one prepared statement per kept statement, never the periods' old
    ones. PostgreSQL offers nothing narrower: ``plan_cache_mode`` is a setting of the
    session (a client cannot set it for one statement), and a custom plan each call costs
    the planning the prepared statement saves (about 100 us of the read's 200).

    **Bounded.** A new statement takes a free place, or the place of the least recently
    used one when that one was not run in this period (it would be prepared again at its
    next run anyway); otherwise it runs unprepared (parsed and planned on the call, as
    through the SQL API, holding nothing). So with many queues in turns (1,000 queues,
    each read in a loop) the connection neither re-fetches texts nor prepares and closes a
    statement per call.
    """

    pg: Any
    texts: OrderedDict[tuple[str, str, int], str | None] = field(default_factory=OrderedDict)
    prepared: OrderedDict[tuple[str, str, int], _KeptStatement] = field(default_factory=OrderedDict)
    spare: Any = None  # the cursor of statements run unprepared

    def remember(self, key: tuple[str, str, int], text: str | None) -> str | None:
        self.texts[key] = text
        if len(self.texts) > MAX_TEXTS:
            self.texts.popitem(last=False)
        return text

    def cursor(self, connection: Any, key: tuple[str, str, int], text: str) -> tuple[Any, bool]:
        """The cursor that runs ``key``'s statement, and whether to prepare it."""
        period = int(time.monotonic() // PLAN_SECONDS)
        found = self.prepared.get(key)
        if found is not None and not found.cursor.closed:
            self.prepared.move_to_end(key)
            if found.period != period:  # its plan is a period old: plan it again
                _unprepare(self.pg, found.text)
                found.period = period
            return found.cursor, True
        if found is not None:  # its cursor was closed
            del self.prepared[key]
        if len(self.prepared) >= MAX_KEPT:
            oldest_key, oldest = next(iter(self.prepared.items()))
            if oldest.period == period:  # every place is in use this period
                return self._spare(connection), False
            del self.prepared[oldest_key]
            _unprepare(self.pg, oldest.text)
            oldest.cursor.close()
        cursor = _kept_cursor(connection, psycopg.RawCursor(self.pg))
        self.prepared[key] = _KeptStatement(text, cursor, period)
        return cursor, True

    def _spare(self, connection: Any) -> Any:
        if self.spare is None or self.spare.closed:
            self.spare = _kept_cursor(connection, psycopg.RawCursor(self.pg))
        return self.spare


def _kept_statements(connection: Any) -> _KeptStatements:
    """The `_KeptStatements` of Django's ``connection``: new with each psycopg connection."""
    pg = connection.connection
    kept = getattr(connection, "_pgmq_kept", None)
    if kept is None or kept.pg is not pg:
        kept = _KeptStatements(pg)
        connection._pgmq_kept = kept
    return kept


def _kept_cursor(connection: Any, cursor: Any) -> Any:
    """``cursor`` (a raw cursor: the texts' parameters are PostgreSQL's $1) set up for the
    queue statements: timestamps as Django loads them, lists (a send's messages and
    headers, JSON text) dumped in binary: the text form quotes every element with a
    regular expression, about 80 us for ten messages against 6."""
    _load_timestamps_as_django(connection, cursor)
    cursor.adapters.register_dumper(list, ListBinaryDumper)
    return cursor


def _unprepare(pg: Any, text: str) -> bool:
    """Have psycopg close its prepared statement of ``text`` on ``pg`` (at its next
    statement), so that the text is prepared again on its next run; whether it could.

    psycopg has no public call for one statement, so this uses its prepared-statement
    cache (``_prepared``: the names by (query, types), and the names to close), the way
    its own eviction past ``prepared_max`` does. With libpq 17 or later psycopg closes a
    statement at the protocol level (PgBouncer 1.21 or later keeps track of it); with an
    older libpq it sends ``DEALLOCATE name``, which PgBouncer in transaction mode does not
    support (nor psycopg's own eviction). Should a later psycopg change that cache, this
    does nothing: the statement then keeps its plan until PostgreSQL makes it again (a
    test checks that it works with the psycopg installed).
    """
    cache = getattr(pg, "_prepared", None)
    names = getattr(cache, "_names", None)
    to_close = getattr(cache, "_to_flush", None)
    if not isinstance(names, dict) or to_close is None:
        return False
    query = text.encode()
    for key in [key for key in names if isinstance(key, tuple) and key[:1] == (query,)]:
        to_close.append(names.pop(key))
    return True


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
