"""manage.py pgmq_attributes: show or change a queue's attributes."""

from __future__ import annotations

from textwrap import fill
from typing import Any

from ..attribute_args import describe, key_value, keys_help
from ..command_base import PgmqCommand
from ..reference import ReferenceRow


class Command(PgmqCommand):
    help = f"""Show a queue's attributes, or change them with --set KEY=VALUE (repeatable;
an empty VALUE removes the key). All changes are one step: a bad key or value
changes nothing. max_receive_count and dead_letter_queue go together.
{fill("Keys: " + keys_help() + ".", 80)}

examples:
  manage.py pgmq_attributes orders
  manage.py pgmq_attributes orders --set deduplication_window=5m --set priorities=true
  manage.py pgmq_attributes orders --set max_receive_count=5 --set dead_letter_queue=orders_dlq
  manage.py pgmq_attributes orders --set max_in_flight=5 --set rate_limit=100/1m
  manage.py pgmq_attributes orders --set delivery_delay=
"""
    reference = ReferenceRow(
        usage="`pgmq_attributes QUEUE [--set KEY=VALUE ...]`",
        prints='`key: value` (JSON) per line, or `queue "x" has no attributes`',
        fails="an unknown key or a bad value (nothing changes), a `--set` that is not `KEY=VALUE`",
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("queue", metavar="QUEUE", help="The queue.")
        parser.add_argument(
            "--set",
            dest="changes",
            action="append",
            type=key_value,
            default=[],
            metavar="KEY=VALUE",
            help="Set KEY to VALUE (an empty VALUE removes KEY); repeatable.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        manager = self.manager(options)
        queue = options["queue"]
        if options["changes"]:
            attributes = manager.set_queue_attributes(queue, **dict(options["changes"]))
        else:
            attributes = manager.get_queue_attributes(queue)
        if not attributes:
            self.stdout.write(f'queue "{queue}" has no attributes')
        for key, value in sorted(attributes.items()):
            self.stdout.write(f"{key}: {describe(key, value)}")
