"""Workflow fan-in under concurrency: sessions at a barrier acknowledge steps, each on its own
psycopg connection; the step after them is sent exactly once, whatever the interleaving."""

from __future__ import annotations

import contextlib
import threading
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
from psycopg.types.json import Jsonb

pytestmark = pytest.mark.usefixtures("django_db_setup")

SESSIONS = 8


@pytest.fixture
def db(pg_connect) -> psycopg.Connection:
    conn = pg_connect()
    conn.execute("SET lock_timeout = '30s'")
    return conn


@pytest.fixture
def queues(db) -> Iterator[Callable[..., list[str]]]:
    made: list[str] = []

    def make(n: int, attributes: dict[str, Any] | None = None) -> list[str]:
        names = [f"wc_{uuid.uuid4().hex[:12]}" for _ in range(n)]
        for name in names:
            db.execute("SELECT pgmq.create(%s)", [name])
            if attributes:
                db.execute("SELECT pgmq.set_queue_attributes(%s, %s)", [name, Jsonb(attributes)])
        made.extend(names)
        return names

    yield make
    for name in made:
        db.execute("SELECT pgmq.drop_queue(%s)", [name])


def chord_spec(queue: str, callback_queue: str, parents: int) -> list[dict[str, Any]]:
    names = [f"p{i}" for i in range(parents)]
    return [{"step": n, "queue": queue, "message": {"n": n}} for n in names] + [
        {"step": "cb", "queue": callback_queue, "message": {}, "after": names}
    ]


def create(db: psycopg.Connection, steps: list[dict[str, Any]], on_failure: str = "cancel") -> int:
    query = "SELECT pgmq.create_workflow(%s, %s)"
    return db.execute(query, [Jsonb(steps), on_failure]).fetchone()[0]


def statuses(db: psycopg.Connection, wid: int) -> dict[str, str]:
    rows = db.execute("SELECT step, status FROM pgmq.workflow_status(%s)", [wid]).fetchall()
    return dict(rows)


def all_ids(db: psycopg.Connection, queue: str) -> list[int]:
    return [r[0] for r in db.execute(f"SELECT msg_id FROM pgmq.q_{queue} ORDER BY msg_id")]


# The forms of acknowledgement, taken in turn: (statement, whether it takes an array).
ACKS = [
    ("SELECT pgmq.archive(%s, %s::bigint[])", True),
    ("SELECT pgmq.delete(%s, %s::bigint)", False),
    ("SELECT pgmq.delete(%s, %s::bigint[])", True),
    ("SELECT pgmq.complete(%s, %s::bigint, '{\"ok\": true}'::jsonb)", False),
    ("SELECT pgmq.archive(%s, %s::bigint)", False),
]


def acknowledge(conn: psycopg.Connection, queue: str, ids: list[int], form: int) -> None:
    """Acknowledge ``ids`` with form ``form`` of `ACKS` (arrays of up to 10 ids)."""
    statement, array = ACKS[form % len(ACKS)]
    if array:
        for start in range(0, len(ids), 10):
            conn.execute(statement, [queue, ids[start : start + 10]])
    else:
        for msg_id in ids:
            conn.execute(statement, [queue, msg_id])


def at_barrier(
    pg_connect: Callable[..., psycopg.Connection],
    work: list[Callable[[psycopg.Connection], None]],
    **connect: Any,
) -> list[BaseException]:
    """Run each of ``work`` on its own connection, all released together; their errors."""
    conns = [pg_connect(**connect) for _ in work]
    for conn in conns:
        conn.execute("SET lock_timeout = '30s'")
        if not conn.autocommit:
            conn.commit()
    barrier = threading.Barrier(len(work))
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            barrier.wait()
            work[i](conns[i])
        except BaseException as exc:  # surfaced to the test
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(work))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in threads)
    return errors


def shares(ids: list[int], n: int) -> list[list[int]]:
    return [ids[i::n] for i in range(n)]


@pytest.mark.parametrize("parents", [2, 100, 9_999])
def test_fan_in_acknowledged_from_eight_sessions_sends_the_callback_once(
    db, queues, pg_connect, parents
) -> None:
    q, cb = queues(2)
    wid = create(db, chord_spec(q, cb, parents))  # 9,999 parents + the callback: 10,000 steps
    ids = all_ids(db, q)
    assert len(ids) == parents
    work = [
        (lambda conn, part=part, i=i: acknowledge(conn, q, part, i))
        for i, part in enumerate(shares(ids, SESSIONS))
    ]
    assert at_barrier(pg_connect, work) == []
    assert all_ids(db, q) == []
    (callback,) = db.execute(f"SELECT headers FROM pgmq.q_{cb}").fetchall()
    results = callback[0]["workflow"]["results"]
    assert len(results) == parents
    assert all(r in (None, {"ok": True}) for r in results.values())
    seen = statuses(db, wid)
    assert seen.pop("cb") == "sent"
    assert set(seen.values()) == {"done"}


def test_rolled_back_acknowledgements_count_for_nothing(db, queues, pg_connect) -> None:
    q, cb = queues(2)
    wid = create(db, chord_spec(q, cb, 40))
    ids = all_ids(db, q)
    kept, undone = ids[:30], ids[30:]

    def ack_then_roll_back(part: list[int], form: int) -> Callable[[psycopg.Connection], None]:
        def run(conn: psycopg.Connection) -> None:
            acknowledge(conn, q, part, form)
            conn.rollback()

        return run

    def ack(part: list[int], form: int) -> Callable[[psycopg.Connection], None]:
        def run(conn: psycopg.Connection) -> None:
            acknowledge(conn, q, part, form)
            conn.commit()

        return run

    work = [ack(p, i) for i, p in enumerate(shares(kept, 4))]
    work += [ack_then_roll_back(p, i) for i, p in enumerate(shares(undone, 4))]
    assert at_barrier(pg_connect, work, autocommit=False) == []
    assert all_ids(db, q) == undone
    assert all_ids(db, cb) == []
    assert list(statuses(db, wid).values()).count("sent") == 10
    acknowledge(db, q, undone, 0)
    assert len(all_ids(db, cb)) == 1


def test_a_step_redelivered_after_its_vt_and_acknowledged_by_two_consumers(
    db, queues, pg_connect
) -> None:
    q, cb = queues(2)
    wid = create(
        db,
        [
            {"step": "a", "queue": q, "message": {}},
            {"step": "b", "queue": cb, "message": {}, "after": ["a"]},
        ],
    )
    first, second = pg_connect(), pg_connect()
    (got1,) = first.execute("SELECT msg_id FROM pgmq.read(%s, 0, 1)", [q]).fetchall()
    (got2,) = second.execute("SELECT msg_id FROM pgmq.read(%s, 0, 1)", [q]).fetchall()
    assert got1 == got2  # the vt ran out: delivered again
    outcomes: list[Any] = []
    forms = ["SELECT pgmq.archive(%s, %s::bigint)", "SELECT pgmq.complete(%s, %s, '1')"]
    work = [
        (lambda conn, f=f: outcomes.append(conn.execute(f, [q, got1[0]]).fetchone()[0]))
        for f in forms
    ]
    assert at_barrier(pg_connect, work) == []
    assert sorted(outcomes) == [False, True]
    assert len(all_ids(db, cb)) == 1
    assert statuses(db, wid) == {"a": "done", "b": "sent"}


@pytest.mark.parametrize("policy", ["cancel", "continue"])
def test_a_dead_lettered_step_fails_under_both_policies(db, queues, policy) -> None:
    (dlq,) = queues(1)
    q, cb = queues(2, {"max_receive_count": 1, "dead_letter_queue": dlq})
    wid = create(db, chord_spec(q, cb, 3), policy)
    ids = all_ids(db, q)
    db.execute("SELECT * FROM pgmq.read(%s, 0, 1)", [q])  # p0 read once, visible again
    acknowledge(db, q, ids[1:], 0)
    # the next read moves p0 (read max_receive_count times) to the dead-letter queue
    assert db.execute("SELECT * FROM pgmq.read(%s, 30, 10)", [q]).fetchall() == []
    assert len(all_ids(db, dlq)) == 1
    (error,) = db.execute(
        "SELECT error FROM pgmq.workflow_status(%s) WHERE step = 'p0'", [wid]
    ).fetchone()
    assert error["dead_letter_queue"] == dlq
    seen = statuses(db, wid)
    assert seen["p0"] == "failed"
    if policy == "cancel":
        assert seen["cb"] == "cancelled" and all_ids(db, cb) == []
    else:
        assert seen["cb"] == "sent"
        (headers,) = db.execute(f"SELECT headers FROM pgmq.q_{cb}").fetchone()
        assert headers["workflow"]["results"]["p0"] == {"error": error}
    # redriving the dead letter back does not finish the failed step
    db.execute("SELECT pgmq.redrive(%s)", [dlq])
    acknowledge(db, q, all_ids(db, q), 1)
    assert statuses(db, wid)["p0"] == "failed"


def test_cancel_while_steps_are_in_flight(db, queues, pg_connect) -> None:
    q, cb = queues(2)
    wid = create(
        db,
        [
            *chord_spec(q, cb, 200),
            {"step": "after_cb", "queue": cb, "message": {}, "after": ["cb"]},
        ],
    )
    ids = all_ids(db, q)
    cancelled: list[int] = []
    work: list[Callable[[psycopg.Connection], None]] = [
        (lambda conn, part=part, i=i: acknowledge(conn, q, part, i))
        for i, part in enumerate(shares(ids, SESSIONS - 1))
    ]
    work.append(
        lambda conn: cancelled.append(
            conn.execute("SELECT pgmq.cancel_workflow(%s)", [wid]).fetchone()[0]
        )
    )
    assert at_barrier(pg_connect, work) == []
    seen = statuses(db, wid)
    assert set(seen.values()) <= {"done", "cancelled"}
    assert seen["after_cb"] == "cancelled"
    assert list(seen.values()).count("cancelled") == cancelled[0]
    assert all_ids(db, q) == [] and all_ids(db, cb) == []  # no message of it is left


def test_repeatable_read_acknowledgements_retry_and_send_once(db, queues, pg_connect) -> None:
    q, cb = queues(2)
    create(db, chord_spec(q, cb, 64))
    ids = all_ids(db, q)
    retries: list[int] = []

    def ack_retrying(part: list[int]) -> Callable[[psycopg.Connection], None]:
        def run(conn: psycopg.Connection) -> None:
            for msg_id in part:
                while True:
                    try:
                        conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
                        conn.execute("SELECT pgmq.delete(%s, %s::bigint)", [q, msg_id])
                        conn.execute("COMMIT")
                        break
                    except psycopg.errors.SerializationFailure:
                        conn.execute("ROLLBACK")
                        retries.append(msg_id)

        return run

    assert at_barrier(pg_connect, [ack_retrying(p) for p in shares(ids, SESSIONS)]) == []
    assert all_ids(db, q) == []
    assert len(all_ids(db, cb)) == 1


def test_the_last_parent_sends_every_parents_result_even_one_committed_while_it_waited(
    db, queues, pg_connect
) -> None:
    """The two parents of a step completed at once under READ COMMITTED: the second waits
    for the first on the step's row, and its results must hold the first's result, which
    committed after the second's countdown statement took its snapshot."""
    q, cbq = queues(2)
    wid = create(db, chord_spec(q, cbq, 2))
    names = dict(db.execute(f"SELECT msg_id, message ->> 'n' FROM pgmq.q_{q}").fetchall())
    first_id, second_id = all_ids(db, q)
    first = pg_connect()
    first.execute("BEGIN")
    first.execute("SELECT pgmq.complete(%s, %s::bigint, '{\"r\": 1}'::jsonb)", [q, first_id])
    second = pg_connect()
    [[pid]] = second.execute("SELECT pg_backend_pid()").fetchall()
    errors: list[BaseException] = []

    def run() -> None:
        try:
            second.execute(
                "SELECT pgmq.complete(%s, %s::bigint, '{\"r\": 2}'::jsonb)", [q, second_id]
            )
        except BaseException as exc:
            errors.append(exc)

    waiter = threading.Thread(target=run)
    waiter.start()
    for _ in range(3000):
        [[blocked]] = db.execute("SELECT cardinality(pg_blocking_pids(%s)) > 0", [pid]).fetchall()
        if blocked:
            break
        threading.Event().wait(0.01)
    assert blocked, "the second acknowledgement never waited for the first"
    first.execute("COMMIT")
    waiter.join(60)
    assert not errors, errors
    [[headers]] = db.execute(f"SELECT headers FROM pgmq.q_{cbq}").fetchall()
    assert headers["workflow"]["results"] == {names[first_id]: {"r": 1}, names[second_id]: {"r": 2}}
    assert statuses(db, wid)["cb"] == "sent"


@pytest.mark.parametrize("isolation", ["READ COMMITTED", "REPEATABLE READ"])
def test_chains_acknowledged_twice_at_once_send_each_next_step_once(
    db, queues, pg_connect, isolation
) -> None:
    """A chain's next step is marked sent, takes its msg_id from its queue's sequence and
    is inserted by the acknowledgement's trigger (migration 0009): 40 chains whose first
    messages are each acknowledged by two sessions at once (every form, some rolled back
    first) send each next step once, with the msg_id its step records."""
    q, nq = queues(2)
    wids = [
        create(
            db,
            [
                {"step": "a", "queue": q, "message": {"k": k}},
                {"step": "b", "queue": nq, "message": {"k": k}, "after": ["a"]},
            ],
        )
        for k in range(40)
    ]
    ids = all_ids(db, q)

    def ack(part: list[int], form: int, roll_back_first: bool) -> Callable[..., None]:
        def run(conn: psycopg.Connection) -> None:
            for msg_id in part:
                if roll_back_first:
                    conn.execute(f"BEGIN ISOLATION LEVEL {isolation}")
                    # the other session's acknowledgement may have committed first
                    with contextlib.suppress(psycopg.errors.SerializationFailure):
                        acknowledge(conn, q, [msg_id], form)
                    conn.execute("ROLLBACK")
                while True:
                    try:
                        conn.execute(f"BEGIN ISOLATION LEVEL {isolation}")
                        acknowledge(conn, q, [msg_id], form)
                        conn.execute("COMMIT")
                        break
                    except psycopg.errors.SerializationFailure:
                        conn.execute("ROLLBACK")

        return run

    # every id in two sessions' shares, in opposite orders
    work = [ack(p, i, i % 3 == 0) for i, p in enumerate(shares(ids, SESSIONS // 2))]
    work += [ack(p[::-1], i + 1, i % 3 == 1) for i, p in enumerate(shares(ids, SESSIONS // 2))]
    assert at_barrier(pg_connect, work, autocommit=True) == []
    assert all_ids(db, q) == []
    sent = db.execute(
        "SELECT (headers -> 'workflow' ->> 'id')::bigint, msg_id, message, headers"
        f" FROM pgmq.q_{nq}"
    ).fetchall()
    assert sorted(r[0] for r in sent) == sorted(wids)
    for wid, msg_id, message, headers in sent:
        assert statuses(db, wid) == {"a": "done", "b": "sent"}
        assert message == {"k": wids.index(wid)}
        (recorded,) = db.execute(
            "SELECT msg_id FROM pgmq.workflow_status(%s) WHERE step = 'b'", [wid]
        ).fetchone()
        assert recorded == msg_id
        assert headers["workflow"]["step"] == "b" and set(headers["workflow"]["results"]) == {"a"}
    # the queue's own sends go on after the ids the chains took
    (after,) = db.execute("SELECT * FROM pgmq.send(%s, '{}'::jsonb)", [nq]).fetchone()
    assert after > max(r[1] for r in sent)
