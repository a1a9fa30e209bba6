"""Eight sessions call pgmq.enqueue_due_schedules at once, at the same and at overlapping times:
every tick of every schedule is sent exactly once (the primary key of pgmq.schedule_ticks decides).
"""

from __future__ import annotations

import threading
from collections import Counter
from datetime import UTC, datetime, timedelta

import psycopg
import pytest

pytestmark = pytest.mark.usefixtures("django_db_setup")

SESSIONS = 8
START = datetime(2026, 2, 1, 12, 0, tzinfo=UTC)
SCHEDULES = {
    "conc_every_1s": ("@every 1 seconds", timedelta(seconds=1)),
    "conc_every_3s": ("@every 3 seconds", timedelta(seconds=3)),
    "conc_minute": ("* * * * *", timedelta(minutes=1)),
}


@pytest.fixture
def db(pg_connect) -> psycopg.Connection:
    return pg_connect()


@pytest.fixture
def schedules(db, queue_name):
    db.execute("SELECT pgmq.create(%s)", [queue_name])
    for name, (cron, _) in SCHEDULES.items():
        db.execute(
            "SELECT pgmq.create_schedule(schedule_name => %s, cron => %s, queue_name => %s,"
            " catch_up => '1 day')",
            [name, cron, queue_name],
        )
        db.execute(
            "UPDATE pgmq.schedules SET next_tick = %s WHERE schedule_name = %s", [START, name]
        )
    yield db, queue_name
    for name in SCHEDULES:
        db.execute("SELECT pgmq.drop_schedule(%s)", [name])
    db.execute("SELECT pgmq.drop_queue(%s)", [queue_name])


def run_sessions(pg_connect, times_of) -> list[tuple]:
    """Each session calls enqueue_due_schedules at times_of(session, round), all at a barrier."""
    barrier = threading.Barrier(SESSIONS)
    sent: list[tuple] = []
    lock = threading.Lock()
    errors: list[BaseException] = []
    conns = [pg_connect() for _ in range(SESSIONS)]

    def session(i: int) -> None:
        try:
            for r in range(ROUNDS):
                barrier.wait(30)
                rows = (
                    conns[i]
                    .execute(
                        "SELECT schedule_name, tick, msg_id"
                        " FROM pgmq.enqueue_due_schedules(at => %s)",
                        [times_of(i, r)],
                    )
                    .fetchall()
                )
                with lock:
                    sent.extend(row for row in rows if row[0] in SCHEDULES)
        except BaseException as exc:  # reported below
            errors.append(exc)
            barrier.abort()

    threads = [threading.Thread(target=session, args=(i,)) for i in range(SESSIONS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    return sent


ROUNDS = 40


def latest_tick(step: timedelta, at: datetime) -> datetime:
    return START + step * ((at - START) // step)


def check_exactly_once(db, queue: str, sent: list[tuple], last_at: datetime) -> None:
    """No tick twice; every tick up to the last call either sent once or counted as skipped.

    A call skips a schedule another call is working on, so one more call at the last
    time (as the next second's call of a worker would) sends what is still due.
    """
    sent = sent + [
        row
        for row in db.execute(
            "SELECT schedule_name, tick, msg_id FROM pgmq.enqueue_due_schedules(at => %s)",
            [last_at],
        ).fetchall()
        if row[0] in SCHEDULES
    ]
    counts = Counter((name, tick) for name, tick, _ in sent)
    assert [k for k, n in counts.items() if n > 1] == []
    skipped = dict(
        db.execute(
            "SELECT schedule_name, skipped FROM pgmq.schedules WHERE schedule_name = ANY(%s)",
            [list(SCHEDULES)],
        ).fetchall()
    )
    for name, (_, step) in SCHEDULES.items():
        ticks = sorted(t for n, t in counts if n == name)
        assert all((t - START) % step == timedelta(0) for t in ticks), name
        assert ticks[-1] == latest_tick(step, last_at), name
        assert len(ticks) + skipped[name] == (ticks[-1] - START) // step + 1, name
    headers = db.execute(
        "SELECT headers -> 'schedule' ->> 'name', headers -> 'schedule' ->> 'tick'"
        " FROM pgmq.read(queue_name => %s, vt => 0, qty => 100000)",
        [queue],
    ).fetchall()
    assert len(headers) == len(sent)
    assert len(set(headers)) == len(headers)
    assert sorted(msg_id for *_, msg_id in sent) == sorted(
        r[0] for r in db.execute(f"SELECT msg_id FROM pgmq.q_{queue}").fetchall()
    )


def test_eight_sessions_at_the_same_times_send_each_tick_once(pg_connect, schedules):
    db, queue = schedules
    sent = run_sessions(pg_connect, lambda i, r: START + timedelta(seconds=r * 2.5))
    check_exactly_once(db, queue, sent, START + timedelta(seconds=(ROUNDS - 1) * 2.5))
    # all at one time: each round sends exactly the latest tick of each schedule, once
    want = {
        (name, latest_tick(step, START + timedelta(seconds=r * 2.5)))
        for r in range(ROUNDS)
        for name, (_, step) in SCHEDULES.items()
    }
    assert {(name, tick) for name, tick, _ in sent} == want


def test_eight_sessions_at_overlapping_times_send_each_tick_once(pg_connect, schedules):
    """Clocks that disagree: session i runs i * 0.7 s ahead, so later calls come first."""
    db, queue = schedules
    sent = run_sessions(
        pg_connect, lambda i, r: START + timedelta(seconds=r * 2 + (SESSIONS - 1 - i) * 0.7)
    )
    check_exactly_once(db, queue, sent, START + timedelta(seconds=(ROUNDS - 1) * 2 + 4.9))


def test_a_session_whose_transaction_rolls_back_sends_nothing_and_hides_nothing(
    pg_connect, schedules
):
    db, _ = schedules
    other = pg_connect(autocommit=False)
    rows = other.execute("SELECT * FROM pgmq.enqueue_due_schedules(at => %s)", [START]).fetchall()
    assert {r[0] for r in rows} >= set(SCHEDULES)
    # while that transaction is open, another session skips those schedules (no waiting)
    assert [
        r
        for r in db.execute(
            "SELECT * FROM pgmq.enqueue_due_schedules(at => %s)", [START]
        ).fetchall()
        if r[0] in SCHEDULES
    ] == []
    other.rollback()
    again = db.execute(
        "SELECT schedule_name, tick FROM pgmq.enqueue_due_schedules(at => %s)", [START]
    ).fetchall()
    assert {(n, t) for n, t in again if n in SCHEDULES} == {(n, START) for n in SCHEDULES}
