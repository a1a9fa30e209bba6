"""The records of queue figures match their SQL results column for column, by name, and
are read by name: a column added to a statement's result does not shift them."""

from __future__ import annotations

import dataclasses

import psycopg
import pytest
from django.db import connection

from django_pgmq import QueueMetrics
from django_pgmq.internal.dashboard_ops import queue_stats
from django_pgmq.manager.plumbing import _named_rows, _record
from django_pgmq.records import QueueStats


def type_columns(db, type_name: str) -> list[str]:
    """The attributes of composite type ``type_name``, in order."""
    rows = db.execute(
        "SELECT a.attname FROM pg_attribute a"
        " WHERE a.attrelid = (SELECT typrelid FROM pg_type WHERE oid = %s::regtype)"
        " AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
        [type_name],
    ).fetchall()
    return [name for (name,) in rows]


def fields(cls: type) -> list[str]:
    return [f.name for f in dataclasses.fields(cls) if f.name != "database"]


def test_each_record_has_the_sql_results_columns_by_name(transactional_db, pg_connect):
    db = pg_connect()
    assert fields(QueueMetrics) == type_columns(db, "pgmq.metrics_result")
    assert fields(QueueStats) == type_columns(db, "pgmq._dashboard_stats")


def test_a_column_added_to_a_real_result_leaves_the_records_as_they_were(manager, queue):
    manager.send_batch(queue, [{"n": 1}, {"n": 2}])
    expected = manager.metrics(queue)
    for sql in (
        "SELECT 1 AS added, * FROM pgmq.metrics(%(q)s)",
        "SELECT queue_name, queue_length, 'x' AS added, newest_msg_age_sec, oldest_msg_age_sec,"
        " total_messages, scrape_time, queue_visible_length, default_partition_length, 2 AS more"
        " FROM pgmq.metrics(%(q)s)",
    ):
        [row] = _named_rows(connection, sql, {"q": queue})
        got = _record(QueueMetrics, row, database=expected.database)
        assert dataclasses.replace(got, scrape_time=expected.scrape_time) == dataclasses.replace(
            expected,
            newest_msg_age_sec=got.newest_msg_age_sec,
            oldest_msg_age_sec=got.oldest_msg_age_sec,
        )
        assert got.queue_length == got.queue_visible_length == 2

    [row] = _named_rows(
        connection,
        "SELECT s.queue_name, 42 AS added, s.* FROM pgmq._dashboard_queue_stats(%(q)s) s",
        {"q": queue},
    )
    stats = queue_stats(row)
    assert (
        stats.queue_name,
        stats.queue_length,
        stats.queue_visible_length,
        stats.total_messages,
    ) == (queue, 2, 2, 2)
    assert stats.oldest_msg_age_sec is not None


def test_idle_and_counted_queues_give_the_same_fields(manager, internal, queue, queue_name):
    """An idle queue's row (filled field by field in SQL) and a counted one's agree on
    which figures are zeros and which are unknown."""
    other = f"{queue_name}_b"
    manager.create_queue(other)
    try:
        manager.send(queue, {"n": 1})
        manager.delete(queue, manager.read(queue, vt=30, qty=1)[0].msg_id)
        idle, counted = internal.dashboard_stats_of([other, queue], max_receive_count={other: 3})
        assert idle.queue_name == other and counted.queue_name == queue
        assert (
            idle.queue_length,
            idle.queue_visible_length,
            idle.in_flight_length,
            idle.delayed_length,
            idle.archive_size,
        ) == (
            0,
            0,
            0,
            0,
            0,
        )
        assert idle.oldest_msg_age_sec is idle.newest_msg_age_sec is None
        assert idle.poison_length == 0 and idle.total_messages == 0
        assert idle.estimated == frozenset()
        assert counted.queue_length == 0 and counted.total_messages == 1
    finally:
        manager.drop_queue(other)


def test_rows_by_name_through_djangos_wrapped_cursor(manager, queue):
    """With queries logged (DEBUG, CaptureQueriesContext) the rows come through Django's
    cursor wrapper: the column names are read from it just the same."""
    from django.test.utils import CaptureQueriesContext

    manager.send(queue, {"n": 1})
    with CaptureQueriesContext(connection) as captured:
        metrics = manager.metrics(queue)
    assert metrics.queue_name == queue and metrics.queue_length == 1
    assert any("pgmq.metrics" in q["sql"] for q in captured.captured_queries)


def test_queue_limits_have_the_sql_results_columns_by_name(transactional_db, pg_connect):
    from django_pgmq.records import QueueLimits

    db = pg_connect()
    result = db.execute(
        "SELECT pg_get_function_result('pgmq.queue_limits(text)'::regprocedure)"
    ).fetchone()[0]
    columns = [part.strip().split()[0] for part in result.removeprefix("TABLE(").split(",")]
    assert fields(QueueLimits) == columns


ROW_BUILDERS = ("pgmq._queue_figures_row", "pgmq._dashboard_stats_row")


def test_sql_builds_the_figure_rows_by_column_name(tx):
    """The builders that put each figure in its column by name agree with their types."""
    for builder in ROW_BUILDERS:
        tx.execute("SELECT pgmq._require_row_builder(%s::regproc)", [builder])


@pytest.mark.parametrize(
    ("arguments", "body", "says"),
    [
        # two columns of one type swapped in the arguments: a value would land in the other
        ("b integer DEFAULT NULL, a integer DEFAULT NULL", "ROW(b, a)", "columns in order"),
        # the arguments right, the body's order wrong
        ("a integer DEFAULT NULL, b integer DEFAULT NULL", "ROW(b, a)", "its body must be"),
    ],
)
def test_a_misplaced_column_fails_the_builder_check(tx, arguments, body, says):
    tx.execute("CREATE TYPE pgmq._test_pair AS (a integer, b integer)")
    tx.execute(
        f"CREATE FUNCTION pgmq._test_pair_row({arguments}) RETURNS pgmq._test_pair "
        f"LANGUAGE sql IMMUTABLE AS $fn$ SELECT {body}::pgmq._test_pair $fn$"
    )
    tx.execute("SAVEPOINT bad")
    with pytest.raises(psycopg.Error, match=says):
        tx.execute("SELECT pgmq._require_row_builder('pgmq._test_pair_row'::regproc)")
    tx.execute("ROLLBACK TO SAVEPOINT bad")
