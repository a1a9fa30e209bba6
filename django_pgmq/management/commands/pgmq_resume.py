"""manage.py pgmq_resume: let reads of a paused queue return messages again."""

from __future__ import annotations

from typing import Any

from ..command_base import PgmqCommand
from ..reference import ReferenceRow


class Command(PgmqCommand):
    help = """Resume a queue paused by pgmq_pause (or by the admin): reads return messages again.

examples:
  manage.py pgmq_resume orders
"""
    reference = ReferenceRow(
        usage="`pgmq_resume QUEUE`",
        prints='`queue "x" resumed`',
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("queue", metavar="QUEUE", help="The queue.")

    def handle(self, *args: Any, **options: Any) -> None:
        self.manager(options).resume_queue(options["queue"])
        self.stdout.write(f'queue "{options["queue"]}" resumed')
