"""Workflows of Django tasks run by real ``pgmq_consume --tasks`` processes.

Each step is a task with its own result row, updated as it runs; a step gets its
parent's return value (a chain) or its parents' values in order (a chord's callback);
a step that fails for good fails its step in SQL, and the steps after it are cancelled
and their results FAILED.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from django.db import transaction

from django_pgmq import QueueManager, WorkflowNotFound
from django_pgmq.models import TaskResultRecord
from django_pgmq.tasks import workflows
from django_pgmq.tasks.compat import task_backends
from django_pgmq.tasks.workflows import call, chain, chord, group
from tests import task_funcs
from tests.worker_process import WorkerProcess

pytestmark = pytest.mark.slow

QUEUES = ["default", "emails"]


@pytest.fixture
def start(transactional_db, subprocess_env) -> Iterator[Callable[..., WorkerProcess]]:
    manager = QueueManager()
    for queue in QUEUES:
        task_backends["default"].prepare_queue(queue)
        manager.purge_queue(queue)
    started: list[WorkerProcess] = []

    def run(*args: str) -> WorkerProcess:
        worker = WorkerProcess(subprocess_env, ["--tasks", *map(str, args)])
        started.append(worker)
        return worker

    yield run
    for worker in started:
        worker.stop()


def run_all(start: Callable[..., WorkerProcess]) -> None:
    worker = start(
        "default", "emails", "--until-empty", "--poll-interval", "0.1", "--concurrency", "2"
    )
    assert worker.wait() == 0, worker.output


def statuses(enqueued: workflows.TaskWorkflow) -> list[str]:
    return [step.status for step in enqueued.status()]


def test_a_chain_passes_each_return_value_to_the_next_step(start):
    enqueued = chain(call(task_funcs.add, 1, 2), task_funcs.double, task_funcs.double).enqueue()
    assert [r.status for r in enqueued.results] == ["READY"] * 3
    run_all(start)
    for result in enqueued.results:
        result.refresh()
    assert [r.status for r in enqueued.results] == ["SUCCESSFUL"] * 3
    assert [r.return_value for r in enqueued.results] == [3, 6, 12]
    assert statuses(enqueued) == ["done"] * 3
    assert [s.result for s in enqueued.status()] == [3, 6, 12]
    # any step's result, fetched anew, names its workflow
    fetched = task_backends["default"].get_result(enqueued.results[2].id)
    assert workflows.workflow_id(fetched) == enqueued.id


def test_a_chord_callback_gets_its_parents_values_in_order(start):
    enqueued = chord(
        [call(task_funcs.echo, n) for n in range(12)], call(task_funcs.collect, "tail")
    ).enqueue()
    run_all(start)
    callback = enqueued.results[-1]
    callback.refresh()
    assert callback.status == "SUCCESSFUL"
    assert callback.return_value == [list(range(12)), "tail"]
    assert statuses(enqueued) == ["done"] * 13


def test_two_workers_run_a_wide_chord_and_its_callback_runs_once(start):
    enqueued = chord([call(task_funcs.echo, n) for n in range(60)], task_funcs.tally).enqueue()
    workers = [
        start(
            "default",
            "--until-empty",
            "--poll-interval",
            "0.1",
            "--concurrency",
            "2",
            "--batch",
            "3",
        )
        for _ in range(2)
    ]
    for worker in workers:
        assert worker.wait() == 0, worker.output
    assert task_funcs.runs("tally") == [60]
    callback = enqueued.results[-1]
    callback.refresh()
    assert (callback.status, callback.return_value, callback.attempts) == ("SUCCESSFUL", 60, 1)
    assert statuses(enqueued) == ["done"] * 61


def test_a_group_then_a_chain_and_an_immutable_step(start):
    enqueued = chain(
        group([call(task_funcs.echo, "a"), call(task_funcs.echo, "b")]),
        task_funcs.collect,
        call(task_funcs.echo, "alone").immutable(),
    ).enqueue()
    run_all(start)
    for result in enqueued.results:
        result.refresh()
    assert [r.return_value for r in enqueued.results] == ["a", "b", [["a", "b"]], "alone"]


def test_a_step_that_fails_for_good_cancels_what_follows_and_fails_their_results(start):
    enqueued = chain(call(task_funcs.boom, "broken"), call(task_funcs.mark, 1)).enqueue()
    run_all(start)
    failed, after = enqueued.results
    failed.refresh()
    after.refresh()
    assert failed.status == "FAILED" and failed.errors[0].exception_class_path.endswith(
        "ValueError"
    )
    assert after.status == "FAILED"
    assert after.errors[0].exception_class_path.endswith("WorkflowCancelled")
    steps = enqueued.status()
    assert [s.status for s in steps] == ["failed", "cancelled"]
    assert steps[0].error["exception_class_path"].endswith("ValueError")
    assert task_funcs.runs("mark") == []  # the cancelled step never ran


def test_a_workflow_enqueued_in_a_rolled_back_transaction_never_ran(start):
    with pytest.raises(RuntimeError), transaction.atomic():
        enqueued = chain(call(task_funcs.echo, 1), task_funcs.double).enqueue()
        raise RuntimeError("the view failed after enqueueing")
    assert not TaskResultRecord.objects.filter(pk__in=[r.id for r in enqueued.results]).exists()
    with pytest.raises(WorkflowNotFound):
        QueueManager().workflow_status(enqueued.id)
