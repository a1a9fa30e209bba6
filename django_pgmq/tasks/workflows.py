"""Workflows of Django tasks: ``chain``, ``group`` and ``chord`` of task calls.

``chord([call(resize, 1), call(resize, 2)], total).enqueue()`` makes one pgmq workflow
(`django_pgmq.workflows`) whose steps are task messages, and a result row per step in
the same transaction. A step after one task gets that task's return value as its first
argument; a step after a group (a chord's callback) gets the list of the group's
return values, in the group's order; ``call(...).immutable()`` gets neither. Steps
without parents are sent at once; the others when their parents are done (the SQL
fan-in), and the worker (`runner`) completes or fails each step with its task's verdict.

A step's result id tells its workflow: `workflow_id` reads it back from any result,
enqueued here or fetched later with ``get_result``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Union, cast

from asgiref.sync import sync_to_async
from django.db import transaction
from django.utils import timezone

from .. import workflows as core
from ..manager import QueueManager
from ..manager.plumbing import check_joins_transaction
from ..models import TaskResultRecord
from ..records import WorkflowStep
from . import results as rows
from . import step_ids
from .compat import Task, TaskResult, TaskResultStatus, task_enqueued
from .errors import WorkflowCancelled
from .step_ids import step_result_id

# How a step takes its parents' return values (the message's "parents" key).
ONE, LIST = "one", "list"
MAX_STEPS = step_ids.MAX_STEPS


class _Shape:
    """What a call, a chain, a group and a chord share: enqueue it as one workflow."""

    def enqueue(self, on_failure: str = "cancel") -> TaskWorkflow:
        """Create the workflow and a result row per step; its first steps are sent at once."""
        return _enqueue(cast(Node, self), on_failure)

    async def aenqueue(self, on_failure: str = "cancel") -> TaskWorkflow:
        """`enqueue` from async code (Django's connection, in its thread)."""
        return await sync_to_async(_enqueue)(cast(Node, self), on_failure)


@dataclass(frozen=True)
class TaskCall(_Shape):
    """A task with its arguments, as one step of a workflow (Celery's signature)."""

    task: Task
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    receives_results: bool = True

    def immutable(self) -> TaskCall:
        """The same call without its parents' return values (Celery's ``si``)."""
        return TaskCall(self.task, self.args, self.kwargs, receives_results=False)


def call(task: Task, *args: Any, **kwargs: Any) -> TaskCall:
    """``task`` called with ``args`` and ``kwargs`` as a workflow step."""
    if not isinstance(task, Task):
        raise TypeError(f"a workflow step is a task (decorated with @task), got {task!r}")
    return TaskCall(task, args, kwargs)


Node = Union[TaskCall, "Chain", "Group", "Chord"]


def _node(item: Node | Task) -> Node:
    """A step given as a bare `Task` is that task called without arguments."""
    if isinstance(item, Task):
        return call(item)
    if not isinstance(item, TaskCall | Chain | Group | Chord):
        raise TypeError(
            f"a workflow step is a task, call(task, ...), chain, group or chord, got {item!r}"
        )
    return item


class Chain(_Shape):
    """Steps one after the other; each gets the return value of the one before."""

    def __init__(self, *items: Node | Task) -> None:
        if not items:
            raise ValueError("chain() needs at least one step")
        self.items = [_node(i) for i in items]


class Group(_Shape):
    """Steps that run in parallel; what follows gets their return values as a list."""

    def __init__(self, items: Iterable[Node | Task]) -> None:
        self.items = [_node(i) for i in items]
        if not self.items:
            raise ValueError("group() needs at least one step")


class Chord(_Shape):
    """A group, then ``callback`` with the list of the group's return values, in order."""

    def __init__(self, header: Iterable[Node | Task], callback: Node | Task) -> None:
        self.header = Group(header)
        self.callback = _node(callback)


def chain(*items: Node | Task) -> Chain:
    """``a``, then ``b`` with ``a``'s return value, then ``c`` with ``b``'s, ..."""
    return Chain(*items)


def group(items: Iterable[Node | Task]) -> Group:
    """Every item at once."""
    return Group(items)


def chord(header: Iterable[Node | Task], callback: Node | Task) -> Chord:
    """Every item of ``header`` at once, then ``callback`` with their return values."""
    return Chord(header, callback)


# -- result ids ------------------------------------------------------------------


def workflow_id(result: TaskResult | str | uuid.UUID) -> int | None:
    """The workflow a task result is a step of (None for a task enqueued alone)."""
    return step_ids.workflow_of(result.id if isinstance(result, TaskResult) else result)


# -- planning --------------------------------------------------------------------


@dataclass
class _Step:
    """One planned step: its call, index, name and how it takes its parents' values."""

    call: TaskCall
    index: int
    name: str
    parents: str | None


def _plan(node: Node, takes: str | None, key: str, out: list[_Step]) -> tuple[Any, str]:
    """The core builder of ``node`` (its steps appended to ``out``) and how what follows
    it takes its values (`ONE` from a single task or chord, `LIST` from a group)."""
    if isinstance(node, TaskCall):
        planned = _Step(node, len(out), f"{len(out)}.{node.task.name}", None)
        planned.parents = takes if node.receives_results else None
        out.append(planned)
        message = {"task": node.task.module_path, "workflow_key": key, "parents": planned.parents}
        headers = {"priority": node.task.priority}
        return core.step(planned.name, node.task.queue_name, message, headers=headers), ONE
    if isinstance(node, Group):
        return core.group([_plan(i, takes, key, out)[0] for i in node.items]), LIST
    if isinstance(node, Chord):
        header = [_plan(i, takes, key, out)[0] for i in node.header.items]
        callback, after = _plan(node.callback, LIST, key, out)
        return core.chord(header, callback), after
    parts = []
    for item in node.items:
        part, takes = _plan(item, takes, key, out)
        parts.append(part)
    return core.chain(*parts), takes or ONE


# -- enqueue ---------------------------------------------------------------------


@dataclass
class TaskWorkflow:
    """An enqueued workflow of tasks: its id, its database and each step's result."""

    id: int
    database: str
    results: list[TaskResult]
    steps: list[str]

    def result(self, step: str) -> TaskResult:
        """The result of the step named ``step`` (``"<index>.<task name>"``)."""
        return self.results[self.steps.index(step)]

    def status(self) -> list[WorkflowStep]:
        """Each step's state in SQL (`pgmq.workflow_status`)."""
        return QueueManager(self.database).workflow_status(self.id)

    def cancel(self) -> int:
        """Cancel the steps not finished (their results FAILED); how many were cancelled."""
        cancelled = QueueManager(self.database).cancel_workflow(self.id)
        mark_cancelled(self.database, uuid.UUID(self.results[0].id))
        return cancelled


def _backend_of(task: Task) -> Any:
    """The task's backend, which must be a `PgmqBackend`."""
    from .backend import PgmqBackend
    from .compat import task_backends

    backend = task_backends[task.backend]
    if not isinstance(backend, PgmqBackend):
        raise TypeError(
            f"task {task.module_path} uses backend {task.backend!r}, not a PgmqBackend: "
            "a workflow's tasks run on pgmq queues"
        )
    backend.validate_task(task)
    return backend


def _database(steps: Sequence[_Step]) -> str:
    """The one database every step's queue lives in (a workflow never spans two)."""
    where: dict[str, str] = {}
    for planned in steps:
        task = planned.call.task
        if task.run_after is not None:
            raise ValueError(
                f"step {planned.name}: run_after is not supported in a workflow "
                "(a step runs when its parents are done)"
            )
        where.setdefault(_backend_of(task).database_for(task.queue_name), task.queue_name)
    if len(where) > 1:
        (db1, q1), (db2, q2) = list(where.items())[:2]
        raise ValueError(
            f"a workflow's steps live in one database: queue {q1!r} is in {db1!r}, "
            f"queue {q2!r} in {db2!r}"
        )
    return next(iter(where))


def _enqueue(node: Node, on_failure: str) -> TaskWorkflow:
    key = step_ids.new_key()
    steps: list[_Step] = []
    builder, _ = _plan(node, None, format(key, "x"), steps)
    if len(steps) > MAX_STEPS:
        raise ValueError(f"a workflow has at most {MAX_STEPS} steps, got {len(steps)}")
    database = _database(steps)
    for planned in steps:
        _check_arguments(planned)
        _backend_of(planned.call.task).prepare_queue(planned.call.task.queue_name)
    if _backend_of(steps[0].call.task).explicit_database is None:  # as Task.enqueue does
        check_joins_transaction(steps[0].call.task.queue_name, database)
    now = timezone.now()
    with transaction.atomic(using=database):  # the rows exist before a worker sees a root
        manager = QueueManager(database)
        wid = manager.create_workflow(builder, on_failure=on_failure)
        sent = {s.step: s.msg_id for s in manager.workflow_status(wid)}
        records = [_record(planned, key, wid, now, sent.get(planned.name)) for planned in steps]
        TaskResultRecord.objects.using(database).bulk_create(records)
    results = []
    for planned, record in zip(steps, records, strict=True):
        result = rows.to_result(record, planned.call.task)
        task_enqueued.send(type(_backend_of(planned.call.task)), task_result=result)
        results.append(result)
    return TaskWorkflow(wid, database, results, [s.name for s in steps])


def _check_arguments(planned: _Step) -> None:
    """TypeError naming the step when its arguments are not JSON (as ``Task.enqueue``'s
    `TaskResult` normalises them), before anything is written."""
    try:
        TaskResult(
            task=planned.call.task,
            id="",
            status=TaskResultStatus.READY,
            enqueued_at=None,
            started_at=None,
            finished_at=None,
            last_attempted_at=None,
            args=list(planned.call.args),
            kwargs=dict(planned.call.kwargs),
            backend=planned.call.task.backend,
            errors=[],
            worker_ids=[],
        )
    except (TypeError, ValueError) as exc:
        raise TypeError(f"step {planned.name}: its arguments must be JSON: {exc}") from None


def _record(planned: _Step, key: int, wid: int, now: Any, msg_id: int | None) -> TaskResultRecord:
    task = planned.call.task
    backend = _backend_of(task)
    return TaskResultRecord(
        id=step_result_id(key, planned.index, wid),
        backend=backend.alias,
        queue_name=task.queue_name,
        task_path=task.module_path,
        priority=task.priority,
        status=TaskResultRecord.Status.READY,
        args=list(planned.call.args),
        kwargs=dict(planned.call.kwargs),
        enqueued_at=now,
        max_attempts=backend.retries + 1,
        msg_id=msg_id,
    )


# -- the worker's side -------------------------------------------------------------


@dataclass(frozen=True)
class StepMessage:
    """What a task step's message says: its workflow, its step and its result id."""

    workflow_id: int
    step: str
    result_id: str | None
    parents: str | None
    results: dict[str, Any]

    def arguments(self) -> list[Any]:
        """The parents' return values the task gets first: one value, a list, or none."""
        if self.parents is None:
            return []
        ordered = [self.results[name] for name in sorted(self.results, key=_index_of)]
        if self.parents == ONE and len(ordered) == 1:
            return ordered
        return [ordered]


def _index_of(step: str) -> tuple[int, str]:
    number, _, rest = step.partition(".")
    return (int(number), rest) if number.isdigit() else (MAX_STEPS, step)


def step_message(payload: dict[str, Any], headers: dict[str, Any] | None) -> StepMessage | None:
    """The workflow step a task message is (None for a task enqueued alone).

    A message built here (``workflow_key``) names its result row through its header;
    another client's task-shaped step (``{"task": ...}``) is adopted like a scheduled one.
    """
    header = (headers or {}).get("workflow")
    if not isinstance(header, dict) or not isinstance(header.get("id"), int):
        return None
    name = str(header.get("step", ""))
    results = header.get("results") or {}
    result_id = None
    key = payload.get("workflow_key")
    index = _index_of(name)[0]
    if isinstance(key, str) and index < MAX_STEPS:
        try:
            result_id = str(step_result_id(int(key, 16), index, header["id"]))
        except ValueError:
            result_id = None
    parents = payload.get("parents")
    return StepMessage(
        header["id"],
        name,
        result_id,
        parents if parents in (ONE, LIST) else None,
        results if isinstance(results, dict) else {},
    )


def mark_cancelled(database: str, any_step: uuid.UUID) -> int:
    """Mark FAILED the results of the workflow's cancelled steps not started; how many.

    SQL cancels steps (a parent failed under ``on_failure="cancel"``, or
    `pgmq.cancel_workflow`) without knowing result rows; this brings them level.
    """
    wid = workflow_id(str(any_step))
    if wid is None:
        return 0
    key = step_ids.key_of(any_step)
    cancelled = [
        step_result_id(key, _index_of(s.step)[0], wid)
        for s in QueueManager(database).workflow_status(wid)
        if s.status == "cancelled" and _index_of(s.step)[0] < MAX_STEPS
    ]
    error = rows.error_entry(WorkflowCancelled(f"workflow {wid} cancelled this step"))
    return (
        TaskResultRecord.objects.using(database)
        .filter(pk__in=cancelled, status=TaskResultRecord.Status.READY)
        .update(status=TaskResultRecord.Status.FAILED, finished_at=timezone.now(), errors=[error])
    )
