"""The pgmq streaming reader's offsets, claims and acknowledgements, driven as Spark would."""

from __future__ import annotations

import json

import psycopg
import pytest

pytest.importorskip("pyspark", reason="pyspark is not installed: pip install 'django-pgmq[spark]'")
pytest.importorskip("pyarrow", reason="pyarrow is not installed: pip install 'django-pgmq[spark]'")

from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows

import django_pgmq as pgmq
from django_pgmq.contrib.spark import stream
from django_pgmq.errors import InvalidArgument
from tests.spark_support import read_all, source

pytestmark = pytest.mark.django_db(transaction=True)


def reader_for(pg_dsn, queue, **options):
    ds = source(pg_dsn, queue, **options)
    reader = ds.streamReader(ds.schema())
    return reader


@pytest.fixture
def readers():
    opened = []

    def track(reader):
        opened.append(reader)
        return reader

    yield track
    for reader in opened:
        reader.stop()


def ids_of(reader, start, end) -> list[int]:
    return read_all(reader, reader.partitions(start, end)).column("msg_id").to_pylist()


def queue_state(conn, queue) -> tuple[list[int], list[int]]:
    live = conn.execute(
        psycopg.sql.SQL("SELECT msg_id FROM {} ORDER BY 1").format(
            psycopg.sql.Identifier("pgmq", f"q_{queue}")
        )
    ).fetchall()
    archived = conn.execute(
        psycopg.sql.SQL("SELECT msg_id FROM {} ORDER BY 1").format(
            psycopg.sql.Identifier("pgmq", f"a_{queue}")
        )
    ).fetchall()
    return [r[0] for r in live], [r[0] for r in archived]


def test_offsets_are_claimed_batches_acknowledged_after_commit(pg_dsn, pg_connect, queue, readers):
    ids = pgmq.send_batch(queue, [{"n": n} for n in range(5)])
    reader = readers(reader_for(pg_dsn, queue, vt=60))
    start = reader.initialOffset()
    assert start == {"batch": 0}
    end = reader.latestOffset(start, ReadMaxRows(3))
    assert end == {"batch": 1}
    assert pgmq.read(queue, vt=0, qty=10)[0].msg_id == ids[3]  # claimed ones are invisible
    table = read_all(reader, reader.partitions(start, end))
    assert table.column("msg_id").to_pylist() == ids[:3]
    assert table.column("read_ct").to_pylist() == [1, 1, 1]
    assert json.loads(table.column("message")[0].as_py()) == {"n": 0}
    conn = pg_connect()
    assert queue_state(conn, queue)[1] == []  # not acknowledged before Spark commits
    # Spark committed batch 1 and asks for more: batch 1 is archived, the rest claimed.
    nxt = reader.latestOffset(end, ReadMaxRows(3))
    assert nxt == {"batch": 2}
    assert queue_state(conn, queue)[1] == ids[:3]
    assert ids_of(reader, end, nxt) == ids[3:]
    reader.commit(nxt)
    assert queue_state(conn, queue) == ([], ids)


def test_a_replay_reads_the_same_messages(pg_dsn, queue, readers):
    ids = pgmq.send_batch(queue, [{"n": n} for n in range(4)])
    first = readers(reader_for(pg_dsn, queue))
    end = first.latestOffset({"batch": 0}, ReadMaxRows(2))
    assert ids_of(first, {"batch": 0}, end) == ids[:2]
    first.stop()  # the query died before committing the batch
    pgmq.send(queue, {"n": "late"})
    again = readers(reader_for(pg_dsn, queue))
    assert ids_of(again, {"batch": 0}, end) == ids[:2]


def test_a_batch_claimed_but_never_planned_is_offered_again(pg_dsn, queue, readers):
    ids = pgmq.send_batch(queue, [{"n": n} for n in range(4)])
    first = readers(reader_for(pg_dsn, queue))
    assert first.latestOffset({"batch": 0}, ReadMaxRows(2)) == {"batch": 1}
    first.stop()  # died before Spark wrote the offset: it restarts from batch 0
    again = readers(reader_for(pg_dsn, queue))
    assert again.latestOffset({"batch": 0}, ReadMaxRows(2)) == {"batch": 1}
    assert ids_of(again, {"batch": 0}, {"batch": 1}) == ids[:2]


def test_a_late_committing_message_is_not_skipped(pg_dsn, pg_connect, queue, readers):
    slow = pg_connect(autocommit=False)
    slow.execute("SELECT pgmq.send(%s, '{\"late\": true}'::jsonb)", [queue])  # lower id, open
    fast_id = pgmq.send(queue, {"late": False})
    reader = readers(reader_for(pg_dsn, queue))
    first = reader.latestOffset({"batch": 0}, ReadMaxRows(10))
    assert ids_of(reader, {"batch": 0}, first) == [fast_id]
    slow.commit()
    second = reader.latestOffset(first, ReadMaxRows(10))
    assert second == {"batch": 2}
    assert ids_of(reader, first, second) == [fast_id - 1]


def test_two_consumers_never_read_the_same_message(pg_dsn, queue, readers):
    pgmq.send_batch(queue, [{"n": n} for n in range(6)])
    a = readers(reader_for(pg_dsn, queue, consumer="a"))
    b = readers(reader_for(pg_dsn, queue, consumer="b"))
    a_end = a.latestOffset(a.initialOffset(), ReadMaxRows(4))
    b_end = b.latestOffset(b.initialOffset(), ReadAllAvailable())
    got_a = ids_of(a, {"batch": 0}, a_end)
    got_b = ids_of(b, {"batch": 0}, b_end)
    assert len(got_a) == 4 and len(got_b) == 2
    assert not set(got_a) & set(got_b)


def test_one_consumer_name_runs_once(pg_dsn, queue, readers, monkeypatch):
    monkeypatch.setattr(stream, "_LOCK_WAIT_SECONDS", 0.5)
    readers(reader_for(pg_dsn, queue)).initialOffset()
    with pytest.raises(stream.ConsumerBusy, match='consumer "spark" is already used'):
        readers(reader_for(pg_dsn, queue)).initialOffset()


def test_available_now_stops_at_the_messages_present_at_start(pg_dsn, queue, readers):
    ids = pgmq.send_batch(queue, [{"n": n} for n in range(3)])
    reader = readers(reader_for(pg_dsn, queue))
    reader.prepareForTriggerAvailableNow()
    newer = pgmq.send(queue, {"n": "newer"})
    end = reader.latestOffset({"batch": 0}, ReadMaxRows(2))
    assert ids_of(reader, {"batch": 0}, end) == ids[:2]
    end2 = reader.latestOffset(end, ReadMaxRows(2))
    assert ids_of(reader, end, end2) == ids[2:]
    assert reader.latestOffset(end2, ReadMaxRows(2)) == end2  # drained: no newer message
    assert [m.msg_id for m in pgmq.read(queue, vt=0, qty=5)] == [newer]


def test_ack_delete_and_none(pg_dsn, pg_connect, queue, readers):
    ids = pgmq.send_batch(queue, [{"n": n} for n in range(2)])
    conn = pg_connect()
    deleting = readers(reader_for(pg_dsn, queue, consumer="d", ack="delete"))
    end = deleting.latestOffset({"batch": 0}, ReadMaxRows(1))
    deleting.commit(end)
    assert queue_state(conn, queue) == ([ids[1]], [])
    keeping = readers(reader_for(pg_dsn, queue, consumer="k", ack="none"))
    end = keeping.latestOffset({"batch": 0}, ReadMaxRows(1))
    keeping.commit(end)
    assert queue_state(conn, queue) == ([ids[1]], [])  # the sink acknowledges by itself


def test_a_streaming_read_of_the_archive_is_refused(pg_dsn, queue):
    ds = source(pg_dsn, queue, source="archive")
    with pytest.raises(InvalidArgument, match="for batch reads only"):
        ds.streamReader(ds.schema())
