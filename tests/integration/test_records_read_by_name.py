"""Every record built from a named statement is read by column name, and its fields are
that statement's columns: found from the code (`tests.record_sources`), with no list to
keep, and checked against the statement as PostgreSQL describes it. Then the statements
the code reads by name are run with a column added in front of their result, which
shifts every column a positional read (``Cls(*row)``, ``row[0]``) would take: the
records must come out as they do from the statements as written."""

from __future__ import annotations

import dataclasses
import re
import string
from datetime import timedelta

import psycopg
import pytest
from django.db import connection
from django.utils import timezone
from psycopg import pq

from django_pgmq import records, sqlrun
from django_pgmq.internal import InternalManager
from tests import record_sources

RECORDS = {
    name
    for name, value in vars(records).items()
    if isinstance(value, type) and value.__module__ == records.__name__
}
FOUND = record_sources.find(set(sqlrun.statements()), RECORDS)


def table_slots() -> dict[str, str]:
    """The tables a statement's ``{slot}`` names (the models' tables the code passes)."""
    from django_pgmq.models import QueueConfig, QueueSample, Worker

    return {
        "config": QueueConfig._meta.db_table,
        "worker": Worker._meta.db_table,
        "sample": QueueSample._meta.db_table,
    }


def columns_of(pg: psycopg.Connection, name: str) -> list[str]:
    """The result columns of statement ``name``, as PostgreSQL describes it once prepared
    (nothing run, no parameter needed: each ``%(param)s`` becomes ``$n``)."""
    slots = {field for _, field, _, _ in string.Formatter().parse(sqlrun.text(name)) if field}
    known = table_slots()
    assert slots <= set(known), f"statement {name}: no table for slot(s) {slots - set(known)}"
    text = sqlrun.statement(name, tuple((slot, known[slot]) for slot in sorted(slots)))
    numbers: dict[str, int] = {}
    text = re.sub(
        r"%\((\w+)\)s", lambda m: f"${numbers.setdefault(m[1], len(numbers) + 1)}", text
    ).replace("%%", "%")
    prepared = pg.pgconn.prepare(b"", text.encode())
    assert prepared.status == pq.ExecStatus.COMMAND_OK, (
        f"statement {name} does not prepare: {prepared.error_message.decode()}"
    )
    described = pg.pgconn.describe_prepared(b"")
    return [described.fname(i).decode() for i in range(described.nfields)]


def disagreement(source: record_sources.Source, record: type, columns: list[str]) -> list[str]:
    """How ``record``'s fields and a statement's ``columns`` disagree (empty: they agree):
    a field neither a column nor filled by the code, a column neither a field nor read."""
    if dataclasses.is_dataclass(record):
        fields = [f.name for f in dataclasses.fields(record) if f.init]
    else:
        fields = list(record._fields)  # type: ignore[attr-defined]
    where = f"{source.record} from statement {source.statement} ({source.where})"
    return [
        f"{where}: field {f} is no column of the statement ({', '.join(columns)})"
        for f in fields
        if f not in columns and f not in source.extras
    ] + [
        f"{where}: column {c} is no field of the record, and the code reads it nowhere"
        for c in columns
        if c not in fields and c not in source.read
    ]


@pytest.fixture
def described(db):
    """Describe statements on Django's connection (the test database), by name."""
    connection.ensure_connection()
    return lambda name: columns_of(connection.connection, name)


@pytest.mark.parametrize(
    "source", FOUND.sources, ids=[f"{s.statement}-{s.record}" for s in FOUND.sources]
)
def test_each_record_has_its_statements_columns_as_fields(source, described):
    columns = described(source.statement)
    assert disagreement(source, getattr(records, source.record), columns) == []


def test_a_record_and_its_statement_that_disagree_are_named(described):
    """The check above can fail: a record whose field is not the statement's column."""

    @dataclasses.dataclass(frozen=True)
    class Matched:
        matched: int
        last: int | None

    source = record_sources.Source(
        "dashboard_match_count", "Matched", frozenset(), frozenset(), "here"
    )
    found = disagreement(source, Matched, described("dashboard_match_count"))
    assert [line.split(": ", 1)[1][:30] for line in found] == [
        "field last is no column of the",
        "column last_id is no field of ",
    ]


def test_no_record_is_read_by_position():
    assert [
        f"{p.where}: {p.record} of {sorted(p.statements)}: {p.how}" for p in FOUND.positional
    ] == []


def test_every_record_built_by_name_was_followed_to_its_statement():
    """Each ``_record(Record, ...)`` of the package is one the reading above followed to a
    statement (else a record's statement would go unchecked), and it found records."""
    assert FOUND.unfollowed == []
    assert FOUND.sources


@pytest.fixture
def column_added(monkeypatch):
    """Turn on: every statement the code reads by name returns an extra first column."""

    def turn_on() -> None:
        statements = sqlrun.statements()  # the runner's one registry
        for name in FOUND.named:
            body = statements[name].rstrip().rstrip(";")
            monkeypatch.setitem(
                statements, name, f"WITH s AS (\n{body}\n) SELECT 'x' AS added, s.* FROM s"
            )
        sqlrun.statement.cache_clear()  # statements with identifiers, filled from the registry

    yield turn_on
    sqlrun.statement.cache_clear()


def values(found: object) -> tuple:
    """A tuple's or a record's values, in order."""
    return dataclasses.astuple(found) if dataclasses.is_dataclass(found) else tuple(found)


def without_times(records: list) -> list:
    """Records with the fields a second call moves (times) blanked."""
    moving = {"scrape_time", "last_notified_at"}
    return [
        dataclasses.replace(r, **{f.name: None for f in dataclasses.fields(r) if f.name in moving})
        for r in records
    ]


def test_topic_records_are_read_by_column_name(manager, queue, column_added):
    manager.bind_topic(f"{queue}.*", queue)

    def records() -> tuple:
        return (
            manager.list_topic_bindings(),
            manager.list_topic_bindings(queue),
            manager.test_routing(f"{queue}.a"),
        )

    before = records()
    column_added()
    assert records() == before
    [route] = before[2]
    assert (route.pattern, route.queue_name, route.database) == (f"{queue}.*", queue, "default")
    assert manager.send_topic(f"{queue}.a", {"n": 1}) == 1
    [delivery] = manager.send_batch_topic(f"{queue}.b", [{"n": 2}])
    assert delivery.queue_name == queue and delivery.database == "default"
    assert [m.msg_id for m in manager.read(queue, vt=30, qty=5)][-1] == delivery.msg_id


def test_schedule_records_are_read_by_column_name(manager, queue, column_added):
    name = f"{queue}_every_minute"
    manager.create_schedule(name, "* * * * *", queue, {"tick": True}, headers={"h": "1"})
    try:
        before = manager.list_schedules()
        column_added()
        assert manager.list_schedules() == before
        schedule = manager.get_schedule(name)
        assert (schedule.name, schedule.queue, schedule.message, schedule.headers) == (
            name,
            queue,
            {"tick": True},
            {"h": "1"},
        )
        sent = [s for s in manager.enqueue_due_schedules(timezone.now() + timedelta(minutes=2))]
        mine = [s for s in sent if s.schedule_name == name]
        assert mine and all(s.queue_name == queue and s.database == "default" for s in mine)
        ticks = manager.schedule_ticks(name)
        assert {t.msg_id for t in ticks} == {s.msg_id for s in mine}
        assert all(t.queue_name == queue and t.error is None for t in ticks)
    finally:
        manager.drop_schedule(name)


def test_notification_retention_and_browsing_records_are_read_by_column_name(
    manager, queue, column_added
):
    internal = InternalManager()
    manager.enable_notify(queue, throttle_ms=123)
    manager.send_batch(queue, [{"kind": "a"}, {"kind": "b"}], headers=[{"t": "x"}, None])
    ids = [m.msg_id for m in manager.read(queue, vt=0, qty=1)]
    manager.archive(queue, ids)

    def records() -> tuple:
        return (
            without_times(manager.list_notify_throttles()),
            internal.browse_messages(queue),
            internal.browse_messages(queue, archive=True),
            internal.dashboard_match_count(queue, archive=True, header_key="t"),
            internal.dashboard_throughput(
                queue, window=timedelta(hours=1), bucket=timedelta(minutes=5)
            ),
        )

    before = records()
    column_added()
    assert records() == before
    assert [t.throttle_interval_ms for t in before[0] if t.queue_name == queue] == [123]
    [live], [archived] = before[1], before[2]
    assert (live.message, live.headers, archived.msg_id) == ({"kind": "b"}, None, ids[0])
    assert archived.headers == {"t": "x"} and archived.archived_at is not None
    assert values(before[3]) == (1, ids[0])
    assert sum(b.archived for b in before[4]) == 1


REORDERED = (
    "SELECT 'x' AS added, s.headers, s.message, s.vt, s.last_read_at, s.enqueued_at, "
    "s.read_ct, s.msg_id FROM (\n{body}\n) AS s"
)


def test_messages_are_read_by_column_name(manager, queue, monkeypatch):
    """Message rows (the hot path): in pgmq's order they are taken as they come; moved,
    or with a column more, they are picked by name and give the same Messages."""
    manager.send_batch(queue, [{"n": 1}, {"n": 2}], headers=[{"h": "1"}, None])
    [first] = manager.read(queue, vt=0, qty=1)
    statements = sqlrun.statements()
    for name in ("read", "pop"):
        body = statements[name].rstrip().rstrip(";")
        monkeypatch.setitem(statements, name, REORDERED.format(body=body))
    [again] = manager.read(queue, vt=0, qty=1)
    assert again.msg_id == first.msg_id and again.read_ct == first.read_ct + 1
    assert (again.message, again.headers, again.enqueued_at) == (
        first.message,
        first.headers,
        first.enqueued_at,
    )
    popped = manager.pop(queue, qty=2)
    assert [(m.message, m.headers) for m in popped] == [({"n": 1}, {"h": "1"}), ({"n": 2}, None)]


def test_message_rows_by_name_and_a_missing_column(db):
    """`sqlrun.message_rows`, which Celery's channel reads with too: moved columns are put
    back in pgmq's order; a message column missing is a clear error, not a shifted row."""
    from django.db import connection

    from django_pgmq.errors import PgmqError

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT 'h' AS headers, 'm' AS message, 5 AS vt, 4 AS last_read_at, "
            "3 AS enqueued_at, 2 AS read_ct, 1 AS msg_id, 0 AS added"
        )
        assert sqlrun.message_rows(cursor) == [(1, 2, 3, 4, 5, "m", "h")]
        cursor.execute("SELECT 1 AS msg_id, 2 AS read_ct")
        with pytest.raises(PgmqError, match=r"no column enqueued_at, last_read_at, vt"):
            sqlrun.message_rows(cursor)
