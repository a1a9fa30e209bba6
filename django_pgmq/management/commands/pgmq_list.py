"""manage.py pgmq_list: list queues."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from ...manager import QueueManager
from ..command_base import PgmqCommand, format_table, to_json


class Command(PgmqCommand):
    help = """List every queue, as a table or as JSON. Without --database: the queues of
every database that holds queues (PGMQ['DATABASE'] and each PGMQ['QUEUE_DATABASES']
route), with a database column (JSON: a "database" key) once there are several.

examples:
  manage.py pgmq_list
  manage.py pgmq_list --json
"""

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--json", action="store_true", help="Print a JSON array of objects instead."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        aliases = self.databases(options)
        queues = [(alias, q) for alias in aliases for q in QueueManager(alias).list_queues()]
        several = len(aliases) > 1
        if options["json"]:
            records = [{**asdict(q), **({"database": a} if several else {})} for a, q in queues]
            self.stdout.write(to_json(records))
            return
        if not queues:
            self.stdout.write("no queues")
            return
        rows = [
            (
                q.queue_name,
                *((alias,) if several else ()),
                _yes(q.is_partitioned),
                _yes(q.is_unlogged),
                q.created_at.isoformat(),
            )
            for alias, q in queues
        ]
        head = (
            "queue",
            *(("database",) if several else ()),
            "partitioned",
            "unlogged",
            "created at",
        )
        self.stdout.write(format_table(head, rows))


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"
