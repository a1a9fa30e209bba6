"""manage.py pgmq_attributes: show or change a queue's attributes."""

from __future__ import annotations

from typing import Any

from ..attribute_args import describe, key_value
from ..command_base import PgmqCommand


class Command(PgmqCommand):
    help = """Show a queue's attributes, or change them with --set KEY=VALUE (repeatable;
an empty VALUE removes the key). All changes are one step: a bad key or value
changes nothing. Keys: delivery_delay, deduplication_window, message_retention,
archive_retention (durations: 300, 5m, 2h, 14d), max_message_size (sizes: 1000,
256KiB, 1MiB), max_receive_count and dead_letter_queue (together), priorities and
paused (true/false), max_in_flight (N) and rate_limit (COUNT/DURATION: 100/1m).

examples:
  manage.py pgmq_attributes orders
  manage.py pgmq_attributes orders --set deduplication_window=5m --set priorities=true
  manage.py pgmq_attributes orders --set max_receive_count=5 --set dead_letter_queue=orders_dlq
  manage.py pgmq_attributes orders --set max_in_flight=5 --set rate_limit=100/1m
  manage.py pgmq_attributes orders --set delivery_delay=
"""

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
            self.stdout.write(f"{key}: {describe(value)}")
