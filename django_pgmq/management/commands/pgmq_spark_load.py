"""manage.py pgmq_spark_load: Parquet or JSON-lines files into a queue, one message per row."""

from __future__ import annotations

from typing import Any

from django_pgmq.management.spark_command import SparkCommand


class Command(SparkCommand):
    help = """Send every row of Parquet or JSON-lines files to a queue as a message: the
row's "message" column when it has one (JSON text or a struct), otherwise the
whole row as a JSON object; optional "headers" and "delay" (seconds) columns.

examples:
  manage.py pgmq_spark_load orders --from /data/orders.parquet
  manage.py pgmq_spark_load orders --from /data/incoming/ --format json --atomic
"""

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("queue", metavar="QUEUE", help="The queue to send to.")
        parser.add_argument(
            "--from", dest="path", required=True, metavar="PATH", help="A file or directory."
        )
        parser.add_argument(
            "--format",
            choices=("parquet", "json"),
            help="parquet or json (JSON lines); default: from the file names.",
        )
        parser.add_argument(
            "--atomic",
            action="store_true",
            help="All or nothing: stage the rows, then send them in one transaction.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        spark, conn = self.spark(options, options["queue"])
        from django_pgmq.contrib.spark.load import load_into_queue

        load_into_queue(
            spark,
            conn,
            options["queue"],
            options["path"],
            fmt=options["format"],
            atomic=options["atomic"],
            progress=self.progress,
        )
