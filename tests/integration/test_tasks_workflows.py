"""Workflows of Django tasks in one process: what ``enqueue`` writes, what it refuses,
result ids that name their workflow, cancelling, and a step's message run twice."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from asgiref.sync import async_to_sync
from django.utils import timezone

from django_pgmq import QueueManager
from django_pgmq.internal import InternalManager
from django_pgmq.models import TaskResultRecord
from django_pgmq.tasks import call, chain, chord, group, workflow_id
from django_pgmq.tasks.compat import task_backends
from django_pgmq.tasks.runner import TaskRunner
from django_pgmq.tasks.step_ids import step_result_id
from tests import task_funcs


@pytest.fixture
def queues(db) -> QueueManager:
    manager = QueueManager()
    for queue in ("default", "emails"):
        task_backends["default"].prepare_queue(queue)
        manager.purge_queue(queue)
    return manager


def test_enqueue_writes_a_ready_result_per_step_and_sends_the_first_ones(queues):
    enqueued = chord(
        [call(task_funcs.echo, 1), call(task_funcs.add, 2, 3)], task_funcs.collect
    ).enqueue()
    assert enqueued.steps == ["0.echo", "1.add", "2.collect"]
    rows = {
        str(r.id): r
        for r in TaskResultRecord.objects.filter(pk__in=[r.id for r in enqueued.results])
    }
    assert [rows[r.id].status for r in enqueued.results] == ["READY"] * 3
    assert [rows[r.id].queue_name for r in enqueued.results] == ["default", "emails", "default"]
    status = enqueued.status()
    assert [s.status for s in status] == ["sent", "sent", "waiting"]
    assert [rows[r.id].msg_id for r in enqueued.results] == [s.msg_id for s in status]
    assert {workflow_id(r) for r in enqueued.results} == {enqueued.id}
    assert enqueued.result("2.collect") is enqueued.results[2]


def test_aenqueue_from_async_code(queues):
    enqueued = async_to_sync(chain(call(task_funcs.echo, 1), task_funcs.double).aenqueue)()
    assert [s.status for s in enqueued.status()] == ["sent", "waiting"]
    assert TaskResultRecord.objects.filter(pk__in=[r.id for r in enqueued.results]).count() == 2


def test_a_result_id_names_its_workflow_and_a_lone_task_none(queues):
    assert workflow_id(str(step_result_id(2**46 - 1, 9999, 2**62 - 1))) == 2**62 - 1
    assert workflow_id(step_result_id(12345, 0, 7).hex) == 7
    assert workflow_id(task_funcs.echo.enqueue(1)) is None
    assert workflow_id(str(uuid.uuid4())) is None and workflow_id("not a uuid") is None


def test_cancel_fails_the_results_of_the_cancelled_steps(queues):
    enqueued = chain(
        call(task_funcs.echo, 1), group([task_funcs.double, task_funcs.double])
    ).enqueue()
    assert enqueued.cancel() == 3
    records = TaskResultRecord.objects.filter(pk__in=[r.id for r in enqueued.results])
    assert {r.status for r in records} == {"FAILED"}
    assert all(r.errors[0]["exception_class_path"].endswith("WorkflowCancelled") for r in records)
    for result in enqueued.results:
        result.refresh()
        assert result.status == "FAILED"


@pytest.mark.parametrize(
    ("build", "error", "says"),
    [
        (lambda: chain(), ValueError, "at least one step"),
        (lambda: group([]), ValueError, "at least one step"),
        (lambda: chain(print), TypeError, "a workflow step is a task"),
        (lambda: call(print), TypeError, "a workflow step is a task"),
        (
            lambda: chain(task_funcs.echo.using(run_after=timezone.now() + timedelta(hours=1))),
            ValueError,
            "step 0.echo: run_after is not supported",
        ),
        (
            lambda: chain(call(task_funcs.echo, 1), call(task_funcs.echo, object())),
            TypeError,
            "step 1.echo: its arguments must be JSON",
        ),
    ],
)
def test_a_bad_workflow_is_refused_before_anything_is_written(queues, build, error, says):
    before = TaskResultRecord.objects.count()
    with pytest.raises(error, match=says):
        build().enqueue()
    assert TaskResultRecord.objects.count() == before
    assert InternalManager().browse_messages("default") == []


def test_a_step_message_run_again_after_its_verdict_sends_its_child_once(queues):
    enqueued = chain(call(task_funcs.echo, 21), task_funcs.double).enqueue()
    runner = TaskRunner(task_backends["default"], "default")
    [first] = InternalManager().read_by_priority("default", vt=30, qty=1)
    runner.run(first)
    runner.run(first)  # the same message again (a re-delivery after its verdict)
    assert [s.status for s in enqueued.status()] == ["done", "sent"]
    [child] = InternalManager().read_by_priority("default", vt=30, qty=5)
    assert child.headers["workflow"]["results"] == {"0.echo": 21}
    runner.run(child)
    assert [s.result for s in enqueued.status()] == [21, 42]
    enqueued.results[1].refresh()
    assert enqueued.results[1].return_value == 42


def test_under_continue_the_callback_gets_a_failed_parents_error_in_its_place(queues):
    enqueued = chord(
        [call(task_funcs.boom, "broken"), call(task_funcs.echo, 1)], task_funcs.collect
    ).enqueue(on_failure="continue")
    runner = TaskRunner(task_backends["default"], "default")
    for message in InternalManager().read_by_priority("default", vt=30, qty=5):
        runner.run(message)  # boom fails for good (no retries), echo returns 1
    assert [s.status for s in enqueued.status()] == ["failed", "done", "sent"]
    [callback] = InternalManager().read_by_priority("default", vt=30, qty=5)
    runner.run(callback)
    enqueued.results[2].refresh()
    [[failed, one]] = enqueued.results[2].return_value
    assert one == 1
    assert failed["error"]["exception_class_path"] == "builtins.ValueError"
    assert "broken" in failed["error"]["traceback"]


def test_steps_whose_queues_live_in_two_databases_are_refused_naming_both(queues, settings):
    settings.PGMQ = {**settings.PGMQ, "QUEUE_DATABASES": [("emails", "other")]}
    before = TaskResultRecord.objects.count()
    with pytest.raises(ValueError) as refused:
        chain(call(task_funcs.echo, 1), call(task_funcs.add, 1, 2)).enqueue()
    assert str(refused.value) == (
        "a workflow's steps live in one database: queue 'default' is in 'default', "
        "queue 'emails' in 'other'"
    )
    assert TaskResultRecord.objects.count() == before


def test_a_step_result_in_the_admin_links_its_workflow(queues, admin_client):
    enqueued = chain(call(task_funcs.echo, 1), task_funcs.double).enqueue()
    lone = task_funcs.echo.enqueue(2)
    results = "/admin/django_pgmq/taskresultrecord/"
    page = admin_client.get(f"{results}{enqueued.results[1].id}/change/").content.decode()
    assert f'href="/admin/django_pgmq/queue/workflows/{enqueued.id}/?db=default"' in page
    assert (
        "/queue/workflows/" not in admin_client.get(f"{results}{lone.id}/change/").content.decode()
    )
