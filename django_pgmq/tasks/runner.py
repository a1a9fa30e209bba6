"""Running one task message in the worker: the handler of a task queue.

The worker consumes task queues like any queue, with this handler, not atomic
(a task commits its own work, and its result says RUNNING while it runs). Each
message names a result row; the runner marks it RUNNING, calls the task (an
``async def`` one on an event loop), and records SUCCESSFUL or FAILED with the
return value or the error. A failed attempt with attempts left is put back
READY and raised to the processor as `RetryTask`, which retries the message
after a backoff. A message whose result is already finished is only acknowledged.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import logging
import os
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..internal import InternalManager
from ..manager import QueueManager
from ..models import TaskResultRecord
from ..records import Message
from ..worker.settled import Settled
from . import results, workflows
from .compat import (
    Task,
    TaskContext,
    TaskResult,
    normalize_json,
    task_finished,
    task_started,
)
from .errors import RetryTask

if TYPE_CHECKING:
    from .backend import PgmqBackend

log = logging.getLogger("django_pgmq.worker")
Status = TaskResultRecord.Status
# How long a message that names no task stays hidden when its queue has no
# dead-letter queue: the worker reads it again (and warns again) once an hour.
NOT_A_TASK_HIDDEN = 3600


def worker_id() -> str:
    """This process, as recorded in a result's ``worker_ids`` (one entry per attempt)."""
    return f"{socket.gethostname()}:{os.getpid()}"


@functools.lru_cache(maxsize=1024)
def _arguments_signature(func: Any, takes_context: bool) -> inspect.Signature:
    """The signature a task's stored arguments must fit (without its context), made once."""
    params = list(inspect.signature(func).parameters.values())[int(takes_context) :]
    return inspect.Signature([p.replace(annotation=p.empty) for p in params])


def check_arguments(task: Task, args: list[Any], kwargs: dict[str, Any]) -> None:
    """TypeError naming the task when its stored arguments do not fit its signature."""
    signature = _arguments_signature(task.func, task.takes_context)
    try:
        signature.bind(*args, **kwargs)
    except TypeError as exc:
        raise TypeError(f"arguments do not fit {task.module_path}{signature}: {exc}") from None


@dataclass
class _Verdict:
    """A finished task whose verdict is not stored yet (see `TaskRunner.batch`)."""

    record: TaskResultRecord
    result: TaskResult | None
    where: tuple[str, int]
    return_value: str | None
    step: workflows.StepMessage | None = None


class TaskRunner:
    """The handler of one task queue: runs the task each message names, and settles it.

    Within `batch` (the worker's scope around one batch of messages), a finished task's
    verdict is stored in the transaction that marks the next task RUNNING, and the last
    one when the batch ends: one commit per task instead of two. Outside it (a caller
    running one message), each verdict is stored at once.
    """

    def __init__(self, backend: PgmqBackend, queue: str) -> None:
        self.backend = backend
        self.queue = queue
        self.using = backend.database_for(queue)
        self.worker_id = worker_id()
        self._local = threading.local()  # per consumer thread: in a batch, the owed verdict

    @contextlib.contextmanager
    def batch(self, messages: list[Message]) -> Iterator[None]:
        """Run a batch's messages with verdicts written together with the next start."""
        self._local.batching = True
        try:
            yield
        finally:
            self._local.batching = False
            owed = self._take_owed()
            if owed is not None:
                self._store(owed)
                self._announce(owed)

    def _take_owed(self) -> _Verdict | None:
        owed = getattr(self._local, "owed", None)
        self._local.owed = None
        return owed

    def _start(self, result_id: str) -> TaskResultRecord | None:
        """Mark the result RUNNING, in one transaction with the verdict owed, if any."""
        owed = self._take_owed()
        durable = self.backend.synchronous_commit
        if owed is None:
            return results.start_attempt(
                self.using, result_id, self.worker_id, synchronous_commit=durable
            )
        record = results.finish_and_start(
            self.using,
            owed.record,
            owed.where,
            owed.return_value,
            result_id,
            self.worker_id,
            synchronous_commit=durable,
        )
        self._announce(owed)
        return record

    def _settle(
        self,
        record: TaskResultRecord,
        result: TaskResult | None,
        where: tuple[str, int],
        status: str,
        return_value: str | None = None,
        step: workflows.StepMessage | None = None,
    ) -> None:
        """Decide the verdict now; store it now, or with the batch's next start (a
        workflow step's at once, with its step completed or failed)."""
        results.decide(record, status, return_value)
        verdict = _Verdict(record, result, where, return_value, step)
        if step is None and getattr(self._local, "batching", False):
            self._local.owed = verdict
            return
        self._store(verdict)
        self._announce(verdict)

    def _store(self, verdict: _Verdict) -> None:
        if verdict.step is not None:
            results.write_step_verdict(
                self.using,
                verdict.record,
                verdict.where,
                verdict.return_value,
                synchronous_commit=self.backend.synchronous_commit,
            )
            if verdict.record.status == Status.FAILED:  # its dependents' results: FAILED too
                workflows.mark_cancelled(self.using, verdict.record.id)
            return
        results.write_verdict(
            self.using,
            verdict.record,
            verdict.where,
            verdict.return_value,
            synchronous_commit=self.backend.synchronous_commit,
        )

    def _announce(self, verdict: _Verdict) -> None:
        """Once the verdict is committed: the result brought up to date, ``task_finished``."""
        if verdict.result is not None:
            results.refresh_result(verdict.result, verdict.record)
            task_finished.send(type(self.backend), task_result=verdict.result)

    def run(self, message: Message) -> Settled | None:
        """Run one task message; raises `RetryTask` when the attempt failed with more to come.

        Every other way out settles the message (the consumer ``acknowledges``):
        with the verdict, in one statement, or alone when its task is finished
        already. A final failure, and a message that is no task (never deleted:
        see `_not_a_task`), return a `Settled` so that the worker counts them.
        """
        payload = message.message if isinstance(message.message, dict) else {}
        step = workflows.step_message(payload, message.headers)
        result_id = payload.get("id")
        if step is not None and step.result_id is not None:  # enqueued by tasks.workflows
            result_id = step.result_id
        elif result_id is None and "task" in payload:  # sent by a schedule: no result row yet
            result_id = results.adopt_scheduled(
                self.using, self.backend.alias, self.backend.retries + 1, self.queue, message
            )
        record = None
        if isinstance(result_id, str):
            record = self._start(result_id)
        if record is None:
            if isinstance(result_id, str) and results.exists(self.using, result_id):
                # A task whose verdict is written already (its message came back): done.
                log.info(
                    "%s: message %d: its task is finished; deleted", self.queue, message.msg_id
                )
                self._finished_already(message, result_id, step)
                return None
            return self._not_a_task(message, result_id)
        where = (self.queue, message.msg_id)
        try:
            task = results.load_task(record.task_path)
        except ImportError as exc:
            return self._failed(record, None, exc, where, step)
        result = results.to_result(record, task)
        task_started.send(type(self.backend), task_result=result)
        first = step.arguments() if step is not None else []
        try:
            check_arguments(task, [*first, *record.args], record.kwargs)
            value = results.encode(normalize_json(self._call(task, result, record, first)))
        except Exception as exc:
            return self._failed(record, result, exc, where, step)
        self._settle(record, result, where, Status.SUCCESSFUL, value, step)
        return None

    def _finished_already(
        self, message: Message, result_id: str, step: workflows.StepMessage | None
    ) -> None:
        """Acknowledge a message whose task has its verdict: deleted, or for a workflow
        step completed or failed with that verdict (its step advances once)."""
        where = (self.queue, message.msg_id)
        if step is None:
            QueueManager(self.using).delete(*where)
            return
        record = TaskResultRecord.objects.using(self.using).get(pk=result_id)
        results.settle_step(self.using, record, where)
        if record.status == Status.FAILED:
            workflows.mark_cancelled(self.using, record.id)

    def _not_a_task(self, message: Message, result_id: Any) -> Settled:
        """Put aside a message that names no task: never delete what another client sent.

        With a ``dead_letter_queue`` attribute on the queue it goes there; else it
        stays in the queue, hidden for `NOT_A_TASK_HIDDEN` seconds so that the
        worker does not read it again and again. Either way with a WARNING.
        """
        if not isinstance(message.message, dict) or "id" not in message.message:
            why = "its body has no task result id"
        else:
            why = f"its id {result_id!r} names no task result"
        manager = InternalManager(self.using)
        dead_letter = manager.get_queue_attributes(self.queue).get("dead_letter_queue")
        if dead_letter:
            manager.dead_letter(self.queue, message.msg_id, dead_letter, f"not a task: {why}")
            log.warning(
                "%s: message %d is not a task (%s); moved to dead-letter queue %s",
                self.queue,
                message.msg_id,
                why,
                dead_letter,
            )
            return Settled("dead-lettered")
        manager.set_vt_seconds(self.queue, [message.msg_id], NOT_A_TASK_HIDDEN)
        log.warning(
            "%s: message %d is not a task (%s); left in the queue, hidden for %ds "
            "(set the queue's dead_letter_queue attribute to move such messages there)",
            self.queue,
            message.msg_id,
            why,
            NOT_A_TASK_HIDDEN,
        )
        return Settled("set aside")

    @staticmethod
    def _call(task: Task, result: TaskResult, record: TaskResultRecord, first: list[Any]) -> Any:
        """Call the task (``Task.call`` runs an ``async def`` one on an event loop), after
        ``first``: a workflow step's parents' return values."""
        args = [*first, *record.args]
        if task.takes_context:
            return task.call(TaskContext(task_result=result), *args, **record.kwargs)
        return task.call(*args, **record.kwargs)

    def _failed(
        self,
        record: TaskResultRecord,
        result: TaskResult | None,
        exc: Exception,
        where: tuple[str, int],
        step: workflows.StepMessage | None = None,
    ) -> Settled:
        attempt = f"attempt {len(record.worker_ids)} of {record.max_attempts}"
        if results.record_failed_attempt(self.using, record, exc):
            raise RetryTask(f"task {record.task_path} ({record.id}) {attempt} failed: {exc!r}")
        self._settle(record, result, where, Status.FAILED, step=step)
        log.warning(
            "task %s (%s) failed (%s): %s: %s",
            record.task_path,
            record.id,
            attempt,
            type(exc).__name__,
            exc,
        )
        return Settled("failed")
