"""Tasks are durable by default: every commit of a task's life waits for its WAL flush.

OPTIONS ``"synchronous_commit": False`` turns that off for the worker's own
transactions only (the read of a batch, a RUNNING mark, a verdict), from Python,
never in a SQL function. Triggers on the queue table and the results table record
``current_setting('synchronous_commit')`` inside the very transaction that commits.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db import connection, transaction
from django.test import override_settings

from django_pgmq.internal import InternalManager
from django_pgmq.models import TaskResultRecord
from django_pgmq.tasks.compat import task_backends
from django_pgmq.tasks.runner import TaskRunner
from django_pgmq.tasks.worker_settings import plan
from tests import task_funcs

BACKEND = "django_pgmq.tasks.PgmqBackend"
ASYNC = {
    "default": {
        "BACKEND": BACKEND,
        "QUEUES": ["default"],
        "OPTIONS": {"synchronous_commit": False},
    }
}


def seen() -> list[tuple[str, str]]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT what, setting FROM public.durable_seen ORDER BY n")
        return cursor.fetchall()


@pytest.fixture
def watched(transactional_db) -> Iterator[InternalManager]:
    """Queue "default" empty, and triggers that note synchronous_commit in each transaction
    that updates a message of it (a read) or a task result (RUNNING, a verdict)."""
    manager = InternalManager()
    task_backends["default"].prepare_queue("default")
    manager.purge_queue("default")
    with connection.cursor() as cursor:
        cursor.execute(
            """
            CREATE TABLE public.durable_seen (
                n bigserial PRIMARY KEY, what text, setting text);
            CREATE FUNCTION public.durable_note() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                INSERT INTO public.durable_seen (what, setting)
                VALUES (TG_TABLE_NAME, pg_catalog.current_setting('synchronous_commit'));
                RETURN NEW;
            END $$;
            CREATE TRIGGER durable_note BEFORE UPDATE ON pgmq.q_default
                FOR EACH ROW EXECUTE FUNCTION public.durable_note();
            CREATE TRIGGER durable_note BEFORE UPDATE ON django_pgmq_taskresultrecord
                FOR EACH ROW EXECUTE FUNCTION public.durable_note();
            """
        )
    try:
        yield manager
    finally:
        with connection.cursor() as cursor:
            cursor.execute(
                "DROP TRIGGER IF EXISTS durable_note ON pgmq.q_default;"
                "DROP TRIGGER IF EXISTS durable_note ON django_pgmq_taskresultrecord;"
                "DROP FUNCTION IF EXISTS public.durable_note();"
                "DROP TABLE IF EXISTS public.durable_seen;"
            )


def run_two_tasks(manager: InternalManager) -> list[str]:
    """Enqueue two tasks and run them as the worker does: one read of the batch (by
    priority, with the queue's setting), then each run in the batch scope, so the first
    verdict goes with the second start and the second alone. Their statuses."""
    backend = task_backends["default"]
    results = [task_funcs.echo.enqueue(n) for n in (1, 2)]
    [queue_settings] = plan(backend, ["default"])
    messages = manager.read_by_priority(
        "default", vt=30, qty=2, synchronous_commit=queue_settings.synchronous_commit
    )
    assert len(messages) == 2
    runner = TaskRunner(backend, "default")
    with runner.batch(messages):
        for message in messages:
            runner.run(message)
    return [TaskResultRecord.objects.get(pk=r.id).status for r in results]


def test_a_task_s_life_commits_synchronously_by_default(watched):
    assert task_backends["default"].synchronous_commit is True
    assert run_two_tasks(watched) == ["SUCCESSFUL", "SUCCESSFUL"]
    notes = seen()
    # The read (two messages), two RUNNING marks, two verdicts: all durable.
    assert [what for what, _ in notes].count("q_default") == 2
    assert [what for what, _ in notes].count("django_pgmq_taskresultrecord") == 4
    assert {setting for _, setting in notes} == {"on"}


def test_the_option_turns_it_off_for_the_worker_s_own_transactions_only(watched):
    with override_settings(TASKS=ASYNC):
        backend = task_backends["default"]
        assert backend.synchronous_commit is False
        [queue_settings] = plan(backend, ["default"])
        assert not queue_settings.synchronous_commit
        assert "asynchronous commit" in queue_settings.describe()
        assert run_two_tasks(watched) == ["SUCCESSFUL", "SUCCESSFUL"]
        notes = seen()
        assert len(notes) == 6
        assert {setting for _, setting in notes} == {"off"}
        # SET LOCAL: gone with the transaction; the session's setting is as it was.
        with connection.cursor() as cursor:
            cursor.execute("SHOW synchronous_commit")
            assert cursor.fetchone() == ("on",)
        # The enqueue is the caller's transaction: never made asynchronous.
        task_funcs.echo.enqueue(3)
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM public.durable_seen")
            assert cursor.fetchone() == (6,)


def test_the_option_never_touches_a_transaction_the_caller_holds(watched):
    """Inside the caller's atomic block the statement is the durable one: the rest of the
    caller's transaction did not ask for asynchronous commit."""
    with override_settings(TASKS=ASYNC):
        task_funcs.echo.enqueue(1)
        with transaction.atomic():
            [message] = watched.read_by_priority("default", vt=30, qty=1, synchronous_commit=False)
            runner = TaskRunner(task_backends["default"], "default")
            runner.run(message)
            with connection.cursor() as cursor:
                cursor.execute("SHOW synchronous_commit")
                assert cursor.fetchone() == ("on",)
        assert {setting for _, setting in seen()} == {"on"}


def test_no_pgmq_function_sets_synchronous_commit(transactional_db):
    """Neither a SET clause nor a set_config call in a body: durability is the caller's."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT p.oid::regprocedure::text
            FROM pg_catalog.pg_proc p
            WHERE p.pronamespace = 'pgmq'::regnamespace
              AND (pg_catalog.array_to_string(p.proconfig, ',') ILIKE '%synchronous_commit%'
                   OR p.prosrc ILIKE '%synchronous_commit%')
            """
        )
        assert cursor.fetchall() == []


@pytest.mark.parametrize("value", ["off", 0, None])
def test_a_synchronous_commit_option_that_is_not_a_bool_is_one_clear_error(value):
    bad = {"BACKEND": BACKEND, "OPTIONS": {"synchronous_commit": value}}
    with (
        override_settings(TASKS={"default": bad}),
        pytest.raises(
            ImproperlyConfigured,
            match=rf"OPTIONS synchronous_commit must be True .* or False .*got {value!r}",
        ),
    ):
        task_backends["default"]
