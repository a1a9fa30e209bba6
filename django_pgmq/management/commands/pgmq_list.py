"""manage.py pgmq_list: list queues."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from ..command_base import PgmqCommand, format_table, to_json


class Command(PgmqCommand):
    help = """List every queue, as a table or as JSON.

examples:
  manage.py pgmq_list
  manage.py pgmq_list --json
"""

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--json", action="store_true", help="Print a JSON array of objects instead."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        queues = self.manager(options).list_queues()
        if options["json"]:
            self.stdout.write(to_json([asdict(q) for q in queues]))
            return
        if not queues:
            self.stdout.write("no queues")
            return
        rows = [
            (q.queue_name, _yes(q.is_partitioned), _yes(q.is_unlogged), q.created_at.isoformat())
            for q in queues
        ]
        self.stdout.write(format_table(("queue", "partitioned", "unlogged", "created at"), rows))


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"
