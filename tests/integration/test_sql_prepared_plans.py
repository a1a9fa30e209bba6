"""Plans kept per session with SQL PREPARE (sql/15_queue_ops.sql, "Kept plans").

After three uses of read, pop, archive or delete on a queue without attributes, the
router prepares the statement in the session and runs it from then on. These tests
check what a user sees: the same results as before, no function written, and the
session state (DEALLOCATE, DISCARD ALL, RESET ALL, SET ROLE, a dropped queue, a bad
setting) never making a call fail or run a stale statement.
"""

from __future__ import annotations

import psycopg
import pytest
from psycopg import errors, sql
from psycopg.types.json import Jsonb

pytestmark = pytest.mark.usefixtures("django_db_setup")


def send(db: psycopg.Connection, queue: str, n: int = 1) -> list[int]:
    return [
        r[0]
        for r in db.execute(
            "SELECT * FROM pgmq.send_batch(%s, %s::jsonb[])",
            [queue, [Jsonb({"n": i}) for i in range(n)]],
        )
    ]


def read(db: psycopg.Connection, queue: str, qty: int = 10, vt: int = 30) -> list[int]:
    return [r[0] for r in db.execute("SELECT msg_id FROM pgmq.read(%s, %s, %s)", [queue, vt, qty])]


def archive(db: psycopg.Connection, queue: str, ids: list[int]) -> list[int]:
    return [r[0] for r in db.execute("SELECT pgmq.archive(%s, %s::bigint[])", [queue, ids])]


def prepared(db: psycopg.Connection) -> set[str]:
    return {
        r[0]
        for r in db.execute("SELECT name FROM pg_prepared_statements WHERE name LIKE 'pgmq\\_%'")
    }


def cycle(db: psycopg.Connection, queue: str, times: int = 5) -> None:
    """send, read, archive, and send, pop, delete, ``times`` times; checks each result."""
    for _ in range(times):
        ids = send(db, queue, 3)
        assert read(db, queue) == ids
        assert archive(db, queue, ids) == ids
        ids = send(db, queue, 2)
        assert [r[0] for r in db.execute("SELECT msg_id FROM pgmq.pop(%s, 1)", [queue])] == ids[:1]
        assert [
            r[0] for r in db.execute("SELECT pgmq.delete(%s, %s::bigint[])", [queue, ids[1:]])
        ] == ids[1:]


def names(queue: str) -> set[str]:
    """read and pop keep the record form; archive and delete the msg_id-only form (0026);
    every kept statement carries the attribute guard, hence "g" (0042)."""
    return {f"pgmq_{op}g_q_{queue}" for op in "rpad"}


@pytest.fixture
def queue(db, pg_connect, queue_name):
    admin = pg_connect()
    admin.execute("SELECT pgmq.create(%s)", [queue_name])
    yield queue_name
    admin.execute("SELECT pgmq.drop_queue(%s)", [queue_name])


def test_prepared_after_three_uses_without_writing_a_function(pg_connect, queue):
    db = pg_connect()
    before = db.execute("SELECT count(*), max(xmin::text::bigint) FROM pg_proc").fetchone()
    cycle(db, queue, 2)
    assert prepared(db) == set()
    cycle(db, queue, 3)
    assert prepared(db) == names(queue)
    assert db.execute("SELECT count(*), max(xmin::text::bigint) FROM pg_proc").fetchone() == before
    # other sessions see no trace of them
    assert prepared(pg_connect()) == set()


def test_generic_plan_made_on_an_empty_table_walks_the_primary_key(pg_connect, queue):
    db = pg_connect()
    for _ in range(5):
        assert read(db, queue) == []
    send(db, queue, 500)
    db.execute("SET plan_cache_mode = force_generic_plan")  # show the cached plan
    plan = "\n".join(
        r[0]
        for r in db.execute(
            sql.SQL(
                "EXPLAIN (COSTS OFF) EXECUTE {}(NULL, 10, 30, NULL, NULL, NULL, NULL, '{{}}', 0)"
            ).format(sql.Identifier(f"pgmq_rg_q_{queue}"))
        )
    )
    assert "Seq Scan" not in plan and "Bitmap" not in plan
    assert f"Index Scan using q_{queue}_pkey" in plan


def test_a_queue_dropped_and_made_again_uses_the_new_table(pg_connect, queue):
    db = pg_connect()
    cycle(db, queue)
    assert prepared(db) == names(queue)
    admin = pg_connect()
    admin.execute("SELECT pgmq.drop_queue(%s)", [queue])
    with pytest.raises(errors.UndefinedTable):
        read(db, queue)
    admin.execute("SELECT pgmq.create(%s)", [queue])
    ids = send(admin, queue, 3)
    assert ids == [1, 2, 3]
    assert read(db, queue) == ids
    assert archive(db, queue, ids) == ids
    assert admin.execute(
        sql.SQL("SELECT count(*) FROM pgmq.{}").format(sql.Identifier(f"a_{queue}"))
    ).fetchone() == (3,)


@pytest.mark.parametrize("reset", ["DEALLOCATE ALL", "DISCARD ALL", "RESET ALL", "DISCARD PLANS"])
def test_a_session_reset_never_fails_a_call(pg_connect, queue, reset):
    db = pg_connect()
    cycle(db, queue)
    db.execute(reset)
    cycle(db, queue, 1)  # right after the reset
    cycle(db, queue, 4)
    assert prepared(db) == names(queue)


def test_deallocate_inside_a_transaction(pg_connect, queue):
    db = pg_connect()
    cycle(db, queue)
    with db.transaction():
        ids = send(db, queue, 2)
        assert read(db, queue) == ids
        db.execute(sql.SQL("DEALLOCATE {}").format(sql.Identifier(f"pgmq_ag_q_{queue}")))
        assert archive(db, queue, ids) == ids
    assert prepared(db) == names(queue)


def test_a_psycopg_rollback_deallocates_ours_too_and_calls_go_on(pg_connect, queue):
    """psycopg 3 sends DEALLOCATE ALL after rolling back a connection that holds
    prepared statements of its own: the next calls prepare ours again, never fail."""
    db = pg_connect(autocommit=False, prepare_threshold=0)
    cycle(db, queue)
    db.commit()
    assert prepared(db) == names(queue)
    send(db, queue, 2)
    db.rollback()
    assert prepared(db) == set()  # psycopg's DEALLOCATE ALL took ours with its own
    cycle(db, queue, 1)
    db.commit()
    assert prepared(db) == names(queue)


@pytest.mark.parametrize("value", ["garbage", "99999999999999", "p", "c", "-1", "3"])
def test_a_bad_session_setting_never_fails_a_call(pg_connect, queue, value):
    db = pg_connect()
    for op in ("rg", "pg", "ag", "dg", "r", "p", "ai", "di", "a", "d"):
        db.execute("SELECT set_config(%s, %s, false)", [f"pgmq.prep_{op}_q_{queue}", value])
    cycle(db, queue)


def test_attributes_take_effect_at_once_in_a_session_with_prepared_statements(pg_connect, queue):
    db, admin = pg_connect(), pg_connect()
    cycle(db, queue)
    send(admin, queue, 3)
    admin.execute("SELECT pgmq.set_queue_attributes(%s, '{\"paused\": true}')", [queue])
    assert read(db, queue) == []
    admin.execute("SELECT pgmq.set_queue_attributes(%s, '{\"paused\": null}')", [queue])
    assert len(read(db, queue, vt=0)) == 3


def test_archive_takes_the_attribute_path_at_once_in_a_session_with_prepared_statements(
    pg_connect, queue
):
    """An archive on a queue at its max_in_flight wakes workers waiting there: the kept
    statement's guard must send it the router's way as soon as the queue has the limit
    (two messages read of a limit of two: the archive frees a slot of a full queue)."""
    db, admin, listener = pg_connect(), pg_connect(), pg_connect()
    cycle(db, queue)
    admin.execute("SELECT pgmq.set_queue_attributes(%s, '{\"max_in_flight\": 2}')", [queue])
    [channel] = admin.execute(
        "SELECT pgmq._limit_channel(pgmq._stored_queue_name(%s))", [queue]
    ).fetchone()
    listener.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel)))
    ids = send(admin, queue, 2)
    assert read(db, queue) == ids
    assert archive(db, queue, ids) == ids
    assert [n.channel for n in listener.notifies(timeout=5, stop_after=1)] == [channel]
    admin.execute("SELECT pgmq.set_queue_attributes(%s, '{\"max_in_flight\": null}')", [queue])
    cycle(db, queue)  # back to the kept statements once the attributes are gone
    assert prepared(db) == names(queue)


def test_a_session_holding_unguarded_statements_of_migration_0041_honours_a_pause(
    pg_connect, queue
):
    """0041 kept statements without the attribute guard under pgmq_r_/pgmq_ai_...; a
    session that made them before 0042 was applied must never run them again."""
    db, admin = pg_connect(), pg_connect()
    for op, text in (
        ("r", "SELECT q.msg_id, 1, now(), now(), now(), q.message, q.headers FROM pgmq.{} q"),
        ("ai", "SELECT q.msg_id FROM pgmq.{} q"),
    ):
        db.execute(
            sql.SQL("PREPARE {} AS " + text).format(
                sql.Identifier(f"pgmq_{op}_q_{queue}"), sql.Identifier(f"q_{queue}")
            )
        )
        db.execute("SELECT set_config(%s, 'p', false)", [f"pgmq.prep_{op}_q_{queue}"])
    send(admin, queue, 3)
    admin.execute("SELECT pgmq.set_queue_attributes(%s, '{\"paused\": true}')", [queue])
    assert read(db, queue) == []
    admin.execute("SELECT pgmq.set_queue_attributes(%s, '{\"paused\": null}')", [queue])
    admin.execute("SELECT pgmq.purge_queue(%s)", [queue])
    cycle(db, queue)
    assert names(queue) <= prepared(db)


def test_permissions_are_checked_under_the_current_role(pg_connect, queue):
    db = pg_connect()
    cycle(db, queue)
    role = f"reader_{queue}"
    ident = sql.Identifier(role)
    db.execute(sql.SQL("CREATE ROLE {} NOLOGIN").format(ident))
    try:
        db.execute(sql.SQL("GRANT USAGE ON SCHEMA pgmq TO {}").format(ident))
        db.execute(sql.SQL("GRANT SELECT ON pgmq.queue_attributes TO {}").format(ident))
        ids = send(db, queue, 2)
        db.execute(sql.SQL("SET ROLE {}").format(ident))
        with pytest.raises(errors.InsufficientPrivilege):
            read(db, queue)
        with pytest.raises(errors.InsufficientPrivilege):
            archive(db, queue, ids)
        db.execute("RESET ROLE")
        assert read(db, queue) == ids
        assert archive(db, queue, ids) == ids
    finally:
        db.execute("RESET ROLE")
        db.execute(sql.SQL("DROP OWNED BY {}").format(ident))
        db.execute(sql.SQL("DROP ROLE {}").format(ident))


def test_at_most_32_statements_per_session(db, pg_connect, queue_name):
    admin, db = pg_connect(), pg_connect()
    qs = [f"{queue_name}_{i}" for i in range(9)]
    for q in qs:
        admin.execute("SELECT pgmq.create(%s)", [q])
    try:
        for q in qs:
            cycle(db, q)
        assert len(prepared(db)) == 32
        db.execute("DEALLOCATE ALL")
        for q in reversed(qs):
            cycle(db, q)
        assert len(prepared(db)) == 32
    finally:
        for q in qs:
            admin.execute("SELECT pgmq.drop_queue(%s)", [q])


def test_a_session_holding_statements_of_migration_0025_runs_on(pg_connect, queue):
    """0025 prepared archive and delete under pgmq_a_/pgmq_d_ with the record form; a
    session that made them before 0026 was applied must not run them as msg_id-only."""
    db = pg_connect()
    for op in "ad":
        stmt = sql.Identifier(f"pgmq_{op}_q_{queue}")
        db.execute(
            sql.SQL("PREPARE {} (bigint[]) AS SELECT x, 1, now() FROM unnest($1) x").format(stmt)
        )
        db.execute("SELECT set_config(%s, 'p', false)", [f"pgmq.prep_{op}_q_{queue}"])
    cycle(db, queue)
    assert names(queue) <= prepared(db)
