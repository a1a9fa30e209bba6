"""manage.py pgmq_pop: read and delete messages in one step."""

from __future__ import annotations

from typing import Any

from ..command_base import PgmqCommand
from ..reference import ReferenceRow


class Command(PgmqCommand):
    help = """Pop up to --qty visible messages: read and delete them at once (at-most-once).

Prints one JSON object per message per line, like pgmq_read.

examples:
  manage.py pgmq_pop orders
  manage.py pgmq_pop orders --qty 10
"""
    reference = ReferenceRow(
        usage="`pgmq_pop QUEUE`",
        prints="same as `pgmq_read`",
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("queue", metavar="QUEUE", help="Queue to pop from.")
        parser.add_argument(
            "--qty", type=int, default=1, metavar="N", help="Pop at most N messages (default: 1)."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        self.write_json_lines(self.manager(options).pop(options["queue"], qty=options["qty"]))
