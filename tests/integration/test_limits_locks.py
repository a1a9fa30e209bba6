"""max_in_flight and rate_limit without waiting, and without rights on the limit tables.

A claim takes one slot row (and one token row) per message, FOR UPDATE SKIP LOCKED
(sql/26_limits.sql), so a session idle in its transaction after a read holds only its
own rows: another reader of the queue gets the rest at once, or nothing, never a wait.
An acknowledgement touches no slot (a claim reuses a slot whose message is gone), and
notifies the queue's FREE channel, through an owner function, only when a claim found the
queue at its limit. The application role reads and
acknowledges a limited queue with no right on the limit tables, and cannot lift a limit
by calling those functions with arguments of its own.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator

import psycopg
import pytest
from psycopg import errors, sql
from psycopg.types.json import Jsonb

from tests.integration import test_limits

pytestmark = pytest.mark.usefixtures("django_db_setup")

READ = "SELECT msg_id FROM pgmq.read(queue_name => %s, vt => 300, qty => %s)"

q = test_limits.q  # the queue fixture (made and dropped by this module's db)


@pytest.fixture
def db(pg_connect) -> psycopg.Connection:
    return pg_connect()


def set_attributes(db: psycopg.Connection, queue: str, **attributes: object) -> None:
    db.execute("SELECT pgmq.set_queue_attributes(%s, %s::jsonb)", [queue, json.dumps(attributes)])


def fill(db: psycopg.Connection, queue: str, count: int) -> list[int]:
    cur = db.execute(
        "SELECT * FROM pgmq.send_batch(%s, %s)", [queue, [Jsonb({"n": n}) for n in range(count)]]
    )
    return [r[0] for r in cur.fetchall()]


def in_flight(db: psycopg.Connection, queue: str) -> int:
    query = sql.SQL("SELECT count(*) FROM pgmq.{} WHERE read_ct > 0 AND vt > clock_timestamp()")
    row = db.execute(query.format(sql.Identifier(f"q_{queue}"))).fetchone()
    assert row is not None
    return row[0]


def timed_read(conn: psycopg.Connection, queue: str, qty: int) -> tuple[list[int], float]:
    began = time.monotonic()
    ids = [r[0] for r in conn.execute(READ, [queue, qty])]
    return ids, time.monotonic() - began


def test_a_reader_idle_in_its_transaction_does_not_make_another_wait(pg_connect, db, q):
    set_attributes(db, q, max_in_flight=5, rate_limit={"count": 100, "seconds": 60})
    fill(db, q, 20)
    idle = pg_connect(autocommit=False)
    assert len(idle.execute(READ, [q, 2]).fetchall()) == 2  # holds 2 slots and 2 tokens, idle
    other = pg_connect()
    other.execute("SET statement_timeout = '5s'")
    got, took = timed_read(other, q, 10)
    assert len(got) == 3 and took < 1.0  # the rest, at once
    got, took = timed_read(other, q, 10)
    assert got == [] and took < 1.0  # at the limit (the idle session's 2 count)
    idle.rollback()  # its 2 slots free with its claim
    got, _ = timed_read(other, q, 10)
    assert len(got) == 2
    assert in_flight(db, q) == 5


def test_a_claim_goes_past_a_window_of_slots_another_session_holds(pg_connect, db, q):
    """A claim looks first at a window of the ring after its session's cursor (twice its
    quantity and 8 more slots, migration 0009); when another session holds every slot of
    that window, the claim goes on with the rest of the ring, at once."""
    set_attributes(db, q, max_in_flight=1000)
    fill(db, q, 100)
    idle = pg_connect(autocommit=False)
    assert len(idle.execute(READ, [q, 40]).fetchall()) == 40  # holds slots 1..40, idle
    other = pg_connect()
    other.execute("SET lock_timeout = '5s'")  # a wait would fail, not pass slowly
    # a new session's cursor is at slot 1: its window (slots 1..29) is all held
    got = [r[0] for r in other.execute(READ, [q, 10])]
    assert len(got) == 10
    idle.commit()
    assert in_flight(db, q) == 50
    got = [r[0] for r in other.execute(READ, [q, 10])]
    assert len(got) == 10 and in_flight(db, q) == 60


def test_a_read_of_any_quantity_from_a_limited_queue_gets_what_there_is(db, q):
    """The window of the ring is computed past the integer range when the quantity asked
    is near it: the read still returns every message the limit allows."""
    set_attributes(db, q, max_in_flight=1024)
    fill(db, q, 30)
    got = [r[0] for r in db.execute(READ, [q, 2_000_000_000])]
    assert len(got) == 30 and in_flight(db, q) == 30


def test_a_reader_idle_after_making_slots_leaves_others_what_there_is(pg_connect, db, q):
    # Slots past the first 1024 are made on demand, under the state row: a reader idle
    # after making some holds that row, and another reader gets what is free, at once.
    set_attributes(db, q, max_in_flight=3000)
    fill(db, q, 1200)
    idle = pg_connect(autocommit=False)
    assert len(idle.execute(READ, [q, 1100]).fetchall()) == 1100
    other = pg_connect()
    other.execute("SET statement_timeout = '5s'")
    got, took = timed_read(other, q, 10)
    assert got == [] and took < 1.0  # every free slot is the idle session's, or not yet made
    # Changing the limits meanwhile does not wait either: refused (55P03) within ~1 s.
    began = time.monotonic()
    with pytest.raises(errors.LockNotAvailable, match="retry"):
        set_attributes(other, q, max_in_flight=10)
    assert time.monotonic() - began < 4.0
    idle.commit()
    got, _ = timed_read(other, q, 200)
    assert len(got) == 100  # the rest of the queue, in the slots it made
    assert in_flight(db, q) == 1200


def test_an_acknowledgement_notifies_only_at_the_limit(pg_connect, db, q):
    set_attributes(db, q, max_in_flight=3)
    ids = fill(db, q, 10)
    listener = pg_connect()
    listener.execute(sql.SQL("LISTEN {}").format(sql.Identifier(f"pgmq.q_{q}.FREE")))
    db.execute(READ, [q, 1])
    db.execute("SELECT pgmq.archive(%s, %s::bigint)", [q, ids[0]])
    db.execute("SELECT pgmq.delete(%s, %s::bigint)", [q, ids[9]])  # never read: no slot
    assert list(listener.notifies(timeout=0.5)) == []  # below the limit: nobody waits
    held = [r[0] for r in db.execute(READ, [q, 5])]
    assert len(held) == 3  # at the limit now
    db.execute("SELECT pgmq.delete(%s, %s::bigint[])", [q, held[:2]])
    got = list(listener.notifies(timeout=5, stop_after=1))
    assert [n.channel for n in got] == [f"pgmq.q_{q}.FREE"]
    db.execute("SELECT pgmq.delete(%s, %s::bigint)", [q, held[2]])  # others were free already
    assert list(listener.notifies(timeout=0.5)) == []


def test_a_heartbeat_keeps_the_slot_after_the_first_vt_passes(db, q):
    set_attributes(db, q, max_in_flight=1)
    fill(db, q, 3)
    [held] = [r[0] for r in db.execute("SELECT msg_id FROM pgmq.read(%s, 1, 1)", [q])]
    db.execute("SELECT pgmq.set_vt(%s, %s, 30)", [q, held])  # a heartbeat
    time.sleep(1.2)  # the vt the slot was taken with passes
    assert db.execute(READ, [q, 5]).fetchall() == []
    assert in_flight(db, q) == 1
    db.execute("SELECT pgmq.archive(%s, %s::bigint)", [q, held])
    assert len(db.execute(READ, [q, 5]).fetchall()) == 1


@pytest.fixture
def app_role(db, q) -> Iterator[str]:
    """A role with what an application role keeps: EXECUTE on the functions, SELECT on
    pgmq's tables, and write rights on this queue's own tables only."""
    role = f"pgmq_limits_app_{uuid.uuid4().hex[:8]}"
    db.execute(sql.SQL("CREATE ROLE {}").format(sql.Identifier(role)))
    for grant in (
        "GRANT USAGE ON SCHEMA pgmq TO {r}",
        "GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA pgmq TO {r}",
        "GRANT SELECT ON ALL TABLES IN SCHEMA pgmq TO {r}",
        "GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA pgmq TO {r}",
        "GRANT INSERT, UPDATE, DELETE ON pgmq.{qt}, pgmq.{at} TO {r}",
    ):
        db.execute(
            sql.SQL(grant).format(
                r=sql.Identifier(role), qt=sql.Identifier(f"q_{q}"), at=sql.Identifier(f"a_{q}")
            )
        )
    yield role
    db.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
    db.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


def test_the_application_role_needs_no_right_on_the_limit_tables(pg_connect, db, q, app_role):
    set_attributes(db, q, max_in_flight=2, rate_limit={"count": 50, "seconds": 60})
    ids = fill(db, q, 10)
    app = pg_connect()
    app.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(app_role)))
    held = [r[0] for r in app.execute(READ, [q, 5])]
    assert len(held) == 2 and app.execute(READ, [q, 5]).fetchall() == []
    app.execute("SELECT pgmq.archive(%s, %s::bigint)", [q, held[0]])
    app.execute("SELECT pgmq.set_vt(%s, %s, 0)", [q, held[1]])  # released
    again = [r[0] for r in app.execute(READ, [q, 5])]
    assert len(again) == 2
    counts = db.execute("SELECT in_flight, handed_out FROM pgmq.queue_limits(%s)", [q]).fetchone()
    assert counts == (2, 4)
    # The limit tables themselves are out of its reach...
    for statement in (
        "UPDATE pgmq.queue_limit_state SET max_in_flight = 1000",
        "DELETE FROM pgmq.queue_limit_slots",
    ):
        with pytest.raises(errors.InsufficientPrivilege):
            app.execute(statement)
    # ...and the owner functions free or fill nothing on made-up arguments: a message
    # still in flight keeps its slot; a record needs free rows this claim took.
    app.execute("SELECT pgmq._limit_wake(lower(%s))", [q])
    app.execute(
        "SELECT pgmq._claim_record(%s, ARRAY['(0,1)', '(0,2)']::tid[], NULL, NULL, %s)",
        [q, again],
    )
    assert app.execute(READ, [q, 5]).fetchall() == []
    assert in_flight(db, q) == 2
    del ids


def test_a_message_the_worker_dead_letters_frees_its_slot_at_once(db, q):
    set_attributes(db, q, max_in_flight=1)
    fill(db, q, 3)
    [held] = [r[0] for r in db.execute(READ, [q, 5])]
    assert db.execute(READ, [q, 5]).fetchall() == []
    dlq = f"{q}_dlq"
    try:
        db.execute("SELECT pgmq._dead_letter(%s, %s, %s, 'boom')", [q, held, dlq])
        assert len(db.execute(READ, [q, 5]).fetchall()) == 1  # not after its vt: now
    finally:
        db.execute("SELECT pgmq.drop_queue(%s)", [dlq])
