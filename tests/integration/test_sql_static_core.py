"""No code written at run time: message operations change no function.

Until 0.3 a queue a session used three times was "promoted": the session wrote a
per-queue function and the router in its own transaction. Each test here reproduces
one defect of that design with real sessions and checks the behaviour a user sees.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable

import psycopg
import pytest
from psycopg import sql
from psycopg.types.json import Jsonb

pytestmark = pytest.mark.usefixtures("django_db_setup")


def functions(db: psycopg.Connection) -> list[tuple]:
    """Every function of schema pgmq: name, arguments, body, and the row's version."""
    return db.execute(
        "SELECT p.proname, pg_get_function_identity_arguments(p.oid), p.prosrc, p.xmin::text"
        " FROM pg_proc p WHERE p.pronamespace = 'pgmq'::regnamespace ORDER BY 1, 2"
    ).fetchall()


def send(db: psycopg.Connection, queue: str, n: int = 1) -> list[int]:
    return [
        r[0]
        for r in db.execute(
            "SELECT * FROM pgmq.send_batch(queue_name => %s, msgs => %s::jsonb[])",
            [queue, [Jsonb({"n": i}) for i in range(n)]],
        )
    ]


def read(db: psycopg.Connection, queue: str, qty: int = 10, vt: int = 0) -> list[int]:
    return [
        r[0]
        for r in db.execute(
            "SELECT msg_id FROM pgmq.read(queue_name => %s, vt => %s, qty => %s)", [queue, vt, qty]
        )
    ]


@pytest.fixture
def db(pg_connect) -> psycopg.Connection:
    """An autocommit session (the name also tells pytest-django to set up the database)."""
    return pg_connect()


@pytest.fixture
def queues(db) -> Callable[..., list[str]]:
    """Make queues; dropped afterwards."""
    admin = db
    made: list[str] = []

    def make(*names: str) -> list[str]:
        for name in names:
            admin.execute("SELECT pgmq.create(%s)", [name])
            made.append(name)
        return list(names)

    yield make
    for name in made:
        admin.execute("SELECT pgmq.drop_queue(%s)", [name])


def test_1_a_pause_after_a_repeatable_read_transaction_began_holds_for_new_sessions(
    pg_connect, queues, queue_name
):
    """An RR transaction that keeps using a queue cannot carry its old view of the
    attributes into other sessions (it built the queue's function from it)."""
    [q] = queues(queue_name)
    admin, old = pg_connect(), pg_connect(autocommit=False)
    send(admin, q, 20)
    old.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
    assert len(read(old, q, 1, vt=0)) == 1  # its snapshot: not paused
    admin.execute("SELECT pgmq.set_queue_attributes(%s, '{\"paused\": true}')", [q])
    for _ in range(5):  # the third use promoted the queue with the snapshot's attributes
        assert len(read(old, q, 1, vt=0)) == 1
    old.commit()
    for _ in range(3):
        fresh = pg_connect()
        assert [len(read(fresh, q, 5)) for _ in range(5)] == [0, 0, 0, 0, 0]


def test_2_a_function_planted_under_a_queue_s_name_is_never_called(pg_connect, queues, queue_name):
    """A role that may create objects in pgmq defines pgmq._ops_<queue>; no use of
    the queue, by any role, runs it."""
    q, other = queues(queue_name, f"{queue_name}_other")
    owner = pg_connect()
    role = f"planter_{queue_name}"
    owner.execute(sql.SQL("CREATE ROLE {} NOLOGIN").format(sql.Identifier(role)))
    try:
        owner.execute(
            sql.SQL("GRANT USAGE, CREATE ON SCHEMA pgmq TO {}").format(sql.Identifier(role))
        )
        owner.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(role)))
        owner.execute(
            sql.SQL(
                'CREATE FUNCTION pgmq.{}(p_op "char", p_qty integer, p_secs integer,'
                " p_vt timestamptz, p_ids bigint[], p_msgs jsonb[], p_headers jsonb[],"
                " p_cond jsonb) RETURNS SETOF pgmq.message_record LANGUAGE plpgsql AS"
                " $$ BEGIN RAISE EXCEPTION 'planted function ran as %', current_user; END $$"
            ).format(sql.Identifier(f"_ops_{q}"))
        )
        owner.execute("RESET ROLE")
        for _ in range(4):  # another queue's promotion wrote the router for the hot set
            send(owner, other)
            read(owner, other, 1, vt=30)
        owner = pg_connect()
        for _ in range(6):  # owner and superuser use the queue the way promotion needed
            ids = send(owner, q, 2)
            assert read(owner, q, 10, vt=30) == ids
            owner.execute("SELECT pgmq.archive(%s, %s::bigint[])", [q, ids])
        assert pg_connect().execute("SELECT count(*) FROM pgmq.pop(%s, 5)", [q]).fetchone() == (0,)
    finally:
        owner.execute("RESET ROLE")
        owner.execute(
            sql.SQL("DROP FUNCTION IF EXISTS pgmq.{}").format(sql.Identifier(f"_ops_{q}"))
        )
        owner.execute(sql.SQL("REVOKE ALL ON SCHEMA pgmq FROM {}").format(sql.Identifier(role)))
        owner.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


def test_3_dropping_a_busy_queue_never_waits_for_a_worker_using_another(
    pg_connect, queues, queue_name
):
    """A worker transaction that keeps using one queue and an admin dropping another
    busy queue: the drop commits at once and the worker goes on (no deadlock)."""
    a, b = queues(f"{queue_name}_a", f"{queue_name}_b")
    warm = pg_connect()
    for _ in range(4):  # b was promoted by use, as busy queues were
        send(warm, b)
        read(warm, b, 1, vt=30)
    worker, admin = pg_connect(autocommit=False), pg_connect()
    admin.execute("SET lock_timeout = '5s'")
    try:
        for _ in range(4):  # the worker's transaction promotes a (and held the router's lock)
            send(worker, a)
            read(worker, a, 1, vt=30)
        assert admin.execute("SELECT pgmq.drop_queue(%s)", [b]).fetchone() == (True,)
        send(worker, a)
        worker.commit()
    finally:
        worker.rollback()
    count = sql.SQL("SELECT count(*) FROM pgmq.{}").format(sql.Identifier(f"q_{a}"))
    assert admin.execute(count).fetchone() == (5,)


def test_4_a_second_role_keeps_administering_its_queue_after_others_used_it(
    pg_connect, db, queue_name
):
    """An application role made appq; after the owner's sessions used it, the role
    can still drop it (promotion made a function it did not own). Its tables are the
    owner's, as every queue's (docs/guide/roles.md); its attributes are the owner's or a
    --manage-queues role's to set."""
    owner = db
    role = f"app_{queue_name}"
    ident = sql.Identifier(role)
    owner.execute(sql.SQL("CREATE ROLE {} NOLOGIN").format(ident))
    try:
        # what `manage.py pgmq_grant ROLE --create-queues` grants
        owner.execute("SELECT pgmq.grant_app_role(%s, true)", [role])
        app = pg_connect()
        app.execute(sql.SQL("SET ROLE {}").format(ident))
        app.execute("SELECT pgmq.create(%s)", [queue_name])
        for _ in range(5):
            send(owner, queue_name)
            read(owner, queue_name, 1, vt=30)
        assert app.execute(
            "SELECT DISTINCT c.relowner = n.nspowner FROM pg_class c"
            " JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = 'pgmq' AND c.relname IN (%s, %s)",
            [f"q_{queue_name}", f"a_{queue_name}"],
        ).fetchall() == [(True,)]
        assert app.execute("SELECT pgmq.drop_queue(%s)", [queue_name]).fetchone() == (True,)
    finally:
        owner.execute("SELECT pgmq.drop_queue(%s)", [queue_name])
        owner.execute(sql.SQL("DROP OWNED BY {}").format(ident))
        owner.execute(sql.SQL("DROP ROLE {}").format(ident))


@pytest.mark.parametrize("value", ["off", "many"])
def test_5_the_removed_setting_pgmq_hot_queues_has_no_effect(pg_connect, queues, queue_name, value):
    """A typo in pgmq.hot_queues made every third call to a queue fail."""
    [q] = queues(queue_name)
    db = pg_connect()
    db.execute("SELECT set_config('pgmq.hot_queues', %s, false)", [value])
    for _ in range(6):
        [msg_id] = send(db, q)
        assert read(db, q, 5, vt=30) == [msg_id]
        db.execute("SELECT pgmq.delete(%s, %s::bigint)", [q, msg_id])


# -- the pg_proc test ----------------------------------------------------------------------

QUEUES = 50
SESSIONS = 4
OPERATIONS = 1000


def mixed_operations(conn: psycopg.Connection, names: list[str], seed: int, count: int) -> None:
    """``count`` random message operations on ``names``, a transaction per few of them."""
    rng = random.Random(seed)
    for n in range(count):
        q = rng.choice(names)
        kind = rng.randrange(10)
        if kind < 3:
            conn.execute("SELECT pgmq.send(%s, %s)", [q, Jsonb({"n": n})])
        elif kind == 3:
            conn.execute(
                "SELECT pgmq.send_batch(%s, %s::jsonb[], %s::jsonb[])",
                [q, [Jsonb({"n": n}), Jsonb({"m": n})], [Jsonb({"priority": 3}), None]],
            )
        elif kind == 4:
            conn.execute("SELECT * FROM pgmq.read(%s, 0, 3)", [q])
        elif kind == 5:
            ids = [r[0] for r in conn.execute("SELECT msg_id FROM pgmq.read(%s, 30, 2)", [q])]
            conn.execute("SELECT pgmq.archive(%s, %s::bigint[])", [q, ids])
        elif kind == 6:
            ids = [r[0] for r in conn.execute("SELECT msg_id FROM pgmq.read(%s, 30, 2)", [q])]
            conn.execute("SELECT pgmq.delete(%s, %s::bigint[])", [q, ids])
            conn.execute("SELECT pgmq.set_vt(%s, %s::bigint[], 0)", [q, ids])
        elif kind == 7:
            conn.execute("SELECT * FROM pgmq.pop(%s, 2)", [q])
        elif kind == 8:
            conn.execute("SELECT * FROM pgmq.metrics(%s)", [q])
            conn.execute("SELECT * FROM pgmq.read_grouped(%s, 0, 2)", [q])
        else:
            conn.execute("SELECT pgmq.send_topic(%s, %s)", [f"core.{rng.choice(names)}", Jsonb({})])
        if n % 7 == 6:
            conn.commit()
    conn.commit()


@pytest.mark.parametrize("isolation", ["READ COMMITTED", "REPEATABLE READ"])
def test_a_thousand_mixed_operations_from_four_sessions_leave_pg_proc_as_installed(
    pg_connect, db, queue_name, isolation
):
    admin = db
    names = [f"{queue_name}_{n}" for n in range(QUEUES)]
    for n, name in enumerate(names):
        admin.execute("SELECT pgmq.create(%s)", [name])
        admin.execute("SELECT pgmq.bind_topic(%s, %s)", [f"core.{name}", name])
        attrs = [
            {},
            {"paused": True},
            {"priorities": True},
            {"deduplication_window": 60},
            {"max_receive_count": 2, "dead_letter_queue": f"{name}_dl"},
            {"delivery_delay": 0, "max_message_size": 10000},
        ][n % 6]
        if attrs:
            admin.execute("SELECT pgmq.set_queue_attributes(%s, %s)", [name, Jsonb(attrs)])
    admin.execute("SELECT pgmq.purge_queue(%s)", [names[0]])
    before = functions(admin)
    sessions = [pg_connect(autocommit=False) for _ in range(SESSIONS)]
    for conn in sessions:
        conn.isolation_level = getattr(psycopg.IsolationLevel, isolation.replace(" ", "_"))
    barrier = threading.Barrier(SESSIONS)
    errors: list[BaseException] = []

    def run(seed: int, conn: psycopg.Connection) -> None:
        try:
            barrier.wait(timeout=30)
            for attempt in range(20):  # an RR transaction may meet a concurrent update
                try:
                    mixed_operations(conn, names, seed * 100 + attempt, OPERATIONS // SESSIONS)
                    return
                except psycopg.errors.SerializationFailure:
                    conn.rollback()
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(n, c)) for n, c in enumerate(sessions)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    try:
        assert not errors, errors
        assert functions(admin) == before
        assert functions(sessions[0]) == before  # and seen alike from every session
    finally:
        for conn in sessions:
            conn.rollback()
        for name in names:
            admin.execute("SELECT pgmq.drop_queue(%s)", [name])
            admin.execute("SELECT pgmq.drop_queue(%s)", [f"{name}_dl"])
