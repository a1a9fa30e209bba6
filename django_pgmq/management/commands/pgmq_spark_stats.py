"""manage.py pgmq_spark_stats: per-minute archive statistics into pgmq.spark_stats."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError

from django_pgmq import routing
from django_pgmq.management.spark_command import SparkCommand
from django_pgmq.manager import QueueManager


class Command(SparkCommand):
    help = """Compute, per queue and minute, the messages archived, their wait
(archived_at - enqueued_at) at p50/p95/p99 in seconds and the retries
(read_ct > 1), into the table pgmq.spark_stats that the admin's charts read.

Each run starts again at the last minute stored for the queue; --full recomputes all.

examples:
  manage.py pgmq_spark_stats
  manage.py pgmq_spark_stats orders emails --full
"""

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "queues", nargs="*", metavar="QUEUE", help="Queues to compute (default: all)."
        )
        parser.add_argument(
            "--full", action="store_true", help="Recompute every minute still in the archive."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        # Without names: the queues of one database (--database, else PGMQ['DATABASE']).
        one = QueueManager(self.databases(options)[0])
        queues = options["queues"] or [q.queue_name for q in one.list_queues()]
        if not queues:
            self.stdout.write("no queues")
            return
        databases = {options["database"] or routing.database_for(q) for q in queues}
        if len(databases) > 1:  # one Spark job reads one database
            raise CommandError(
                f"the queues live in several databases ({', '.join(sorted(databases))}): "
                "run once per database with --database and that database's queues"
            )
        spark, conn = self.spark(options, queues[0])
        from django_pgmq.contrib.spark.stats import compute_stats

        compute_stats(spark, conn, queues, full=options["full"], progress=self.progress)
