"""manage.py pgmq_consume: run the handlers of queues until stopped."""

from __future__ import annotations

import dataclasses
import logging
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import CommandError
from django.db import DatabaseError

from ... import conf, routing
from ...consumer_settings import SETTINGS, count, seconds
from ...errors import PgmqError
from ...worker import config, logs, registry, signals, waiting
from ...worker.fleet import run_workers
from ...worker.worker import Worker, WorkerOptions
from ..command_base import PgmqCommand, positive_int
from ..reference import GuidePointer

if TYPE_CHECKING:
    from ...tasks.backend import PgmqBackend

log = logging.getLogger("django_pgmq.worker")

LOG_LEVELS = {0: logging.WARNING, 1: logging.INFO}


class Command(PgmqCommand):
    help = """Consume queues: run each queue's handler on its messages until stopped.

Handlers are functions decorated with @django_pgmq.consumer("QUEUE", ...) in an
installed app's consumers.py, or the one given with --handler. Options given
here override the decorator's, which override the queue's own attributes
(max_receive_count, dead_letter_queue), then its QueueConfig row, then the
defaults; a default never overwrites an attribute, and an option that differs
from one is reported at start.
Woken by LISTEN/NOTIFY (notifications are enabled on the queues if needed),
with polling as fallback. With --tasks it runs the Django tasks of a TASKS
backend (django_pgmq.tasks.PgmqBackend) instead, highest priority first.
SIGTERM or SIGINT stops gracefully (exit 0); a second one exits at once.
A worker started while the database is down waits for it (one log line per
attempt, with backoff) unless --no-wait is given.

examples:
  manage.py pgmq_consume orders
  manage.py pgmq_consume orders emails --concurrency 4
  manage.py pgmq_consume orders --handler shop.tasks.handle_order --batch 50
  manage.py pgmq_consume orders --no-listen --poll-interval 0.5   # behind PgBouncer
  manage.py pgmq_consume orders --until-empty                     # drain, then exit
  manage.py pgmq_consume --tasks                                  # Django tasks, every queue
  manage.py pgmq_consume --tasks --backend reports emails         # one backend's queue
"""
    reference = GuidePointer("the worker", "[The worker](../guide/worker.md)")

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "queues",
            nargs="*",
            metavar="QUEUE",
            help="Queues to consume (with --tasks: default every queue of the backend).",
        )
        parser.add_argument(
            "--tasks",
            action="store_true",
            help="Run Django tasks of a django_pgmq.tasks.PgmqBackend (see --backend).",
        )
        parser.add_argument(
            "--backend",
            metavar="ALIAS",
            help="With --tasks: the TASKS backend alias (default: 'default').",
        )
        parser.add_argument(
            "--handler", metavar="DOTTED.PATH", help="Handler for every QUEUE given."
        )
        for setting in SETTINGS:  # declared in consumer_settings, with their help
            parser.add_argument(setting.flag, **setting.argument())
        parser.add_argument(
            "--max-reads",
            dest="max_reads",
            type=count(0).parse,
            metavar="N",
            help="Deprecated spelling of --max-receives.",
        )
        parser.add_argument(
            "--concurrency",
            type=positive_int,
            default=1,
            metavar="N",
            help="Handler threads, each with its own connection (default: 1).",
        )
        parser.add_argument(
            "--poll-interval",
            type=seconds,
            default=5.0,
            metavar="SECONDS",
            help="Read every SECONDS when no notification comes (default: 5).",
        )
        parser.add_argument(
            "--no-listen",
            action="store_true",
            help="Poll only: no LISTEN connection (for PgBouncer in transaction mode).",
        )
        parser.add_argument(
            "--max-messages", type=positive_int, metavar="N", help="Exit after N messages."
        )
        parser.add_argument(
            "--until-empty",
            action="store_true",
            help=(
                "Exit once no message is visible in the queues, none is held and no retry "
                "is waiting; delayed messages (and those set aside) do not count."
            ),
        )
        parser.add_argument(
            "--shutdown-timeout",
            type=seconds,
            default=30.0,
            metavar="SECONDS",
            help="On a signal, wait this long for running handlers (default: 30).",
        )
        parser.add_argument(
            "--heartbeat",
            type=seconds,
            metavar="SECONDS",
            help="Seconds between heartbeats (default: PGMQ['WORKER_HEARTBEAT'], 10).",
        )
        parser.add_argument(
            "--no-wait",
            action="store_true",
            help="Exit 1 at once when the database is down, instead of waiting for it.",
        )
        parser.add_argument(
            "--no-schedules",
            action="store_true",
            help="Do not send the due ticks of periodic schedules (PGMQ['WORKER_SCHEDULES']).",
        )
        parser.add_argument(
            "--log-format",
            choices=logs.FORMATS,
            help="Log to stderr as text or JSON lines (default: the project's LOGGING, else text).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        level = LOG_LEVELS.get(options["verbosity"], logging.DEBUG)
        logs.configure(level, options["log_format"], options["queues"])
        overrides = {s.name: s.from_option(options[s.dest]) for s in SETTINGS}
        overrides["max_receive_count"] = self._max_receive_count(options)
        try:
            groups, backend = self._queues_by_database(options)
            if not options["no_wait"]:
                with signals.graceful() as caught:
                    for alias in groups:
                        if not waiting.wait_for_database(alias, caught):
                            return
            if backend is not None:
                from ...tasks import worker_settings

                plans = {
                    alias: worker_settings.plan(backend, names, overrides)
                    for alias, names in groups.items()
                }
            else:
                registry.autodiscover()
                plans = {
                    alias: config.plan(
                        names, handler=options["handler"], overrides=overrides, using=alias
                    )
                    for alias, names in groups.items()
                }
        except ImproperlyConfigured as exc:
            raise CommandError(str(exc)) from exc
        worker_options = WorkerOptions(
            concurrency=options["concurrency"],
            poll_interval=options["poll_interval"],
            listen=not options["no_listen"],
            max_messages=options["max_messages"],
            until_empty=options["until_empty"],
            shutdown_timeout=options["shutdown_timeout"],
            heartbeat=options["heartbeat"],
            maintenance=_purger(backend),
            schedules=conf.get("WORKER_SCHEDULES") and not options["no_schedules"],
        )
        for alias in plans:  # PGMQ["SCHEDULES"] applied where each database's queues live
            apply_schedules(alias)
        workers = [
            # The task results are purged once, by the first database's worker.
            Worker(queues, worker_options if i == 0 else plain(worker_options), using=alias)
            for i, (alias, queues) in enumerate(plans.items())
        ]
        run_workers(workers)

    def _queues_by_database(
        self, options: dict[str, Any]
    ) -> tuple[dict[str, list[str]], PgmqBackend | None]:
        """The queues to consume by database alias (``--database``, else their route);
        with --tasks also the backend."""
        backend = None
        if options["tasks"]:
            backend = self._task_backend(options)
            names = list(dict.fromkeys(options["queues"])) or sorted(backend.queues)
            if not names:
                raise CommandError(
                    f"task backend {backend.alias!r} has no QUEUES: name the queues to run"
                )
            database_for = backend.database_for
        elif not options["queues"]:
            raise CommandError("name at least one QUEUE (or run Django tasks with --tasks)")
        elif options["backend"]:
            raise CommandError("--backend goes with --tasks")
        else:
            names, database_for = list(dict.fromkeys(options["queues"])), routing.database_for
        database = options["database"]
        if database and backend is not None:
            elsewhere = [n for n in names if backend.database_for(n) != database]
            if elsewhere:
                raise CommandError(
                    f"--database {database!r}: task backend {backend.alias!r} puts queue "
                    f"{elsewhere[0]!r} in database {backend.database_for(elsewhere[0])!r}"
                )
        if database:
            return {database: names}, backend
        groups: dict[str, list[str]] = {}
        for name in names:
            groups.setdefault(database_for(name), []).append(name)
        return groups, backend

    def _max_receive_count(self, options: dict[str, Any]) -> int | None:
        """--max-receives, or its deprecated spelling --max-reads (with a warning)."""
        value = options.get("max_receive_count")
        old = options.get("max_reads")
        if old is None or options.get("tasks"):  # with --tasks: refused as one line later
            return value
        if value is not None:
            raise CommandError("--max-reads is the deprecated spelling of --max-receives: give one")
        message = "--max-reads is deprecated: use --max-receives"
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        self.stderr.write(f"Warning: {message}")
        return int(old)

    def _task_backend(self, options: dict[str, Any]) -> PgmqBackend:
        """--tasks: the backend whose tasks to run, checked against the other options."""
        settled_by_tasks = {
            "handler": "--handler",
            "max_receive_count": "--max-receives",
            "max_reads": "--max-reads",
            "dead_letter": "--dead-letter",
            "delete": "--delete",
        }
        clashing = [option for name, option in settled_by_tasks.items() if options.get(name)]
        if clashing:
            raise CommandError(f"{', '.join(clashing)} cannot be used with --tasks")
        from ...tasks import worker_settings

        try:
            return worker_settings.backend_named(options["backend"] or "default")
        except ImproperlyConfigured as exc:
            raise CommandError(str(exc)) from exc


def apply_schedules(using: str) -> None:
    """At worker start: ``PGMQ["SCHEDULES"]`` applied, so code and database agree.

    A failure (a bad cron in settings, an old schema) is logged, not fatal: the
    worker has its queues to run; ``migrate`` reports the same error loudly.
    """
    from ...schedule_settings import schedules_installed, sync_schedules

    try:
        if schedules_installed(using):
            done = sync_schedules(using)
            if done.applied or done.disabled:
                log.info(
                    "schedules from settings: %d applied, %d disabled",
                    len(done.applied),
                    len(done.disabled),
                )
    except (ImproperlyConfigured, PgmqError, DatabaseError) as exc:
        log.error("schedules from settings not applied: %s", exc)


def _purger(backend: PgmqBackend | None) -> Callable[[], None] | None:
    """The task results' purge the worker runs with its samples (with --tasks)."""
    if backend is None:
        return None

    def purge() -> None:
        backend.purge_results()

    return purge


def plain(options: WorkerOptions) -> WorkerOptions:
    """The options without the maintenance one process runs once."""
    return dataclasses.replace(options, maintenance=None)
