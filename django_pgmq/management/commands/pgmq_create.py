"""manage.py pgmq_create: create queues."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError
from django.db import transaction

from ...manager import QueueManager
from ..attribute_args import add_attribute_options, attribute_options
from ..command_base import PgmqCommand, positive_int
from ..reference import ReferenceRow
from .pgmq_notify import throttle_ms


class Command(PgmqCommand):
    help = """Create one or more queues (tables pgmq.q_<name> and pgmq.a_<name>).

Creating a queue that exists is not an error. All queues are created in one
transaction: if one name is invalid, none is created.

--notify turns insert notifications on (see pgmq_notify). --partitioned makes
partitioned tables (PostgreSQL's own partitioning): by msg_id ranges when
--partition-interval is a number, by time ranges when it is an interval such as
'1 day'; run pgmq_maintain from cron to create partitions ahead and drop those
past --retention-interval ('none': keep everything).

The attribute options set queue attributes (see pgmq_attributes), enforced by the
SQL API for every client: durations are 300, 5m, 2h, 14d; sizes 1000, 256KiB, 1MiB.

examples:
  manage.py pgmq_create orders
  manage.py pgmq_create orders emails --unlogged
  manage.py pgmq_create orders --notify --throttle 100
  manage.py pgmq_create jobs --partitioned --partition-interval 100000 --retention-interval 1000000
  manage.py pgmq_create events --partitioned --partition-interval '1 day' --retention-interval none
  manage.py pgmq_create orders --dedup-window 300 --max-receives 5 --dead-letter orders_dlq \\
      --retention 14d --archive-retention 30d --delay 10 --max-size 256KiB --priorities
"""
    reference = ReferenceRow(
        usage="`pgmq_create QUEUE...`",
        prints='`queue "x" created` / `already exists`, one line each',
        fails="""a name is invalid or clashes with an existing name that differs only in case;
        all queues are created in one transaction, so then none is""",
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "queues",
            nargs="+",
            metavar="QUEUE",
            help="Queue name: 1-47 ASCII letters, digits, '_' or '-' (not first).",
        )
        parser.add_argument(
            "--unlogged",
            action="store_true",
            help="Create unlogged queues: faster, but emptied after a server crash.",
        )
        parser.add_argument(
            "--notify", action="store_true", help="Turn insert notifications on (pgmq_notify)."
        )
        parser.add_argument(
            "--throttle",
            type=throttle_ms,
            metavar="MS",
            help="With --notify: at most one notification per MS milliseconds (default: 250).",
        )
        parser.add_argument("--partitioned", action="store_true", help="Create partitioned queues.")
        parser.add_argument(
            "--partition-interval",
            metavar="N|INTERVAL",
            help="msg_ids per partition, or a time interval such as '1 day' (default: 10000).",
        )
        parser.add_argument(
            "--retention-interval",
            metavar="N|INTERVAL|none",
            help="Drop partitions this far behind (msg_ids or time; default: 100000).",
        )
        parser.add_argument(
            "--premake",
            type=positive_int,
            metavar="N",
            help="Partitions to keep ready ahead of the current one (default: 4).",
        )
        add_attribute_options(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        partitioning = _partitioning(options)
        attributes = attribute_options(options)
        if options["throttle"] is not None and not options["notify"]:
            raise CommandError("--throttle goes with --notify")
        manager = self.manager(options)
        targets = dict.fromkeys(manager.alias_for(q) for q in options["queues"])
        # Only the databases the queues go to: another one being down is no reason to fail.
        existing = {(a, q.queue_name) for a in targets for q in QueueManager(a).list_queues()}
        with transaction.atomic(using=manager.using):
            for queue in options["queues"]:
                if partitioning is None:
                    manager.create_queue(queue, unlogged=options["unlogged"])
                else:
                    manager.create_partitioned_queue(queue, **partitioning)
                if attributes:
                    manager.set_queue_attributes(queue, **attributes)
                if options["notify"]:
                    throttle = options["throttle"]
                    manager.enable_notify(queue, 250 if throttle is None else throttle)
        for queue in options["queues"]:
            state = "already exists" if (manager.alias_for(queue), queue) in existing else "created"
            self.stdout.write(f'queue "{queue}" {state}')


def _partitioning(options: dict[str, Any]) -> dict[str, Any] | None:
    """create_partitioned_queue's arguments, or None for plain queues; bad mixes are errors."""
    given = {
        name: options[name]
        for name in ("partition_interval", "retention_interval", "premake")
        if options[name] is not None
    }
    if not options["partitioned"]:
        if given:
            flags = ", ".join("--" + name.replace("_", "-") for name in given)
            raise CommandError(f"{flags}: only with --partitioned")
        return None
    if options["unlogged"]:
        raise CommandError("--partitioned and --unlogged do not go together")
    if given.get("retention_interval", "").strip().lower() == "none":
        given["retention_interval"] = None
    return given
