"""CreateQueue / DropQueue migration operations, run forwards and backwards for real."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest
from django.db import connection, connections, migrations
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.state import ProjectState
from django.db.migrations.writer import OperationWriter
from django.test import override_settings

from django_pgmq import InvalidQueueName, QueueManager
from django_pgmq.operations import CreateQueue, DropQueue

APP = "ops_test"


class OnlyOtherRouter:
    """Installs django_pgmq (so its queues) only on the "other" alias."""

    def allow_migrate(self, db: str, app_label: str, **hints) -> bool | None:
        return db == "other" if app_label == "django_pgmq" else None


def tables(conn: psycopg.Connection, queue: str) -> list[tuple[str, str]]:
    """(relname, relpersistence) of a queue's two tables, read on a separate connection."""
    return conn.execute(
        "SELECT relname, relpersistence FROM pg_class WHERE relname IN (%s, %s) ORDER BY relname",
        [f"a_{queue.lower()}", f"q_{queue.lower()}"],
    ).fetchall()


def run(op, direction: str, alias: str = "default") -> None:
    """Run one operation's database_forwards/backwards with a schema editor, like migrate does."""
    state = ProjectState()
    with connections[alias].schema_editor() as editor:
        getattr(op, f"database_{direction}")(APP, editor, state, state)


@pytest.fixture
def db_conn(pg_connect) -> psycopg.Connection:
    return pg_connect()


@pytest.fixture
def cleanup(transactional_db, queue_name) -> Iterator[str]:
    yield queue_name
    QueueManager().drop_queue(queue_name)


# -- serialisation ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("op", "expected"),
    [
        (CreateQueue("orders"), ("CreateQueue", ["orders"], {})),
        (CreateQueue("orders", unlogged=True), ("CreateQueue", ["orders"], {"unlogged": True})),
        (DropQueue("Orders"), ("DropQueue", ["Orders"], {})),
        (
            CreateQueue("orders", hints={"tier": "fast"}),
            ("CreateQueue", ["orders"], {"hints": {"tier": "fast"}}),
        ),
    ],
)
def test_deconstruct(op, expected):
    assert op.deconstruct() == expected


@pytest.mark.parametrize(
    "op",
    [CreateQueue("orders", unlogged=True), DropQueue("jobs"), CreateQueue("a", hints={"x": 1})],
)
def test_migration_writer_output_rebuilds_the_operation(op):
    text, imports = OperationWriter(op, indentation=0).serialize()
    assert "import django_pgmq.operations" in imports
    namespace: dict = {}
    exec("\n".join([*sorted(imports), f"op = {text.rstrip(',')}"]), namespace)
    assert type(namespace["op"]) is type(op)
    assert namespace["op"].deconstruct() == op.deconstruct()


def test_describe_and_name_fragment():
    assert CreateQueue("Orders").describe() == "Create pgmq queue Orders"
    assert DropQueue("Orders").describe() == "Drop pgmq queue Orders"
    assert CreateQueue("Orders").migration_name_fragment == "create_queue_orders"
    assert DropQueue("Orders").migration_name_fragment == "drop_queue_orders"


def test_invalid_name_is_refused_when_the_migration_is_written():
    with pytest.raises(InvalidQueueName):
        CreateQueue("bad name")
    with pytest.raises(InvalidQueueName):
        DropQueue("x;y")


def test_state_is_untouched():
    state = ProjectState()
    CreateQueue("orders").state_forwards(APP, state)
    assert state.models == {}


# -- with a schema editor ------------------------------------------------------------


def test_create_queue_forwards_and_backwards(cleanup, db_conn):
    op = CreateQueue(cleanup)
    run(op, "forwards")
    assert tables(db_conn, cleanup) == [(f"a_{cleanup}", "p"), (f"q_{cleanup}", "p")]
    QueueManager().send(cleanup, {"kept": False})
    run(op, "backwards")
    assert tables(db_conn, cleanup) == []


def test_unlogged_create_queue(cleanup, db_conn):
    run(CreateQueue(cleanup, unlogged=True), "forwards")
    assert tables(db_conn, cleanup) == [(f"a_{cleanup}", "p"), (f"q_{cleanup}", "u")]


def test_drop_queue_forwards_and_backwards(cleanup, db_conn):
    QueueManager().create_queue(cleanup, unlogged=True)
    op = DropQueue(cleanup, unlogged=True)
    run(op, "forwards")
    assert tables(db_conn, cleanup) == []
    run(op, "backwards")
    assert tables(db_conn, cleanup) == [(f"a_{cleanup}", "p"), (f"q_{cleanup}", "u")]
    assert QueueManager().read(cleanup) == []


def test_a_failing_migration_rolls_the_queue_back(cleanup, db_conn):
    with pytest.raises(RuntimeError), connection.schema_editor() as editor:
        CreateQueue(cleanup).database_forwards(APP, editor, ProjectState(), ProjectState())
        raise RuntimeError("a later operation failed")
    assert tables(db_conn, cleanup) == []


# -- through the migration executor ----------------------------------------------------


def test_apply_and_unapply_a_migration(cleanup, db_conn):
    migration = migrations.Migration("0001_queues", APP)
    migration.operations = [CreateQueue(cleanup), CreateQueue(f"{cleanup}_x", unlogged=True)]
    executor = MigrationExecutor(connection)
    try:
        state = executor.apply_migration(ProjectState(), migration)
        assert [q[0] for q in tables(db_conn, cleanup)] == [f"a_{cleanup}", f"q_{cleanup}"]
        assert ("q_" + cleanup + "_x", "u") in tables(db_conn, cleanup + "_x")
        assert (APP, "0001_queues") in executor.recorder.applied_migrations()
        executor.unapply_migration(state, migration)
        assert tables(db_conn, cleanup) == []
        assert tables(db_conn, cleanup + "_x") == []
        assert (APP, "0001_queues") not in executor.recorder.applied_migrations()
    finally:
        executor.recorder.record_unapplied(APP, "0001_queues")
        QueueManager().drop_queue(f"{cleanup}_x")


# -- several databases -------------------------------------------------------------------


@pytest.fixture
def on_both(queue_name) -> Iterator[str]:
    yield queue_name
    for alias in ("default", "other"):
        QueueManager(alias).drop_queue(queue_name)


@pytest.mark.django_db(databases=["default", "other"], transaction=True)
def test_operation_runs_on_the_schema_editors_database(on_both):
    run(CreateQueue(on_both), "forwards", alias="other")
    assert on_both in [i.queue_name for i in QueueManager("other").list_queues()]
    assert on_both not in [i.queue_name for i in QueueManager("default").list_queues()]


@pytest.mark.django_db(databases=["default", "other"], transaction=True)
def test_operation_follows_the_router_for_django_pgmq(on_both):
    with override_settings(DATABASE_ROUTERS=[f"{__name__}.OnlyOtherRouter"]):
        for alias in ("default", "other"):
            run(CreateQueue(on_both), "forwards", alias=alias)
        assert on_both in [i.queue_name for i in QueueManager("other").list_queues()]
        assert on_both not in [i.queue_name for i in QueueManager("default").list_queues()]
        QueueManager("default").create_queue(on_both)  # backwards must leave this one alone
        for alias in ("default", "other"):
            run(CreateQueue(on_both), "backwards", alias=alias)
    assert on_both not in [i.queue_name for i in QueueManager("other").list_queues()]
    assert on_both in [i.queue_name for i in QueueManager("default").list_queues()]
