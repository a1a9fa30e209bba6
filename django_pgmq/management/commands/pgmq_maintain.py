"""manage.py pgmq_maintain: create partitions ahead and drop those past retention."""

from __future__ import annotations

import argparse
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import CommandError
from django.db import DatabaseError

from ... import conf
from ...errors import PgmqError
from ...manager import QueueManager
from ...names import validate_queue_name
from ...records import PartitionChange
from ..command_base import PgmqCommand, database_error_text, format_table, one_line
from ..reference import ReferenceRow


def seconds(text: str) -> float:
    """An argparse type: a lock timeout in seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be seconds, got {text!r}") from None
    if not 0 < value <= 3600:
        raise argparse.ArgumentTypeError(f"must be more than 0 and at most 3600, got {text!r}")
    return value


class Command(PgmqCommand):
    help = """Maintain partitioned queues: create the partitions for the current range and the
ranges ahead the queue was created with (premake; moving rows that waited in the
default partition into them), and drop the partitions wholly past the retention
interval, with their messages. Run it from cron, e.g. every few minutes: running it
often, or twice at once, is safe (each queue is maintained under its queue lock).
Each queue is its own transaction. No step waits for a lock longer than
--lock-timeout (at most 1 s): a reader or writer of the queue waits behind such a
request, so this is also the longest maintenance can hold up the queue's traffic. A
step whose locks are not granted by then (a transaction using the queue is open) is
skipped, reported ("create skipped", "drop skipped", "queue skipped") and tried
again on the next run; a queue that fails otherwise is reported and the others go on
(exit status 1). Without QUEUE arguments it also purges the results of Django tasks
(django_pgmq.tasks.PgmqBackend) past their retention and samples every queue's
length for the admin's charts (as the workers do), and enforces the queues'
retention attributes (message_retention, archive_retention; each batch of each queue
commits on its own) and removes the workflows finished longer ago than
PGMQ['WORKFLOW_RETENTION'], builds the indexes queues want (priorities, task queues, FIFO
groups: CREATE INDEX CONCURRENTLY, see pgmq.pending_indexes()), and sends the due
ticks of periodic schedules (pgmq.enqueue_due_schedules; each tick goes out once,
whoever calls).

examples:
  manage.py pgmq_maintain
  manage.py pgmq_maintain orders events --lock-timeout 0.5
  manage.py pgmq_maintain --list orders
  */5 * * * *  cd /srv/app && python manage.py pgmq_maintain -v 0
"""
    reference = ReferenceRow(
        usage="`pgmq_maintain [QUEUE...]` / `--list`",
        prints="""per partitioned queue, each partition made (and rows moved into it) or
        dropped, else `partitions up to date`; without QUEUE also the task results purged, the
        queues sampled and the indexes built. `--list`: a table of partitions. See [Operating
        it](../guide/operating.md)""",
        fails="""a queue could not be maintained (named on stderr; the others go on). A step
        whose lock waited past `--lock-timeout` is reported and tried again on the next run, not
        a failure""",
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "queues",
            nargs="*",
            metavar="QUEUE",
            help="Partitioned queues to maintain (default: every one).",
        )
        parser.add_argument(
            "--lock-timeout",
            type=seconds,
            default=0.2,
            metavar="SECONDS",
            help="Skip a step whose locks wait longer than this; capped at 1 (default: 0.2).",
        )
        parser.add_argument(
            "--list", action="store_true", help="Print the partitions of QUEUE(s); change nothing."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        named = [validate_queue_name(q) for q in options["queues"]]
        if named:  # each queue on its own database (or --database)
            work = [(self.manager(options), named)]
        else:  # every queue database in turn (or --database)
            managers = [QueueManager(alias) for alias in self.databases(options)]
            work = [(m, m.partitioned_queues()) for m in managers]
        if options["list"]:
            for manager, queues in work:
                self._list(manager, queues)
            return
        failed: list[str] = []
        if not named:
            self._purge_task_results(options["verbosity"])
        for manager, queues in work:
            if not named:
                self._sample_queues(manager, options["verbosity"])
                self._enforce_retention(manager, options["verbosity"])
                self._build_indexes(manager, options["verbosity"])
                self._send_due_schedules(manager, options["verbosity"])
            failed += self._maintain(manager, queues, options)
        if failed:
            names = ", ".join(f'"{q}"' for q in failed)
            raise CommandError(f"{len(failed)} queue(s) not maintained: {names}")

    def _maintain(
        self, manager: QueueManager, queues: list[str], options: dict[str, Any]
    ) -> list[str]:
        """Maintain each queue's partitions; the queues that failed."""
        failed: list[str] = []
        for queue in queues:
            try:
                changes = manager.maintain_partitions(queue, lock_timeout=options["lock_timeout"])
            except PgmqError as exc:
                failed.append(queue)
                self.stderr.write(one_line(exc))
                continue
            except DatabaseError as exc:
                failed.append(queue)
                self.stderr.write(f'queue "{queue}": {database_error_text(exc)}')
                continue
            if options["verbosity"] > 0:
                self._report(queue, changes)
        return failed

    def _build_indexes(self, manager: QueueManager, verbosity: int) -> None:
        """Build the wanted indexes CONCURRENTLY; each waits for a lock (an older
        transaction still open) at most index_builds.MAINTAIN_LOCK_TIMEOUT, else the next
        run builds it."""
        from ... import index_builds

        for index in manager.build_pending_indexes(index_builds.MAINTAIN_LOCK_TIMEOUT):
            if verbosity > 0:
                self.stdout.write(f"built index pgmq.{index}")
        for index in index_builds.still_wanted(manager.using):
            if verbosity > 0:
                self.stdout.write(
                    f"index pgmq.{index} not built: a transaction older than its build stayed "
                    f"open for {index_builds.MAINTAIN_LOCK_TIMEOUT}; the next run tries again"
                )

    def _enforce_retention(self, manager: QueueManager, verbosity: int) -> None:
        """Delete messages and archived rows past the queues' retention attributes."""
        for done in manager.enforce_retention():
            if verbosity > 0:
                self.stdout.write(
                    f'queue "{done.queue_name}": retention deleted {done.expired} message(s) '
                    f"and {done.archive_deleted} archived row(s)"
                )
        gone = manager.enforce_workflow_retention()
        if verbosity > 0 and gone:
            self.stdout.write(f"workflow retention removed {gone} finished workflow(s)")

    def _send_due_schedules(self, manager: QueueManager, verbosity: int) -> None:
        """Send the due ticks of periodic schedules, as every worker does each second."""
        for sent in manager.enqueue_due_schedules():
            if verbosity > 0:
                self.stdout.write(
                    f'schedule "{sent.schedule_name}": tick {sent.tick.isoformat()} sent to '
                    f'queue "{sent.queue_name}" as message {sent.msg_id}'
                )

    def _sample_queues(self, manager: QueueManager, verbosity: int) -> None:
        """Record every queue's length for the admin's charts, unless a worker just did."""
        from ...internal import InternalManager
        from ...worker.sampling import sample_all_queues

        retention = timedelta(days=float(conf.get("SAMPLE_RETENTION_DAYS")))
        interval = float(conf.get("SAMPLE_INTERVAL"))
        internal = InternalManager(manager.using)
        taken = sample_all_queues(internal, interval=interval, retention=retention)
        if verbosity > 0:
            if taken is None:
                self.stdout.write("queue samples: another sampler is at work, skipped")
            else:
                self.stdout.write(f"queue samples: {taken} queue(s) sampled")

    def _purge_task_results(self, verbosity: int) -> None:
        """Delete the finished results of Django tasks past their backend's retention."""
        if not any(
            str(params.get("BACKEND", "")).startswith("django_pgmq.tasks")
            for params in getattr(settings, "TASKS", {}).values()
        ):
            return
        try:
            from ...tasks.backend import configured_backends

            backends = configured_backends()
        except ImproperlyConfigured as exc:
            self.stderr.write(f"task results not purged: {one_line(exc)}")
            return
        for backend in backends:
            purged = backend.purge_results()
            if verbosity > 0:
                self.stdout.write(
                    f"task backend {backend.alias!r}: {purged} result(s) finished more than "
                    f"{backend.retention_days:g} day(s) ago purged"
                )

    def _report(self, queue: str, changes: list[PartitionChange]) -> None:
        if not changes:
            self.stdout.write(f'queue "{queue}": partitions up to date')
        for c in changes:
            if c.partition_name is None:  # "queue skipped": its queue lock was taken
                self.stdout.write(
                    f'queue "{queue}": {c.action}: another session holds its queue lock; '
                    "tried again on the next run"
                )
                continue
            moved = f", {c.rows_moved} row(s) moved in" if c.rows_moved else ""
            later = "; a transaction using the queue held the lock" if "skipped" in c.action else ""
            self.stdout.write(
                f'queue "{queue}": {c.action} {c.partition_name} '
                f"[{c.range_start}, {c.range_end}){moved}{later}"
            )

    def _list(self, manager: Any, queues: list[str]) -> None:
        rows = [
            (queue, p.partition_name, p.range_start or "DEFAULT", p.range_end)
            for queue in queues
            for p in manager.list_partitions(queue)
        ]
        if not rows:
            self.stdout.write("no partitioned queues")
            return
        self.stdout.write(format_table(("queue", "partition", "from", "to"), rows))
