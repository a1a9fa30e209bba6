"""manage.py pgmq_pause: stop reads of a queue, keep its sends."""

from __future__ import annotations

from typing import Any

from ..command_base import PgmqCommand
from ..reference import ReferenceRow


class Command(PgmqCommand):
    help = """Pause a queue: read, pop and the FIFO readers return no messages (from any
client) until pgmq_resume; sends are accepted and metrics report as usual. It is
the queue attribute "paused" (pgmq_attributes QUEUE --set paused=true).

examples:
  manage.py pgmq_pause orders
"""
    reference = ReferenceRow(
        usage="`pgmq_pause QUEUE`",
        prints='`queue "x" paused`',
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("queue", metavar="QUEUE", help="The queue.")

    def handle(self, *args: Any, **options: Any) -> None:
        self.manager(options).pause_queue(options["queue"])
        self.stdout.write(f'queue "{options["queue"]}" paused')
