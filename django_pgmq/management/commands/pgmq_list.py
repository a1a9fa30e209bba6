"""manage.py pgmq_list: list queues."""

from __future__ import annotations

from typing import Any

from ..command_base import PgmqCommand, format_table, record, to_json
from ..reference import ReferenceRow


class Command(PgmqCommand):
    help = """List every queue, as a table or as JSON. Without --database: the queues of
every database that holds queues (PGMQ['DATABASE'] and each PGMQ['QUEUE_DATABASES']
route), with a database column (JSON: a "database" key) once there are several.

examples:
  manage.py pgmq_list
  manage.py pgmq_list --json
"""
    reference = ReferenceRow(
        usage="`pgmq_list`",
        prints="a table, or `--json` (an array)",
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--json", action="store_true", help="Print a JSON array of objects instead."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        queues = self.manager(options).list_queues()  # routed: every queue database
        several = self.several_databases(options)
        if options["json"]:
            self.stdout.write(to_json([record(q, several) for q in queues]))
            return
        if not queues:
            self.stdout.write("no queues")
            return
        rows = [
            (
                q.queue_name,
                *((q.database,) if several else ()),
                _yes(q.is_partitioned),
                _yes(q.is_unlogged),
                q.created_at.isoformat(),
            )
            for q in queues
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
