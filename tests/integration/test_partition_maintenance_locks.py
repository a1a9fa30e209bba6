"""Partition maintenance never holds up a queue's traffic longer than its lock bound.

A second real session keeps a transaction open on the queue (it read or sent, then sits
idle in transaction). Maintenance then waits at most its bound for each lock, skips the
step it could not lock with a NOTICE and a "... skipped" row, and the queue's other
readers and writers, queued behind its lock request meanwhile, wait no longer than that.
Once the blocker ends, the next run does the skipped step.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator

import psycopg
import pytest

from django_pgmq import QueueManager

BOUND = 0.2  # pgmq._maintenance_lock_timeout() with no session lock_timeout
SLACK = 0.6  # scheduling on a shared two-core machine


@pytest.fixture
def partitioned(manager: QueueManager) -> Iterator[Callable[..., str]]:
    made: list[str] = []

    def make(interval: object = 10, retention: object = 1000, premake: int = 1) -> str:
        name = f"pl_{uuid.uuid4().hex[:12]}"
        manager.create_partitioned_queue(name, interval, retention, premake)
        made.append(name)
        return name

    yield make
    for name in made:
        manager.drop_queue(name)


def maintain(conn: psycopg.Connection, queue: str) -> tuple[list[tuple], list[str], float]:
    """Run pgmq.maintain_partitions(queue) on conn: (table, action, partition) rows,
    the NOTICEs, and the seconds it took."""
    notices: list[str] = []
    conn.add_notice_handler(lambda d: notices.append(d.message_primary or ""))
    started = time.monotonic()
    rows = conn.execute(
        "SELECT partitioned_table, action, partition_name FROM pgmq.maintain_partitions(%s)",
        [queue],
    ).fetchall()
    return rows, notices, time.monotonic() - started


def timed_reads(dsn: str, queue: str, stop: threading.Event, waits: list[float]) -> None:
    """Read from the queue over and over until stop, recording each read's duration."""
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute("SET lock_timeout = '10s'")  # a read stalled behind maintenance would show
        while not stop.is_set():
            started = time.monotonic()
            c.execute("SELECT * FROM pgmq.read(%s, 0, 1)", [queue]).fetchall()
            c.execute("SELECT pgmq.send(%s, '{}')", [queue])
            waits.append(time.monotonic() - started)
            time.sleep(0.005)


@pytest.mark.parametrize("blocker_does", ["read", "send"])
def test_a_create_held_up_by_an_idle_transaction_is_skipped_then_done(
    manager, partitioned, pg_connect, pg_dsn, blocker_does
):
    queue = partitioned(10, None, premake=1)
    manager.send_batch(queue, [{"n": n} for n in range(25)])  # 26.. wait in the default
    blocker = pg_connect(autocommit=False)
    if blocker_does == "read":
        blocker.execute("SELECT * FROM pgmq.read(%s, 30, 1)", [queue]).fetchall()
    else:
        blocker.execute("SELECT pgmq.send(%s, '{}')", [queue])
    stop, waits = threading.Event(), []
    traffic = threading.Thread(target=timed_reads, args=(pg_dsn, queue, stop, waits))
    traffic.start()
    try:
        time.sleep(0.1)
        rows, notices, took = maintain(pg_connect(), queue)
        time.sleep(0.1)
    finally:
        stop.set()
        traffic.join(timeout=30)
        blocker.rollback()
    skipped = [r for r in rows if r[1] == "create skipped"]
    assert skipped and all(r[1] in ("create skipped", "created") for r in rows)
    assert all(r[1] == "create skipped" for r in rows if r[0] == f"q_{queue}")
    assert any("not created" in n and "next maintenance run" in n for n in notices)
    # One wait per table (the queue's and the archive's): the later steps skip at once.
    assert took < 2 * BOUND + SLACK
    assert waits and max(waits) < BOUND + SLACK
    # The next run, the blocker gone, does the skipped steps.
    rows, notices, _ = maintain(pg_connect(), queue)
    assert {r[2] for r in rows if r[1] == "created"} >= {r[2] for r in skipped}
    assert not [r for r in rows if "skipped" in r[1]] and not notices
    assert manager.metrics(queue).default_partition_length == 0


def test_a_drop_held_up_by_an_idle_reader_is_skipped_then_done(manager, partitioned, pg_connect):
    queue = partitioned(10, 20, premake=1)
    manager.send_batch(queue, [{"n": n} for n in range(25)])
    manager.maintain_partitions(queue)  # partitions for 26..40 exist; 0..20 kept for now
    manager.send_batch(queue, [{"n": n} for n in range(20)])  # next id 46: 0..20 expire
    expired = {f"q_{queue}_p0", f"q_{queue}_p10"}
    blocker = pg_connect(autocommit=False)
    blocker.execute("SELECT * FROM pgmq.read(%s, 30, 1)", [queue]).fetchall()
    try:
        rows, notices, took = maintain(pg_connect(), queue)
    finally:
        blocker.rollback()
    assert {r[2] for r in rows if r[1] == "drop skipped"} >= expired
    # The queue's first step (a create) waited and gave up; the rest skipped at once.
    assert any("not created" in n for n in notices)
    assert any("more step(s) on pgmq.q_" in n and "skipped without waiting" in n for n in notices)
    assert took < 2 * BOUND + SLACK
    names = {p.partition_name for p in manager.list_partitions(queue)}
    assert expired <= names
    rows, _, _ = maintain(pg_connect(), queue)
    assert {r[2] for r in rows if r[1] == "dropped"} >= expired
    assert not expired & {p.partition_name for p in manager.list_partitions(queue)}


def test_a_queue_whose_lock_another_session_holds_is_skipped(manager, partitioned, pg_connect):
    queue = partitioned(10, None, premake=1)
    manager.send_batch(queue, [{"n": n} for n in range(25)])
    holder = pg_connect(autocommit=False)
    holder.execute("SELECT pgmq.acquire_queue_lock(%s)", [queue])  # a drop not committed
    try:
        rows, notices, took = maintain(pg_connect(), queue)
    finally:
        holder.rollback()
    assert rows == [(None, "queue skipped", None)]
    assert any("not maintained" in n for n in notices)
    assert took < BOUND + SLACK
    assert manager.maintain_partitions(queue)  # done now


def test_a_session_lock_timeout_lowers_the_bound_and_never_raises_it(partitioned, pg_connect):
    db = pg_connect()
    assert db.execute("SELECT pgmq._maintenance_lock_timeout()").fetchone() == ("200ms",)
    db.execute("SET lock_timeout = '50ms'")
    assert db.execute("SELECT pgmq._maintenance_lock_timeout()").fetchone() == ("50ms",)
    db.execute("SET lock_timeout = '1min'")
    assert db.execute("SELECT pgmq._maintenance_lock_timeout()").fetchone() == ("1000ms",)
    # The session's own setting is back once the call is over.
    queue = partitioned(10, None, premake=1)
    db.execute("SELECT * FROM pgmq.maintain_partitions(%s)", [queue]).fetchall()
    assert db.execute("SHOW lock_timeout").fetchone() == ("1min",)


def test_pgmq_maintain_reports_skipped_steps_and_exits_0(
    manager, partitioned, pg_connect, subprocess_env
):
    import subprocess
    import sys
    from pathlib import Path

    queue = partitioned(10, None, premake=1)
    manager.send_batch(queue, [{"n": n} for n in range(25)])
    blocker = pg_connect(autocommit=False)
    blocker.execute("SELECT * FROM pgmq.read(%s, 30, 1)", [queue]).fetchall()
    try:
        run = subprocess.run(
            [sys.executable, "manage.py", "pgmq_maintain", queue],
            cwd=Path(__file__).resolve().parents[2],
            env=subprocess_env,
            capture_output=True,
            timeout=120,
        )
    finally:
        blocker.rollback()
    out = run.stdout.decode()
    assert run.returncode == 0, run.stderr.decode()
    assert f'queue "{queue}": create skipped q_{queue}_p20 [20, 30)' in out
    assert "a transaction using the queue held the lock" in out
    assert manager.metrics(queue).default_partition_length == 6  # 20..25 wait there
    manager.maintain_partitions(queue)
    assert manager.metrics(queue).default_partition_length == 0
