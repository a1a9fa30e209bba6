"""Pipeline job: per queue and minute archive statistics into ``pgmq.spark_stats``.

For each minute: messages archived, their wait (archived_at - enqueued_at, in
seconds) at p50/p95/p99, and retries (read_ct > 1). A run starts again at the
last minute it stored (which may have been partial), so minutes whose rows
were exported from the archive since keep their figures.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, datetime

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from ... import sqlrun
from .conninfo import ConnectionInfo, spark_options
from .db import connection

PERCENTILES = (0.5, 0.95, 0.99)


def minute_stats(archive: DataFrame) -> DataFrame:
    """Archive rows -> one row per minute: minute_us, archived, waits, retries."""
    wait = (F.unix_micros("archived_at") - F.unix_micros("enqueued_at")) / F.lit(1e6)
    return (
        archive.groupBy(F.date_trunc("minute", "archived_at").alias("minute"))
        .agg(
            F.count(F.lit(1)).alias("archived"),
            F.percentile(wait, list(PERCENTILES)).alias("waits"),
            F.sum((F.col("read_ct") > 1).cast("long")).alias("retries"),
        )
        .select(F.unix_micros("minute").alias("minute_us"), "archived", "waits", "retries")
    )


def compute_stats(
    spark: SparkSession,
    conn: ConnectionInfo,
    queues: Iterable[str],
    *,
    full: bool = False,
    progress: Callable[[str], None] = print,
) -> int:
    """Recompute the stats of each queue (from its last stored minute unless ``full``)."""
    total = 0
    for queue in queues:
        since = None
        with connection(conn, queue) as db:
            db.run("require_queue", {"queue": queue}, fetch=sqlrun.NOTHING)
            if not full:
                since = db.row("stats_since", {"queue": queue})[0]
        archive = (
            spark.read.format("pgmq")
            .options(**spark_options(conn), queue=queue, source="archive")
            .load()
        )
        if since is not None:
            archive = archive.where(F.col("archived_at") >= F.lit(since))
        shown = f"{since:%Y-%m-%d %H:%M} UTC" if since else "the start"
        progress(f'1/2 queue "{queue}": reading archive rows from {shown}')
        rows = minute_stats(archive).collect()
        params = [
            {
                "queue": queue,
                "minute": datetime.fromtimestamp(r.minute_us // 1_000_000, UTC),
                "archived": r.archived,
                "p50": r.waits[0],
                "p95": r.waits[1],
                "p99": r.waits[2],
                "retries": r.retries,
            }
            for r in rows
        ]
        if params:
            with connection(conn, queue) as db, db.transaction():
                db.run_many("spark_stats_upsert", params)
        progress(f'2/2 queue "{queue}": stored {len(params)} minute(s) in pgmq.spark_stats')
        total += len(params)
    return total
