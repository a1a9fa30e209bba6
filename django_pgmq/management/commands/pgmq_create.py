"""manage.py pgmq_create: create queues."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from ..base import PgmqCommand


class Command(PgmqCommand):
    help = """Create one or more queues (tables pgmq.q_<name> and pgmq.a_<name>).

Creating a queue that exists is not an error. All queues are created in one
transaction: if one name is invalid, none is created.

examples:
  manage.py pgmq_create orders
  manage.py pgmq_create orders emails --unlogged
"""

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

    def handle(self, *args: Any, **options: Any) -> None:
        manager = self.manager(options)
        existing = {q.queue_name for q in manager.list_queues()}
        with transaction.atomic(using=manager.using):
            for queue in options["queues"]:
                manager.create_queue(queue, unlogged=options["unlogged"])
        for queue in options["queues"]:
            state = "already exists" if queue in existing else "created"
            self.stdout.write(f'queue "{queue}" {state}')
