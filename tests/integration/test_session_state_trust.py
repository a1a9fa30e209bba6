"""Session state is trusted only as far as django-pgmq would have written it.

A session's low-water marks (settings pgmq.low_<table>), its kept statements' states
(pgmq.prep_<...>) and the prepared statements under the kept statements' names are
session state: any code on the connection can write them with set_config or PREPARE,
and a pooled connection hands them to its next client. Each test plants such state as
the application role, in its own session, and checks what a reader then gets: a
committed message is read at the latest one refresh period (a second) after it was
hidden, and a planted statement is never run.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import psycopg
import pytest
from django.db import connection
from psycopg import sql

from django_pgmq.manager import QueueManager
from tests.integration.test_sql_prepared_plans import read, send

PERIOD = 1.0  # the mark's full look (sql/15_queue_ops.sql, pgmq._low_water_mark_for)
SLACK = 0.6  # the machine is shared: scheduling, not the mark


@pytest.fixture
def app_queue(pg_connect, app_role, queue_name) -> Iterator[tuple[str, str]]:
    """A queue the owner made, and a DSN of the application role granted on it."""
    admin = pg_connect()
    admin.execute("SELECT pgmq.create(%s)", [queue_name])
    yield queue_name, app_role[1]
    admin.execute("SELECT pgmq.drop_queue(%s)", [queue_name])


def now(db: psycopg.Connection) -> float:
    return float(db.execute("SELECT extract(epoch FROM clock_timestamp())").fetchone()[0])


def table_oid(db: psycopg.Connection, queue: str) -> int:
    return db.execute("SELECT to_regclass(%s)::oid", [f"pgmq.q_{queue}"]).fetchone()[0]


def plant_mark(db: psycopg.Connection, queue: str, value: str) -> None:
    db.execute("SELECT set_config(%s, %s, false)", [f"pgmq.low_q_{queue}", value])


def marks(db: psycopg.Connection, queue: str, shape: str) -> str:
    """A mark of ``shape``: ``last`` (the queue's last id, with times as the function
    writes them: it cannot be told from a true mark, and is trusted until its full look),
    ``huge`` (past every id the sequence gave), ``future`` (times an hour ahead),
    ``overflow`` (more digits than a bigint holds), ``malformed`` (a time '1.2.3')."""
    oid, t = table_oid(db, queue), now(db)
    last = db.execute(
        "SELECT pg_sequence_last_value(pg_get_serial_sequence(%s, 'msg_id')::regclass)",
        [f"pgmq.q_{queue}"],
    ).fetchone()[0]
    return {
        "last": f"{oid} {t + 0.04} {last} {t + 0.99}",
        "huge": f"{oid} {t + 0.04} 900000000000000000 {t + 0.99}",
        "future": f"{oid} {t + 3600} 900000000000000000 {t + 3600}",
        "overflow": f"{oid} {t + 0.04} 99999999999999999999 {t + 0.99}",
        "malformed": f"{oid} 1.2.3 900000000000000000 {t + 0.99}",
    }[shape]


def read_within(reader, want: list[int], limit: float) -> tuple[list[int], float]:
    """Call ``reader`` until it has returned every id of ``want`` or ``limit`` seconds
    pass: what it returned, in order, and after how long."""
    start, got = time.monotonic(), []
    while True:
        got += reader()
        waited = time.monotonic() - start
        if sorted(got) == want or waited > limit:
            return got, waited
        time.sleep(0.02)


@pytest.mark.parametrize("shape", ["last", "huge", "future", "overflow", "malformed"])
def test_a_planted_mark_hides_a_committed_message_for_at_most_a_period(
    pg_connect, app_queue, shape
):
    queue, dsn = app_queue
    admin, app = pg_connect(), psycopg.connect(dsn, autocommit=True)
    with app:
        ids = send(admin, queue, 3)
        assert read(app, queue, vt=0) == ids  # the session has a mark of its own
        plant_mark(app, queue, marks(app, queue, shape))
        got, waited = read_within(lambda: read(app, queue), ids, PERIOD + SLACK)
        assert sorted(got) == ids
        if shape != "last":  # not trusted at all: the next read looks again
            assert got == ids and waited < PERIOD / 2, waited
        # and the session's mark is one the function wrote again
        value = app.execute("SELECT current_setting(%s)", [f"pgmq.low_q_{queue}"]).fetchone()[0]
        assert int(value.split()[2]) <= ids[0]


def test_a_mark_left_on_a_pooled_connection_hides_nothing_past_a_period(pg_connect, app_queue):
    """One client of a pooled connection plants a mark and commits; the pool hands the
    connection to the next client, whose reads see every committed message within a
    period, through pop as well as read."""
    queue, dsn = app_queue
    admin = pg_connect()
    with psycopg.connect(dsn, autocommit=False) as pooled:
        with pooled.transaction():
            ids = send(admin, queue, 3)
            plant_mark(pooled, queue, marks(pooled, queue, "last"))
        pooled.commit()

        def pop() -> list[int]:
            with pooled.transaction():
                rows = pooled.execute("SELECT msg_id FROM pgmq.pop(%s, 10)", [queue]).fetchall()
            return [r[0] for r in rows]

        got, _ = read_within(pop, ids, PERIOD + SLACK)
        assert sorted(got) == ids


def test_the_managers_own_statement_reads_past_a_planted_mark(manager, queue):
    """The manager's prepared statement takes the same mark (an initplan calling
    pgmq._low_water_mark_for): a mark planted on Django's connection hides a committed
    message for at most a period, with prepared statements on and off."""
    connection.ensure_connection()
    pg = connection.connection
    for threshold in (5, None):
        pg.prepare_threshold = threshold
        try:
            ids = manager.send_batch(queue, [{"n": 1}, {"n": 2}])
            plant_mark(pg, queue, marks(pg, queue, "last"))
            got, _ = read_within(
                lambda: [m.msg_id for m in manager.read(queue, vt=30, qty=5)], ids, PERIOD + SLACK
            )
            assert sorted(got) == ids
            assert manager.archive(queue, ids) == ids
        finally:
            pg.prepare_threshold = None


def plant_statements(db: psycopg.Connection, queue: str) -> None:
    """Under each kept statement's name, a statement of the same parameters that records
    that it ran (and returns a fake message or id), and the state 'p' ("prepared")."""
    db.execute("CREATE TEMP TABLE IF NOT EXISTS ran (op text)")
    params = '"char", integer, integer, timestamptz, bigint[], jsonb[], jsonb[], jsonb, bigint'
    for op in "rpad":
        returning = (
            "1::bigint, 1, now(), now(), now(), '{}'::jsonb, NULL::jsonb"
            if op in "rp"
            else "($5)[1]"
        )
        name = f"pgmq_{op}g_q_{queue}"
        if held(db, name):
            db.execute(sql.SQL("DEALLOCATE {}").format(sql.Identifier(name)))
        db.execute(
            sql.SQL(
                "PREPARE {} (" + params + ") AS INSERT INTO pg_temp.ran VALUES ({}) RETURNING "
            ).format(sql.Identifier(name), sql.Literal(op))
            + sql.SQL(returning)
        )
        db.execute("SELECT set_config(%s, 'p', false)", [f"pgmq.prep_{op}g_q_{queue}"])


def held(db: psycopg.Connection, name: str) -> str | None:
    row = db.execute(
        "SELECT statement FROM pg_prepared_statements WHERE name = %s", [name]
    ).fetchone()
    return row[0] if row else None


def ran(db: psycopg.Connection) -> list[str]:
    return [r[0] for r in db.execute("SELECT op FROM pg_temp.ran")]


def cycle(db: psycopg.Connection, queue: str) -> None:
    """send, read, archive; send, pop, delete: each result checked."""
    ids = send(db, queue, 3)
    assert read(db, queue) == ids
    assert [r[0] for r in db.execute("SELECT pgmq.archive(%s, %s::bigint[])", [queue, ids])] == ids
    ids = send(db, queue, 2)
    assert [r[0] for r in db.execute("SELECT msg_id FROM pgmq.pop(%s, 1)", [queue])] == ids[:1]
    assert [
        r[0] for r in db.execute("SELECT pgmq.delete(%s, %s::bigint[])", [queue, ids[1:]])
    ] == ids[1:]


@pytest.mark.parametrize("when", ["before any use", "once the statements are kept"])
def test_a_statement_planted_under_a_kept_name_is_never_run(app_queue, when):
    queue, dsn = app_queue
    with psycopg.connect(dsn, autocommit=True) as app:
        if when != "before any use":
            for _ in range(4):
                cycle(app, queue)
            assert (held(app, f"pgmq_rg_q_{queue}") or "").startswith("PREPARE")
        plant_statements(app, queue)
        for _ in range(5):
            cycle(app, queue)
        assert ran(app) == []
        # the names now hold the kept statements again, with their own text
        for op in "rpad":
            text = held(app, f"pgmq_{op}g_q_{queue}")
            assert text is not None and "pg_temp.ran" not in text, text
            assert f"pgmq.q_{queue}" in text


def test_a_statement_planted_on_a_pooled_connection_is_never_run(app_queue):
    """The planting client commits and leaves; the next client of the connection reads."""
    queue, dsn = app_queue
    with psycopg.connect(dsn, autocommit=False) as pooled:
        with pooled.transaction():
            plant_statements(pooled, queue)
        pooled.commit()
        for _ in range(3):
            with pooled.transaction():
                cycle(pooled, queue)
        assert ran(pooled) == []


def test_the_manager_never_runs_a_statement_planted_on_its_connection(
    manager: QueueManager, queue: str
):
    """With prepared statements on and off (the SQL API's path), on Django's connection."""
    connection.ensure_connection()
    pg = connection.connection
    plant_statements(pg, queue)
    for threshold in (None, 5, None):
        pg.prepare_threshold = threshold
        try:
            for _ in range(4):
                ids = manager.send_batch(queue, [{"n": n} for n in range(3)])
                assert [m.msg_id for m in manager.read(queue, vt=30, qty=2)] == ids[:2]
                assert manager.archive(queue, ids[:2]) == ids[:2]
                assert [m.msg_id for m in manager.pop(queue, 1)] == ids[2:]
                assert manager.delete(queue, 10**12) is False
        finally:
            pg.prepare_threshold = None
    assert ran(pg) == []
    pg.execute("DROP TABLE pg_temp.ran")
