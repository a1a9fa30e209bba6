"""Concurrent consumers and creators, each on its own psycopg connection."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
from psycopg.types.json import Jsonb

pytestmark = pytest.mark.usefixtures("django_db_setup")

READ = "SELECT msg_id FROM pgmq.read(queue_name => %s, vt => 300, qty => %s)"
POP = "SELECT msg_id FROM pgmq.pop(queue_name => %s, qty => %s)"


@pytest.fixture
def db(pg_connect) -> psycopg.Connection:
    conn = pg_connect()
    conn.execute("SET lock_timeout = '20s'")  # a broken test fails instead of hanging
    return conn


@pytest.fixture
def q(db, queue_name) -> Iterator[str]:
    db.execute("SELECT pgmq.create(queue_name => %s)", [queue_name])
    yield queue_name
    db.execute("SELECT pgmq.drop_queue(queue_name => %s)", [queue_name])


def fill(db: psycopg.Connection, queue: str, count: int) -> list[int]:
    """Send `count` messages in one batch; their ids as the database assigned them."""
    msgs = [Jsonb({"n": n}) for n in range(count)]
    cur = db.execute("SELECT * FROM pgmq.send_batch(queue_name => %s, msgs => %s)", [queue, msgs])
    return [r[0] for r in cur.fetchall()]


def run_consumers(
    pg_connect: Callable[..., psycopg.Connection],
    query: str,
    queue: str,
    workers: int,
    qty: int,
    sent: int,
) -> list[list[list[int]]]:
    """Run `workers` threads that repeat `query` until it returns nothing; each one's batches.

    A worker also stops once it got more rows than were sent (so duplicates), so a
    broken claim fails the test instead of looping forever.
    """
    conns = [pg_connect() for _ in range(workers)]
    batches: list[list[list[int]]] = [[] for _ in range(workers)]
    errors: list[BaseException] = []
    start = threading.Barrier(workers)

    def consume(i: int) -> None:
        try:
            start.wait()
            received = 0
            while received <= sent and (
                got := [r[0] for r in conns[i].execute(query, [queue, qty]).fetchall()]
            ):
                batches[i].append(got)
                received += len(got)
        except BaseException as exc:  # surfaced in the test thread below
            errors.append(exc)

    threads = [threading.Thread(target=consume, args=(i,)) for i in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert errors == []
    assert not any(t.is_alive() for t in threads)
    return batches


def flat(batches: list[list[int]]) -> list[int]:
    return [i for batch in batches for i in batch]


@pytest.mark.parametrize("query", [READ, POP], ids=["read", "pop"])
def test_concurrent_consumers_never_get_the_same_message(db, pg_connect, q, query):
    ids = fill(db, q, 2000)
    per_worker = [
        flat(b) for b in run_consumers(pg_connect, query, q, workers=4, qty=25, sent=len(ids))
    ]
    everything = [i for got in per_worker for i in got]
    assert len(everything) == len(set(everything))  # no message twice, within or across workers
    assert sorted(everything) == ids  # and none lost
    for a in range(4):
        for b in range(a + 1, 4):
            assert set(per_worker[a]).isdisjoint(per_worker[b])


def test_two_concurrent_readers_each_see_fifo_order(db, pg_connect, q):
    ids = fill(db, q, 1000)
    readers = run_consumers(pg_connect, READ, q, workers=2, qty=10, sent=len(ids))
    for batches in readers:
        for batch in batches:
            assert batch == sorted(batch)
        got = flat(batches)
        assert got == sorted(got)  # later batches never go back to older messages
    assert sorted(flat(readers[0]) + flat(readers[1])) == ids


def test_a_reader_skips_rows_another_transaction_holds(db, pg_connect, q):
    ids = fill(db, q, 30)
    holder = pg_connect(autocommit=False)
    try:
        held = [r[0] for r in holder.execute(READ, [q, 10]).fetchall()]  # locked, uncommitted
        assert held == ids[:10]
        other = pg_connect()
        other.execute("SET lock_timeout = '5s'")  # a blocked read would fail, not hang
        assert [r[0] for r in other.execute(READ, [q, 10]).fetchall()] == ids[10:20]
    finally:
        holder.rollback()  # the claim is undone: those messages are visible again
    again = other.execute(
        "SELECT msg_id, read_ct FROM pgmq.read(queue_name => %s, vt => 300, qty => 30)", [q]
    ).fetchall()
    assert again == [(i, 1) for i in ids[:10]] + [(i, 1) for i in ids[20:]]


def wait_until_blocked(db: psycopg.Connection, pid: int) -> None:
    """Wait until backend `pid` waits on a lock (it is then inside the code under test)."""
    for _ in range(500):
        state = db.execute(
            "SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", [pid]
        ).fetchone()
        if state and state[0] == "Lock":
            return
        time.sleep(0.01)
    raise AssertionError(f"backend {pid} never waited on a lock")


def in_thread(conn: psycopg.Connection, query: str, params: Any) -> tuple[threading.Thread, dict]:
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["rows"] = conn.execute(query, params).fetchall()
        except psycopg.Error as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


@pytest.mark.parametrize("second", ["same", "other-case"])
def test_racing_creates_of_one_table_are_serialised(db, pg_connect, queue_name, second):
    first_name = queue_name.upper()
    second_name = first_name if second == "same" else queue_name
    first = pg_connect(autocommit=False)
    first.execute("SELECT pgmq.create(queue_name => %s)", [first_name])  # holds the queue lock
    racer = pg_connect()
    thread, outcome = in_thread(racer, "SELECT pgmq.create(queue_name => %s)", [second_name])
    try:
        wait_until_blocked(db, racer.info.backend_pid)
        first.commit()
        thread.join(timeout=30)
        assert not thread.is_alive()
        if second == "same":
            assert "error" not in outcome
        else:
            assert outcome["error"].sqlstate == "PQ003"
        assert db.execute(
            "SELECT queue_name FROM pgmq.meta WHERE lower(queue_name) = %s", [queue_name]
        ).fetchall() == [(first_name,)]
    finally:
        first.rollback()
        thread.join(timeout=30)
        db.execute("SELECT pgmq.drop_queue(queue_name => %s)", [first_name])
