"""An index asked for is an index built, and never by blocking the queue's writers.

pgmq.create_fifo_index (and priorities, task queues) builds the index at once where a
plain CREATE INDEX holds no writer up for longer than the maintenance lock bound: a small
table, and a call that is its own transaction (or in the transaction that created the
table). Elsewhere it is deferred with a NOTICE, and django-pgmq's manager and commands
build it CONCURRENTLY before they return. The build runs as the owner (SECURITY
DEFINER), so an application role's call gets its index too.
"""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from django_pgmq import QueueManager
from tests.integration import test_two_roles

pytestmark = pytest.mark.django_db(transaction=True)

roles = test_two_roles.roles  # the owner, app and bare roles of a scratch database (a fixture)

ROOT = Path(__file__).resolve().parents[2]
BOUND = 0.2
SLACK = 0.6


def index_valid(db: psycopg.Connection, index: str) -> bool | None:
    row = db.execute(
        "SELECT i.indisvalid FROM pg_index i WHERE i.indexrelid = to_regclass(%s)",
        [f"pgmq.{index}"],
    ).fetchone()
    return None if row is None else row[0]


def notices_of(conn: psycopg.Connection) -> list[str]:
    seen: list[str] = []
    conn.add_notice_handler(lambda d: seen.append(d.message_primary or ""))
    return seen


def fill(db: psycopg.Connection, queue: str, mb: float = 1.5) -> None:
    """Make the queue's table larger than the at-once limit (1 MB)."""
    rows = int(mb * 1024 * 1024 / 600)
    db.execute(
        "SELECT pgmq.send_batch(%s, array_fill(jsonb_build_object('pad', repeat('x', 500)), "
        "ARRAY[%s]))",
        [queue, rows],
    )


@pytest.fixture
def fresh(pg_connect) -> object:
    """A queue name, dropped after the test if it was made."""
    name = f"ia_{uuid.uuid4().hex[:12]}"
    yield name
    pg_connect().execute(
        "SELECT pgmq.drop_queue(m.queue_name) FROM pgmq.meta m WHERE m.queue_name = %s", [name]
    )


def test_create_then_create_fifo_index_leaves_the_index_as_on_pgmq(pg_connect, fresh):
    db = pg_connect()
    db.execute("SELECT pgmq.create(%s)", [fresh])
    db.execute("SELECT pgmq.create_fifo_index(%s)", [fresh])
    assert index_valid(db, f"q_{fresh}_fifo_idx") is True
    assert db.execute("SELECT count(*) FROM pgmq.pending_indexes()").fetchone() == (0,)


def test_create_and_create_fifo_index_in_one_transaction(pg_connect, fresh):
    tx = pg_connect(autocommit=False)
    tx.execute("SELECT pgmq.create(%s)", [fresh])  # it wrote: but the table is its own
    tx.execute("SELECT pgmq.create_fifo_index(%s)", [fresh])
    tx.commit()
    assert index_valid(pg_connect(), f"q_{fresh}_fifo_idx") is True


def test_the_priority_index_of_plain_sql_attributes_is_built_at_once(pg_connect, queue):
    db = pg_connect()
    db.execute("SELECT pgmq.set_queue_attributes(%s, '{\"priorities\": true}')", [queue])
    assert index_valid(db, f"q_{queue}_priority") is True


def test_a_transaction_that_wrote_defers_and_holds_no_writer(pg_connect, queue):
    tx, sender = pg_connect(autocommit=False), pg_connect()
    seen = notices_of(tx)
    tx.execute("SELECT pgmq.send(%s, '{}')", [queue])
    tx.execute("SELECT pgmq.create_fifo_index(%s)", [queue])
    assert any("deferred" in n and "transaction that has written" in n for n in seen)
    try:
        sender.execute("SET lock_timeout = '1s'")  # a send held up would fail
        sender.execute("SELECT pgmq.send(%s, '{}')", [queue])
    finally:
        tx.commit()
    db = pg_connect()
    assert index_valid(db, f"q_{queue}_fifo_idx") is None
    assert db.execute("SELECT index_name FROM pgmq.pending_indexes()").fetchall() == [
        (f"q_{queue}_fifo_idx",)
    ]
    assert QueueManager().build_pending_indexes() == [f"q_{queue}_fifo_idx"]


def test_a_consumer_holding_the_table_defers_within_the_bound(pg_connect, queue):
    consumer, caller, sender = pg_connect(autocommit=False), pg_connect(), pg_connect()
    consumer.execute("SELECT pgmq.send(%s, '{}')", [queue])
    consumer.commit()
    consumer.execute("SELECT * FROM pgmq.read(%s, 30, 1)", [queue]).fetchall()  # idle in tx
    seen = notices_of(caller)
    try:
        started = time.monotonic()
        caller.execute("SELECT pgmq.create_fifo_index(%s)", [queue])
        took = time.monotonic() - started
        sender.execute("SET lock_timeout = '1s'")
        sender.execute("SELECT pgmq.send(%s, '{}')", [queue])
    finally:
        consumer.rollback()
    assert took < BOUND + SLACK
    assert any("deferred" in n and "not granted within 200ms" in n for n in seen)
    assert index_valid(pg_connect(), f"q_{queue}_fifo_idx") is None


def test_a_large_table_defers_and_the_command_builds_it_before_returning(
    pg_connect, queue, subprocess_env
):
    db = pg_connect()
    fill(db, queue)
    seen = notices_of(db)
    db.execute("SELECT pgmq.create_fifo_index(%s)", [queue])
    assert any("deferred" in n and "more than 1 MB" in n for n in seen)
    assert index_valid(db, f"q_{queue}_fifo_idx") is None
    db.execute("SELECT pgmq.set_queue_attributes(%s, '{\"paused\": false}')", [queue])
    run = subprocess.run(
        [sys.executable, "manage.py", "pgmq_attributes", queue, "--set", "priorities=true"],
        cwd=ROOT,
        env=subprocess_env,
        capture_output=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr.decode()
    assert index_valid(db, f"q_{queue}_priority") is True  # built before the command returned
    QueueManager().create_fifo_index(queue)  # the manager, outside a transaction: the same
    assert index_valid(db, f"q_{queue}_fifo_idx") is True


def test_the_manager_inside_a_transaction_builds_after_the_commit(pg_connect, queue):
    from django.db import transaction

    from django_pgmq import index_builds

    manager = QueueManager()
    with transaction.atomic():
        manager.create_fifo_index(queue)  # a table it could index at once: left for after
        assert index_valid(pg_connect(), f"q_{queue}_fifo_idx") is None
    index_builds.wait_for_background(timeout=60)
    assert index_valid(pg_connect(), f"q_{queue}_fifo_idx") is True


def test_an_application_role_gets_its_index_built_by_the_owner(app_role, pg_connect, queue):
    name, dsn = app_role
    owner = pg_connect()
    big = f"{queue}_big"
    owner.execute("SELECT pgmq.create(%s)", [big])
    try:
        fill(owner, big)
        # create_fifo_index is any application role's; priorities is policy (--manage-queues)
        owner.execute("SELECT pgmq.grant_app_role(%s, manage_queues => true)", [name])
        with psycopg.connect(dsn, autocommit=True) as app:
            app.execute("SELECT pgmq.create_fifo_index(%s)", [queue])
            app.execute("SELECT pgmq.set_queue_attributes(%s, '{\"priorities\": true}')", [queue])
            seen = notices_of(app)
            app.execute("SELECT pgmq.create_fifo_index(%s)", [big])  # deferred: a wish
            assert any("deferred" in n for n in seen)
        for index in (f"q_{queue}_fifo_idx", f"q_{queue}_priority"):
            assert index_valid(owner, index) is True
            [(table_owner, index_owner)] = owner.execute(
                "SELECT t.relowner::regrole::text, i.relowner::regrole::text "
                "FROM pg_class i JOIN pg_index x ON x.indexrelid = i.oid "
                "JOIN pg_class t ON t.oid = x.indrelid WHERE i.oid = to_regclass(%s)",
                [f"pgmq.{index}"],
            ).fetchall()
            assert index_owner == table_owner != name
        pending = owner.execute("SELECT index_name FROM pgmq.pending_indexes()").fetchall()
        assert (f"q_{big}_fifo_idx",) in pending
        assert QueueManager().build_pending_indexes() == [f"q_{big}_fifo_idx"]
    finally:
        owner.execute("SELECT pgmq.drop_queue(%s)", [big])


def test_a_role_without_rights_on_the_queue_gets_no_index(pg_connect, pg_dsn, queue):
    from psycopg.conninfo import make_conninfo

    name, password = f"pgmq_noq_{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    admin = pg_connect()
    admin.execute(
        sql.SQL("CREATE ROLE {} LOGIN NOSUPERUSER PASSWORD {}").format(
            sql.Identifier(name), sql.Literal(password)
        )
    )
    # Usage of the schema and EXECUTE on its functions, no right on the queue's table.
    for grant in (
        "GRANT USAGE ON SCHEMA pgmq TO {}",
        "GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA pgmq TO {}",
    ):
        admin.execute(sql.SQL(grant).format(sql.Identifier(name)))
    try:
        refused = pytest.raises(psycopg.errors.InsufficientPrivilege, match="may not use queue")
        with psycopg.connect(make_conninfo(pg_dsn, user=name, password=password)) as c, refused:
            c.execute("SELECT pgmq.create_fifo_index(%s)", [queue])
        assert index_valid(admin, f"q_{queue}_fifo_idx") is None
    finally:
        admin.execute(sql.SQL("DROP OWNED BY {} CASCADE").format(sql.Identifier(name)))
        admin.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(name)))


def test_pgmq_create_priorities_on_a_large_queue_builds_before_returning(
    pg_connect, queue, subprocess_env
):
    """pgmq_create sets the attributes inside its transaction: the index the SQL deferred
    is built CONCURRENTLY right after the commit, before the command returns."""
    db = pg_connect()
    fill(db, queue)
    run = subprocess.run(
        [sys.executable, "manage.py", "pgmq_create", queue, "--priorities"],
        cwd=ROOT,
        env=subprocess_env,
        capture_output=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr.decode()
    assert "already exists" in run.stdout.decode()
    assert index_valid(db, f"q_{queue}_priority") is True
    assert db.execute("SELECT count(*) FROM pgmq.pending_indexes()").fetchone() == (0,)


def test_pgmq_maintain_leaves_an_index_an_idle_transaction_holds_up_to_its_next_run(
    pg_connect, queue, subprocess_env
):
    """A concurrent build waits for every older transaction: behind one left idle, the
    command gives up on that index after MAINTAIN_LOCK_TIMEOUT (and goes on with the
    partitions) instead of hanging; the next run builds it."""
    from django_pgmq import index_builds

    db = pg_connect()
    db.execute("SET pgmq.defer_index_builds = on")
    db.execute("SELECT pgmq.create_fifo_index(%s)", [queue])
    idle = pg_connect(autocommit=False)
    idle.execute("SELECT * FROM pgmq.read(%s, 30, 1)", [queue]).fetchall()  # a consumer
    command = [sys.executable, "manage.py", "pgmq_maintain"]
    try:
        started = time.monotonic()
        run = subprocess.run(
            command, cwd=ROOT, env=subprocess_env, capture_output=True, timeout=120
        )
        took = time.monotonic() - started
    finally:
        idle.rollback()
    assert run.returncode == 0, run.stderr.decode()
    out = run.stdout.decode()
    assert f"index pgmq.q_{queue}_fifo_idx not built" in out
    wait = float(index_builds.MAINTAIN_LOCK_TIMEOUT.rstrip("s"))
    assert took < wait + 30  # the lock bound, plus the command's start and other work
    run = subprocess.run(command, cwd=ROOT, env=subprocess_env, capture_output=True, timeout=120)
    assert f"built index pgmq.q_{queue}_fifo_idx" in run.stdout.decode()
    assert index_valid(db, f"q_{queue}_fifo_idx") is True


def test_an_application_role_s_index_under_a_non_superuser_owner(roles):
    """The realistic deployment: the owner (no superuser) migrated and owns the queue
    tables; the application role's create_fifo_index still gets the index, owned by the
    owner (built by pgmq._want_queue_index, SECURITY DEFINER)."""
    ok = test_two_roles.ok
    owner, app = roles["owner"], roles["app"]
    ok(owner.manage("migrate", "-v", "0"))
    ok(owner.manage("pgmq_create", "ixq"))
    ok(owner.manage("pgmq_grant", app.name))
    with app.connect() as conn:
        conn.execute("SELECT pgmq.create_fifo_index('ixq')")
        conn.execute("SELECT pgmq.send('ixq', '{}')")  # its normal life goes on
    with owner.connect() as conn:
        [(valid, index_owner)] = conn.execute(
            "SELECT x.indisvalid, i.relowner::regrole::text FROM pg_index x "
            "JOIN pg_class i ON i.oid = x.indexrelid WHERE i.oid = 'pgmq.q_ixq_fifo_idx'::regclass"
        ).fetchall()
    assert valid and index_owner == owner.name


def test_a_partitioned_queues_deferred_index_is_built_leaf_by_leaf(pg_connect, queue_name):
    """CREATE INDEX CONCURRENTLY refuses a partitioned table: its wish is built ON ONLY the
    parent, then CONCURRENTLY on each partition and attached, so it ends valid."""
    owner = pg_connect()
    owner.execute("SELECT pgmq.create_partitioned(%s, '10', '20')", [queue_name])
    try:
        with owner.transaction():  # a transaction that wrote: the build is deferred
            owner.execute(
                "SELECT pgmq.send_batch(%s, array_fill('{}'::jsonb, ARRAY[25]))", [queue_name]
            )
            owner.execute("SELECT pgmq.create_fifo_index(%s)", [queue_name])
        index = f"q_{queue_name}_fifo_idx"
        assert index_valid(owner, index) is None
        assert QueueManager().build_pending_indexes() == [index]
        assert index_valid(owner, index) is True
        parts = owner.execute(
            "SELECT count(*) FILTER (WHERE i.indisvalid), count(*) FROM pg_inherits h "
            "JOIN pg_index i ON i.indexrelid = h.inhrelid WHERE h.inhparent = to_regclass(%s)",
            [f"pgmq.{index}"],
        ).fetchone()
        leaves = owner.execute(
            "SELECT count(*) FROM pg_partition_tree(to_regclass(%s)) WHERE isleaf AND level > 0",
            [f"pgmq.q_{queue_name}"],
        ).fetchone()[0]
        assert parts == (leaves, leaves) and leaves >= 2
    finally:
        owner.execute("SELECT pgmq.drop_queue(%s)", [queue_name])
