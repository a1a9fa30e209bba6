"""The pgmq Spark source and pipeline commands in a real local Spark session."""

from __future__ import annotations

import json
from io import StringIO

import psycopg
import pytest

pytest.importorskip("pyspark", reason="pyspark is not installed: pip install 'django-pgmq[spark]'")
pytest.importorskip("pyarrow", reason="pyarrow is not installed: pip install 'django-pgmq[spark]'")

from django.core.management import call_command
from psycopg import sql
from pyspark.errors import PySparkException
from pyspark.sql import functions as F

import django_pgmq as pgmq
from django_pgmq.contrib.spark import export
from tests.spark_support import spark_session

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


@pytest.fixture(scope="session")
def spark():
    """The test run's one local Spark session."""
    return spark_session()


def ids_in(conn: psycopg.Connection, table: str) -> list[int]:
    query = sql.SQL("SELECT msg_id FROM {} ORDER BY 1").format(sql.Identifier("pgmq", table))
    return [r[0] for r in conn.execute(query).fetchall()]


def pgmq_reader(spark, pg_dsn, queue, **options):
    reader = spark.read.format("pgmq").option("dsn", pg_dsn).option("queue", queue)
    return reader.options(**{k: str(v) for k, v in options.items()})


def test_write_then_read_round_trip_with_and_without_pushdown(spark, pg_dsn, pg_connect, queue):
    """No register call: PySpark finds ``pyspark_pgmq`` by itself."""
    frame = spark.range(0, 60, numPartitions=2).select(
        F.to_json(F.struct(F.col("id").alias("n"))).alias("message")
    )
    frame.write.format("pgmq").option("dsn", pg_dsn).option("queue", queue).mode("append").save()
    split = pg_connect().execute("SELECT clock_timestamp()").fetchone()[0]
    pgmq.send_batch(queue, [{"n": n} for n in range(60)])
    pgmq.read(queue, vt=0, qty=5)

    secret = "not-a-real-password-4f1c"  # trust auth ignores it; it must not show anywhere
    messages = pgmq_reader(spark, pg_dsn, queue, numPartitions=3, password=secret).load()
    got = sorted(json.loads(r.message)["n"] for r in messages.select("message").collect())
    assert got == sorted(list(range(60)) * 2)
    assert secret not in messages._jdf.queryExecution().toString()

    ids = ids_in(pg_connect(), f"q_{queue}")
    wanted = (F.col("msg_id") > ids[2]) & (F.col("enqueued_at") < F.lit(split))
    wanted &= F.col("read_ct") == 0
    results = {}
    for pushdown in ("false", "true"):
        spark.conf.set("spark.sql.python.filterPushdown.enabled", pushdown)
        results[pushdown] = [r.msg_id for r in messages.where(wanted).orderBy("msg_id").collect()]
    spark.conf.unset("spark.sql.python.filterPushdown.enabled")
    assert results["true"] == results["false"] == ids[5:60]


def test_available_now_drains_archives_and_streams_into_another_queue(
    spark, pg_dsn, pg_connect, queue, tmp_path
):
    """A queue-to-queue stream: every message copied once (exactly-once sink), all archived."""
    ids = pgmq.send_batch(queue, [{"n": n} for n in range(25)])
    copies = f"{queue}_copies"
    pgmq.create_queue(copies)
    stream = (
        spark.readStream.format("pgmq")
        .option("dsn", pg_dsn)
        .option("queue", queue)
        .option("maxMessagesPerBatch", "10")
        .load()
        .select("message", F.to_json(F.struct(F.col("msg_id").alias("source"))).alias("headers"))
    )
    query = (
        stream.writeStream.format("pgmq")
        .option("dsn", pg_dsn)
        .option("queue", copies)
        .option("atomic", "true")
        .option("writerId", "copier")
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(120)
    copied = pgmq.read(copies, vt=30, qty=100)
    assert sorted(m.headers["source"] for m in copied) == ids
    assert sorted(m.message["n"] for m in copied) == list(range(25))
    conn = pg_connect()
    assert ids_in(conn, f"q_{queue}") == []
    assert ids_in(conn, f"a_{queue}") == ids
    pgmq.drop_queue(copies)


def test_a_sink_that_fails_once_loses_and_repeats_nothing(
    spark, pg_dsn, pg_connect, queue, tmp_path
):
    ids = pgmq.send_batch(queue, [{"n": n} for n in range(20)])
    conn = pg_connect()
    results = sql.Identifier(f"results_{queue}")
    conn.execute(sql.SQL("CREATE TABLE {} (msg_id bigint)").format(results))
    failures = [1]  # the second micro-batch fails once

    def sink(frame, batch_id):
        rows = [(r.msg_id,) for r in frame.select("msg_id").collect()]
        with psycopg.connect(pg_dsn) as db, db.cursor() as cur:  # one transaction
            cur.executemany(sql.SQL("INSERT INTO {} VALUES (%s)").format(results), rows)
            if batch_id in failures:
                failures.remove(batch_id)
                raise RuntimeError("the sink failed")

    def run():
        stream = (
            spark.readStream.format("pgmq")
            .option("dsn", pg_dsn)
            .option("queue", queue)
            .option("maxMessagesPerBatch", "5")
            .load()
        )
        query = (
            stream.writeStream.foreachBatch(sink)
            .option("checkpointLocation", str(tmp_path / "checkpoint"))
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination(120)

    with pytest.raises(PySparkException, match="the sink failed"):
        run()
    assert ids_in(conn, f"a_{queue}") == ids[:5]  # only the committed batch was acknowledged
    run()  # restarted on the same checkpoint
    written = [r[0] for r in conn.execute(sql.SQL("SELECT msg_id FROM {}").format(results))]
    assert sorted(written) == ids
    assert ids_in(conn, f"q_{queue}") == []
    assert ids_in(conn, f"a_{queue}") == ids


def test_atomic_write_of_a_failing_job_sends_nothing(spark, pg_dsn, pg_connect, queue):
    good = [json.dumps({"n": n}) for n in range(10)]
    frame = spark.createDataFrame([(m,) for m in [*good, "not json"]], "message string")
    writer = (
        frame.repartition(2)
        .write.format("pgmq")
        .option("dsn", pg_dsn)
        .option("queue", queue)
        .option("atomic", "true")
        .mode("append")
    )
    with pytest.raises(PySparkException, match="invalid input syntax for type json"):
        writer.save()
    conn = pg_connect()
    assert ids_in(conn, f"q_{queue}") == []
    stages = conn.execute("SELECT count(*) FROM pgmq.spark_stage WHERE queue_name = %s", [queue])
    assert stages.fetchone()[0] == 0


def test_export_command_moves_old_archive_rows_to_parquet_once(
    spark,
    pg_connect,
    queue,
    tmp_path,
    monkeypatch,
):
    ids = pgmq.send_batch(queue, [{"n": n} for n in range(8)])
    pgmq.archive(queue, ids)
    conn = pg_connect()
    conn.execute(
        sql.SQL(
            "UPDATE {} SET archived_at = now() - make_interval(days => (8 + msg_id %% 2)::int) "
            "WHERE msg_id <= %s"
        ).format(sql.Identifier("pgmq", f"a_{queue}")),
        [ids[5]],
    )
    target = str(tmp_path / "export")

    def crash(*args, **kwargs):
        raise RuntimeError("crashed while publishing")

    with monkeypatch.context() as patch:
        patch.setattr(export, "publish", crash)
        with pytest.raises(RuntimeError, match="crashed while publishing"):
            call_command("pgmq_spark_export", queue, "--older-than", "7d", "--to", target)
    assert ids_in(conn, f"a_{queue}") == ids  # nothing removed before the files are in place

    out = StringIO()
    call_command("pgmq_spark_export", queue, "--older-than", "7d", "--to", target, stdout=out)
    lines = out.getvalue().splitlines()
    assert [line[:4] for line in lines] == ["1/4 ", "2/4 ", "3/4 ", "4/4 "]
    assert "resuming" in lines[0]
    call_command("pgmq_spark_export", queue, "--older-than", "7d", "--to", target, stdout=out)

    exported = spark.read.parquet(target)
    assert sorted(r.msg_id for r in exported.select("msg_id").collect()) == ids[:6]
    assert exported.select("day").distinct().count() == 2
    assert ids_in(conn, f"a_{queue}") == ids[6:]
    stages = conn.execute(
        "SELECT stage, exported, removed FROM pgmq.spark_export_run WHERE queue_name = %s "
        "ORDER BY created_at",
        [queue],
    ).fetchall()
    assert stages == [("done", 6, 6), ("done", 0, 0)]


def test_load_and_stats_commands(spark, pg_connect, queue, tmp_path):
    source = tmp_path / "orders.jsonl"
    source.write_text("".join(json.dumps({"order": n, "total": n * 1.5}) + "\n" for n in range(5)))
    out = StringIO()
    call_command("pgmq_spark_load", queue, "--from", str(source), "--atomic", stdout=out)
    assert out.getvalue().splitlines()[-1].startswith("2/2 sent 5 messages")
    messages = pgmq.read(queue, vt=0, qty=10)
    assert sorted(m.message["order"] for m in messages) == [0, 1, 2, 3, 4]
    assert messages[0].message["total"] == messages[0].message["order"] * 1.5

    pgmq.read(queue, vt=0, qty=2)  # two of them are read a second time: retries
    pgmq.archive(queue, [m.msg_id for m in messages])
    call_command("pgmq_spark_stats", queue, stdout=out)
    conn = pg_connect()
    stored = conn.execute(
        "SELECT sum(archived), sum(retries), min(wait_p50) >= 0, bool_and(wait_p99 >= wait_p50) "
        "FROM pgmq.spark_stats WHERE queue_name = %s",
        [queue],
    ).fetchone()
    assert stored == (5, 2, True, True)
