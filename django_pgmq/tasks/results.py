"""Task results: the `TaskResultRecord` rows and Django's `TaskResult` built from them.

The backend writes a row when a task is enqueued; the worker's runner updates
it per attempt (`start_attempt`, `succeed`, `fail`); `get_result` reads it.
"""

from __future__ import annotations

import copy
import json
import traceback
import uuid
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.module_loading import import_string

from ..internal import InternalManager
from ..manager import QueueManager
from ..manager.plumbing import _json
from ..models import TaskResultRecord
from ..records import Message
from .compat import Task, TaskError, TaskResult, TaskResultDoesNotExist, TaskResultStatus
from .errors import WorkerLost

Status = TaskResultRecord.Status
FINISHED = (Status.SUCCESSFUL, Status.FAILED)

# The namespace of the result ids of scheduled task messages (uuid5 of the message).
SCHEDULED_NAMESPACE = uuid.UUID("5d0e8f3a-2b1c-4c7e-9a54-6f1d2e3c4b5a")


def error_entry(exc: BaseException) -> dict[str, str]:
    """An error as stored: the exception's class path and its formatted traceback."""
    kind = type(exc)
    return {
        "exception_class_path": f"{kind.__module__}.{kind.__qualname__}",
        "traceback": "".join(traceback.format_exception(exc)),
    }


def load_task(path: str) -> Task:
    """The `Task` a result names (a module-level ``@task`` function), or ImportError."""
    try:
        task = import_string(path)
    except ImportError:
        raise
    except Exception as exc:  # the module raised while importing
        raise ImportError(f"cannot import task {path!r}: {type(exc).__name__}: {exc}") from exc
    if not isinstance(task, Task):
        raise ImportError(f"{path!r} is not a task (decorate it with @task)")
    return task


def task_of(record: TaskResultRecord, task: Task) -> Task:
    """``task`` with the options it was enqueued with (not validated again: settings may change)."""
    enqueued = copy.copy(task)
    for name, value in (
        ("priority", record.priority),
        ("queue_name", record.queue_name),
        ("run_after", record.run_after),
        ("backend", record.backend),
    ):
        object.__setattr__(enqueued, name, value)
    return enqueued


def to_result(record: TaskResultRecord, task: Task | None = None) -> TaskResult:
    """Django's `TaskResult` of a row; ``task`` saves importing it again."""
    if task is None:
        try:
            task = load_task(record.task_path)
        except ImportError as exc:
            raise TaskResultDoesNotExist(
                f"task result {record.id}: its task cannot be loaded: {exc}"
            ) from exc
    result: TaskResult[Any, Any] = TaskResult(
        task=task_of(record, task),
        id=str(record.id),
        status=TaskResultStatus(record.status),
        enqueued_at=record.enqueued_at,
        started_at=record.started_at,
        finished_at=record.finished_at,
        last_attempted_at=record.last_attempted_at,
        args=record.args,
        kwargs=record.kwargs,
        backend=record.backend,
        errors=[TaskError(**error) for error in record.errors],
        worker_ids=list(record.worker_ids),
    )
    object.__setattr__(result, "_return_value", record.return_value)
    return result


def refresh_result(result: TaskResult, record: TaskResultRecord) -> None:
    """Copy a row's state into an existing `TaskResult` (the runner's, sent with signals)."""
    for name, value in (
        ("status", TaskResultStatus(record.status)),
        ("started_at", record.started_at),
        ("finished_at", record.finished_at),
        ("last_attempted_at", record.last_attempted_at),
        ("errors", [TaskError(**error) for error in record.errors]),
        ("worker_ids", list(record.worker_ids)),
        ("_return_value", record.return_value),
    ):
        object.__setattr__(result, name, value)


def start_attempt(
    using: str, result_id: str, worker_id: str, *, synchronous_commit: bool = True
) -> TaskResultRecord | None:
    """Mark a result RUNNING for a new attempt by ``worker_id``; None if it is not to run.

    A READY row (the usual case) takes one statement. Not to run: no such row, or
    already finished (a message that came back after its verdict was written). A
    row still RUNNING lost its previous attempt's worker: that attempt is recorded
    as failed (`WorkerLost`), and when it was the last one allowed the result is
    FAILED instead of run again. ``synchronous_commit=False`` (the backend's option):
    the one-statement case commits without waiting for its WAL flush.
    """
    try:
        key = uuid.UUID(result_id)
    except ValueError:
        return None
    started = _finish_and_start(using, None, None, None, key, worker_id, synchronous_commit)
    if started is not None:
        return started
    return _start_otherwise(using, key, worker_id)


def exists(using: str, result_id: str) -> bool:
    """Whether ``result_id`` names a task result row (a message naming none is not a task)."""
    try:
        key = uuid.UUID(result_id)
    except ValueError:
        return False
    return TaskResultRecord.objects.using(using).filter(pk=key).exists()


def adopt_scheduled(
    using: str, backend: str, max_attempts: int, queue: str, message: Message
) -> str | None:
    """The result id of a task message a schedule sent (task path and arguments, no id).

    SQL sends such a message (``pgmq.enqueue_due_schedules``) and knows no result
    table, so its row is made here, when a worker first sees the message. The id
    comes from the message (queue, msg_id, enqueued_at), and the row is inserted
    only if missing: a message read again finds the same row, so one tick makes one
    result. None when the payload is not a task (the runner then sets it aside, never
    deletes it).
    """
    payload = message.message if isinstance(message.message, dict) else {}
    path, args, kwargs = payload.get("task"), payload.get("args", []), payload.get("kwargs", {})
    if not isinstance(path, str) or not isinstance(args, list) or not isinstance(kwargs, dict):
        return None
    key = uuid.uuid5(
        SCHEDULED_NAMESPACE, f"{queue}:{message.msg_id}:{message.enqueued_at.isoformat()}"
    )
    priority = (message.headers or {}).get("priority", 0)
    record = TaskResultRecord(
        id=key,
        backend=backend,
        queue_name=queue,
        task_path=path,
        priority=priority if isinstance(priority, int) and abs(priority) <= 100 else 0,
        status=Status.READY,
        args=args,
        kwargs=kwargs,
        enqueued_at=message.enqueued_at,
        max_attempts=max_attempts,
        msg_id=message.msg_id,
    )
    TaskResultRecord.objects.using(using).bulk_create([record], ignore_conflicts=True)
    return str(key)


def finish_and_start(
    using: str,
    done: TaskResultRecord,
    message: tuple[str, int],
    return_value: str | None,
    result_id: str,
    worker_id: str,
    *,
    synchronous_commit: bool = True,
) -> TaskResultRecord | None:
    """Store ``done``'s verdict (`decide`), delete its message and start ``result_id``.

    One statement and one commit; what `write_verdict` then `start_attempt` do.
    """
    try:
        key = uuid.UUID(result_id)
    except ValueError:
        write_verdict(using, done, message, return_value, synchronous_commit=synchronous_commit)
        return None
    started = _finish_and_start(
        using, done, message, return_value, key, worker_id, synchronous_commit
    )
    if started is not None:
        return started
    return _start_otherwise(using, key, worker_id)


# Each field of a results row, in the model's order (`Model.from_db` takes its values so):
# its attribute name, the column pgmq._task_finish_and_start's row names it by, and whether
# it is JSON (Django's psycopg backend returns jsonb as text).
_FIELDS = tuple(
    (f.attname, str(f.column), f.get_internal_type() == "JSONField")
    for f in TaskResultRecord._meta.concrete_fields
)
_ATTNAMES = tuple(attname for attname, _, _ in _FIELDS)


def _finish_and_start(
    using: str,
    done: TaskResultRecord | None,
    message: tuple[str, int] | None,
    return_value: str | None,
    next_id: uuid.UUID | None,
    worker_id: str,
    synchronous_commit: bool = True,
) -> TaskResultRecord | None:
    """One call of pgmq._task_finish_and_start: ``done``'s verdict stored and its message
    deleted (if given), ``next_id`` marked RUNNING (if given and READY) and returned.
    Its commit waits for its WAL flush unless ``synchronous_commit`` is False."""
    params: dict[str, Any] = {
        "done_id": None,
        "done_msg_id": None,
        "done_status": None,
        "done_finished_at": None,
        "done_return_value": None,
        "done_errors": None,
        "id": next_id,
        "now": timezone.now(),
        "worker": worker_id,
    }
    queue: str | None = None  # the finished task's, whose message is deleted
    if done is not None and message is not None:
        params.update(
            done_id=done.id,
            done_msg_id=message[1],
            done_status=done.status,
            done_finished_at=done.finished_at,
            done_return_value=return_value,
            done_errors=json.dumps(done.errors),
        )
        queue = message[0]
    rows = InternalManager(using).task_finish_and_start(
        queue, params, synchronous_commit=synchronous_commit
    )
    return _record(using, rows[0]) if rows else None


def _record(using: str, columns: Mapping[str, Any]) -> TaskResultRecord:
    """A `TaskResultRecord` from a row of the results table's columns, read by column name
    (`Base._fetch_named`), so the result's column order need not be the model's."""
    values = [
        _json(columns[column]) if is_json else columns[column] for _, column, is_json in _FIELDS
    ]
    return TaskResultRecord.from_db(using, _ATTNAMES, values)


def _start_otherwise(using: str, result_id: uuid.UUID, worker_id: str) -> TaskResultRecord | None:
    """`start_attempt` of a row that was not READY: lost, finished or gone."""
    with transaction.atomic(using=using):
        record = (
            TaskResultRecord.objects.using(using).select_for_update().filter(pk=result_id).first()
        )
        if record is None or record.status in FINISHED:
            return None
        now = timezone.now()
        if record.status == Status.RUNNING:
            record.errors.append(error_entry(WorkerLost(_lost_text(record))))
            if len(record.worker_ids) >= record.max_attempts:
                record.status, record.finished_at = Status.FAILED, now
                record.save(update_fields=["status", "finished_at", "errors"])
                return None
        record.status = Status.RUNNING
        record.started_at = record.started_at or now
        record.last_attempted_at = now
        record.worker_ids.append(worker_id)
        record.save(
            update_fields=["status", "started_at", "last_attempted_at", "worker_ids", "errors"]
        )
        return record


def _lost_text(record: TaskResultRecord) -> str:
    worker = record.worker_ids[-1] if record.worker_ids else "unknown"
    return f"attempt {len(record.worker_ids)} on worker {worker} ended without a verdict"


def encode(value: Any) -> str:
    """A return value as JSON text (ValueError for NaN or infinity, which JSON has not)."""
    return json.dumps(value, allow_nan=False)


def decide(record: TaskResultRecord, status: str, return_value: str | None = None) -> None:
    """Set a verdict on the row in memory, finished now; `write_verdict` stores it."""
    record.status, record.finished_at = status, timezone.now()
    record.return_value = None if return_value is None else json.loads(return_value)


def write_verdict(
    using: str,
    record: TaskResultRecord,
    message: tuple[str, int],
    return_value: str | None,
    *,
    synchronous_commit: bool = True,
) -> None:
    """Store the verdict `decide` set and delete the task's message, in one statement."""
    _finish_and_start(using, record, message, return_value, None, "", synchronous_commit)


def write_step_verdict(
    using: str,
    record: TaskResultRecord,
    message: tuple[str, int],
    return_value: str | None,
    *,
    synchronous_commit: bool = True,
) -> None:
    """Store a workflow step's verdict and complete (the return value) or fail (the last
    error) its step, in one transaction: its children are sent when that commits."""
    with transaction.atomic(using=using):
        settle_step(using, record, message)
        write_verdict(using, record, message, return_value, synchronous_commit=synchronous_commit)


def settle_step(using: str, record: TaskResultRecord, message: tuple[str, int]) -> None:
    """Complete or fail the workflow step of ``message`` with ``record``'s verdict (its
    message is archived); the step's children see the return value in their header."""
    queue, msg_id = message
    manager = QueueManager(using)
    if record.status == Status.SUCCESSFUL:
        manager.complete(queue, msg_id, record.return_value)
    else:
        manager.fail(
            queue, msg_id, record.errors[-1] if record.errors else {"status": record.status}
        )


def record_failed_attempt(using: str, record: TaskResultRecord, exc: BaseException) -> bool:
    """Record a failed attempt; True (READY again) when it has attempts left, else False.

    With attempts left the row is saved now (the worker then hides the message for
    its backoff); otherwise the caller writes the FAILED verdict with `finish`.
    """
    record.errors.append(error_entry(exc))
    if len(record.worker_ids) >= record.max_attempts:
        return False
    record.status = Status.READY
    record.save(using=using, update_fields=["status", "errors"])
    return True


def purge(using: str, backend: str, retention: timedelta, now: datetime | None = None) -> int:
    """Delete the backend's results finished more than ``retention`` ago; how many."""
    cutoff = (now or timezone.now()) - retention
    finished = TaskResultRecord.objects.using(using).filter(
        backend=backend, status__in=FINISHED, finished_at__lt=cutoff
    )
    return finished.delete()[0]
