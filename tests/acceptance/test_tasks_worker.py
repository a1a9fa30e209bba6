"""``manage.py pgmq_consume --tasks`` as real processes: Django tasks end to end."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator

import pytest
from django.db import transaction

from django_pgmq import QueueManager
from django_pgmq.models import TaskResultRecord
from django_pgmq.tasks.compat import TaskResultStatus, task_backends
from tests import task_funcs
from tests.worker_process import ROOT, WorkerProcess, wait_until

pytestmark = pytest.mark.slow

QUEUES = {"default": ["default", "emails"], "retrying": ["retrying"]}


@pytest.fixture
def task_queues(transactional_db) -> Iterator[None]:
    """The example project's task queues, made and emptied before and after the test."""
    manager = QueueManager()

    def empty() -> None:
        for backend, queues in QUEUES.items():
            for queue in queues:
                task_backends[backend].prepare_queue(queue)
                manager.purge_queue(queue)

    empty()
    yield
    empty()


@pytest.fixture
def start(task_queues, subprocess_env) -> Iterator[Callable[..., WorkerProcess]]:
    started: list[WorkerProcess] = []

    def run(*args: str) -> WorkerProcess:
        worker = WorkerProcess(subprocess_env, ["--tasks", *map(str, args)])
        started.append(worker)
        return worker

    yield run
    for worker in started:
        worker.stop()


def status(result_id: str) -> str:
    return TaskResultRecord.objects.get(pk=result_id).status


def test_a_worker_runs_every_queue_of_the_backend_and_fills_the_results(start):
    with transaction.atomic():  # 20 tasks in one transaction
        echoes = [task_funcs.echo.enqueue({"n": i}) for i in range(15)]
        added = task_funcs.add.enqueue(2, 3)  # queue "emails"
        awaited = task_funcs.async_add.enqueue(40, 2)
        context = task_funcs.with_context.enqueue(value=1)
        failed = task_funcs.boom.enqueue("no")
        bad_args = task_funcs.add.enqueue(1)
    worker = start("--until-empty", "--poll-interval", "0.1", "--concurrency", "2")
    assert worker.wait() == 0, worker.output
    for result in echoes:
        result.refresh()
        assert result.status == TaskResultStatus.SUCCESSFUL
    assert [r.return_value for r in echoes] == [{"n": i} for i in range(15)]
    assert {r.attempts for r in echoes} == {1}  # two threads, no task run twice
    for result in (added, awaited, context, failed, bad_args):
        result.refresh()
    assert (added.return_value, awaited.return_value) == (5, 42)
    assert context.return_value["attempt"] == 1
    assert failed.status == "FAILED" and failed.errors[0].exception_class_path.endswith(
        "ValueError"
    )
    assert bad_args.status == "FAILED" and "arguments do not fit" in bad_args.errors[0].traceback
    assert echoes[0].worker_ids[0].endswith(f":{worker.pid}")
    assert "by priority" in worker.output


def test_priority_holds_under_load(start):
    with transaction.atomic():
        for _ in range(1000):
            task_funcs.mark.enqueue(0)
        task_funcs.mark.using(priority=50).enqueue(50)
    worker = start("default", "--max-messages", "1", "--batch", "1")
    assert worker.wait() == 0, worker.output
    assert task_funcs.runs("mark") == [50]


def test_an_idle_worker_wakes_on_notify_and_runs_a_task_soon_after_commit(start):
    worker = start("--poll-interval", "30")
    worker.wait_for("started on database.*wake-up: LISTEN/NOTIFY")
    time.sleep(0.3)
    result = task_funcs.echo.enqueue("ping")
    wait_until(lambda: status(result.id) == "SUCCESSFUL", "the task to run", timeout=5)
    worker.signal(signal.SIGTERM)
    assert worker.wait() == 0


def test_retries_run_a_failed_task_again_then_fail_it_with_every_error(start):
    ok = task_funcs.flaky.enqueue(2)
    never = task_funcs.flaky.enqueue(9)
    # An hour's poll: each retry is read when its backoff ends, which the worker knows.
    worker = start("--backend", "retrying", "--until-empty", "--poll-interval", "3600")
    assert worker.wait() == 0, worker.output
    ok.refresh()
    never.refresh()
    assert (ok.status, ok.return_value, ok.attempts, len(ok.errors)) == ("SUCCESSFUL", 3, 3, 2)
    assert (never.status, never.attempts, len(never.errors)) == ("FAILED", 3, 3)
    # Each retried attempt logs one traceback: the task's own error, from the task's code.
    retried = worker.count(r"handler failed: .* retried in ")
    assert retried == 4, worker.output
    assert worker.output.count("Traceback (most recent call last)") == retried
    assert "During handling of the above exception" not in worker.output
    assert "RetryTask" not in worker.output
    frames = [line for line in worker.lines if line.startswith('  File "')]
    assert frames and all("task_funcs.py" in line for line in frames), frames


def test_a_task_whose_module_is_gone_fails_and_the_worker_goes_on(start):
    gone = task_funcs.echo.enqueue(1)
    TaskResultRecord.objects.filter(pk=gone.id).update(task_path="tests.removed_module.task")
    fine = task_funcs.echo.enqueue(2)
    worker = start("default", "--until-empty", "--poll-interval", "0.1")
    assert worker.wait() == 0, worker.output
    record = TaskResultRecord.objects.get(pk=gone.id)
    assert record.status == "FAILED"
    assert "tests.removed_module" in record.errors[0]["traceback"]
    assert status(fine.id) == "SUCCESSFUL"


def test_sigterm_lets_a_running_task_finish(start):
    result = task_funcs.sleepy.enqueue(1.5)
    worker = start("default")
    wait_until(lambda: status(result.id) == "RUNNING", "the task to start")
    worker.signal(signal.SIGTERM)
    assert worker.wait() == 0, worker.output
    result.refresh()
    assert (result.status, result.return_value) == ("SUCCESSFUL", 1.5)


def test_a_task_of_a_killed_worker_is_failed_as_lost_by_the_next(start):
    result = task_funcs.sleepy.enqueue(30)
    first = start("default", "--vt", "1")
    wait_until(lambda: status(result.id) == "RUNNING", "the task to start")
    first.signal(signal.SIGKILL)
    first.wait()
    second = start("default", "--vt", "1", "--poll-interval", "0.2")
    wait_until(lambda: status(result.id) == "FAILED", "the lost attempt to be recorded")
    second.signal(signal.SIGTERM)
    assert second.wait() == 0
    result.refresh()
    assert result.errors[0].exception_class_path == "django_pgmq.tasks.errors.WorkerLost"
    assert result.attempts == 1


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["--tasks", "--backend", "nope"], "task backend 'nope'"),
        (["--tasks", "nope"], "not in task backend 'default'"),
        (["--tasks", "--handler", "x.y"], "--handler cannot be used with --tasks"),
        (["--tasks", "--max-receives", "3"], "--max-receives cannot be used with --tasks"),
        (["--tasks", "--max-reads", "3"], "--max-reads cannot be used with --tasks"),
        ([], "name at least one QUEUE (or run Django tasks with --tasks)"),
        (["some_queue", "--backend", "default"], "--backend goes with --tasks"),
    ],
)
def test_bad_command_lines_are_one_line_errors(subprocess_env, transactional_db, args, error):
    done = subprocess.run(
        [sys.executable, "manage.py", "pgmq_consume", *args],
        cwd=ROOT,
        env=subprocess_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert error in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_an_async_consumer_runs_in_a_real_worker(transactional_db, queue_name, subprocess_env):
    from example_project.demo.models import HandlerRun

    manager = QueueManager()
    manager.create_queue(queue_name)
    try:
        ids = manager.send_batch(queue_name, [{"n": 1}, {"fail_times": 1}, {"poison": True}])
        worker = WorkerProcess(
            subprocess_env,
            [
                *(queue_name, "--handler", "tests.async_handlers.handle", "--until-empty"),
                *("--poll-interval", "0.1", "--retry-delay", "0.05"),
            ],
        )
        try:
            assert worker.wait() == 0, worker.output
        finally:
            worker.stop()
        # Committed: the first, the second's retry; the poisoned one was dead-lettered.
        assert sorted(HandlerRun.objects.values_list("msg_id", flat=True)) == ids[:2]
        assert manager.metrics(f"{queue_name}_dlq").queue_length == 1
    finally:
        manager.drop_queue(queue_name)
        manager.drop_queue(f"{queue_name}_dlq")


def test_the_demo_enqueues_django_tasks_and_runs_them(task_queues, subprocess_env, manager):
    try:
        done = subprocess.run(
            [sys.executable, "manage.py", "pgmq_demo", "--messages", "100"],
            cwd=ROOT,
            env=subprocess_env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr
        out = done.stdout
        assert "Django tasks: 3 enqueued on queue 'demo_tasks'" in out
        assert re.search(r"add\(2, 3\) +SUCCESSFUL -> 5", out)
        assert re.search(r"add\(40, 2\), priority 90 +SUCCESSFUL -> 42", out)
        assert re.search(r'greet\("world"\), async +SUCCESSFUL -> \'hello, world\'', out)
        assert TaskResultRecord.objects.filter(queue_name="demo_tasks", status="SUCCESSFUL").count()
    finally:
        manager.drop_queue("demo")
        manager.drop_queue("demo_tasks")


def test_the_worker_purges_results_past_retention(start):
    from datetime import timedelta

    from django.utils import timezone

    old, kept = task_funcs.echo.enqueue(1), task_funcs.echo.enqueue(2)
    first = start("default", "--until-empty", "--poll-interval", "0.1")
    assert first.wait() == 0
    TaskResultRecord.objects.filter(pk=old.id).update(
        finished_at=timezone.now() - timedelta(days=7, minutes=1)
    )
    worker = start("default", "--heartbeat", "0.2")
    wait_until(lambda: not TaskResultRecord.objects.filter(pk=old.id).exists(), "the purge")
    worker.signal(signal.SIGTERM)
    assert worker.wait() == 0
    assert status(kept.id) == "SUCCESSFUL"


def _row(queue: str, msg_id: int) -> tuple | None:
    """(read_ct, seconds until visible) of a message still in ``queue``, else None."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            f'SELECT read_ct, extract(epoch FROM vt - now()) FROM pgmq."q_{queue}" '
            "WHERE msg_id = %s",
            [msg_id],
        )
        return cursor.fetchone()


def test_a_message_that_is_no_task_stays_hidden_with_a_warning_and_a_drain_still_ends(start):
    manager = QueueManager()
    stranger = manager.send("emails", {"subject": "hi"})
    later = manager.send("emails", {"subject": "later"}, delay=3600)  # delayed: not waited for
    failed = task_funcs.boom.enqueue("no")
    fine = task_funcs.echo.enqueue(1)
    worker = start("--until-empty", "--poll-interval", "0.1")
    assert worker.wait(timeout=30) == 0, worker.output
    read_ct, hidden_for = _row("emails", stranger)
    assert read_ct == 1 and hidden_for > 3000  # not deleted, not read again in a loop
    assert _row("emails", later) == (0, pytest.approx(3600, abs=60))
    assert re.search(rf"WARNING .*emails: message {stranger} is not a task", worker.output)
    assert status(failed.id) == "FAILED" and status(fine.id) == "SUCCESSFUL"
    assert "stopped (--until-empty: no message visible, none held, no retry waiting)" in (
        worker.output
    )
    assert "3 message(s) settled (1 done, 1 failed, 1 set aside)" in worker.output


def test_a_message_that_is_no_task_goes_to_the_queues_dead_letter_queue(start):
    manager = QueueManager()
    manager.set_queue_attributes("emails", max_receive_count=10, dead_letter_queue="emails_dlq")
    try:
        stranger = manager.send("emails", {"id": "not-a-uuid"})
        worker = start("emails", "--until-empty", "--poll-interval", "0.1")
        assert worker.wait(timeout=30) == 0, worker.output
        assert _row("emails", stranger) is None
        [moved] = manager.read("emails_dlq", vt=0, qty=10)
        assert moved.message == {"id": "not-a-uuid"}
        assert moved.headers["dead_letter"]["error"].startswith("not a task")
        assert re.search(
            rf"WARNING .*emails: message {stranger} is not a task .*moved to dead-letter "
            "queue emails_dlq",
            worker.output,
        )
    finally:
        manager.set_queue_attributes("emails", max_receive_count=None, dead_letter_queue=None)
        manager.drop_queue("emails_dlq")
