"""manage.py pgmq_purge: delete every message of a queue."""

from __future__ import annotations

from typing import Any

from ..command_base import PgmqCommand
from ..reference import ReferenceRow


class Command(PgmqCommand):
    help = """Delete every live message of a queue (its archive is kept); prints how many.

examples:
  manage.py pgmq_purge orders
"""
    reference = ReferenceRow(
        usage="`pgmq_purge QUEUE`",
        prints='`purged 3 message(s) from queue "x"` (the archive is kept)',
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("queue", metavar="QUEUE", help="Queue to empty.")

    def handle(self, *args: Any, **options: Any) -> None:
        count = self.manager(options).purge_queue(options["queue"])
        self.stdout.write(f'purged {count} message(s) from queue "{options["queue"]}"')
