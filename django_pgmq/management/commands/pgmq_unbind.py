"""manage.py pgmq_unbind: remove a topic binding."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError

from ..command_base import PgmqCommand
from ..reference import ReferenceRow


class Command(PgmqCommand):
    help = """Remove the binding of a topic pattern to a queue (see pgmq_bind).

The exit status is 1 when there was no such binding.

examples:
  manage.py pgmq_unbind 'orders.*' orders_audit
"""
    reference = ReferenceRow(
        usage="`pgmq_unbind PATTERN QUEUE`",
        prints='`unbound pattern "p" from queue "x"`',
        fails="there was no such binding",
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("pattern", metavar="PATTERN", help="Topic pattern, as bound.")
        parser.add_argument("queue", metavar="QUEUE", help="The bound queue.")

    def handle(self, *args: Any, **options: Any) -> None:
        pattern, queue = options["pattern"], options["queue"]
        if not self.manager(options).unbind_topic(pattern, queue):
            raise CommandError(f'pattern "{pattern}" is not bound to queue "{queue}"')
        self.stdout.write(f'unbound pattern "{pattern}" from queue "{queue}"')
