"""manage.py pgmq_bind: route messages sent to a topic into a queue, or list the bindings."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError

from ..command_base import PgmqCommand, format_table
from ..reference import ReferenceRow


class Command(PgmqCommand):
    help = """Bind a topic pattern to a queue: messages sent with pgmq_send_topic (or
pgmq.send_topic) whose routing key matches PATTERN are stored in QUEUE.

A routing key is dot-separated words of letters, digits, '_' and '-'. In a
pattern '*' matches exactly one word and '#' any run of characters (dots
included). Binding twice is not an error. --list prints the bindings instead.

A binding lives in its queue's database (PGMQ['QUEUE_DATABASES'], or --database).
--list without --database lists the bindings of every queue database, with a
database column when there are several.

examples:
  manage.py pgmq_bind 'orders.*' orders_audit
  manage.py pgmq_bind 'orders.#' orders_all
  manage.py pgmq_bind --list
  manage.py pgmq_bind --list --queue orders_all
"""
    reference = ReferenceRow(
        usage="`pgmq_bind PATTERN QUEUE` / `--list [--queue QUEUE]`",
        prints="""`bound pattern "p" to queue "x"` (binding twice is not an error); `--list`: a
        table of bindings, or `no bindings`""",
        fails="the pattern is invalid, PATTERN or QUEUE is missing, or given with `--list`",
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("pattern", nargs="?", metavar="PATTERN", help="Topic pattern.")
        parser.add_argument("queue", nargs="?", metavar="QUEUE", help="Queue to bind to.")
        parser.add_argument("--list", action="store_true", help="List bindings instead.")
        parser.add_argument(
            "--queue", dest="list_queue", metavar="QUEUE", help="With --list: only this queue's."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        manager = self.manager(options)
        pattern, queue = options["pattern"], options["queue"]
        if options["list"]:
            if pattern is not None:
                raise CommandError("--list takes no PATTERN or QUEUE (filter with --queue)")
            bindings = manager.list_topic_bindings(options["list_queue"])
            if not bindings:
                self.stdout.write("no bindings")
                return
            several = self.several_databases(options)
            rows = [
                (
                    b.pattern,
                    b.queue_name,
                    *((b.database,) if several else ()),
                    b.bound_at.isoformat(),
                )
                for b in bindings
            ]
            head = ("pattern", "queue", *(("database",) if several else ()), "bound at")
            self.stdout.write(format_table(head, rows))
            return
        if queue is None or options["list_queue"] is not None:
            raise CommandError("give PATTERN and QUEUE (or --list)")
        manager.bind_topic(pattern, queue)
        self.stdout.write(f'bound pattern "{pattern}" to queue "{queue}"')
