"""Long chart ranges on the queue page: from pgmq.spark_stats when it has rows, else the archive."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.test import Client
from django.utils import timezone

from django_pgmq import sqlrun
from django_pgmq.errors import InvalidArgument, QueueNotFound
from django_pgmq.internal import InternalManager
from django_pgmq.manager import QueueManager

from .test_admin_views import login, page, text

# Two minutes of one hour, three days back: weighted p50 (3*120 + 6*60) / 180 = 4
# (an unweighted mean would give 4.5), worst p95 6, worst p99 8, 180 archived.
MINUTES = (
    {"offset": 0, "archived": 120, "p50": 3.0, "p95": 5.0, "p99": 8.0, "retries": 30},
    {"offset": 1, "archived": 60, "p50": 6.0, "p95": 6.0, "p99": 7.0, "retries": 0},
)
FALLBACK = "Spark stats are not available"


@pytest.fixture
def manager(db) -> QueueManager:
    """The queue manager, in a test transaction that is rolled back."""
    return QueueManager()


@pytest.fixture
def internal(db) -> InternalManager:
    """The internal layer the dashboard's charts call, in the same transaction."""
    return InternalManager()


@pytest.fixture
def viewer(client, db) -> Client:
    login(client, "view_queue")
    return client


def store_stats(queue: str) -> None:
    """Write MINUTES for ``queue`` with the statement the pgmq_spark_stats job uses."""
    hour = timezone.now().replace(minute=0, second=0, microsecond=0) - timedelta(days=3)
    upsert = sqlrun.text("spark_stats_upsert")
    with connection.cursor() as cur:
        for row in MINUTES:
            params = {k: v for k, v in row.items() if k != "offset"}
            minute = hour + timedelta(minutes=row["offset"])
            cur.execute(upsert, {**params, "queue": queue, "minute": minute})


def archive_five(manager: QueueManager, queue: str) -> None:
    """Five messages archived now: what the archive-based charts would show."""
    manager.archive(queue, manager.send_batch(queue, [{"n": i} for i in range(5)]))


def charts(client: Client, queue: str, range_key: str) -> tuple[str, list[str]]:
    response = client.get(page(queue), {"range": range_key})
    assert response.status_code == 200
    html = response.content.decode()
    return html, re.findall(r'<svg [^>]*class="pgmq-chart".*?</svg>', html, re.S)


def bar_titles(chart: str) -> list[str]:
    """The value titles of a chart's bars (the legend's swatches have none)."""
    return re.findall(r"<rect [^>]*><title[^>]*>([^<]*)</title></rect>", chart)


def circles(chart: str) -> list[float]:
    return [float(y) for y in re.findall(r'<circle [^>]*cy="([-\d.]+)"', chart)]


def test_week_charts_come_from_spark_stats(viewer, queue, manager):
    store_stats(queue)
    archive_five(manager, queue)
    html, (throughput, latency, depth) = charts(viewer, queue, "week")
    assert "from Spark stats (pgmq_spark_stats)" in throughput
    assert FALLBACK not in html
    # One hourly bar, 180 archived / 60 min; the archive's five messages are not shown.
    assert bar_titles(throughput) == ["3"]
    # p50, p95, p99 of the single hour: 4, 6, 8 seconds, equally spaced on a linear axis.
    p50, p95, p99 = sorted(circles(latency), reverse=True)
    assert p50 - p95 == pytest.approx(p95 - p99, abs=0.11)
    assert p50 > p95 > p99
    assert "computed up to" in text(viewer.get(page(queue), {"range": "week"}))
    assert "no data yet" in depth  # depth stays with QueueSample, empty here


def test_month_sums_six_hour_buckets(viewer, queue):
    store_stats(queue)
    _, (throughput, _latency, _depth) = charts(viewer, queue, "month")
    assert "from Spark stats (pgmq_spark_stats)" in throughput
    assert bar_titles(throughput) == ["0.5"]  # 180 archived / 360 min


def test_manager_sums_minutes_per_bucket(manager, internal, queue):
    store_stats(queue)
    (bucket,) = internal.dashboard_spark_stats(
        queue, window=timedelta(days=7), bucket=timedelta(hours=1)
    )
    assert bucket.archived == 180
    assert bucket.retries == 30
    assert bucket.p50_sec == pytest.approx(4.0)
    assert (bucket.p95_sec, bucket.p99_sec) == (6.0, 8.0)
    assert bucket.last_minute == bucket.start + timedelta(minutes=1)
    assert bucket.start.minute == 0


def test_without_stats_the_week_falls_back_to_the_archive(viewer, queue, manager):
    store_stats("some_other_queue")  # rows of another queue do not count
    archive_five(manager, queue)
    html, (throughput, _latency, _depth) = charts(viewer, queue, "week")
    assert FALLBACK in html
    assert "manage.py pgmq_spark_stats" in text(viewer.get(page(queue), {"range": "week"}))
    assert "from archive" in throughput
    assert bar_titles(throughput) == ["0.0833"]  # 5 archived / 60 min, this hour


def test_missing_table_falls_back_too(viewer, queue, manager, internal):
    store_stats(queue)
    with connection.cursor() as cur:  # undone with the test's transaction
        cur.execute("ALTER TABLE pgmq.spark_stats RENAME TO spark_stats_gone")
    assert (
        internal.dashboard_spark_stats(queue, window=timedelta(days=7), bucket=timedelta(hours=1))
        == []
    )
    html, _ = charts(viewer, queue, "week")
    assert FALLBACK in html


def test_short_ranges_ignore_spark_stats(viewer, queue, manager):
    store_stats(queue)
    with connection.cursor() as cur:  # a stats row inside the last hour and day
        cur.execute(
            "UPDATE pgmq.spark_stats SET minute = date_trunc('minute', now()) - interval '2 min'"
            " WHERE queue_name = %s AND archived = 60",
            [queue],
        )
    archive_five(manager, queue)
    for range_key in ("hour", "day"):
        html, (throughput, *_rest) = charts(viewer, queue, range_key)
        assert "from archive" in throughput
        assert FALLBACK not in html


def test_bad_arguments_are_named(manager, internal, queue, queue_name):
    # Savepoints: an error aborts the test's transaction otherwise.
    with pytest.raises(InvalidArgument, match="at least bucket_size"), transaction.atomic():
        internal.dashboard_spark_stats(queue, window=timedelta(hours=1), bucket=timedelta(days=1))
    with pytest.raises(QueueNotFound), transaction.atomic():
        internal.dashboard_spark_stats(
            queue_name + "x", window=timedelta(days=7), bucket=timedelta(hours=1)
        )


def test_week_needs_the_view_permission(client, queue):
    store_stats(queue)
    login(client, "change_queue")
    assert client.get(page(queue), {"range": "week"}).status_code == 403


def test_unknown_range_shows_the_last_hour(viewer, queue):
    html, _ = charts(viewer, queue, "year")
    assert 'class="pgmq-current">last hour<' in html
