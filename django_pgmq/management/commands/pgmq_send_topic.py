"""manage.py pgmq_send_topic: send a message to every queue bound to a matching pattern."""

from __future__ import annotations

from typing import Any

from ..command_base import PgmqCommand, json_arg, json_object_arg
from ..reference import ReferenceRow


class Command(PgmqCommand):
    help = """Send a message with a routing key: every queue bound to a pattern the
key matches (see pgmq_bind) stores a copy. Prints one line per copy: the queue
and the new msg_id. A key that matches nothing sends nothing (noted on stderr).
--dry-run prints the matching bindings instead, and sends nothing.

With PGMQ['QUEUE_DATABASES'] routes and no --database, the bindings of every queue
database count: each database stores its copies in one statement (all or none
there), but the databases commit one after the other, not together. Each line
then ends with the copy's database. --database sends through that database's
bindings only.

examples:
  manage.py pgmq_send_topic orders.eu.created '{"order_id": 42}'
  manage.py pgmq_send_topic orders.created '{"id": 1}' --headers '{"trace": "abc"}' --delay 10
  manage.py pgmq_send_topic orders.eu.created --dry-run
"""
    reference = ReferenceRow(
        usage="`pgmq_send_topic ROUTING_KEY PAYLOAD`",
        prints="""one line per copy: the queue and its new msg_id, tab-separated; `--dry-run`:
        the bound queues and patterns the key matches, sending nothing""",
        fails="""the routing key is invalid, the payload is not JSON, `--headers` is not a JSON
        object, the delay is negative. A key that matches no binding sends nothing and says so
        on stderr (exit status 0)""",
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("routing_key", metavar="ROUTING_KEY", help="e.g. orders.eu.created")
        parser.add_argument("payload", nargs="?", metavar="PAYLOAD", help="The message, as JSON.")
        parser.add_argument(
            "--headers", metavar="JSON", help="Headers of the message, as a JSON object."
        )
        parser.add_argument(
            "--delay",
            type=int,
            default=0,
            metavar="SECONDS",
            help="Keep the copies invisible for this many seconds (default: 0).",
        )
        parser.add_argument(
            "--dry-run", action="store_true", help="Print the bindings the key matches; send none."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        manager = self.manager(options)
        several = self.several_databases(options)
        key = options["routing_key"]
        if options["dry_run"]:
            for route in manager.test_routing(key):
                where = f"\t{route.database}" if several else ""
                self.stdout.write(f"{route.queue_name}\t{route.pattern}{where}")
            return
        message = json_arg(options["payload"] or "", "PAYLOAD")
        headers = json_object_arg(options["headers"], "--headers")
        delivered = manager.send_batch_topic(
            key, [message], headers=None if headers is None else [headers], delay=options["delay"]
        )
        for copy in delivered:
            where = f"\t{copy.database}" if several else ""
            self.stdout.write(f"{copy.queue_name}\t{copy.msg_id}{where}")
        if not delivered:
            self.stderr.write(f'no queue is bound to a pattern matching "{key}": nothing sent')
