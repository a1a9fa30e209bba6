"""Queue attributes hold for the Spark source: its COPY writer and its streaming claim.

A write to a queue with send-side attributes (delivery_delay, deduplication_window,
max_message_size, priorities) goes through pgmq.send_batch's checks instead of a COPY
into the queue; the streaming claim hands out nothing while the queue is paused and
moves a message read past max_receive_count to the dead-letter queue. The writers and
the stream reader are driven here as Spark would; one test runs a real Spark job.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import psycopg
import pytest

pytest.importorskip("pyspark", reason="pyspark is not installed: pip install 'django-pgmq[spark]'")
pytest.importorskip("pyarrow", reason="pyarrow is not installed: pip install 'django-pgmq[spark]'")

from pyspark.errors import PySparkException
from pyspark.sql import functions as F
from pyspark.sql.streaming.datasource import ReadAllAvailable
from pyspark.sql.types import (
    DoubleType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

import django_pgmq as pgmq
from django_pgmq.errors import InvalidArgument
from tests.integration.test_spark_source import MESSAGE_SCHEMA, batch, rows
from tests.spark_support import read_all, source, spark_session

pytestmark = pytest.mark.django_db(transaction=True)

HEADERS_SCHEMA = StructType(
    [StructField("message", StringType()), StructField("headers", StringType())]
)


def headers(*values: dict | None) -> list[str | None]:
    """A ``headers`` column of JSON text (null where None)."""
    return [None if v is None else json.dumps(v) for v in values]


def dedup(*ids: str | None) -> list[str | None]:
    return headers(*({"deduplication_id": i} if i else None for i in ids))


def write(pg_dsn, queue, schema, data, **options) -> None:
    """One task's write and the job's commit, as Spark runs them."""
    writer = source(pg_dsn, queue, **options).writer(schema, overwrite=False)
    writer.commit([writer.write(iter([data]))])


def delays(conn: psycopg.Connection, queue: str) -> list[float]:
    """Seconds from each live message's enqueue to its visibility, oldest first."""
    query = psycopg.sql.SQL(
        "SELECT extract(epoch FROM vt - enqueued_at)::float8 FROM {} ORDER BY msg_id"
    ).format(psycopg.sql.Identifier("pgmq", f"q_{queue}"))
    return [r[0] for r in conn.execute(query)]


@pytest.mark.parametrize("atomic", ["false", "true"])
def test_rows_without_a_delay_take_the_queues_delivery_delay(pg_dsn, pg_connect, queue, atomic):
    pgmq.set_queue_attributes(queue, delivery_delay=600)
    schema = StructType([StructField("message", StringType()), StructField("delay", DoubleType())])
    data = batch(message=['{"n": 0}', '{"n": 1}', '{"n": 2}', '{"n": 3}'], delay=[None, 0, 5, None])
    write(pg_dsn, queue, schema, data, atomic=atomic)
    assert [r[3] for r in rows(pg_connect(), f"q_{queue}")] == [{"n": n} for n in range(4)]
    given_none, zero, five, again_none = delays(pg_connect(), queue)
    assert 599 < given_none < 601 and 599 < zero < 601 and 599 < again_none < 601
    assert 4 < five < 6  # an explicit delay stays explicit


def test_a_timestamp_delay_is_explicit_and_a_null_one_takes_the_queues(pg_dsn, pg_connect, queue):
    pgmq.set_queue_attributes(queue, delivery_delay=600)
    schema = StructType(
        [StructField("message", StringType()), StructField("delay", TimestampType())]
    )
    soon = datetime.now(UTC) + timedelta(seconds=30)
    write(pg_dsn, queue, schema, batch(message=['{"n": 0}', '{"n": 1}'], delay=[soon, None]))
    explicit, default = delays(pg_connect(), queue)
    assert 25 < explicit < 35 and 599 < default < 601


@pytest.mark.parametrize("atomic", ["false", "true"])
def test_deduplication_ids_hold_inside_a_write_and_across_writes(pg_dsn, pg_connect, queue, atomic):
    pgmq.set_queue_attributes(queue, deduplication_window=300)
    first = batch(
        message=['{"n": 0}', '{"n": 1}', '{"n": 2}', '{"n": 3}'],
        headers=headers(
            {"deduplication_id": "a"}, {"deduplication_id": "a"}, None, {"deduplication_id": "b"}
        ),
    )
    write(pg_dsn, queue, HEADERS_SCHEMA, first, atomic=atomic)
    again = batch(message=['{"n": 4}'], headers=dedup("b"))
    write(pg_dsn, queue, HEADERS_SCHEMA, again, atomic=atomic)
    assert [r[3] for r in rows(pg_connect(), f"q_{queue}")] == [{"n": 0}, {"n": 2}, {"n": 3}]


def test_a_bad_priority_header_is_refused_on_a_priorities_queue(pg_dsn, pg_connect, queue):
    pgmq.set_queue_attributes(queue, priorities=True)
    data = batch(
        message=['{"n": 0}', '{"n": 1}'], headers=headers({"priority": "7"}, {"priority": "high"})
    )
    with pytest.raises(InvalidArgument, match='header "priority" must be an integer'):
        write(pg_dsn, queue, HEADERS_SCHEMA, data)
    assert rows(pg_connect(), f"q_{queue}") == []  # the task's rows, refused whole


def test_too_large_a_message_refuses_the_whole_atomic_write(pg_dsn, pg_connect, queue):
    pgmq.set_queue_attributes(queue, max_message_size=100)
    writer = source(pg_dsn, queue, atomic="true").writer(MESSAGE_SCHEMA, overwrite=False)
    small = writer.write(iter([batch(message=['{"n": 0}', '{"n": 1}'])]))
    large = writer.write(iter([batch(message=['{"pad": "' + "x" * 200 + '"}'])]))
    with pytest.raises(InvalidArgument) as refused:
        writer.commit([small, large])
    text = str(refused.value)
    assert text.startswith(f'queue "{queue}": message of 211 bytes')
    assert text.endswith("max_message_size of 100 bytes") and "\n" not in text
    assert rows(pg_connect(), f"q_{queue}") == []


def test_a_queue_without_send_attributes_is_copied_into(pg_dsn, pg_connect, queue):
    """The plain path: rows COPY straight into the queue, visible at the task's time."""
    pgmq.set_queue_attributes(queue, max_receive_count=3, dead_letter_queue=f"{queue}_dlq")
    conn = pg_connect()
    assert conn.execute("SELECT pgmq._spark_checked_send(%s)", [queue]).fetchone() == (False,)
    write(pg_dsn, queue, MESSAGE_SCHEMA, batch(message=['{"n": 0}']))
    assert [r[3] for r in rows(conn, f"q_{queue}")] == [{"n": 0}]
    pgmq.set_queue_attributes(queue, priorities=True)
    assert conn.execute("SELECT pgmq._spark_checked_send(%s)", [queue]).fetchone() == (True,)


# -- the streaming claim --------------------------------------------------------------------


def stream_reader(pg_dsn, queue, **options):
    ds = source(pg_dsn, queue, **options)
    return ds.streamReader(ds.schema())


def test_a_paused_queue_hands_nothing_to_a_stream(pg_dsn, queue):
    ids = pgmq.send_batch(queue, [{"n": n} for n in range(3)])
    pgmq.set_queue_attributes(queue, paused=True)
    reader = stream_reader(pg_dsn, queue)
    try:
        start = reader.initialOffset()
        assert reader.latestOffset(start, ReadAllAvailable()) == start
        pgmq.set_queue_attributes(queue, paused=None)
        end = reader.latestOffset(start, ReadAllAvailable())
        got = read_all(reader, reader.partitions(start, end)).column("msg_id").to_pylist()
        assert got == ids
    finally:
        reader.stop()


def test_a_stream_dead_letters_a_message_read_past_max_receive_count(pg_dsn, pg_connect, queue):
    dlq = f"{queue}_dlq"
    pgmq.set_queue_attributes(queue, max_receive_count=1, dead_letter_queue=dlq)
    [poison, fresh] = pgmq.send_batch(queue, [{"n": "poison"}, {"n": "fresh"}])
    pgmq.read(queue, vt=0, qty=1)  # poison: delivered once, visible again
    reader = stream_reader(pg_dsn, queue)
    try:
        start = reader.initialOffset()
        end = reader.latestOffset(start, ReadAllAvailable())
        got = read_all(reader, reader.partitions(start, end)).column("msg_id").to_pylist()
        assert got == [fresh]
    finally:
        reader.stop()
    [dead] = pgmq.read(dlq, vt=0, qty=5)
    assert dead.message == {"n": "poison"}
    assert dead.headers["dead_letter"]["msg_id"] == poison
    assert dead.headers["dead_letter"]["read_ct"] == 1


# -- a real Spark job -----------------------------------------------------------------------


@pytest.mark.slow
def test_a_spark_job_with_one_message_too_large_fails_naming_queue_size_and_limit(
    pg_dsn, pg_connect, queue
):
    pgmq.set_queue_attributes(queue, max_message_size=100)
    spark = spark_session()
    frame = spark.range(0, 40, numPartitions=2).select(
        F.to_json(
            F.struct(
                F.when(F.col("id") == 33, F.lit("x" * 200))
                .otherwise(F.col("id").cast("string"))
                .alias("n")
            )
        ).alias("message")
    )
    save = frame.write.format("pgmq").option("dsn", pg_dsn).option("queue", queue)
    with pytest.raises(PySparkException) as failed:
        save.option("atomic", "true").mode("append").save()
    assert f'queue "{queue}": message of 209 bytes' in str(failed.value)
    assert "max_message_size of 100 bytes" in str(failed.value)
    assert rows(pg_connect(), f"q_{queue}") == []  # refused whole
    frame.where("id < 10").write.format("pgmq").option("dsn", pg_dsn).option("queue", queue).mode(
        "append"
    ).save()
    assert len(rows(pg_connect(), f"q_{queue}")) == 10
