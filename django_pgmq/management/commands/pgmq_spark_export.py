"""manage.py pgmq_spark_export: old archive rows to Parquet by day, then out of the archive."""

from __future__ import annotations

from typing import Any

from django_pgmq.management.command_base import positive_int
from django_pgmq.management.spark_command import SparkCommand, duration


class Command(SparkCommand):
    help = """Export archive rows older than a cut-off to Parquet, partitioned by day (UTC),
then remove them from the archive once the files are in place.

Rerunnable: an interrupted run is resumed (same rows, same files), so nothing is
lost or written twice. Files land in PATH/day=YYYY-MM-DD/<run id>-part-*.parquet.

examples:
  manage.py pgmq_spark_export orders --older-than 7d --to /data/pgmq/orders
  manage.py pgmq_spark_export orders --older-than 12h --to hdfs:///pgmq/orders --master yarn
"""

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("queue", metavar="QUEUE", help="The queue whose archive to export.")
        parser.add_argument(
            "--older-than",
            required=True,
            type=duration,
            metavar="AGE",
            help="Export rows archived longer ago than this: 90s, 30m, 12h, 7d, 2w.",
        )
        parser.add_argument(
            "--to", required=True, metavar="PATH", help="Directory (any Hadoop/Spark path)."
        )
        parser.add_argument(
            "--partitions",
            type=positive_int,
            default=1,
            help="Spark read partitions (msg_id ranges), default 1.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        spark, conn = self.spark(options, options["queue"])
        from django_pgmq.contrib.spark.export import export_archive

        export_archive(
            spark,
            conn,
            options["queue"],
            options["to"],
            options["older_than"],
            num_partitions=options["partitions"],
            progress=self.progress,
        )
