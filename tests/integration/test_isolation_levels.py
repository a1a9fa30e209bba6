"""Consumers read at READ COMMITTED whatever the project's isolation level.

At REPEATABLE READ or SERIALIZABLE a SKIP LOCKED read whose snapshot predates another
reader's committed claim fails with 40001 instead of skipping the row. A project may
raise the level through Django (``DATABASES[...]["OPTIONS"]["isolation_level"]``: the
transactions Django begins) or through the server's ``default_transaction_isolation``
(every transaction, autocommit statements too); the worker's reads and atomic chunks,
and the Celery transport's, the Spark source's and the listener's own connections,
run at READ COMMITTED in both cases. Real sessions, started together at a barrier.
"""

from __future__ import annotations

import threading

import psycopg
import pytest
from django.db import DatabaseError, connection, connections

from django_pgmq import isolation
from django_pgmq.contrib.celery.database import _connect
from django_pgmq.contrib.spark.conninfo import from_django
from django_pgmq.internal import InternalManager
from django_pgmq.manager import QueueManager
from django_pgmq.worker.config import resolve
from django_pgmq.worker.held import Holdings
from django_pgmq.worker.process import Processor
from django_pgmq.worker.registry import Consumer
from example_project.demo.models import HandlerRun
from tests import handlers

READERS = 6
MESSAGES = 240
BATCH = 4
HIGHER = {
    # Django begins its transactions at REPEATABLE READ; autocommit statements are not.
    "django_option": {"isolation_level": psycopg.IsolationLevel.REPEATABLE_READ},
    # The server's default: every transaction, autocommit statements included.
    "server_default": {"options": "-c default_transaction_isolation=serializable"},
}


@pytest.fixture(params=sorted(HIGHER))
def higher_level(request, transactional_db):
    """The project's connections at a level above READ COMMITTED (each thread's too: they
    share the alias's settings dict)."""
    options = connections.settings["default"].setdefault("OPTIONS", {})
    saved = dict(options)
    options.update(HIGHER[request.param])
    connection.close()
    try:
        yield request.param
    finally:
        options.clear()
        options.update(saved)
        connection.close()


def test_the_project_s_level_is_higher(higher_level):
    with connection.cursor() as cursor:
        cursor.execute("SHOW transaction_isolation")  # autocommit: the server's default
        autocommit = cursor.fetchone()[0]
    from django.db import transaction

    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SHOW transaction_isolation")
        begun = cursor.fetchone()[0]
    if higher_level == "django_option":
        assert (autocommit, begun) == ("read committed", "repeatable read")
    else:
        assert (autocommit, begun) == ("serializable", "serializable")


def consume(queue: str, barrier: threading.Barrier, done: list[int], errors: list[str]) -> None:
    """One worker thread: read a batch (as the worker's loop does), run it with an atomic
    handler whose chunk acknowledges and reads the next batch in one transaction."""
    manager = InternalManager()
    settings = resolve(queue, Consumer(handlers.handle, queue=queue, atomic=True), {}, None)
    processor = Processor(settings, manager, Holdings(), threading.Event())

    def claim() -> list:
        with isolation.read_committed(manager.alias_for(queue), autocommit_too=True):
            return manager.read(queue, vt=60, qty=BATCH)

    try:
        barrier.wait(timeout=30)
        messages = claim()
        while messages:
            outcome = processor.run(messages, lambda reader: reader(BATCH))
            done.append(outcome.done)
            messages = outcome.following or claim()
    except DatabaseError as exc:
        errors.append(f"{getattr(exc.__cause__, 'sqlstate', None)}: {exc}")
    finally:
        connections.close_all()


def test_the_worker_consumes_with_concurrent_readers_without_serialization_failures(
    higher_level, queue_name
):
    manager = QueueManager()
    manager.create_queue(queue_name)
    manager.send_batch(queue_name, [{"n": i} for i in range(MESSAGES)])
    barrier = threading.Barrier(READERS)
    done: list[int] = []
    errors: list[str] = []
    threads = [
        threading.Thread(target=consume, args=(queue_name, barrier, done, errors))
        for _ in range(READERS)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == []
    assert sum(done) == MESSAGES
    assert HandlerRun.objects.count() == MESSAGES  # each handled once, committed
    assert manager.read(queue_name, vt=0, qty=10) == []
    assert manager.archive_count(queue_name) == MESSAGES


def test_the_worker_s_level_is_put_back_after_its_transaction(higher_level, queue_name):
    """The handler's transaction is the worker's chunk (READ COMMITTED); other code on the
    same connection keeps the project's level."""
    from django.db import transaction

    with isolation.read_committed("default"), connection.cursor() as cursor:
        cursor.execute("SHOW transaction_isolation")
        assert cursor.fetchone() == ("read committed",)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SHOW transaction_isolation")
        assert cursor.fetchone()[0] != "read committed"


# Their own connections take the server's default, never Django's option: only that case.
@pytest.mark.parametrize("higher_level", ["server_default"], indirect=True)
def test_the_transport_s_and_the_spark_source_s_own_connections_read_committed(higher_level):
    params = connection.get_connection_params()
    keep = {"host", "port", "user", "password", "dbname", "options"}
    conninfo = psycopg.conninfo.make_conninfo(
        **{k: str(v) for k, v in params.items() if k in keep and v not in (None, "")}
    )
    with psycopg.connect(conninfo, autocommit=True) as plain:
        assert plain.execute("SHOW transaction_isolation").fetchone() == ("serializable",)
    with _connect({}, conninfo) as celery:
        assert celery.execute("SHOW transaction_isolation").fetchone() == ("read committed",)
    with from_django("default").connect() as spark:
        assert spark.execute("SHOW transaction_isolation").fetchone() == ("read committed",)
    with from_django("default").connect(autocommit=False) as spark:
        assert spark.execute("SHOW transaction_isolation").fetchone() == ("read committed",)


def test_pgmq_consume_runs_at_a_higher_project_level(higher_level, queue_name):
    """The worker's own loop (its reads, atomic chunks, read-ahead) under that project."""
    from django.core.management import call_command

    manager = QueueManager()
    manager.create_queue(queue_name)
    ids = manager.send_batch(queue_name, [{"n": i} for i in range(9)])
    table = psycopg.sql.Identifier(f"q_{queue_name}")
    with connection.cursor() as cursor:  # each read notes the level it ran at
        cursor.execute(
            psycopg.sql.SQL(
                """
                CREATE TABLE public.isolation_seen (level text);
                CREATE FUNCTION public.isolation_note() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    INSERT INTO public.isolation_seen
                    VALUES (pg_catalog.current_setting('transaction_isolation'));
                    RETURN NEW;
                END $$;
                CREATE TRIGGER isolation_note BEFORE UPDATE ON pgmq.{}
                    FOR EACH ROW EXECUTE FUNCTION public.isolation_note();
                """
            )
            .format(table)
            .as_string(None)
        )
    try:
        call_command(
            "pgmq_consume",
            queue_name,
            handler="tests.handlers.handle",
            until_empty=True,
            poll_interval=0.05,
            batch=4,
            verbosity=0,
        )
        with connection.cursor() as cursor:
            cursor.execute("SELECT level, count(*) FROM public.isolation_seen GROUP BY 1")
            assert cursor.fetchall() == [("read committed", 9)]
    finally:
        with connection.cursor() as cursor:
            cursor.execute(
                "DROP TABLE IF EXISTS public.isolation_seen;"
                "DROP FUNCTION IF EXISTS public.isolation_note() CASCADE;"
            )
    assert sorted(HandlerRun.objects.values_list("msg_id", flat=True)) == ids
    assert manager.archive_count(queue_name) == 9
