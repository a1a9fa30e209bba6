"""The plumbing every QueueManager and InternalManager method shares: checks, JSON, errors.

Queue operations send SQL through `Base._fetch`, which runs a named statement of
``sql/*queries.sql`` with the runner's pieces (`django_pgmq.sqlrun`: one registry, one
error translation, one tracing span). Because it uses Django's connection, a call made
inside ``transaction.atomic()`` commits or rolls back with the caller's data.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, TypeVar, cast

from django.core.serializers.json import DjangoJSONEncoder
from django.db import DatabaseError, connections

from .. import conf, routing, sqlrun
from ..errors import (
    NULL_MESSAGE,
    CrossDatabaseTransaction,
    FeatureNotAvailable,
    InvalidArgument,
    InvalidPayload,
    PgmqError,
)
from ..records import Message

MAX_INT4 = 2**31 - 1
MAX_QTY = 100_000
# The ops whose own statement is complete for every queue: archive and delete (no
# attribute changes them, so their statement has no attribute guard).
_COMPLETE_OPS = frozenset("ad")


@functools.cache
def _errors(alias: str) -> sqlrun.Errors:
    """How the manager words a missing schema on ``alias`` (the rest: the SQLSTATE registry)."""

    def missing(text: str) -> PgmqError:
        return FeatureNotAvailable(
            f"the pgmq SQL API is not installed in database {alias!r} ({text}): "
            f"run manage.py migrate django_pgmq --database {alias}"
        )

    return sqlrun.Errors(missing=missing)


def _translate(exc: DatabaseError, queue: str | None, alias: str) -> PgmqError | None:
    """The django-pgmq error a database error stands for, or None to re-raise it."""
    return sqlrun.translate(exc, queue, _errors(alias))


def refuse_unfit_arguments(
    shown_as: str, method: Any, args: tuple, kwargs: dict, exc: TypeError
) -> None:
    """Raise InvalidArgument naming ``shown_as`` when ``args`` (``self`` first) do not fit
    ``method``; return when they fit (the TypeError came from inside the call).

    Checked only after a TypeError, so the usual path pays nothing; the message shows the
    public signature, not an internal class (``MessageOps.read()``).
    """
    signature = inspect.signature(method)
    try:
        signature.bind(*args, **kwargs)
    except TypeError as mismatch:
        params = list(signature.parameters.values())[1:]  # without self
        shown = inspect.Signature([p.replace(annotation=p.empty) for p in params])
        by_name = " (those after the * go by name)" if "*" in str(shown) else ""
        raise InvalidArgument(f"{shown_as}{shown}: {mismatch}{by_name}") from exc


def _check_int(name: str, value: object, low: int, high: int = MAX_INT4) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgument(f"{name} must be an integer, got {value!r}")
    if not low <= value <= high:
        raise InvalidArgument(f"{name} must be between {low} and {high}, got {value}")
    return value


def _check_when(name: str, value: object) -> int | datetime:
    """A delay or vt: whole seconds from now, or an aware datetime."""
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise InvalidArgument(f"{name} must be a timezone-aware datetime, got {value!r}")
        return value
    return _check_int(name, value, 0)


# What json.dumps(value, cls=DjangoJSONEncoder, allow_nan=False) uses, made once
# (encode() keeps no state between calls: threads can share it).
_ENCODER = DjangoJSONEncoder(allow_nan=False)


def _dump(value: Any, what: str, queue: str) -> str:
    try:
        return _ENCODER.encode(value)
    except (TypeError, ValueError) as exc:
        raise InvalidPayload(f'queue "{queue}": {what} is not JSON-serializable: {exc}') from exc


def _dump_message(value: Any, queue: str) -> str:
    if value is None:
        raise InvalidPayload(f'queue "{queue}": {NULL_MESSAGE}')
    return _dump(value, "message", queue)


def _dump_headers(value: Any, queue: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise InvalidPayload(f'queue "{queue}": headers must be a dict, got {type(value).__name__}')
    return _dump(value, "headers", queue)


def _ids(value: int | Iterable[int]) -> tuple[list[int], bool]:
    """Message ids as a list, and whether a single id was given."""
    if isinstance(value, int) and not isinstance(value, bool):
        return [_check_int("msg_id", value, 1, 2**63 - 1)], True
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise InvalidArgument(f"msg_id must be an integer or a list of integers, got {value!r}")
    return [_check_int("msg_id", v, 1, 2**63 - 1) for v in value], False


def _id_array(ids: list[int]) -> str:
    """Checked message ids as a bigint[] literal: cheaper to send than a list psycopg adapts."""
    return "{" + ",".join(map(str, ids)) + "}"


R = TypeVar("R")


@functools.lru_cache(maxsize=64)
def _record_fields(cls: Any) -> tuple[tuple[str, bool], ...]:
    """The fields of record class ``cls`` (a dataclass or a NamedTuple), in order, each
    with whether the record needs a value for it (it has no default)."""
    if dataclasses.is_dataclass(cls):
        return tuple(
            (
                f.name,
                f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING,
            )
            for f in dataclasses.fields(cls)
            if f.init
        )
    defaults = cls._field_defaults
    return tuple((name, name not in defaults) for name in cls._fields)


def _record(cls: type[R], columns: Mapping[str, Any], **extra: Any) -> R:
    """A record of class ``cls`` from a row read by column name (`Base._fetch_named`).

    Each field takes the column of its name (``extra`` first: values the row lacks, such
    as the database alias); columns no field names are ignored, so a column added to a
    SQL result, at the end or in the middle, leaves the record as it was. A field with
    neither a column nor a default is a schema the code does not match: a clear error.
    """
    values: dict[str, Any] = {}
    missing = []
    for name, required in _record_fields(cast(Any, cls)):
        if name in extra:
            values[name] = extra[name]
        elif name in columns:
            values[name] = columns[name]
        elif required:
            missing.append(name)
    if missing:
        raise PgmqError(
            f"the database's result for {cls.__name__} has no column {', '.join(missing)} "
            f"(it has {', '.join(columns) or 'none'}): is the schema migrated "
            "(manage.py migrate django_pgmq)?"
        )
    return cls(**values)


def _json(value: Any) -> Any:
    """Django's psycopg backend returns jsonb as text; decode it."""
    return json.loads(value) if isinstance(value, str) else value


def _message(row: Sequence[Any]) -> Message:
    """A `Message` from a message row in `sqlrun.MESSAGE_COLUMNS` order (as
    `sqlrun.message_rows` gives it; jsonb columns as text, decoded here)."""
    msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers = row
    # What Message(...) does, minus the frozen dataclass's setattr per field.
    record = _new_message(Message)
    _set_fields(
        record,
        "__dict__",
        {
            "msg_id": msg_id,
            "read_ct": read_ct,
            "enqueued_at": enqueued_at,
            "last_read_at": last_read_at,
            "vt": vt,
            "message": _json(message),
            "headers": _json(headers),
        },
    )
    return record


_new_message = object.__new__
_set_fields = object.__setattr__


class Base:
    """A database alias and the one method that sends SQL (`_fetch`).

    Without ``using`` the manager is *routed*: each queue operation goes to the
    database ``PGMQ["QUEUE_DATABASES"]`` gives the queue (`routing.database_for`);
    operations on every queue (``list_queues``, ``metrics_all``, topic sends, schedule
    listings) cover every queue database (`each_database`), a schedule named alone is
    looked for in each; ``self.using`` is ``PGMQ["DATABASE"]``. With ``using`` every
    operation goes to that alias.
    """

    def __init__(self, using: str | None = None) -> None:
        self.routed = using is None
        self.using = using or conf.database_alias()
        if self.using not in connections.databases:
            raise InvalidArgument(f"database alias {self.using!r} is not in DATABASES")

    def alias_for(self, queue: str | None) -> str:
        """The database alias an operation on ``queue`` (None: on no queue) runs on."""
        if self.routed and queue is not None:
            return routing.database_for(queue)
        return self.using

    def each_database(self) -> list[str]:
        """The databases an operation on every queue covers (``list_queues``, ``metrics_all``,
        topic sends, schedules by name): with ``using``, that one; routed, every database
        that holds queues (`routing.queue_databases`, ``PGMQ["DATABASE"]`` first)."""
        return routing.queue_databases() if self.routed else [self.using]

    # -- plumbing -----------------------------------------------------------

    def _fetch(
        self,
        query: str,
        params: dict[str, Any],
        queue: str | None,
        identifiers: dict[str, str] | None = None,
        *,
        commit: bool = False,
        alias: str | None = None,
    ) -> list[tuple]:
        """Run a named query and return its rows (tuples), with database errors translated.

        ``identifiers`` fill the query's ``{name}`` slots, quoted by psycopg.sql.
        ``commit`` sends COMMIT in the same round trip, right after the query: only
        for a caller whose outermost atomic block ends at once (Django's commit
        then finds the transaction over and just runs the on-commit callbacks).
        ``alias`` runs it on that database instead of the queue's (`each_database`).
        """
        return self._run(_rows, query, params, queue, identifiers, commit, alias)

    def _fetch_named(
        self,
        query: str,
        params: dict[str, Any],
        queue: str | None,
        identifiers: dict[str, str] | None = None,
        *,
        alias: str | None = None,
    ) -> list[dict[str, Any]]:
        """`_fetch`, each row a dict by column name: for records built with `_record`,
        which a column added to the statement's result does not shift."""
        return self._run(_named_rows, query, params, queue, identifiers, False, alias)

    def _fetch_messages(
        self,
        query: str,
        params: dict[str, Any],
        queue: str | None,
        identifiers: dict[str, str] | None = None,
        *,
        commit: bool = False,
    ) -> list[Message]:
        """`_fetch` of a statement returning message rows, each a `Message` built from
        its columns by name (`sqlrun.message_rows`: no cost per row in the usual order)."""
        return self._run(_message_reader, query, params, queue, identifiers, commit, None)

    def _fetch_prepared(self, query: str, params: dict[str, Any], queue: str | None) -> list[tuple]:
        """`_fetch` as a server-side prepared statement when the project allows them
        (`sqlrun.prepared_rows`): for a statement planned anew on every call."""
        return self._run(_prepared_or_rows, query, params, queue, None, False, None)

    def _fetch_kept(
        self, queue: str, op: str, qty: int, args: tuple[Any, ...]
    ) -> list[tuple] | None:
        """Rows of ``queue``'s own statement of ``op``, prepared on the connection when the
        project allows prepared statements (`sqlrun.kept_rows`), when they stand; None
        when the caller must run the SQL API's function instead: prepared statements
        off, or nothing done on a queue that has attributes (the statement's guard
        stopped it; the function applies them). A send that inserted nothing was stopped
        by the guard; an empty read asks for the attributes once. An acknowledgement's
        result always stands: no attribute changes what it does (no guard).
        """
        params = {"key": (queue, op, qty), "args": args}
        rows = self._run(_kept_rows, "queue_ops_client_sql", params, queue, None, False, None)
        if rows is None or rows or op in _COMPLETE_OPS:
            return rows
        if op == "s":
            return None
        attributes = self._fetch_prepared("queue_attributes", {"queue": queue}, queue)
        return None if attributes[0][0] else rows

    def _run(
        self,
        reader: Any,
        query: str,
        params: dict[str, Any],
        queue: str | None,
        identifiers: dict[str, str] | None,
        commit: bool,
        alias: str | None,
    ) -> Any:
        """Send a named query through ``reader`` (`_rows`, `_named_rows`), errors translated.

        The runner's pieces (`sqlrun.statement`, `sqlrun.rows`, `sqlrun.translate`,
        `sqlrun.span`) called directly: the one way to run SQL, without a layer per call.
        """
        if identifiers or commit:
            sql = _statement(query, tuple(identifiers.items()) if identifiers else (), commit)
        else:
            sql = sqlrun.statements()[query]
        if alias is None:
            alias = self.alias_for(queue) if self.routed else self.using
        connection = connections[alias]
        try:
            with sqlrun.span(query):
                return reader(connection, sql, params)
        except DatabaseError as exc:
            translated = _translate(exc, queue, alias)
            if translated is None:
                raise
            raise translated from exc


def transactions_not_joined(alias: str) -> list[str]:
    """The aliases whose open ``transaction.atomic()`` a send on ``alias`` would not join;
    [] when there is none, when ``alias`` has its own open, or when
    ``PGMQ["ALLOW_CROSS_DATABASE_SEND"]`` accepts separate commits."""
    if connections[alias].in_atomic_block:
        return []
    open_on = [
        c.alias
        for c in connections.all(initialized_only=True)
        if c.alias != alias and c.in_atomic_block
    ]
    return open_on if open_on and not conf.get("ALLOW_CROSS_DATABASE_SEND") else []


def check_joins_transaction(queue: str, alias: str) -> None:
    """Refuse a routed send that cannot join the caller's open transaction.

    Inside ``transaction.atomic()`` on one alias, a send to a queue routed to
    another alias would commit on its own (or be lost on its own): raise instead,
    unless ``PGMQ["ALLOW_CROSS_DATABASE_SEND"]`` is True. Callers that name the
    alias (``QueueManager(using=...)``) are not checked: they chose it.
    """
    open_on = transactions_not_joined(alias)
    if open_on:
        raise CrossDatabaseTransaction(
            f'queue "{queue}" lives in database {alias!r}, but the send runs inside '
            f"transaction.atomic() on {', '.join(map(repr, open_on))}: it could not commit "
            f"or roll back with that transaction. Open transaction.atomic(using={alias!r}), "
            f"send with QueueManager(using={alias!r}) to accept a separate commit, or set "
            "PGMQ['ALLOW_CROSS_DATABASE_SEND'] = True"
        )


# -- sending statements: the runner's (sqlrun), under the names callers know ----------

_statement = sqlrun.statement
_rows = sqlrun.rows
_prepared_rows = sqlrun.prepared_rows
_by_name = sqlrun.by_name


def _prepared_or_rows(connection: Any, sql: str, params: dict[str, Any]) -> list[tuple]:
    """`_prepared_rows`, or `_rows` when prepared statements are off."""
    found = _prepared_rows(connection, sql, params)
    return _rows(connection, sql, params) if found is None else found


def _kept_rows(connection: Any, sql: str, params: dict[str, Any]) -> list[tuple] | None:
    """`sqlrun.kept_rows` of ``params`` (``sql`` fetches the statement), None when not run."""
    return sqlrun.kept_rows(connection, sql, params["key"], params["args"])


def _message_reader(connection: Any, sql: str, params: dict[str, Any]) -> list[Message]:
    """`_rows` of message rows, each a `Message` (columns by name: `sqlrun.message_rows`)."""
    return [_message(row) for row in _rows(connection, sql, params, sqlrun.message_rows)]


def _named_rows(connection: Any, sql: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    """`_rows`, each a dict from column name to value (names from the cursor's description)."""
    return _rows(connection, sql, params, _by_name)
