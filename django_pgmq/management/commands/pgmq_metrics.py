"""manage.py pgmq_metrics: queue lengths and ages."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from ..command_base import PgmqCommand, metrics_table, to_json


class Command(PgmqCommand):
    help = """Show metrics of some queues (default: all): length, visible, ages, total sent.

length counts the messages in the queue, visible those that can be read now;
newest/oldest age are the ages of the newest and oldest message; total counts
every message ever sent to the queue.

examples:
  manage.py pgmq_metrics
  manage.py pgmq_metrics orders emails
  manage.py pgmq_metrics --json
"""

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "queues", nargs="*", metavar="QUEUE", help="Queues to show (default: all)."
        )
        parser.add_argument(
            "--json",
            action="store_true",
            help="Print a JSON array of pgmq.metrics() rows (ages in seconds) instead.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        manager = self.manager(options)
        if options["queues"]:
            metrics = [manager.metrics(q) for q in options["queues"]]
        else:
            metrics = manager.metrics_all()
        if options["json"]:
            self.stdout.write(to_json([asdict(m) for m in metrics]))
        elif not metrics:
            self.stdout.write("no queues")
        else:
            self.stdout.write(metrics_table(metrics))
