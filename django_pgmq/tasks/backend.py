"""`PgmqBackend`: Django's Tasks API on pgmq queues in the project's own database.

``enqueue`` sends the task's message (header ``priority``, delay ``run_after``)
and inserts its result row in one statement on Django's connection, so it joins
the caller's transaction: a task enqueued in a transaction that rolls back never
existed. ``manage.py pgmq_consume --tasks`` runs the messages (see runner.py).
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterable
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core import checks
from django.core.exceptions import ImproperlyConfigured
from django.db import connections, transaction
from django.utils import timezone

from .. import conf, routing
from ..errors import PgmqError
from ..internal import InternalManager
from ..manager import QueueManager
from ..manager.plumbing import check_joins_transaction
from ..models import TaskResultRecord
from ..names import validate_queue_name
from . import results
from .compat import (
    BaseTaskBackend,
    Task,
    TaskResult,
    TaskResultDoesNotExist,
    TaskResultStatus,
    task_enqueued,
)

DEFAULTS: dict[str, Any] = {
    # None: each task queue's route (PGMQ["QUEUE_DATABASES"]), else PGMQ["DATABASE"]
    "database": None,
    "retries": 0,
    "retry_delay": 1.0,
    "retention_days": 7.0,
    # False: the worker's own commits (a task's read, its RUNNING mark, its verdict) do
    # not wait for their WAL flush; a server crash can undo the last of them (see
    # docs/guide/tasks.md). True (the default): every commit is durable.
    "synchronous_commit": True,
}

# (database alias, queue) pairs known to be task queues, per process.
_READY_QUEUES: set[tuple[str, str]] = set()
_READY_LOCK = threading.Lock()


class PgmqBackend(BaseTaskBackend):
    """Django Tasks backend: each task queue name is a pgmq queue; results in a table."""

    supports_defer = True
    supports_priority = True
    supports_async_task = True
    supports_get_result = True

    def __init__(self, alias: str, params: dict[str, Any]) -> None:
        super().__init__(alias, params)
        options = {**DEFAULTS, **{k.lower(): v for k, v in self.options.items()}}
        # OPTIONS "database" puts every queue of this backend there; without it each task
        # queue is routed like any other queue, and `database` is PGMQ["DATABASE"].
        self.explicit_database: str | None = options["database"]
        self.database: str = options["database"] or conf.database_alias()
        self.retries = options["retries"]
        self.retry_delay = options["retry_delay"]
        self.retention_days = options["retention_days"]
        self.synchronous_commit = options["synchronous_commit"]
        self.unknown_options = sorted(set(options) - set(DEFAULTS))
        problems = self._option_problems()
        if problems:
            raise ImproperlyConfigured(f"TASKS[{alias!r}]: " + "; ".join(problems))

    @property
    def retention(self) -> timedelta:
        """How long finished results are kept."""
        return timedelta(days=float(self.retention_days))

    # -- Django's API -----------------------------------------------------------

    def enqueue(self, task: Task, args: Iterable[Any], kwargs: dict[str, Any]) -> TaskResult:
        """Send the task's message and insert its result row: one statement, in the caller's
        transaction if there is one."""
        self.validate_task(task)
        # TaskResult normalises args and kwargs: TypeError before anything is written.
        result: TaskResult[Any, Any] = TaskResult(
            task=task,
            id=str(uuid.uuid4()),
            status=TaskResultStatus.READY,
            enqueued_at=None,
            started_at=None,
            finished_at=None,
            last_attempted_at=None,
            args=list(args),
            kwargs=dict(kwargs),
            backend=self.alias,
            errors=[],
            worker_ids=[],
        )
        run_after = task.run_after
        if run_after is not None and timezone.is_naive(run_after):  # USE_TZ = False
            run_after = timezone.make_aware(run_after)
        enqueued_at = timezone.now()
        self.prepare_queue(task.queue_name)
        database = self.database_for(task.queue_name)
        if self.explicit_database is None:
            check_joins_transaction(task.queue_name, database)
        InternalManager(database).task_enqueue(
            task.queue_name,
            {"id": result.id, "task": task.module_path},
            task.priority,
            run_after,
            {
                "id": uuid.UUID(result.id),
                "backend": self.alias,
                "task_path": task.module_path,
                "args": json.dumps(result.args, allow_nan=False),
                "kwargs": json.dumps(result.kwargs, allow_nan=False),
                "run_after": run_after,
                "enqueued_at": enqueued_at,
                "max_attempts": self.retries + 1,
            },
        )
        object.__setattr__(result, "enqueued_at", enqueued_at)
        task_enqueued.send(type(self), task_result=result)
        return result

    def get_result(self, result_id: str) -> TaskResult:
        """The result of a task enqueued with this backend, from any process."""
        try:
            key = uuid.UUID(str(result_id))
        except ValueError:
            raise TaskResultDoesNotExist(f"no task result {result_id!r}") from None
        record = None
        for database in self.databases():  # a result lives in its queue's database
            found = TaskResultRecord.objects.using(database).filter(pk=key, backend=self.alias)
            record = found.first()
            if record is not None:
                break
        if record is None:
            raise TaskResultDoesNotExist(f"no task result {result_id!r}")
        return results.to_result(record)

    # django-stubs says list; Django's callers (and the backport's annotation) take any iterable.
    def check(self, **kwargs: Any) -> Iterable[checks.CheckMessage]:  # type: ignore[override]
        """Django system checks: queue names pgmq accepts, options of the right kind."""
        yield from super().check(**kwargs)
        hint = f"see TASKS[{self.alias!r}]"
        for queue in sorted(self.queues):
            try:
                validate_queue_name(queue)
            except PgmqError as exc:
                yield checks.Error(str(exc), hint=hint, id="django_pgmq.E101")
        if self.database not in settings.DATABASES:
            yield checks.Error(
                f"OPTIONS database {self.database!r} is not in DATABASES",
                hint=hint,
                id="django_pgmq.E102",
            )
        for name in self.unknown_options:
            yield checks.Warning(
                f"unknown OPTIONS key {name!r} (known: {', '.join(DEFAULTS)})",
                hint=hint,
                id="django_pgmq.W101",
            )

    def _option_problems(self) -> list[str]:
        """What is wrong with the OPTIONS' values, one line each."""
        problems = []
        retries = self.retries
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            problems.append(f"OPTIONS retries must be an integer of at least 0, got {retries!r}")
        for name in ("retry_delay", "retention_days"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
                problems.append(f"OPTIONS {name} must be a number above 0, got {value!r}")
        if not isinstance(self.synchronous_commit, bool):
            problems.append(
                "OPTIONS synchronous_commit must be True (durable commits, the default) or "
                f"False (asynchronous commit of the worker's own transactions), "
                f"got {self.synchronous_commit!r}"
            )
        return problems

    # -- queues -----------------------------------------------------------------

    def database_for(self, queue: str) -> str:
        """The alias holding task queue ``queue`` (and the results of its tasks)."""
        return self.explicit_database or routing.database_for(queue)

    def databases(self) -> list[str]:
        """Every alias this backend's queues and results can live in."""
        if self.explicit_database:
            return [self.explicit_database]
        routed = [routing.database_for(q) for q in sorted(self.queues)]
        return list(dict.fromkeys([*routing.queue_databases(), *routed]))

    def prepare_queue(self, queue: str) -> None:
        """Make ``queue`` a task queue (created, priority index) unless known to be one.

        Once that is committed, this process remembers it and skips the round trip.
        """
        database = self.database_for(queue)
        key = (database, queue)
        if key in _READY_QUEUES:
            return
        committed = InternalManager(database).enable_task_queue(queue)

        def remember() -> None:
            with _READY_LOCK:
                _READY_QUEUES.add(key)

        if committed or not connections[database].in_atomic_block:
            remember()
        else:  # made by this transaction: ready once it commits
            transaction.on_commit(remember, using=database)

    def retry(self, record: TaskResultRecord) -> None:
        """Run a FAILED task again (the admin's action): READY, with ``retries`` more attempts.

        Its errors and worker ids are kept; a new message is sent.
        """
        database = self.database_for(record.queue_name)
        with transaction.atomic(using=database):
            self.prepare_queue(record.queue_name)
            record.msg_id = QueueManager(database).send(
                record.queue_name,
                {"id": str(record.id), "task": record.task_path},
                headers={"priority": record.priority},
            )
            record.status = TaskResultRecord.Status.READY
            record.finished_at = None
            record.max_attempts = len(record.worker_ids) + self.retries + 1
            record.save(
                using=database,
                update_fields=["msg_id", "status", "finished_at", "max_attempts"],
            )

    def purge_results(self) -> int:
        """Delete results finished longer ago than the retention; how many."""
        return sum(results.purge(db, self.alias, self.retention) for db in self.databases())


def configured_backends() -> list[PgmqBackend]:
    """Every ``TASKS`` backend that is a `PgmqBackend` (``pgmq_maintain`` purges their results)."""
    from .compat import task_backends

    backends = [task_backends[alias] for alias in getattr(settings, "TASKS", {})]
    return [backend for backend in backends if isinstance(backend, PgmqBackend)]
