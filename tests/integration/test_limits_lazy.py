"""max_in_flight slots free lazily: an acknowledgement writes no slot row, and takes the
same kept statement as a queue without attributes; a claim finds the slot of a message
that is gone by itself (sql/26_limits.sql), also behind older reads still in flight, and
its read of the quantity allowed is kept in the session too.
"""

from __future__ import annotations

import json

import psycopg
import pytest
from psycopg import sql

from tests.integration import test_limits

pytestmark = pytest.mark.usefixtures("django_db_setup")

READ = "SELECT msg_id FROM pgmq.read(queue_name => %s, vt => 300, qty => %s)"

q = test_limits.q  # the queue fixture (made and dropped by this module's db)


@pytest.fixture
def db(pg_connect) -> psycopg.Connection:
    return pg_connect()


def limit(db: psycopg.Connection, queue: str, n: int) -> None:
    db.execute(
        "SELECT pgmq.set_queue_attributes(%s, %s::jsonb)", [queue, json.dumps({"max_in_flight": n})]
    )


def fill(db: psycopg.Connection, queue: str, count: int) -> list[int]:
    cur = db.execute(
        "SELECT * FROM pgmq.send_batch(%s, array_fill('{}'::jsonb, ARRAY[%s]))", [queue, count]
    )
    return [r[0] for r in cur.fetchall()]


def read(db: psycopg.Connection, queue: str, qty: int) -> list[int]:
    return [r[0] for r in db.execute(READ, [queue, qty])]


def slot_versions(db: psycopg.Connection, queue: str) -> list[tuple]:
    return db.execute(
        "SELECT kind, slot, ctid::text, xmin::text FROM pgmq.queue_limit_slots"
        " WHERE queue_name = lower(%s) ORDER BY kind, slot",
        [queue],
    ).fetchall()


def in_flight(db: psycopg.Connection, queue: str) -> int:
    query = sql.SQL("SELECT count(*) FROM pgmq.{} WHERE read_ct > 0 AND vt > clock_timestamp()")
    row = db.execute(query.format(sql.Identifier(f"q_{queue}"))).fetchone()
    assert row is not None
    return row[0]


def test_an_acknowledgement_writes_no_slot_row(db, q):
    limit(db, q, 10)
    fill(db, q, 6)
    held = read(db, q, 6)
    before = slot_versions(db, q)
    db.execute("SELECT pgmq.archive(%s, %s::bigint[])", [q, held[:3]])
    db.execute("SELECT pgmq.delete(%s, %s::bigint[])", [q, held[3:5]])
    db.execute("SELECT * FROM pgmq.set_vt(%s, %s, 0)", [q, held[5]])  # a release
    assert slot_versions(db, q) == before
    assert db.execute("SELECT in_flight FROM pgmq.queue_limits(%s)", [q]).fetchone() == (0,)


def test_a_limited_queue_runs_kept_statements(pg_connect, db, q):
    limit(db, q, 100)
    session = pg_connect()
    for _ in range(5):
        ids = fill(db, q, 2)
        assert read(session, q, 2) == ids
        session.execute("SELECT pgmq.archive(%s, %s::bigint)", [q, ids[0]])
        session.execute("SELECT pgmq.delete(%s, %s::bigint)", [q, ids[1]])
    kept = {
        r[0]
        for r in session.execute(
            "SELECT name FROM pg_prepared_statements WHERE name LIKE 'pgmq\\_%%'"
        )
    }
    assert {f"pgmq_ag_q_{q}", f"pgmq_dg_q_{q}"} <= kept
    # max_in_flight alone, at READ COMMITTED: the read locks a window of slots (the short
    # claim), then runs the kept read that probes them, claims and records, kept as 'm'
    assert f"pgmq_rg_q_{q}" not in kept and f"pgmq_mg_q_{q}" in kept
    assert f"pgmq_lg_q_{q}" not in kept
    assert in_flight(db, q) == 0


def test_a_claim_reuses_the_slots_of_messages_acknowledged(db, q):
    limit(db, q, 4)
    fill(db, q, 40)
    for _ in range(10):
        got = read(db, q, 10)
        assert len(got) == 4 and in_flight(db, q) == 4
        db.execute("SELECT pgmq.delete(%s, %s::bigint[])", [q, got])
    rows = db.execute(
        "SELECT count(*) FROM pgmq.queue_limit_slots WHERE queue_name = lower(%s) AND kind = 'f'",
        [q],
    ).fetchone()
    assert rows == (4,)


def test_a_slot_behind_older_reads_in_flight_is_found_at_the_limit(db, q):
    limit(db, q, 5)
    fill(db, q, 10)
    older = read(db, q, 3)  # stay in flight
    newer = read(db, q, 2)  # the limit reached
    assert read(db, q, 5) == []
    db.execute("SELECT pgmq.archive(%s, %s::bigint[])", [q, newer])
    again = read(db, q, 5)
    assert len(again) == 2 and not set(again) & set(older)
    assert in_flight(db, q) == 5


def test_below_the_limit_claims_behind_older_reads_in_flight_get_new_slots(db, q):
    limit(db, q, 5000)
    fill(db, q, 1200)
    assert len(read(db, q, 1100)) == 1100  # older reads, in flight (slots made on demand)
    for _ in range(5):
        got = read(db, q, 10)
        assert len(got) == 10
        db.execute("SELECT pgmq.archive(%s, %s::bigint[])", [q, got])
    assert in_flight(db, q) == 1100
    made = db.execute(
        "SELECT slots_made FROM pgmq.queue_limit_state WHERE queue_name = lower(%s)", [q]
    ).fetchone()
    assert made is not None and made[0] <= 2 * 1100 + 1024
