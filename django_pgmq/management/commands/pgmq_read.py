"""manage.py pgmq_read: claim messages for a while and print them."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError

from ...manager import QueueManager
from ..command_base import PgmqCommand, json_object_arg
from ..reference import ReferenceRow


class Command(PgmqCommand):
    help = """Read (claim) up to --qty visible messages, hiding them for --vt seconds.

Prints one JSON object per message per line: msg_id, read_ct, enqueued_at,
last_read_at, vt (ISO-8601), message, headers. Nothing is printed when no
message is visible. Archive or delete what you processed, or it comes back
after --vt seconds.

--group-mode reads FIFO groups (header "x-pgmq-group"): each group in order,
never by two readers at once. fifo fills from the oldest group first, rr takes
one message per group per round, head only each group's first message.

examples:
  manage.py pgmq_read orders
  manage.py pgmq_read orders --vt 60 --qty 10
  manage.py pgmq_read orders --conditional '{"kind": "refund"}'
  manage.py pgmq_read orders --wait 5
  manage.py pgmq_read orders --group-mode rr --qty 10
"""
    reference = ReferenceRow(
        usage="`pgmq_read QUEUE`",
        prints="""one JSON object per message: `msg_id, read_ct, enqueued_at, last_read_at, vt,
        message, headers`; nothing when none is visible""",
        fails="""`--vt`/`--qty` out of range (vt 0..2147483647, qty 1..100000), `--conditional`
        not a JSON object""",
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("queue", metavar="QUEUE", help="Queue to read from.")
        parser.add_argument(
            "--vt",
            type=int,
            default=30,
            metavar="SECONDS",
            help="Visibility timeout: hide the messages read for this long (default: 30).",
        )
        parser.add_argument(
            "--qty", type=int, default=1, metavar="N", help="Read at most N messages (default: 1)."
        )
        parser.add_argument(
            "--conditional",
            metavar="JSON",
            help="Only messages whose body contains this JSON object (jsonb @>).",
        )
        parser.add_argument(
            "--wait",
            type=int,
            metavar="SECONDS",
            help="When nothing is visible, poll for up to SECONDS (read_with_poll).",
        )
        parser.add_argument(
            "--group-mode",
            choices=sorted(QueueManager.GROUP_READERS),
            help="Read FIFO groups: fifo, rr (round robin) or head (see above).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        manager = self.manager(options)
        if options["group_mode"] is not None:
            self._read_grouped(manager, options)
            return
        kwargs = {
            "vt": options["vt"],
            "qty": options["qty"],
            "conditional": json_object_arg(options["conditional"], "--conditional"),
        }
        if options["wait"] is None:
            messages = manager.read(options["queue"], **kwargs)
        else:
            messages = manager.read_with_poll(
                options["queue"], max_poll_seconds=options["wait"], **kwargs
            )
        self.write_json_lines(messages)

    def _read_grouped(self, manager: QueueManager, options: dict[str, Any]) -> None:
        if options["conditional"] is not None:
            raise CommandError("--conditional does not go with --group-mode")
        args = (options["queue"], options["vt"], options["qty"], options["group_mode"])
        if options["wait"] is None:
            messages = manager.read_grouped(*args)
        else:
            messages = manager.read_grouped_with_poll(*args, max_poll_seconds=options["wait"])
        self.write_json_lines(messages)
