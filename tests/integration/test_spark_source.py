"""The pgmq Spark source's reader and writers called directly, without Spark, on PostgreSQL."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import psycopg
import pytest

pytest.importorskip("pyspark", reason="pyspark is not installed: pip install 'django-pgmq[spark]'")
pytest.importorskip("pyarrow", reason="pyarrow is not installed: pip install 'django-pgmq[spark]'")

import pyarrow as pa
from pyspark.sql.datasource import EqualTo, GreaterThan, In, LessThan
from pyspark.sql.types import (
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
)

import django_pgmq as pgmq
from django_pgmq.contrib.spark import conninfo
from django_pgmq.contrib.spark.conninfo import ConnectionFailed
from django_pgmq.contrib.spark.reader import split_range
from django_pgmq.contrib.spark.writer import PgmqCommit
from django_pgmq.errors import (
    InvalidArgument,
    InvalidPayload,
    InvalidQueueName,
    QueueNotFound,
)
from tests.spark_support import read_all, source

pytestmark = pytest.mark.django_db(transaction=True)

MESSAGE_SCHEMA = StructType([StructField("message", StringType())])


def rows(conn: psycopg.Connection, table: str) -> list[tuple]:
    return conn.execute(
        psycopg.sql.SQL(
            "SELECT msg_id, read_ct, vt, message, headers FROM {} ORDER BY msg_id"
        ).format(psycopg.sql.Identifier("pgmq", table))
    ).fetchall()


# -- connection and options ---------------------------------------------------------------


def test_password_is_kept_out_of_every_text():
    info = conninfo.from_string("host=127.0.0.1 port=1 user=u dbname=d password=s3cr3t-pw")
    assert "s3cr3t-pw" not in repr(info) and "s3cr3t-pw" not in str(info)
    assert info.safe == "host=127.0.0.1 port=1 dbname=d user=u"
    with pytest.raises(ConnectionFailed) as failed:
        info.connect()
    assert "s3cr3t-pw" not in str(failed.value)
    assert "127.0.0.1" in str(failed.value)


def test_a_malformed_dsn_is_refused_without_echoing_it():
    with pytest.raises(InvalidArgument, match="option 'dsn' is not a valid") as bad:
        conninfo.from_string("host=x password=sek rit")
    assert "rit" not in str(bad.value) and "sek" not in str(bad.value)


def test_password_option_overrides_and_spark_options_split_it_off():
    info = conninfo.from_string("postgresql://u:old@h:5433/db", password="new")
    options = conninfo.spark_options(info)
    assert options["password"] == "new"
    assert "new" not in options["dsn"] and "old" not in options["dsn"]
    assert conninfo.from_string(options["dsn"], options["password"]).safe == info.safe


def test_without_dsn_the_django_database_is_used(pg_dsn):
    from django.db import connection

    info = conninfo.resolve({"queue": "q"})
    assert dict(info.params)["dbname"] == connection.settings_dict["NAME"]
    with info.connect() as conn:
        assert conn.execute("SELECT to_regclass('pgmq.spark_stream_batch')").fetchone()[0]


@pytest.mark.parametrize(
    ("options", "error", "text"),
    [
        ({}, InvalidArgument, "option 'queue' is required"),
        ({"queue": "bad;name"}, InvalidQueueName, "invalid characters"),
        ({"queue": "q", "numPartitions": "0"}, InvalidArgument, "'numPartitions' must be between"),
        ({"queue": "q", "numPartitions": "two"}, InvalidArgument, "must be an integer"),
        ({"queue": "q", "ack": "later"}, InvalidArgument, "'ack' must be one of archive"),
        ({"queue": "q", "source": "dlq"}, InvalidArgument, "'source' must be one of queue"),
        ({"queue": "q", "atomic": "maybe"}, InvalidArgument, "'atomic' must be true or false"),
    ],
)
def test_bad_options_name_the_option(pg_dsn, options, error, text):
    from django_pgmq.contrib.spark.source import PgmqDataSource

    with pytest.raises(error, match=text):
        PgmqDataSource({"dsn": pg_dsn, **options})


# -- batch read ---------------------------------------------------------------------------


def test_split_range_covers_every_id_once():
    ranges = split_range(5, 104, 3)
    covered = [i for r in ranges for i in range(r.lo, r.hi + 1)]
    assert covered == list(range(5, 105))
    assert len(ranges) == 3
    assert len(split_range(7, 8, 10)) == 2


def test_batch_read_is_a_snapshot_that_claims_nothing(pg_dsn, pg_connect, queue):
    ids = pgmq.send_batch(
        queue, [{"n": n} for n in range(10)], headers=[{"h": n} for n in range(10)]
    )
    conn = pg_connect()
    before = rows(conn, f"q_{queue}")
    ds = source(pg_dsn, queue, numPartitions=3)
    reader = ds.reader(ds.schema())
    partitions = reader.partitions()
    assert len(partitions) == 3
    table = read_all(reader, partitions)
    assert table.column("msg_id").to_pylist() == ids
    assert [json.loads(m) for m in table.column("message").to_pylist()] == [
        {"n": n} for n in range(10)
    ]
    assert json.loads(table.column("headers")[3].as_py()) == {"h": 3}
    enqueued = table.column("enqueued_at")
    assert enqueued.type == pa.timestamp("us", tz="UTC")
    db_enqueued = conn.execute(
        psycopg.sql.SQL("SELECT enqueued_at FROM {} ORDER BY msg_id").format(
            psycopg.sql.Identifier("pgmq", f"q_{queue}")
        )
    ).fetchall()
    assert enqueued.to_pylist() == [r[0] for r in db_enqueued]
    assert rows(conn, f"q_{queue}") == before  # no vt moved, no read_ct counted


def test_a_user_schema_prunes_and_orders_columns(pg_dsn, queue):
    pgmq.send_batch(queue, [{"n": 1}, {"n": 2}])
    ds = source(pg_dsn, queue)
    pruned = StructType([StructField("message", StringType()), StructField("MSG_ID", LongType())])
    reader = ds.reader(pruned)
    table = read_all(reader, reader.partitions())
    assert table.column_names == ["message", "MSG_ID"]
    assert [json.loads(m)["n"] for m in table.column("message").to_pylist()] == [1, 2]


@pytest.mark.parametrize(
    ("field", "text"),
    [
        (StructField("archived_at", StringType()), "not in the pgmq queue schema"),
        (StructField("msg_id", StringType()), "must be bigint"),
    ],
)
def test_a_user_schema_that_does_not_fit_is_refused(pg_dsn, queue, field, text):
    ds = source(pg_dsn, queue)
    with pytest.raises(InvalidArgument, match=text):
        ds.reader(StructType([field]))


def test_filters_on_msg_id_times_and_read_ct_run_in_postgres(pg_dsn, queue):
    ids = pgmq.send_batch(queue, [{"n": n} for n in range(6)])
    pgmq.read(queue, vt=0, qty=2)  # read_ct 1 for the first two
    ds = source(pg_dsn, queue, numPartitions=2)
    reader = ds.reader(ds.schema())
    later = datetime.now(UTC) + timedelta(hours=1)
    filters = [
        GreaterThan(("msg_id",), ids[0]),
        LessThan(
            ("enqueued_at",), later.astimezone().replace(tzinfo=None)
        ),  # naive local, as Spark
        In(("read_ct",), (0,)),
        EqualTo(("message",), "{}"),  # not pushable: left to Spark
    ]
    left = list(reader.pushFilters(filters))
    assert left == [filters[3]]
    table = read_all(reader, reader.partitions())
    assert table.column("msg_id").to_pylist() == ids[2:]


def test_reading_the_archive(pg_dsn, queue):
    ids = pgmq.send_batch(queue, [{"n": n} for n in range(4)])
    pgmq.archive(queue, ids[:3])
    ds = source(pg_dsn, queue, source="archive")
    assert "archived_at" in ds.schema().fieldNames()
    reader = ds.reader(ds.schema())
    assert list(reader.pushFilters([GreaterThan(("archived_at",), datetime(2000, 1, 1))])) == []
    table = read_all(reader, reader.partitions())
    assert table.column("msg_id").to_pylist() == ids[:3]
    assert None not in table.column("archived_at").to_pylist()


def test_reading_a_missing_queue_names_it(pg_dsn, transactional_db):
    ds = source(pg_dsn, "no_such_queue")
    with pytest.raises(QueueNotFound, match='queue "no_such_queue" does not exist'):
        ds.reader(ds.schema()).partitions()


# -- batch write --------------------------------------------------------------------------


def batch(**columns) -> pa.RecordBatch:
    return pa.RecordBatch.from_pydict(columns)


def test_write_json_text_messages_with_headers_and_delay(pg_dsn, pg_connect, queue):
    schema = StructType(
        [
            StructField("message", StringType()),
            StructField("headers", MapType(StringType(), StringType())),
            StructField("delay", LongType()),
        ]
    )
    writer = source(pg_dsn, queue).writer(schema, overwrite=False)
    data = batch(
        message=['{"a": 1}', '{"a": 2}'],
        headers=pa.array([[("k", "v")], None], pa.map_(pa.string(), pa.string())),
        delay=[0, 3600],
    )
    commit = writer.write(iter([data]))
    writer.commit([commit])
    assert commit.rows == 2
    written = rows(pg_connect(), f"q_{queue}")
    assert [r[3] for r in written] == [{"a": 1}, {"a": 2}]
    assert [r[4] for r in written] == [{"k": "v"}, None]
    assert written[1][2] - written[0][2] == timedelta(hours=1)
    assert [m.message for m in pgmq.read(queue, vt=30, qty=5)] == [{"a": 1}]


def test_without_a_message_column_the_whole_row_is_the_message(pg_dsn, pg_connect, queue):
    schema = StructType([StructField("id", LongType()), StructField("name", StringType())])
    writer = source(pg_dsn, queue).writer(schema, overwrite=False)
    writer.commit([writer.write(iter([batch(id=[1, 2], name=["x", None])]))])
    assert [r[3] for r in rows(pg_connect(), f"q_{queue}")] == [
        {"id": 1, "name": "x"},
        {"id": 2, "name": None},
    ]


def test_a_message_that_is_not_json_is_refused_with_a_hint(pg_dsn, pg_connect, queue):
    writer = source(pg_dsn, queue).writer(MESSAGE_SCHEMA, overwrite=False)
    with pytest.raises(InvalidPayload, match=r"to_json\(struct"):
        writer.write(iter([batch(message=['{"ok": 1}', "plain text"])]))
    assert rows(pg_connect(), f"q_{queue}") == []  # the task's transaction rolled back


def test_overwrite_is_refused(pg_dsn, queue):
    with pytest.raises(InvalidArgument, match=r'use .mode\("append"\)'):
        source(pg_dsn, queue).writer(MESSAGE_SCHEMA, overwrite=True)


def stage_tables(conn: psycopg.Connection) -> list[str]:
    return [r[0] for r in conn.execute("SELECT stage_table FROM pgmq.spark_stage").fetchall()]


def test_atomic_write_sends_only_the_committed_attempts_in_one_go(pg_dsn, pg_connect, queue):
    conn = pg_connect()
    writer = source(pg_dsn, queue, atomic="true").writer(MESSAGE_SCHEMA, overwrite=False)
    first_try = writer.write(iter([batch(message=['{"p": 0}', '{"p": 0}'])]))
    retried = writer.write(iter([batch(message=['{"p": 0}', '{"p": 0}'])]))  # same task, again
    other = writer.write(iter([batch(message=['{"p": 1}'])]))
    assert rows(conn, f"q_{queue}") == []  # nothing visible before the job commits
    assert writer.stage in stage_tables(conn)
    del first_try  # Spark commits one attempt per partition
    writer.commit([retried, other])
    assert [r[3] for r in rows(conn, f"q_{queue}")] == [{"p": 0}, {"p": 0}, {"p": 1}]
    assert writer.stage not in stage_tables(conn)


def test_atomic_write_abort_leaves_nothing(pg_dsn, pg_connect, queue):
    conn = pg_connect()
    writer = source(pg_dsn, queue, atomic="true").writer(MESSAGE_SCHEMA, overwrite=False)
    writer.write(iter([batch(message=['{"x": 1}'])]))
    writer.abort([None])
    assert rows(conn, f"q_{queue}") == []
    assert writer.stage not in stage_tables(conn)
    assert conn.execute("SELECT to_regclass(%s)", [f"pgmq.{writer.stage}"]).fetchone()[0] is None


def test_stale_stages_of_dead_jobs_are_dropped_by_the_next_atomic_write(pg_dsn, pg_connect, queue):
    conn = pg_connect()
    dead = source(pg_dsn, queue, atomic="true").writer(MESSAGE_SCHEMA, overwrite=False)
    conn.execute(
        "UPDATE pgmq.spark_stage SET created_at = now() - interval '2 hours' "
        "WHERE stage_table = %s",
        [dead.stage],
    )
    fresh = source(pg_dsn, queue, atomic="true", staleStageHours=1).writer(MESSAGE_SCHEMA, False)
    assert dead.stage not in stage_tables(conn)
    assert fresh.stage in stage_tables(conn)
    fresh.abort([])


def test_exactly_once_stream_writer_skips_a_replayed_batch(pg_dsn, pg_connect, queue):
    ds = source(pg_dsn, queue, atomic="true", writerId="w1")
    writer = ds.streamWriter(MESSAGE_SCHEMA, overwrite=False)
    writer.commit([writer.write(iter([batch(message=['{"b": 0}'])]))], 0)
    replay = ds.streamWriter(MESSAGE_SCHEMA, overwrite=False)  # after a restart
    assert replay.stage == writer.stage
    replay.commit([replay.write(iter([batch(message=['{"b": 0}'])]))], 0)
    replay.commit([replay.write(iter([batch(message=['{"b": 1}'])]))], 1)
    assert [r[3] for r in rows(pg_connect(), f"q_{queue}")] == [{"b": 0}, {"b": 1}]


def test_atomic_stream_writes_need_a_writer_id(pg_dsn, queue):
    with pytest.raises(InvalidArgument, match="needs option\\('writerId'"):
        source(pg_dsn, queue, atomic="true").streamWriter(MESSAGE_SCHEMA, overwrite=False)


def test_commit_message_is_small_and_picklable():
    import pickle

    assert pickle.loads(pickle.dumps(PgmqCommit(1, 2, 3))) == PgmqCommit(1, 2, 3)
