"""The Django Tasks backend on a real database: enqueue, results, the runner, retries, admin.

The runner is called here in-process on messages read as the worker reads them
(`read_by_priority`); tests/acceptance/test_tasks_worker.py runs real workers.
"""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import connection, transaction
from django.test import override_settings
from django.urls import reverse
from django.utils import timezone

from django_pgmq import index_builds
from django_pgmq.internal import InternalManager
from django_pgmq.models import TaskResultRecord
from django_pgmq.tasks import PgmqBackend
from django_pgmq.tasks.compat import (
    InvalidTask,
    TaskResultDoesNotExist,
    TaskResultStatus,
    task,
    task_backends,
    task_enqueued,
    task_finished,
    task_started,
)
from django_pgmq.tasks.errors import RetryTask
from django_pgmq.tasks.runner import TaskRunner
from tests import task_funcs

QUEUES = ("default", "emails", "retrying")


@pytest.fixture
def m(db) -> InternalManager:
    """The manager, with the task queues empty for this test (in its transaction)."""
    manager = InternalManager()
    for queue in QUEUES:
        task_backends["retrying" if queue == "retrying" else "default"].prepare_queue(queue)
        manager.purge_queue(queue)
    return manager


def run_next(queue: str = "default", backend: str = "default", qty: int = 1) -> list[str]:
    """Read up to ``qty`` task messages by priority and run each; the result ids run."""
    runner = TaskRunner(task_backends[backend], queue)
    ran = []
    for message in InternalManager().read_by_priority(queue, vt=30, qty=qty):
        ran.append(message.message.get("id") if isinstance(message.message, dict) else None)
        try:
            runner.run(message)  # deletes the message with the verdict
        except RetryTask:  # the worker's processor would hide it for a backoff
            InternalManager().set_vt_seconds(queue, [message.msg_id], 0)
    return ran


@pytest.fixture
def signals():
    """Every Tasks signal sent during the test: (signal name, result id, status)."""
    seen: list[tuple[str, str, str]] = []

    def receiver(name):
        def record(sender, task_result, **kwargs):
            assert sender is PgmqBackend
            seen.append((name, task_result.id, str(task_result.status)))

        return record

    receivers = {
        task_enqueued: receiver("enqueued"),
        task_started: receiver("started"),
        task_finished: receiver("finished"),
    }
    for signal, handler in receivers.items():
        signal.connect(handler)
    yield seen
    for signal, handler in receivers.items():
        signal.disconnect(handler)


# -- enqueue -------------------------------------------------------------------------------


def test_enqueue_writes_a_ready_result_and_a_prioritised_message(m, signals):
    result = task_funcs.add.using(priority=7).enqueue(2, y=3)

    assert result.status == TaskResultStatus.READY
    assert result.backend == "default"
    assert (result.args, result.kwargs) == ([2], {"y": 3})
    assert result.enqueued_at is not None and result.started_at is None
    assert (result.worker_ids, result.errors, result.attempts) == ([], [], 0)
    record = TaskResultRecord.objects.get(pk=result.id)
    assert (record.queue_name, record.priority, record.task_path) == (
        "emails",
        7,
        "tests.task_funcs.add",
    )
    [message] = m.read("emails", vt=0, qty=10)
    assert message.msg_id == record.msg_id
    assert message.message == {"id": result.id, "task": "tests.task_funcs.add"}
    assert message.headers == {"priority": 7}
    assert signals == [("enqueued", result.id, "READY")]


def test_get_result_reads_the_stored_result(m):
    result = task_funcs.echo.enqueue({"a": [1, 2]})
    fetched = task_funcs.echo.get_result(result.id)
    assert fetched.id == result.id
    assert fetched.task.func is task_funcs.echo.func
    assert fetched.args == [{"a": [1, 2]}]
    assert fetched.status == TaskResultStatus.READY
    assert fetched.enqueued_at == result.enqueued_at
    with pytest.raises(TaskResultDoesNotExist):
        task_backends["default"].get_result(str(uuid.uuid4()))
    with pytest.raises(TaskResultDoesNotExist):
        task_backends["default"].get_result("not-a-uuid")


@pytest.mark.django_db(transaction=True)
def test_a_task_enqueued_in_a_rolled_back_transaction_never_existed():
    m = InternalManager()
    task_backends["default"].prepare_queue("default")
    m.purge_queue("default")
    ids = []
    with pytest.raises(RuntimeError), transaction.atomic():
        ids.append(task_funcs.echo.enqueue(1).id)
        raise RuntimeError("roll back")
    assert not TaskResultRecord.objects.filter(pk=ids[0]).exists()
    assert m.read("default", vt=0, qty=10) == []
    with transaction.atomic():
        kept = task_funcs.echo.enqueue(2)
    assert TaskResultRecord.objects.filter(pk=kept.id).exists()
    assert [msg.message["id"] for msg in m.read("default", vt=0, qty=10)] == [kept.id]
    m.purge_queue("default")


@pytest.mark.django_db(transaction=True)
def test_a_queue_made_in_a_rolled_back_transaction_is_made_again_next_time():
    from django_pgmq.tasks import backend

    m = InternalManager()
    m.drop_queue("emails")
    backend._READY_QUEUES.clear()
    with pytest.raises(RuntimeError), transaction.atomic():
        task_funcs.add.enqueue(1, 2)  # makes the queue and its index
        m.enable_notify("emails")  # a deferred trigger: the next send leaves a pending event
        task_funcs.add.enqueue(3, 4)
        task_funcs.add.enqueue(5, 6)  # the index is not made again (that would fail now)
        raise RuntimeError("roll back")
    assert "emails" not in {q.queue_name for q in m.list_queues()}
    assert ("default", "emails") not in backend._READY_QUEUES
    result = task_funcs.add.enqueue(7, 8)
    assert ("default", "emails") in backend._READY_QUEUES
    assert [msg.message["id"] for msg in m.read_by_priority("emails", vt=0, qty=5)] == [result.id]
    m.purge_queue("emails")


@pytest.mark.django_db(transaction=True)
def test_a_committed_task_queue_is_remembered_even_inside_a_transaction():
    from django_pgmq.tasks import backend

    m = InternalManager()
    task_backends["default"].prepare_queue("default")
    m.enable_notify("default")
    backend._READY_QUEUES.clear()
    with transaction.atomic():
        task_funcs.echo.enqueue(1)
        assert ("default", "default") in backend._READY_QUEUES  # no round trip from now on
        backend._READY_QUEUES.clear()  # as in another process: asks again, after a send
        task_funcs.echo.enqueue(2)
    assert len(m.read("default", vt=0, qty=5)) == 2
    m.purge_queue("default")


def not_module_level():
    def inner():
        return 1

    return inner


@pytest.mark.parametrize(
    ("make", "error"),
    [
        (lambda: task_funcs.echo.using(queue_name="nope"), "Queue 'nope' is not valid"),
        (lambda: task_funcs.echo.using(priority=101), "priority must be a whole number"),
        (lambda: task_funcs.echo.using(priority=-101), "priority must be a whole number"),
        (
            lambda: task_funcs.echo.using(run_after=timezone.now().replace(tzinfo=None)),
            "run_after must be an aware datetime",
        ),
        (lambda: task()(not_module_level()), "module level"),
    ],
)
def test_bad_tasks_are_refused_with_django_s_errors_before_anything_is_written(m, make, error):
    with pytest.raises(InvalidTask, match=error):
        make().enqueue(1)
    assert not TaskResultRecord.objects.exists()


def test_arguments_that_are_not_json_are_refused_before_anything_is_written(m):
    with pytest.raises(TypeError, match="Unsupported type"):
        task_funcs.echo.enqueue(object())
    with pytest.raises(ValueError, match="Out of range float values are not JSON compliant"):
        task_funcs.echo.enqueue(float("nan"))
    assert not TaskResultRecord.objects.exists()


def test_run_after_is_the_message_s_visibility(m):
    at = timezone.now() + timedelta(hours=1)
    result = task_funcs.echo.using(run_after=at).enqueue(1)
    record = TaskResultRecord.objects.get(pk=result.id)
    assert record.run_after == at
    assert m.read_by_priority("default", vt=0, qty=10) == []  # not visible before run_after
    with connection.cursor() as cursor:
        cursor.execute("SELECT vt FROM pgmq.q_default WHERE msg_id = %s", [record.msg_id])
        assert cursor.fetchone()[0] == at
    assert task_funcs.echo.get_result(result.id).task.run_after == at


# -- priority --------------------------------------------------------------------------------


def test_a_higher_priority_task_behind_a_thousand_runs_first(m):
    low = [task_funcs.mark.enqueue(0).id for _ in range(1000)]
    urgent = task_funcs.mark.using(priority=50).enqueue(50).id
    last = task_funcs.mark.using(priority=-100).enqueue(-100).id
    assert run_next(qty=1) == [urgent]
    assert task_funcs.runs("mark") == [50]
    ids = [msg.message["id"] for msg in m.read_by_priority("default", vt=30, qty=1001)]
    assert ids == [*low, last]  # the rest: oldest first, -100 at the end


@pytest.mark.django_db(transaction=True)
def test_task_queues_have_the_priority_index_and_a_priority_read_uses_it():
    task_funcs.echo.enqueue(1)
    index_builds.wait_for_background(timeout=60)  # built CONCURRENTLY after the commit
    InternalManager().build_pending_indexes()  # (or by a worker, or pgmq_maintain)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexdef FROM pg_indexes WHERE schemaname = 'pgmq' AND tablename = 'q_default'"
        )
        defs = [row[0] for row in cursor.fetchall()]
        assert any("_task_priority(headers) DESC, msg_id" in d for d in defs), defs
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(
            "EXPLAIN SELECT msg_id FROM pgmq.q_default WHERE vt <= clock_timestamp() "
            "ORDER BY pgmq._task_priority(headers) DESC, msg_id LIMIT 10 FOR UPDATE SKIP LOCKED"
        )
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "q_default_priority" in plan and "Sort" not in plan, plan
    InternalManager().purge_queue("default")


def test_priority_of_a_foreign_message_with_any_header_is_0_and_never_breaks_sends(m):
    task_funcs.echo.enqueue(1)
    for headers in ({"priority": "high"}, {"priority": 1.5}, {"priority": 10**12}, None):
        m.send("default", {"foreign": True}, headers=headers)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pgmq._task_priority('{\"priority\": 100}'), pgmq._task_priority(NULL)"
        )
        assert cursor.fetchone() == (100, 0)


# -- running --------------------------------------------------------------------------------


def test_a_run_fills_every_field_and_sends_the_signals(m, signals):
    result = task_funcs.add.enqueue(2, 3)
    assert run_next("emails") == [result.id]
    result.refresh()
    assert result.status == TaskResultStatus.SUCCESSFUL
    assert result.return_value == 5
    assert result.enqueued_at <= result.started_at <= result.finished_at
    assert result.last_attempted_at == result.started_at
    assert result.attempts == 1 and len(result.worker_ids) == 1
    assert result.errors == []
    assert signals == [
        ("enqueued", result.id, "READY"),
        ("started", result.id, "RUNNING"),
        ("finished", result.id, "SUCCESSFUL"),
    ]
    assert m.read("emails", vt=0, qty=10) == []


def test_in_a_batch_a_verdict_is_stored_with_the_next_tasks_start(m, signals):
    """The worker's batch scope: one commit per task (verdict + next start), none lost."""
    first, second = task_funcs.add.enqueue(1, 1), task_funcs.add.enqueue(2, 2)
    runner = TaskRunner(task_backends["default"], "emails")
    messages = InternalManager().read_by_priority("emails", vt=30, qty=2)
    assert [msg.message["id"] for msg in messages] == [first.id, second.id]
    with runner.batch(messages):
        runner.run(messages[0])
        first.refresh()
        assert first.status == TaskResultStatus.RUNNING  # owed: stored with the next start
        runner.run(messages[1])
        first.refresh()
        second.refresh()
        assert (first.status, first.return_value) == (TaskResultStatus.SUCCESSFUL, 2)
        assert second.status == TaskResultStatus.RUNNING
        assert m.metrics("emails").queue_length == 1  # the first task's message is gone
    second.refresh()
    assert (second.status, second.return_value) == (TaskResultStatus.SUCCESSFUL, 4)
    assert first.started_at <= first.finished_at <= second.started_at <= second.finished_at
    assert m.metrics("emails").queue_length == 0
    assert signals == [
        ("enqueued", first.id, "READY"),
        ("enqueued", second.id, "READY"),
        ("started", first.id, "RUNNING"),
        ("finished", first.id, "SUCCESSFUL"),
        ("started", second.id, "RUNNING"),
        ("finished", second.id, "SUCCESSFUL"),
    ]


def test_enqueue_is_a_prepared_statement_when_the_project_allows_them(m):
    """With psycopg's prepared statements on (OPTIONS prepare_threshold), an enqueue is
    prepared once per connection; off (Django's default), it never is."""
    connection.ensure_connection()
    pg = connection.connection
    prepared = "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE %s"
    pattern = "%pgmq._task_enqueue(%"
    with connection.cursor() as cursor:
        task_funcs.add.enqueue(1, 2)
        cursor.execute(prepared, [pattern])
        assert cursor.fetchone() == (0,)
        pg.prepare_threshold = 5
        try:
            results = [task_funcs.add.enqueue(n, n) for n in range(3)]
            cursor.execute(prepared, [pattern])
            assert cursor.fetchone() == (1,)
        finally:
            pg.prepare_threshold = None
    assert sorted(run_next("emails", qty=10)[1:]) == sorted(r.id for r in results)
    for n, result in enumerate(results):
        result.refresh()
        assert (result.status, result.return_value) == (TaskResultStatus.SUCCESSFUL, 2 * n)


def test_return_values_are_json_normalised(m):
    result = task_funcs.echo.enqueue({"t": (1, 2), 3: "x"})
    run_next()
    result.refresh()
    assert result.return_value == {"t": [1, 2], "3": "x"}


def test_a_failure_is_recorded_with_class_path_and_traceback(m, signals):
    result = task_funcs.boom.enqueue("bad input")
    run_next()
    result.refresh()
    assert result.status == TaskResultStatus.FAILED
    assert result.finished_at is not None
    [error] = result.errors
    assert error.exception_class_path == "builtins.ValueError"
    assert error.exception_class is ValueError
    assert "bad input" in error.traceback and "task_funcs.py" in error.traceback
    with pytest.raises(ValueError, match="Task failed"):
        result.return_value  # noqa: B018
    assert signals[-1] == ("finished", result.id, "FAILED")


def test_an_async_task_runs_on_an_event_loop(m):
    result = task_funcs.async_add.enqueue(20, 22)
    run_next()
    result.refresh()
    assert (result.status, result.return_value) == (TaskResultStatus.SUCCESSFUL, 42)


def test_a_context_task_gets_its_result_and_a_true_attempt(m):
    result = task_funcs.with_context.enqueue(value=9)
    run_next()
    result.refresh()
    assert result.return_value == {"attempt": 1, "id": result.id, "value": 9}


def test_arguments_that_do_not_fit_fail_the_task_with_a_clear_error(m):
    result = task_funcs.add.enqueue(1, 2, 3)
    run_next("emails")
    result.refresh()
    assert result.status == TaskResultStatus.FAILED
    [error] = result.errors
    assert error.exception_class_path == "builtins.TypeError"
    assert "arguments do not fit tests.task_funcs.add(x, y): too many positional" in error.traceback


def test_a_return_value_that_is_not_json_fails_the_task(m):
    result = task_funcs.non_json.enqueue()
    run_next()
    result.refresh()
    assert result.status == TaskResultStatus.FAILED
    assert "Unsupported type" in result.errors[0].traceback


def test_a_task_whose_module_cannot_be_imported_fails_and_the_next_one_runs(m):
    gone = task_funcs.echo.enqueue(1)
    TaskResultRecord.objects.filter(pk=gone.id).update(task_path="tests.no_such_module.echo")
    fine = task_funcs.echo.enqueue(2)
    assert run_next(qty=2) == [gone.id, fine.id]
    record = TaskResultRecord.objects.get(pk=gone.id)
    assert record.status == "FAILED"
    assert record.errors[0]["exception_class_path"].endswith("ImportError") or record.errors[0][
        "exception_class_path"
    ].endswith("ModuleNotFoundError")
    assert "tests.no_such_module" in record.errors[0]["traceback"]
    with pytest.raises(TaskResultDoesNotExist, match="cannot be loaded"):
        task_backends["default"].get_result(gone.id)
    assert task_funcs.echo.get_result(fine.id).return_value == 2


def test_a_message_that_names_no_task_is_deleted_without_running_anything(m):
    task_funcs.echo.enqueue(0)  # makes the queue a task queue
    m.purge_queue("default")
    for payload in ({"foreign": True}, {"id": "not-a-uuid"}, {"id": str(uuid.uuid4())}, [1]):
        m.send("default", payload)
    assert len(run_next(qty=10)) == 4
    assert m.read("default", vt=0, qty=10) == []


def test_a_message_whose_result_is_finished_is_only_dropped(m):
    result = task_funcs.mark.enqueue(1)
    run_next()
    m.send("default", {"id": result.id, "task": "tests.task_funcs.mark"})  # a duplicate
    run_next()
    assert task_funcs.runs("mark") == [1]


# -- retries and lost workers ------------------------------------------------------------------


def test_without_retries_a_failure_is_final(m):
    result = task_funcs.boom.enqueue()
    run_next()
    assert m.read("default", vt=0, qty=10) == []
    result.refresh()
    assert (result.status, result.attempts, len(result.errors)) == ("FAILED", 1, 1)


def test_retries_run_a_failed_task_again_and_keep_every_error(m):
    ok = task_funcs.flaky.enqueue(1)
    never = task_funcs.flaky.enqueue(9)
    for _ in range(3):
        run_next("retrying", "retrying", qty=2)
    ok.refresh()
    assert (ok.status, ok.return_value, ok.attempts, len(ok.errors)) == ("SUCCESSFUL", 2, 2, 1)
    assert "attempt 1 fails" in ok.errors[0].traceback
    never.refresh()
    assert (never.status, never.attempts) == ("FAILED", 3)
    assert [e.exception_class_path for e in never.errors] == ["builtins.RuntimeError"] * 3
    assert m.read("retrying", vt=0, qty=10) == []


def test_a_failed_attempt_with_more_to_come_is_ready_again(m):
    result = task_funcs.flaky.enqueue(1)
    [message] = m.read_by_priority("retrying", vt=30, qty=1)
    with pytest.raises(RetryTask, match="attempt 1 of 3 failed"):
        TaskRunner(task_backends["retrying"], "retrying").run(message)
    result.refresh()
    assert (result.status, result.attempts, len(result.errors)) == ("READY", 1, 1)


def test_an_attempt_whose_worker_died_counts_as_failed(m):
    from django_pgmq.tasks import results

    result = task_funcs.echo.enqueue(1)
    assert results.start_attempt("default", result.id, "host:1") is not None
    # The worker died; its message comes back: the attempt is lost, no retries: FAILED.
    assert results.start_attempt("default", result.id, "host:2") is None
    result.refresh()
    assert result.status == "FAILED" and result.worker_ids == ["host:1"]
    assert result.errors[0].exception_class_path == "django_pgmq.tasks.errors.WorkerLost"

    again = task_funcs.flaky.enqueue(0)  # retries: 2
    assert results.start_attempt("default", again.id, "host:1") is not None
    record = results.start_attempt("default", again.id, "host:2")
    assert record is not None and record.worker_ids == ["host:1", "host:2"]
    assert len(record.errors) == 1


def test_the_started_row_is_read_by_column_name(m, monkeypatch):
    """The started row of ``task_finish_and_start`` (``SELECT *`` of the results table) is
    read by column name: its columns reversed, with one added in front, give
    the same record as the table holds, where a read by position would shift every field."""
    from django_pgmq import sqlrun
    from django_pgmq.tasks import results

    columns = [f.column for f in TaskResultRecord._meta.concrete_fields]
    statements = sqlrun.statements()  # the runner's one registry
    body = statements["task_finish_and_start"].rstrip().rstrip(";")
    reordered = ", ".join(f"s.{column}" for column in reversed(columns))
    monkeypatch.setitem(
        statements,
        "task_finish_and_start",
        f"SELECT 'x' AS added, {reordered} FROM (\n{body}\n) AS s",
    )
    result = task_funcs.echo.enqueue({"a": [1]})
    record = results.start_attempt("default", result.id, "host:1")
    assert record is not None
    stored = TaskResultRecord.objects.get(pk=result.id)
    for field in TaskResultRecord._meta.concrete_fields:
        assert getattr(record, field.attname) == getattr(stored, field.attname), field.name
    assert (record.status, record.args, record.worker_ids) == ("RUNNING", [{"a": [1]}], ["host:1"])


# -- async API -------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_aenqueue_aget_result_and_arefresh():
    import asyncio

    m = InternalManager()
    task_backends["default"].prepare_queue("default")
    m.purge_queue("default")

    async def scenario():
        result = await task_funcs.echo.aenqueue("hi")
        fetched = await task_funcs.echo.aget_result(result.id)
        await fetched.arefresh()
        return result, fetched

    result, fetched = asyncio.run(scenario())
    assert fetched.id == result.id and fetched.status == "READY"
    run_next()
    asyncio.run(fetched.arefresh())
    assert fetched.return_value == "hi"
    m.purge_queue("default")
    close_async_connections()


def close_async_connections() -> None:
    """Close the connections of asgiref's sync thread (else the test database stays in use)."""
    import asyncio

    from asgiref.sync import sync_to_async
    from django.db import connections

    asyncio.run(sync_to_async(connections.close_all)())


# -- retention, admin, checks ---------------------------------------------------------------


def test_finished_results_past_retention_are_purged_by_pgmq_maintain(m):
    TaskResultRecord.objects.all().delete()  # only this test's results
    old, recent, waiting = (task_funcs.echo.enqueue(i) for i in range(3))
    run_next(qty=2)
    TaskResultRecord.objects.filter(pk=old.id).update(
        finished_at=timezone.now() - timedelta(days=8)
    )
    TaskResultRecord.objects.filter(pk=waiting.id).update(
        enqueued_at=timezone.now() - timedelta(days=30)
    )
    from io import StringIO

    out = StringIO()
    call_command("pgmq_maintain", stdout=out)
    assert "task backend 'default': 1 result(s) finished more than 7 day(s) ago purged" in (
        out.getvalue()
    )
    assert set(TaskResultRecord.objects.values_list("id", flat=True)) == {
        uuid.UUID(recent.id),
        uuid.UUID(waiting.id),
    }


@pytest.fixture
def admin_client_(db, client):
    user = User.objects.create_superuser("admin", "a@example.com", "pw")
    client.force_login(user)
    return client


def test_the_admin_lists_filters_and_retries_failed_tasks(m, admin_client_):
    failed = task_funcs.boom.enqueue()
    fine = task_funcs.echo.enqueue(1)
    run_next(qty=2)
    url = reverse("admin:django_pgmq_taskresultrecord_changelist")
    page = admin_client_.get(url, {"status__exact": "FAILED"})
    assert page.status_code == 200
    text = page.content.decode()
    assert text.count('class="field-task"') == 1  # one row: the failed task
    assert "<bdi>tests.task_funcs.boom</bdi></span></a></th>" in text
    detail = admin_client_.get(
        reverse("admin:django_pgmq_taskresultrecord_change", args=[failed.id])
    )
    assert "builtins.ValueError" in detail.content.decode()
    # Read-only, and it says so: no "Change task result" with save buttons.
    assert "View task result" in detail.content.decode()
    assert 'name="_save"' not in detail.content.decode()

    response = admin_client_.post(
        url, {"action": "retry_failed", "_selected_action": [failed.id, fine.id]}, follow=True
    )
    assert "1 task enqueued again; 1 not failed, left alone" in response.content.decode()
    failed.refresh()
    assert failed.status == "READY" and failed.finished_at is None
    run_next()
    failed.refresh()
    assert (failed.status, failed.attempts, len(failed.errors)) == ("FAILED", 2, 2)


def test_checks_report_queue_names_pgmq_refuses():
    bad = {"BACKEND": "django_pgmq.tasks.PgmqBackend", "QUEUES": ["ok", "no;pe"]}
    with override_settings(TASKS={"default": bad}):
        errors = list(task_backends["default"].check())
    assert [e.id for e in errors] == ["django_pgmq.E101"]
    assert "no;pe" in errors[0].msg


def test_bad_options_are_one_clear_error():
    from django.core.exceptions import ImproperlyConfigured

    bad = {"BACKEND": "django_pgmq.tasks.PgmqBackend", "OPTIONS": {"retries": -1}}
    with (
        override_settings(TASKS={"default": bad}),
        pytest.raises(
            ImproperlyConfigured, match="OPTIONS retries must be an integer of at least 0, got -1"
        ),
    ):
        task_backends["default"]
