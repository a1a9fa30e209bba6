"""Topic, schedule, notification and browsing records are read by column name (issue 28):
each statement below is run with a column added in front of its result, which shifts
every column a positional read (``Cls(*row)``, ``row[0]``) would take; the records
must come out as they do from the statement as written."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

import pytest
from django.utils import timezone

from django_pgmq import sqlrun
from django_pgmq.internal import InternalManager

WRAPPED = (
    "list_topic_bindings",
    "list_queue_topic_bindings",
    "test_routing",
    "send_topic",
    "send_batch_topic",
    "list_schedules",
    "enqueue_due_schedules",
    "schedule_ticks",
    "list_notify_insert_throttles",
    "browse_messages",
    "dashboard_match_count",
    "dashboard_throughput",
)


@pytest.fixture
def column_added(monkeypatch):
    """Turn on: every statement of WRAPPED returns an extra first column."""

    def turn_on() -> None:
        statements = sqlrun.statements()  # the runner's one registry
        for name in WRAPPED:
            body = statements[name].rstrip().rstrip(";")
            monkeypatch.setitem(
                statements, name, f"SELECT 'x' AS added, s.* FROM (\n{body}\n) AS s"
            )
        sqlrun.statement.cache_clear()  # statements with identifiers, filled from the registry

    yield turn_on
    sqlrun.statement.cache_clear()


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
            internal.match_count(queue, archive=True, header_key="t"),
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
    assert before[3] == (1, ids[0])
    assert sum(b.archived for b in before[4]) == 1
