"""manage.py pgmq_demo: the quick-start tour, from an empty database to 10,000 archived messages."""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.core.management.base import OutputWrapper

from ...names import validate_queue_name
from ..command_base import PgmqCommand, metrics_table, positive_int
from ..reference import GuidePointer


class Command(PgmqCommand):
    help = """Run the demo: migrate, send N messages, read and archive them all, show metrics.
Then, when TASKS["default"] is django_pgmq.tasks.PgmqBackend with a queue "demo_tasks",
enqueue a few Django tasks and run them with a worker.

The queue (default "demo") is dropped and created again first, so every run
starts clean: do not point --queue at a queue whose messages you want to keep.

examples:
  manage.py pgmq_demo
  manage.py pgmq_demo --messages 100000 --batch 1000 --queue load_test
"""
    reference = GuidePointer(
        "the demo", "[Getting started](../getting-started.md#what-the-demo-does)"
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--messages",
            type=positive_int,
            default=10_000,
            metavar="N",
            help="How many messages to send (default: 10000).",
        )
        parser.add_argument(
            "--batch",
            type=positive_int,
            default=500,
            metavar="N",
            help="Messages per send_batch call (default: 500).",
        )
        parser.add_argument(
            "--read-qty",
            type=positive_int,
            default=100,
            metavar="N",
            help="Messages per read call; each batch read is then archived (default: 100).",
        )
        parser.add_argument(
            "--queue",
            default="demo",
            metavar="NAME",
            help="Queue to use; it is dropped and created again (default: demo).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        total, queue = options["messages"], options["queue"]
        manager = self.manager(options)
        validate_queue_name(queue)  # fail before migrating, not after
        self.stdout.write(f"Migrating database {manager.using!r}...")
        call_command("migrate", database=manager.using, verbosity=0, interactive=False)
        manager.drop_queue(queue)
        manager.create_queue(queue)
        self.stdout.write(f'Queue "{queue}" created.')

        bar = ProgressBar(self.stdout, "send   ", total)
        for start in range(0, total, options["batch"]):
            size = min(options["batch"], total - start)
            manager.send_batch(
                queue, [{"n": n, "kind": "demo"} for n in range(start, start + size)]
            )
            bar.advance(size)
        bar.finish()

        bar = ProgressBar(self.stdout, "archive", total)
        while messages := manager.read(queue, vt=30, qty=options["read_qty"]):
            bar.advance(len(manager.archive(queue, [m.msg_id for m in messages])))
        bar.finish()

        self.stdout.write("")
        self.stdout.write(metrics_table([manager.metrics(queue)]))
        self.stdout.write("")
        archived = manager.archive_count(queue)
        self.stdout.write(f"archived: {archived} messages in pgmq.a_{queue.lower()}")
        self._django_tasks(manager.using)

    def _django_tasks(self, database: str) -> None:
        """With a PgmqBackend as TASKS["default"] serving queue demo_tasks: run a few tasks."""
        backend = getattr(settings, "TASKS", {}).get("default", {})
        if backend.get("BACKEND") != "django_pgmq.tasks.PgmqBackend" or "demo_tasks" not in (
            backend.get("QUEUES") or []
        ):
            return
        self.stdout.write("")
        try:
            from ...tasks import demo
        except ImproperlyConfigured as exc:  # Django 5.2 without the django-tasks backport
            self.stdout.write(f"Django tasks skipped: {exc}")
            return
        demo.run(self.stdout, database)


class ProgressBar:
    """A one-line text progress bar with a rate at the end.

    On a terminal it is redrawn in place as work advances; elsewhere (a pipe, a
    log file) only the final state is written, so logs stay readable.
    """

    def __init__(self, out: OutputWrapper, label: str, total: int, width: int = 30) -> None:
        self.out, self.label, self.total, self.width = out, label, total, width
        self.done = 0
        self.started = time.monotonic()
        self._drawn = -1
        self._live = out.isatty()
        if self._live:
            self._draw()

    def advance(self, count: int) -> None:
        """Count ``count`` more items done; redraw when the shown percentage changes."""
        self.done += count
        if self._live and self._percent() != self._drawn:
            self._draw()

    def finish(self) -> None:
        """Draw the final state with the elapsed time and rate, and end the line."""
        elapsed = time.monotonic() - self.started
        rate = self.done / elapsed if elapsed > 0 else 0.0
        self._draw(f"  {elapsed:.2f}s, {rate:,.0f} msg/s")
        self.out.write("")

    def _percent(self) -> int:
        return 100 if not self.total else min(100, self.done * 100 // self.total)

    def _draw(self, suffix: str = "") -> None:
        percent = self._percent()
        filled = self.width * percent // 100
        bar = "#" * filled + "." * (self.width - filled)
        width = len(str(self.total))
        start = "\r" if self._live else ""  # back to the start of the line, to redraw
        self.out.write(
            f"{start}{self.label} [{bar}] {percent:3d}%  {self.done:>{width}}/{self.total}{suffix}",
            ending="",
        )
        self.out.flush()
        self._drawn = percent
