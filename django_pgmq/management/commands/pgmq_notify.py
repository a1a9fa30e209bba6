"""manage.py pgmq_notify: turn insert notifications of a queue on or off, or show them."""

from __future__ import annotations

import argparse
from typing import Any

from django.core.management.base import CommandError

from ...names import notify_channel
from ..command_base import PgmqCommand, format_table
from ..reference import ReferenceRow


def throttle_ms(text: str) -> int:
    """An argparse type: a throttle of zero or more milliseconds."""
    if not text.strip().isdigit():
        raise argparse.ArgumentTypeError(f"must be milliseconds (0 or more), got {text!r}")
    return int(text)


class Command(PgmqCommand):
    help = """Insert notifications: at commit, a queue with them on sends
NOTIFY "pgmq.q_<name>.INSERT" (empty payload), at most once per throttle window.

Without options, show whether a queue has them (without QUEUE, list every queue
that has them). --enable turns them on (throttle: --throttle, default 250 ms),
--throttle alone changes the throttle of a queue that has them, --disable turns
them off. The trigger is django-pgtrigger's: see `manage.py pgtrigger ls`.

examples:
  manage.py pgmq_notify orders --enable
  manage.py pgmq_notify orders --enable --throttle 0
  manage.py pgmq_notify orders --throttle 1000
  manage.py pgmq_notify orders --disable
  manage.py pgmq_notify orders
  manage.py pgmq_notify
"""
    reference = ReferenceRow(
        usage="`pgmq_notify [QUEUE] [--enable] [--disable] [--throttle MS]`",
        prints="""`queue "x": notifications on, throttle 250 ms, channel pgmq.q_x.INSERT` (or
        `off`); without QUEUE, a table of the queues that have them""",
        fails="""`--throttle` is not a whole number of milliseconds (0 or more) or comes with
        `--disable`; an option that changes something is given without QUEUE""",
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("queue", nargs="?", metavar="QUEUE", help="The queue.")
        switch = parser.add_mutually_exclusive_group()
        switch.add_argument("--enable", action="store_true", help="Turn notifications on.")
        switch.add_argument("--disable", action="store_true", help="Turn notifications off.")
        parser.add_argument(
            "--throttle",
            type=throttle_ms,
            metavar="MS",
            help="At most one notification per MS milliseconds; 0: every commit notifies.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        manager = self.manager(options)
        queue, throttle = options["queue"], options["throttle"]
        changing = options["enable"] or options["disable"] or throttle is not None
        if queue is None:
            if changing:
                raise CommandError("give the QUEUE to change")
            self._list(manager.list_notify_throttles())
            return
        if options["disable"] and throttle is not None:
            raise CommandError("--throttle goes with --enable, not --disable")
        if options["enable"]:
            manager.enable_notify(queue, 250 if throttle is None else throttle)
        elif options["disable"]:
            manager.disable_notify(queue)
        elif throttle is not None:
            manager.update_notify(queue, throttle)
        channel = manager.notify_channel(queue)
        current = {t.queue_name.lower(): t for t in manager.list_notify_throttles()}
        state = current.get(queue.lower())
        if state is None:
            self.stdout.write(f'queue "{queue}": notifications off (channel {channel})')
        else:
            self.stdout.write(
                f'queue "{queue}": notifications on, throttle {state.throttle_interval_ms} ms, '
                f"channel {channel}"
            )

    def _list(self, throttles: list[Any]) -> None:
        if not throttles:
            self.stdout.write("no queue has notifications on")
            return
        rows = [
            (
                t.queue_name,
                t.throttle_interval_ms,
                notify_channel(t.queue_name),
                # The epoch means never (a throttle of 0 never records the time).
                t.last_notified_at.isoformat() if t.last_notified_at.timestamp() else None,
            )
            for t in throttles
        ]
        headers = ("queue", "throttle ms", "channel", "last notified")
        self.stdout.write(format_table(headers, rows, right=[1]))
