"""Internal helpers take a queue or a fixed choice, never SQL text or any table."""

from __future__ import annotations

import psycopg
import pytest

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def db(pg_connect, queue_name):
    conn = pg_connect()
    conn.execute("SELECT pgmq.create(%s)", [queue_name])
    conn.execute("SELECT pgmq.send(%s, '{\"n\": 1}')", [queue_name])
    yield conn
    conn.execute("SELECT pgmq.drop_queue(%s)", [queue_name])


def refused(db, statement: str, args: list) -> psycopg.Error:
    with pytest.raises(psycopg.Error) as caught:
        db.execute(statement, args)
    return caught.value


def test_poll_runs_no_sql_text(db, queue_name):
    db.execute("CREATE TEMP TABLE ran (x int)")
    error = refused(
        db,
        "SELECT * FROM pgmq._poll(%s, %s, 30, 1, '{}', 0, 10)",
        ["INSERT INTO ran VALUES (1) RETURNING NULL::pgmq.message_record", queue_name],
    )
    assert error.sqlstate == "PQ004" and "reader must be read or read_grouped" in str(error)
    assert db.execute("SELECT count(*) FROM ran").fetchone() == (0,)


def test_poll_still_reads(db, queue_name):
    rows = db.execute(
        "SELECT msg_id FROM pgmq._poll('read', %s, 30, 1, '{}', 0, 10)", [queue_name]
    ).fetchall()
    assert rows == [(1,)]
    assert db.execute("SELECT count(*) FROM pgmq.read_with_poll(%s, 30, 1, 0)", [queue_name])


@pytest.mark.parametrize("function", ["_dashboard_count", "_dashboard_estimate"])
def test_the_dashboard_counters_take_a_queue_not_a_table(db, queue_name, function):
    limit = ", 10" if function == "_dashboard_count" else ""
    # The old abuse: any table the caller names (here the auth users of Django).
    error = refused(db, f"SELECT pgmq.{function}('auth_user'::regclass{limit})", [])
    assert error.sqlstate == "42883"  # no such function: there is no table form any more
    error = refused(db, f"SELECT pgmq.{function}('auth_user', 'q'{limit})", [])
    assert error.sqlstate == "PQ002"
    error = refused(db, f"SELECT pgmq.{function}(%s, 'x'{limit})", [queue_name])
    assert error.sqlstate == "PQ004"
    assert db.execute(f"SELECT pgmq.{function}(%s, 'q'{limit})", [queue_name]).fetchone()
