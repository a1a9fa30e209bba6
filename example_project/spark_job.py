"""An example streaming job: consume a queue with Spark, effectively once.

Each partition of a micro-batch writes its results *and* archives its messages
in one PostgreSQL transaction, so the stream reads with ``ack=none``. If the
job dies after that commit but before Spark records the batch, the replay
reads only messages still in the queue under this consumer's claim: the
archived ones are gone, so no result is written twice; if it dies before the
commit, nothing was written and the replay does it all.

    python -m example_project.spark_job demo_events --checkpoint /tmp/demo-ckpt
    python -m example_project.spark_job demo_events --checkpoint /tmp/demo-ckpt --available-now
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Iterable
from typing import Any

from psycopg import sql

RESULTS = sql.Identifier("demo_spark_result")
CREATE_RESULTS = sql.SQL(
    "CREATE TABLE IF NOT EXISTS {} (msg_id bigint PRIMARY KEY, queue text NOT NULL, "
    "total numeric, processed_at timestamptz NOT NULL DEFAULT now())"
).format(RESULTS)
INSERT_RESULT = sql.SQL(
    "INSERT INTO {} (msg_id, queue, total) VALUES (%s, %s, %s) ON CONFLICT (msg_id) DO NOTHING"
).format(RESULTS)
ARCHIVE = "SELECT count(*) FROM pgmq.archive(%s, %s::bigint[])"


def handle(message: dict[str, Any]) -> float | None:
    """The work itself: here, the total of an order-like message."""
    items = message.get("items", [])
    return sum(i.get("price", 0) * i.get("qty", 1) for i in items) if items else None


def write_partition(options: dict[str, str], queue: str, rows: Iterable[Any]) -> int:
    """Store the results of some messages and archive them, in one transaction."""
    from django_pgmq.contrib.spark.conninfo import from_string

    rows = list(rows)
    if not rows:
        return 0
    info = from_string(options["dsn"], options.get("password"))
    with info.connect(autocommit=False) as conn, conn.cursor() as cur:
        cur.executemany(
            INSERT_RESULT, [(r.msg_id, queue, handle(json.loads(r.message))) for r in rows]
        )
        cur.execute(ARCHIVE, [queue, [r.msg_id for r in rows]])
        conn.commit()
    return len(rows)


def start(spark: Any, options: dict[str, str], queue: str, checkpoint: str, available_now: bool):
    """Start the streaming query; returns it (``awaitTermination`` to wait)."""
    from django_pgmq.contrib.spark.conninfo import from_string

    with from_string(options["dsn"], options.get("password")).connect() as conn:
        conn.execute(CREATE_RESULTS)
    stream = (
        spark.readStream.format("pgmq")
        .options(**options)
        .option("queue", queue)
        .option("consumer", "demo_spark_job")
        .option("ack", "none")  # the sink archives, in its own transaction
        .option("maxMessagesPerBatch", "500")
        .load()
        .select("msg_id", "message")
    )

    def each_batch(frame: Any, batch_id: int) -> None:
        frame.foreachPartition(lambda rows: write_partition(options, queue, rows))

    writer = stream.writeStream.foreachBatch(each_batch).option("checkpointLocation", checkpoint)
    writer = writer.trigger(availableNow=True) if available_now else writer
    return writer.start()


def main() -> None:
    """Run the job with the example project's database (DATABASE_URL or the embedded one)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("queue")
    parser.add_argument("--checkpoint", required=True, help="Keep it: it is the job's memory.")
    parser.add_argument("--available-now", action="store_true", help="Drain, then stop.")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "example_project.settings")
    import django

    django.setup()
    from django_pgmq.contrib.spark import from_django, get_session, spark_options

    spark = get_session(app_name="django-pgmq example job")
    options = spark_options(from_django())
    start(spark, options, args.queue, args.checkpoint, args.available_now).awaitTermination()


if __name__ == "__main__":
    main()
