"""manage.py pgmq_set_vt: change when messages become visible."""

from __future__ import annotations

from typing import Any

from ..command_base import PgmqCommand
from ..reference import ReferenceRow


class Command(PgmqCommand):
    help = """Make messages visible --vt seconds from now (0 releases them at once).

Prints each changed message as one JSON object per line, like pgmq_read. Ids
not in the queue are listed on stderr; when none of them is there, the exit
status is 1.

examples:
  manage.py pgmq_set_vt orders 42 --vt 120
  manage.py pgmq_set_vt orders 42 43 --vt 0
"""
    reference = ReferenceRow(
        usage="`pgmq_set_vt QUEUE MSG_ID... --vt SECONDS`",
        prints="the changed messages, as `pgmq_read`",
        fails="same as `pgmq_archive`",
    )

    def add_arguments(self, parser: Any) -> None:
        self.add_msg_ids(parser)
        parser.add_argument(
            "--vt",
            type=int,
            required=True,
            metavar="SECONDS",
            help="Seconds from now until the messages are visible again.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        queue, asked = options["queue"], options["msg_ids"]
        messages = self.manager(options).set_vt(queue, asked, vt=options["vt"])
        self.check_found(queue, asked, (m.msg_id for m in messages))
        self.write_json_lines(messages)
