"""max_in_flight and rate_limit, in SQL, from many sessions at once.

Each session is its own psycopg connection, as separate workers would be. The claims of a
limited queue are serialized on its state row (sql/26_limits.sql), so however many
sessions read at once, at READ COMMITTED or REPEATABLE READ, no more than the limit is
handed out; the rate limit is measured on the rows' own last_read_at.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from datetime import timedelta

import psycopg
import pytest
from psycopg import errors, sql
from psycopg.types.json import Jsonb

pytestmark = pytest.mark.usefixtures("django_db_setup")

READ = "SELECT msg_id FROM pgmq.read(queue_name => %s, vt => 300, qty => %s)"


@pytest.fixture
def db(pg_connect) -> psycopg.Connection:
    conn = pg_connect()
    conn.execute("SET lock_timeout = '20s'")
    return conn


@pytest.fixture
def q(db, queue_name) -> Iterator[str]:
    db.execute("SELECT pgmq.create(queue_name => %s)", [queue_name])
    yield queue_name
    db.execute("SELECT pgmq.drop_queue(queue_name => %s)", [queue_name])


def set_attributes(db: psycopg.Connection, queue: str, **attributes: object) -> dict:
    row = db.execute(
        "SELECT pgmq.set_queue_attributes(%s, %s::jsonb)", [queue, json.dumps(attributes)]
    ).fetchone()
    assert row is not None
    return row[0]


def fill(db: psycopg.Connection, queue: str, count: int, headers: list | None = None) -> list[int]:
    msgs = [Jsonb({"n": n}) for n in range(count)]
    cur = db.execute(
        "SELECT * FROM pgmq.send_batch(queue_name => %s, msgs => %s, headers => %s)",
        [queue, msgs, [Jsonb(h) for h in headers] if headers else None],
    )
    return [r[0] for r in cur.fetchall()]


def in_flight(db: psycopg.Connection, queue: str) -> int:
    """Messages read and still hidden, counted from the queue's table."""
    query = sql.SQL("SELECT count(*) FROM pgmq.{} WHERE read_ct > 0 AND vt > clock_timestamp()")
    row = db.execute(query.format(sql.Identifier(f"q_{queue}"))).fetchone()
    assert row is not None
    return row[0]


def at_barrier(
    pg_connect: Callable[..., psycopg.Connection],
    sessions: int,
    claim: Callable[[psycopg.Connection], list[int]],
    isolation: str = "READ COMMITTED",
) -> list[list[int]]:
    """Run `claim` once in each of `sessions` sessions released together; what each got.

    At REPEATABLE READ a claim refused with a serialization error is retried in a new
    transaction, as a client must.
    """
    conns = [pg_connect(autocommit=False) for _ in range(sessions)]
    got: list[list[int]] = [[] for _ in range(sessions)]
    errors_: list[BaseException] = []
    barrier = threading.Barrier(sessions)

    def run(i: int) -> None:
        conn = conns[i]
        try:
            conn.execute(f"SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL {isolation}")
            conn.execute("SET lock_timeout = '20s'")
            conn.commit()
            barrier.wait()
            for _ in range(50):
                try:
                    got[i] = claim(conn)
                    conn.commit()
                    return
                except errors.SerializationFailure:
                    conn.rollback()
            raise AssertionError("50 serialization failures in a row")
        except BaseException as exc:
            errors_.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(sessions)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors_, errors_
    return got


def reader(queue: str, qty: int = 10) -> Callable[[psycopg.Connection], list[int]]:
    return lambda conn: [r[0] for r in conn.execute(READ, [queue, qty])]


@pytest.mark.parametrize("isolation", ["READ COMMITTED", "REPEATABLE READ"])
def test_eight_sessions_hold_exactly_max_in_flight_and_archives_free_exactly_as_many(
    pg_connect, db, q, isolation
):
    set_attributes(db, q, max_in_flight=5)
    fill(db, q, 200)
    got = at_barrier(pg_connect, 8, reader(q), isolation)
    held = [i for batch in got for i in batch]
    assert len(held) == len(set(held)) == 5
    assert in_flight(db, q) == 5
    assert db.execute(READ, [q, 10]).fetchall() == []

    db.execute("SELECT pgmq.archive(queue_name => %s, msg_ids => %s)", [q, held[:2]])
    again = at_barrier(pg_connect, 8, reader(q), isolation)
    more = [i for batch in again for i in batch]
    assert len(more) == 2 and not set(more) & set(held)
    assert in_flight(db, q) == 5


def test_a_message_whose_vt_passes_or_is_released_frees_its_slot(db, q):
    set_attributes(db, q, max_in_flight=2)
    fill(db, q, 10)
    [a] = [r[0] for r in db.execute("SELECT msg_id FROM pgmq.read(%s, 1, 1)", [q])]
    [b] = [r[0] for r in db.execute(READ, [q, 5])]
    assert db.execute(READ, [q, 5]).fetchall() == []
    db.execute("SELECT pgmq.set_vt(%s, %s, 0)", [q, b])  # released
    assert len(db.execute(READ, [q, 5]).fetchall()) == 1
    time.sleep(1.1)  # a's vt passes: a crashed consumer's slot frees by itself
    assert len(db.execute(READ, [q, 5]).fetchall()) == 1
    assert db.execute(READ, [q, 5]).fetchall() == []
    del a


def test_messages_in_flight_before_the_limit_was_set_count(db, q):
    fill(db, q, 10)
    db.execute(READ, [q, 4])
    set_attributes(db, q, max_in_flight=5)
    assert len(db.execute(READ, [q, 10]).fetchall()) == 1


def test_pop_is_not_limited_by_max_in_flight_but_by_the_rate(db, q):
    set_attributes(db, q, max_in_flight=1)
    fill(db, q, 30)
    db.execute(READ, [q, 1])
    assert len(db.execute("SELECT * FROM pgmq.pop(%s, 5)", [q]).fetchall()) == 5
    set_attributes(db, q, rate_limit={"count": 3, "seconds": 60})
    assert len(db.execute("SELECT * FROM pgmq.pop(%s, 5)", [q]).fetchall()) == 3
    assert db.execute("SELECT * FROM pgmq.pop(%s, 5)", [q]).fetchall() == []


def test_a_rate_limit_of_10_per_2s_holds_in_every_window_over_a_10s_hammer(pg_connect, db, q):
    set_attributes(db, q, rate_limit={"count": 10, "seconds": 2})
    fill(db, q, 2000)
    stop = time.monotonic() + 10
    errors_: list[BaseException] = []

    def hammer() -> None:
        conn = pg_connect()
        try:
            while time.monotonic() < stop:
                ids = [r[0] for r in conn.execute("SELECT msg_id FROM pgmq.read(%s, 600, 3)", [q])]
                if not ids:
                    time.sleep(0.005)
        except BaseException as exc:
            errors_.append(exc)

    threads = [threading.Thread(target=hammer) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors_, errors_
    query = sql.SQL("SELECT last_read_at FROM pgmq.{} WHERE read_ct > 0 ORDER BY last_read_at")
    stamps = [r[0] for r in db.execute(query.format(sql.Identifier(f"q_{q}")))]
    assert len(stamps) >= 40  # it did hand out, window after window
    window = timedelta(seconds=2)
    # Every window that starts at a hand-out (the fullest ones) holds at most 10.
    for i, start in enumerate(stamps):
        inside = sum(1 for s in stamps[i:] if s < start + window)
        assert inside <= 10, (start, inside)


def test_limits_changed_and_removed_while_readers_run(pg_connect, db, q):
    set_attributes(db, q, max_in_flight=3)
    fill(db, q, 300)
    stop = threading.Event()
    errors_: list[BaseException] = []

    def work() -> None:
        conn = pg_connect()
        try:
            while not stop.is_set():
                ids = [r[0] for r in conn.execute(READ, [q, 2])]
                if ids:
                    time.sleep(0.01)
                    conn.execute("SELECT pgmq.archive(%s, %s)", [q, ids])
        except BaseException as exc:
            errors_.append(exc)

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    try:
        peak = 0
        for _ in range(30):
            peak = max(peak, in_flight(db, q))
            time.sleep(0.01)
        assert peak <= 3
        set_attributes(db, q, max_in_flight=1)
        time.sleep(0.1)  # reads that began under 3 end
        for _ in range(30):
            assert in_flight(db, q) <= 1
            time.sleep(0.01)
        set_attributes(db, q, max_in_flight=None)
        assert db.execute("SELECT count(*) FROM pgmq.queue_limits(%s)", [q]).fetchone() == (0,)
        seen = 0
        for _ in range(100):
            seen = max(seen, in_flight(db, q))
            time.sleep(0.01)
        assert seen > 1  # unlimited again
    finally:
        stop.set()
        for t in threads:
            t.join(30)
    assert not errors_, errors_


def test_bad_values_are_refused_naming_the_key(db, q):
    for attributes, key in [
        ({"max_in_flight": 0}, "max_in_flight"),
        ({"max_in_flight": "5"}, "max_in_flight"),
        ({"rate_limit": 10}, "rate_limit"),
        ({"rate_limit": {"count": 0, "seconds": 1}}, "rate_limit"),
        ({"rate_limit": {"count": 5, "seconds": 0}}, "rate_limit"),
        ({"rate_limit": {"count": 5}}, "rate_limit"),
        ({"rate_limit": {"count": 5, "seconds": 1, "burst": 2}}, "rate_limit"),
        ({"rate_limit": {"count": 5, "seconds": "1"}}, "rate_limit"),
        ({"rate_limit": {"count": "5", "seconds": 1}}, "rate_limit"),
        ({"rate_limit": "10/2s"}, "rate_limit"),
        ({"rate_limit": [10, 2]}, "rate_limit"),
    ]:
        with pytest.raises(psycopg.Error, match=f'"{key}"'):
            set_attributes(db, q, **attributes)
    assert db.execute("SELECT pgmq.get_queue_attributes(%s)", [q]).fetchone() == ({},)


def test_queue_limits_show_the_limits_and_the_counts(db, q):
    set_attributes(db, q, max_in_flight=4, rate_limit={"count": 3, "seconds": 30})
    fill(db, q, 10)
    db.execute(READ, [q, 2])
    db.execute(READ, [q, 5])
    row = db.execute(
        "SELECT queue_name, max_in_flight, in_flight, rate_count, rate_seconds, handed_out, "
        "next_free_at IS NOT NULL FROM pgmq.queue_limits(%s)",
        [q],
    ).fetchone()
    assert row == (q, 4, 3, 3, 30.0, 3, True)


def test_each_reader_honours_the_limits(db, q):
    """read_with_poll, the FIFO readers, the Tasks priority read and the Spark claim."""
    set_attributes(db, q, max_in_flight=2)
    fill(db, q, 20, headers=[{"x-pgmq-group": f"g{n % 4}"} for n in range(20)])
    got = db.execute("SELECT * FROM pgmq.read_with_poll(%s, 300, 10, 1, 10)", [q]).fetchall()
    assert len(got) == 2
    for reader_ in ("read_grouped", "read_grouped_rr", "read_grouped_head", "_read_by_priority"):
        assert db.execute(f"SELECT * FROM pgmq.{reader_}(%s, 300, 10)", [q]).fetchall() == []
    assert db.execute("SELECT pgmq.spark_claim(%s, 'c', 300, 10, NULL, NULL)", [q]).fetchone() == (
        None,
    )
    db.execute("SELECT pgmq.delete(%s, %s)", [q, [r[0] for r in got]])
    for reader_ in ("read_grouped", "read_grouped_rr", "read_grouped_head", "_read_by_priority"):
        got = db.execute(f"SELECT msg_id FROM pgmq.{reader_}(%s, 300, 10)", [q]).fetchall()
        assert len(got) == 2, reader_
        db.execute("SELECT pgmq.delete(%s, %s)", [q, [r[0] for r in got]])
    assert db.execute("SELECT pgmq.spark_claim(%s, 'c', 300, 10, NULL, NULL)", [q]).fetchone()[0]
    assert in_flight(db, q) == 2
    assert db.execute(READ, [q, 10]).fetchall() == []


def test_a_queue_without_limits_has_no_state_and_takes_no_lock(db, q):
    fill(db, q, 3)
    set_attributes(db, q, priorities=True)
    assert db.execute("SELECT count(*) FROM pgmq.queue_limit_state").fetchone() == (0,)
    assert len(db.execute(READ, [q, 10]).fetchall()) == 3


def test_archive_of_a_limited_queue_notifies_that_a_slot_freed(pg_connect, db, q):
    set_attributes(db, q, max_in_flight=1)
    [msg_id, _] = fill(db, q, 2)
    listener = pg_connect()
    listener.execute(sql.SQL("LISTEN {}").format(sql.Identifier(f"pgmq.q_{q}.FREE")))
    db.execute(READ, [q, 1])
    assert db.execute(READ, [q, 1]).fetchall() == []  # a reader waits at the limit
    db.execute("SELECT pgmq.archive(%s, %s::bigint)", [q, msg_id])
    got = list(listener.notifies(timeout=5, stop_after=1))
    assert [n.channel for n in got] == [f"pgmq.q_{q}.FREE"]


def test_a_repeatable_read_claim_with_a_stale_snapshot_is_refused_not_counted_wrong(
    pg_connect, db, q
):
    set_attributes(db, q, max_in_flight=3)
    fill(db, q, 10)
    old = pg_connect(autocommit=False)
    old.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
    old.execute("SELECT 1")  # its snapshot: nothing in flight yet
    assert len(db.execute(READ, [q, 3]).fetchall()) == 3  # another session fills the limit
    with pytest.raises(errors.SerializationFailure):
        old.execute(READ, [q, 3])
    old.rollback()
    old.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
    assert old.execute(READ, [q, 3]).fetchall() == []  # a fresh snapshot sees the limit
    old.rollback()
