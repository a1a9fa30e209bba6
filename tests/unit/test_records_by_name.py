"""Records are built from rows read by column name (`plumbing._record`): a column added
to a SQL result, at its end or in its middle, leaves every record as it was."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import NamedTuple

import pytest

from django_pgmq import PgmqError, QueueMetrics
from django_pgmq.internal.dashboard_ops import queue_stats
from django_pgmq.manager.plumbing import _record
from django_pgmq.manager.schedule_ops import ScheduleOps
from django_pgmq.records import (
    Schedule,
    ScheduledSend,
    ScheduleTick,
    TopicBinding,
    TopicDelivery,
    TopicRoute,
)

NOW = datetime(2026, 1, 1, tzinfo=UTC)
METRICS = {
    "queue_name": "orders",
    "queue_length": 3,
    "newest_msg_age_sec": 1,
    "oldest_msg_age_sec": 9,
    "total_messages": 12,
    "scrape_time": NOW,
    "queue_visible_length": 2,
    "default_partition_length": None,
}
EXPECTED = QueueMetrics("orders", 3, 1, 9, 12, NOW, 2, None, "db")


def with_column(columns: dict, at: int, name: str = "added", value: object = "x") -> dict:
    """``columns`` with one more, inserted at position ``at``."""
    items = list(columns.items())
    items.insert(at, (name, value))
    return dict(items)


@pytest.mark.parametrize("at", [0, 3, len(METRICS)], ids=["first", "middle", "last"])
def test_a_column_added_anywhere_leaves_the_record_as_it_was(at):
    assert _record(QueueMetrics, with_column(METRICS, at), database="db") == EXPECTED


def test_the_order_of_columns_does_not_matter():
    shuffled = dict(reversed(list(METRICS.items())))
    assert _record(QueueMetrics, shuffled, database="db") == EXPECTED


def test_a_field_with_a_default_may_be_missing():
    assert _record(QueueMetrics, METRICS).database == ""


def test_a_missing_column_is_a_clear_error_naming_it():
    columns = {k: v for k, v in METRICS.items() if k != "oldest_msg_age_sec"}
    with pytest.raises(PgmqError, match=r"QueueMetrics has no column oldest_msg_age_sec.*migrate"):
        _record(QueueMetrics, columns)


def test_named_tuples_are_records_too():
    class Pair(NamedTuple):
        left: int
        right: int = 0

    assert _record(Pair, {"right": 2, "middle": 5, "left": 1}) == Pair(1, 2)
    assert _record(Pair, {"left": 1}) == Pair(1, 0)


STATS = {
    "queue_name": "orders",
    "queue_length": 5,
    "queue_visible_length": 3,
    "in_flight_length": 1,
    "delayed_length": 1,
    "oldest_msg_age_sec": 7,
    "newest_msg_age_sec": 2,
    "oldest_visible_age_sec": 4,
    "archive_size": 10,
    "archived_hour": 1,
    "archived_day": 6,
    "poison_length": None,
    "total_messages": 15,
    "estimated": ["queue_length"],
}


@pytest.mark.parametrize("at", [0, 5, len(STATS)], ids=["first", "middle", "last"])
def test_dashboard_stats_ignore_an_added_column_and_keep_the_estimate_list(at):
    stats = queue_stats(with_column(STATS, at))
    assert stats.estimated == frozenset({"queue_length"})
    assert (stats.queue_length, stats.oldest_msg_age_sec, stats.total_messages) == (5, 7, 15)
    assert queue_stats({**STATS, "estimated": None}).estimated == frozenset()


def test_the_old_name_of_the_oldest_age_still_reads_and_warns():
    stats = queue_stats(STATS)
    with pytest.deprecated_call(match="oldest_msg_age_sec"):
        assert stats.oldest_age_sec == 7


SCHEDULE = {
    "schedule_name": "nightly",
    "cron": "0 3 * * *",
    "time_zone": "UTC",
    "queue_name": "orders",
    "message": '{"run": true}',
    "headers": None,
    "catch_up": timedelta(minutes=10),
    "enabled": True,
    "last_tick": None,
    "next_tick": NOW,
    "skipped": 0,
    "origin": None,
}


@pytest.mark.parametrize("at", [0, 4, len(SCHEDULE)], ids=["first", "middle", "last"])
def test_a_schedule_ignores_an_added_column_and_takes_its_renamed_ones_by_name(at):
    schedule = ScheduleOps._schedule_of(with_column(SCHEDULE, at), "db")
    assert schedule == Schedule(
        "nightly", "0 3 * * *", "UTC", "orders", {"run": True}, None, timedelta(minutes=10),
        True, None, NOW, 0, None, "db",
    )  # fmt: skip
    reordered = dict(reversed(list(SCHEDULE.items())))
    assert ScheduleOps._schedule_of(reordered, "db") == schedule


@pytest.mark.parametrize(
    ("cls", "columns"),
    [
        (
            TopicBinding,
            {"pattern": "a.*", "queue_name": "q", "bound_at": NOW, "compiled_regex": "r"},
        ),
        (TopicRoute, {"pattern": "a.*", "queue_name": "q", "compiled_regex": "r"}),
        (TopicDelivery, {"queue_name": "q", "msg_id": 7}),
        (ScheduledSend, {"schedule_name": "s", "queue_name": "q", "tick": NOW, "msg_id": 7}),
        (
            ScheduleTick,
            {"tick": NOW, "queue_name": "q", "msg_id": 7, "error": None, "sent_at": NOW},
        ),
    ],
)
def test_topic_and_schedule_records_take_their_columns_by_name(cls, columns):
    expected = cls(**columns)
    for at in (0, len(columns) // 2, len(columns)):
        assert _record(cls, with_column(columns, at)) == expected
    assert _record(cls, dict(reversed(list(columns.items())))) == expected


def test_queue_stats_old_figure_names_warn_and_still_mark_estimates():
    """``depth`` and ``visible`` are ``queue_length`` and
    ``queue_visible_length``; a template still saying the old name gets the value, a
    DeprecationWarning and the estimate's mark."""
    from django_pgmq.templatetags.pgmq_dashboard import figure

    stats = queue_stats(STATS)
    with pytest.warns(DeprecationWarning, match="QueueStats.depth is deprecated"):
        assert stats.depth == 5
    with pytest.warns(DeprecationWarning, match="use queue_visible_length"):
        assert stats.visible == 3
    with pytest.warns(DeprecationWarning):
        assert "≈5" in figure(stats, "depth")
    assert "≈5" in figure(stats, "queue_length") and "≈" not in figure(stats, "in_flight_length")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("in_flight", "in_flight_length"),
        ("delayed", "delayed_length"),
        ("newest_age_sec", "newest_msg_age_sec"),
        ("poison", "poison_length"),
    ],
)
def test_queue_stats_other_old_figure_names_warn_and_still_mark_estimates(old, new):
    """After ``depth``, the dashboard's other figures take the source's names
    (``pgmq._queue_figures``'); the old names read the same value, warn, and keep the
    estimate's mark in ``{% figure %}``."""
    from django_pgmq.templatetags.pgmq_dashboard import figure

    stats = queue_stats({**STATS, "poison_length": 0, "estimated": [new]})
    with pytest.warns(DeprecationWarning, match=rf"QueueStats.{old} is deprecated: use {new}"):
        assert getattr(stats, old) == getattr(stats, new)
    with pytest.warns(DeprecationWarning):
        assert "≈" in figure(stats, old)
