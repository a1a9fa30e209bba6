"""manage.py pgmq_drop: drop queues and their archives."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError
from django.db import transaction

from ..command_base import PgmqCommand
from ..reference import ReferenceRow


class Command(PgmqCommand):
    help = """Drop queues: their messages and their archive are deleted for good.

There is no confirmation prompt. All queues are dropped in one transaction:
when one does not exist, nothing is dropped and the exit status is 1, unless
--if-exists is given.

examples:
  manage.py pgmq_drop orders
  manage.py pgmq_drop orders emails --if-exists
"""
    reference = ReferenceRow(
        usage="`pgmq_drop QUEUE...`",
        prints='`queue "x" dropped`',
        fails="""a queue does not exist (then nothing is dropped); `--if-exists` skips it
        instead. No confirmation prompt: messages and archive are gone""",
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("queues", nargs="+", metavar="QUEUE", help="Queue to drop.")
        parser.add_argument(
            "--if-exists",
            action="store_true",
            help="A queue that does not exist is skipped with a note instead of an error.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        manager = self.manager(options)
        dropped: dict[str, bool] = {}
        with transaction.atomic(using=manager.using):
            for queue in options["queues"]:
                dropped[queue] = manager.drop_queue(queue)
            missing = [q for q, done in dropped.items() if not done]
            if missing and not options["if_exists"]:
                names = ", ".join(f'"{q}"' for q in missing)
                raise CommandError(f"queue {names} does not exist; nothing was dropped")
        for queue, done in dropped.items():
            self.stdout.write(f'queue "{queue}" ' + ("dropped" if done else "does not exist"))
