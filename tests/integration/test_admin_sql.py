"""The dashboard's SQL helpers (sql/90_dashboard.sql) through the queue manager."""

from __future__ import annotations

from datetime import timedelta

import pytest

from django_pgmq import InvalidArgument, QueueNotFound


def test_exact_stats_of_a_small_queue(manager, internal, queue, pg_connect):
    ids = manager.send_batch(queue, [{"n": i} for i in range(6)])
    manager.send(queue, {"later": True}, delay=3600)
    manager.read(queue, vt=600, qty=2)  # two in flight
    manager.archive(queue, ids[-1])
    [stats] = internal.dashboard_queue_stats(queue, exact_limit=1000, max_receive_count=1)
    lengths = (stats.queue_length, stats.queue_visible_length)
    assert (*lengths, stats.in_flight_length, stats.delayed_length) == (6, 3, 2, 1)
    assert stats.archive_size == 1
    assert stats.archived_hour == stats.archived_day == 1
    assert stats.poison_length == 2
    assert stats.total_messages == 7
    assert stats.estimated == frozenset()
    assert stats.oldest_msg_age_sec is not None and stats.oldest_msg_age_sec >= 0


def test_stats_of_a_large_queue_are_estimated_and_marked(manager, internal, queue, pg_connect):
    manager.send_batch(queue, [{"n": i} for i in range(3000)])
    manager.send(queue, {"later": True}, delay=3600)
    pg_connect().execute(f'ANALYZE pgmq."q_{queue}"')
    [stats] = internal.dashboard_queue_stats(queue, exact_limit=100, max_receive_count=5)
    assert {"queue_length", "queue_visible_length", "poison_length"} <= stats.estimated
    assert "delayed_length" not in stats.estimated  # counted exactly through the vt index
    assert stats.delayed_length == 1
    assert 1500 < stats.queue_length < 6000
    assert stats.queue_visible_length == stats.queue_length - 1
    assert stats.poison_length == 0


def test_all_stats_lists_every_queue(manager, internal, queue):
    manager.send(queue, {"a": 1})
    names = [s.queue_name for s in internal.dashboard_all_stats()]
    assert queue in names
    assert names == sorted(names)


def test_stats_of_a_missing_queue(manager, internal, queue_name):
    with pytest.raises(QueueNotFound):
        internal.dashboard_queue_stats(queue_name)


def test_stats_reject_a_bad_limit(manager, internal, queue):
    with pytest.raises(InvalidArgument, match="exact_limit"):
        internal.dashboard_queue_stats(queue, exact_limit=0)


def test_throughput_buckets_and_latency(manager, internal, queue):
    ids = manager.send_batch(queue, [{"n": i} for i in range(5)])
    manager.archive(queue, ids)
    buckets = internal.dashboard_throughput(
        queue, window=timedelta(hours=1), bucket=timedelta(minutes=1)
    )
    assert sum(b.archived for b in buckets) == 5
    assert all(b.p50_sec <= b.p95_sec <= b.p99_sec for b in buckets)
    assert not any(b.truncated or b.latency_truncated for b in buckets)
    cut = internal.dashboard_throughput(
        queue, window=timedelta(hours=1), bucket=timedelta(minutes=1), row_limit=2
    )
    assert sum(b.archived for b in cut) == 2
    assert all(b.truncated and not b.latency_truncated for b in cut)


def test_throughput_counts_past_the_latency_limit(manager, internal, queue, pg_connect):
    ids = manager.send_batch(queue, [{"n": i} for i in range(6)])
    manager.archive(queue, ids)
    # Spread the archive over three minutes, two messages each.
    pg_connect().execute(
        f"UPDATE pgmq.a_{queue} SET archived_at = archived_at - (msg_id % 3) * interval '1 minute'"
    )
    buckets = internal.dashboard_throughput(
        queue, window=timedelta(hours=1), bucket=timedelta(minutes=1), latency_limit=2
    )
    assert sum(b.archived for b in buckets) == 6
    assert all(b.latency_truncated and not b.truncated for b in buckets)
    with_latency = [b for b in buckets if b.p50_sec is not None]
    assert 1 <= len(with_latency) < len(buckets)
    assert with_latency[-1] == buckets[-1]  # the newest bucket keeps its percentiles


def test_throughput_rejects_a_bucket_wider_than_the_window(manager, internal, queue):
    with pytest.raises(InvalidArgument, match="bucket_size"):
        internal.dashboard_throughput(queue, window=timedelta(minutes=1), bucket=timedelta(hours=1))
    with pytest.raises(InvalidArgument, match="latency_limit"):
        internal.dashboard_throughput(
            queue, window=timedelta(hours=1), bucket=timedelta(minutes=1), latency_limit=0
        )


def test_browse_orders_filters_and_pages(manager, internal, queue):
    ids = manager.send_batch(
        queue,
        [{"kind": "a", "n": i} if i % 2 else {"kind": "b", "n": i} for i in range(7)],
        headers=[{"tenant": "x" if i < 3 else "y"} for i in range(7)],
    )
    newest = internal.browse_messages(queue, page_size=3)
    assert [m.msg_id for m in newest] == ids[::-1][:3]
    after = internal.browse_messages(queue, page_size=3, after_id=newest[-1].msg_id)
    assert [m.msg_id for m in after] == ids[::-1][3:6]
    back = internal.browse_messages(queue, page_size=3, before_id=after[0].msg_id)
    assert [m.msg_id for m in back] == [m.msg_id for m in newest]
    oldest = internal.browse_messages(queue, newest_first=False, page_size=2)
    assert [m.msg_id for m in oldest] == ids[:2]
    kind_a = internal.browse_messages(queue, contains={"kind": "a"})
    assert sorted(m.msg_id for m in kind_a) == ids[1::2]
    tenant_x = internal.browse_messages(queue, header_key="tenant", header_value="x")
    assert sorted(m.msg_id for m in tenant_x) == ids[:3]
    with_header = internal.browse_messages(queue, header_key="tenant")
    assert len(with_header) == 7
    manager.read(queue, vt=0, qty=2)
    read_once = internal.browse_messages(queue, min_read_ct=1)
    assert sorted(m.msg_id for m in read_once) == ids[:2]


def test_browse_archive_has_archived_at(manager, internal, queue):
    [msg_id] = manager.send_batch(queue, [{"n": 1}])
    manager.archive(queue, msg_id)
    assert internal.browse_messages(queue) == []
    [archived] = internal.browse_messages(queue, archive=True)
    assert archived.msg_id == msg_id
    assert archived.archived_at is not None
    assert archived.message == {"n": 1}


def test_browse_rejects_bad_arguments(manager, internal, queue):
    with pytest.raises(InvalidArgument, match="page_size"):
        internal.browse_messages(queue, page_size=0)
    with pytest.raises(InvalidArgument, match="contains"):
        internal.browse_messages(queue, contains="x")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match="after_id or before_id"):
        internal.browse_messages(queue, after_id=1, before_id=2)


def test_requeue_from_archive(manager, internal, queue):
    ids = manager.send_batch(queue, [{"n": 1}, {"n": 2}], headers=[{"h": 1}, None])
    manager.read(queue, vt=0, qty=2)
    manager.archive(queue, ids)
    new_ids = internal.dashboard_requeue(queue, ids, from_archive=True)
    assert len(new_ids) == 2 and not set(new_ids) & set(ids)
    assert internal.browse_messages(queue, archive=True) == []
    live = internal.browse_messages(queue, newest_first=False)
    assert [(m.message, m.headers, m.read_ct) for m in live] == [
        ({"n": 1}, {"h": 1}, 0),
        ({"n": 2}, None, 0),
    ]


def test_requeue_from_a_dead_letter_queue(manager, internal, queue):
    dlq = f"{queue}_dlq"
    manager.create_queue(dlq)
    try:
        [dead] = manager.send_batch(dlq, [{"dead": True}])
        [new_id] = internal.dashboard_requeue(dlq, [dead], target=queue)
        assert internal.browse_messages(dlq) == []
        [live] = internal.browse_messages(queue)
        assert (live.msg_id, live.message) == (new_id, {"dead": True})
    finally:
        manager.drop_queue(dlq)


def test_requeue_into_a_missing_queue(manager, internal, queue):
    with pytest.raises(QueueNotFound, match="missing"):
        internal.dashboard_requeue(queue, [1], target="missing")
