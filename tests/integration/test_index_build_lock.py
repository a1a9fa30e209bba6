"""Index builds and the DDL on a queue's table never meet.

A CREATE INDEX CONCURRENTLY on a queue's table and a drop_queue / purge_queue on it at
the same moment made the drop fail (``tuple concurrently updated``, or a deadlock: the
build waits for every older transaction, the drop's too, while the drop waits for the
build's table lock). Both now take the queue's table lock (an advisory lock); a build
holding it gives way as soon as a DDL waits for it, then starts again unless the queue
is gone. Real sessions at a barrier, no mocks.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import psycopg
import pytest

from django_pgmq import index_builds

pytestmark = pytest.mark.django_db(transaction=True)


def index_of(queue: str) -> str:
    return f"q_{queue}_priority"


def index_exists(db: psycopg.Connection, queue: str) -> bool:
    row = db.execute("SELECT to_regclass(%s) IS NOT NULL", [f"pgmq.{index_of(queue)}"])
    return bool(row.fetchone()[0])  # type: ignore[index]


def index_valid(db: psycopg.Connection, queue: str) -> bool:
    row = db.execute(
        "SELECT i.indisvalid FROM pg_index i WHERE i.indexrelid = to_regclass(%s)",
        [f"pgmq.{index_of(queue)}"],
    ).fetchone()
    return bool(row and row[0])


def table_lock_holder(db: psycopg.Connection, queue: str) -> int | None:
    """The pid holding the queue's table lock, if any."""
    row = db.execute(
        "SELECT l.pid FROM pg_locks l, pgmq._queue_table_lock_key(%s) k "
        "WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 "
        "AND l.classid = k.class_id::oid AND l.objid = k.object_id::oid",
        [queue],
    ).fetchone()
    return row[0] if row else None


def waits_for_a_transaction(db: psycopg.Connection, pid: int) -> bool:
    """Whether ``pid`` (a CREATE INDEX CONCURRENTLY) waits for another transaction."""
    row = db.execute(
        "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE pid = %s AND NOT granted "
        "AND locktype IN ('virtualxid', 'transactionid'))",
        [pid],
    ).fetchone()
    return bool(row and row[0])


def until(check: Callable[[], Any], what: str, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


class Run(threading.Thread):
    """A call in a thread of its own; its result or the exception it raised."""

    def __init__(self, call: Callable[[], Any]) -> None:
        super().__init__(daemon=True)
        self.call, self.result, self.error = call, None, None

    def run(self) -> None:
        try:
            self.result = self.call()
        except BaseException as exc:  # reported by the test
            self.error = exc

    def outcome(self, timeout: float = 60.0) -> Any:
        self.join(timeout)
        assert not self.is_alive(), "still running"
        if self.error is not None:
            raise self.error
        return self.result


@pytest.fixture
def wanting(pg_connect, pg_dsn) -> Callable[[], str]:
    """A queue with messages whose priority index is wanted, not built; dropped after.

    The indexes other tests left wanted are built first: a build takes every wanted
    index, and one of theirs would wait for this test's open transactions."""
    made: list[str] = []
    db = pg_connect()
    db.execute("SET pgmq.defer_index_builds = on")  # a small table: else built at once

    def make() -> str:
        index_builds.build_pending_dsn(pg_dsn)
        name = f"bl_{uuid.uuid4().hex[:12]}"
        db.execute("SELECT pgmq.create(%s)", [name])
        db.execute(
            "SELECT pgmq.send_batch(%s, array_fill('{\"n\": 1}'::jsonb, ARRAY[500]))", [name]
        )
        db.execute("SELECT pgmq.set_queue_attributes(%s, '{\"priorities\": true}')", [name])
        made.append(name)
        return name

    yield make
    for name in made:
        db.execute("SELECT pgmq.drop_queue(%s)", [name])


def test_the_build_and_the_sql_use_one_lock_key(pg_connect):
    db = pg_connect()
    for name in ("orders", "Orders", "a-b_c"):
        sql_key = db.execute("SELECT * FROM pgmq._queue_table_lock_key(%s)", [name]).fetchone()
        build_key = db.execute(
            index_builds._TABLE_KEY, [index_builds.TABLE_LOCK_CLASS, name]
        ).fetchone()
        assert sql_key == build_key
        assert sql_key[0] == int.from_bytes(b"pgmq", "big")


@pytest.mark.parametrize("ddl", ["drop_queue", "purge_queue"])
def test_a_ddl_waits_for_a_running_build_which_gives_way(pg_connect, pg_dsn, wanting, ddl):
    queue = wanting()
    look, ddl_session = pg_connect(), pg_connect(autocommit=False)
    # The DDL's transaction is older than the build: the build waits for it (a sender).
    ddl_session.execute("SELECT pgmq.send(%s, '{}')", [queue])
    try:
        build = Run(lambda: index_builds.build_pending_dsn(pg_dsn))  # as pgmq_maintain
        build.start()
        builder = until(lambda: table_lock_holder(look, queue), "the build to take the lock")
        until(lambda: waits_for_a_transaction(look, builder), "the build to wait for the DDL")
        # Before: the drop waited for the build's table lock, the build for the drop.
        result = ddl_session.execute(f"SELECT pgmq.{ddl}(%s)", [queue]).fetchone()
        ddl_session.commit()
    finally:
        ddl_session.rollback()  # a failure must not leave the teardown's drop waiting
    built = build.outcome()
    if ddl == "drop_queue":
        assert result == (True,)
        assert built == []  # skipped: its queue is gone
        assert not index_exists(look, queue)  # nothing left behind
        assert look.execute("SELECT to_regclass(%s)", [f"pgmq.q_{queue}"]).fetchone() == (None,)
    else:
        assert result == (501,)
        assert built == [index_of(queue)]  # built again once the purge committed
        assert index_valid(look, queue)
    assert look.execute(
        "SELECT count(*) FROM pgmq.pending_indexes() WHERE queue_name = %s", [queue]
    ).fetchone() == (0,)


def test_a_build_waits_for_a_drop_in_progress_then_skips_the_queue(pg_connect, pg_dsn, wanting):
    queue = wanting()
    look, dropper = pg_connect(), pg_connect(autocommit=False)
    assert dropper.execute("SELECT pgmq.drop_queue(%s)", [queue]).fetchone() == (True,)
    try:
        build = Run(lambda: index_builds.build_pending_dsn(pg_dsn))
        build.start()
        time.sleep(0.3)  # the build tries for the table lock the drop holds
        assert build.is_alive()
        dropper.commit()
    finally:
        dropper.rollback()
    assert build.outcome() == []
    assert not index_exists(look, queue)


def test_a_background_build_leaves_a_long_ddl_for_later(pg_connect, wanting, settings):
    """A background build (a worker's, after a commit) waits at most its lock timeout."""
    queue = wanting()
    purger = pg_connect(autocommit=False)
    purger.execute("SELECT pgmq.purge_queue(%s)", [queue])  # holds the table lock
    try:
        assert index_builds.build_pending("default", index_builds.BACKGROUND_LOCK_TIMEOUT) == []
    finally:
        purger.commit()
    assert index_builds.build_pending("default") == [index_of(queue)]


@pytest.mark.parametrize("ddl", ["drop_queue", "purge_queue"])
def test_builds_and_ddl_racing_from_two_sessions_never_fail(pg_connect, pg_dsn, wanting, ddl):
    look = pg_connect()
    for _ in range(20):
        queue = wanting()
        barrier = threading.Barrier(2)
        ddl_session = pg_connect()

        def build(barrier: threading.Barrier = barrier) -> list[str]:
            barrier.wait()
            return index_builds.build_pending_dsn(pg_dsn)

        def change(
            queue: str = queue,
            ddl_session: psycopg.Connection = ddl_session,
            barrier: threading.Barrier = barrier,
        ) -> Any:
            barrier.wait()
            time.sleep(0.01 * (uuid.uuid4().int % 5))  # now early in the build, now late
            return ddl_session.execute(f"SELECT pgmq.{ddl}(%s)", [queue]).fetchone()

        runs = [Run(build), Run(change)]
        for run in runs:
            run.start()
        built, changed = (run.outcome() for run in runs)  # raises what either raised
        assert changed == ((True,) if ddl == "drop_queue" else (500,))
        if ddl == "drop_queue":
            assert not index_exists(look, queue)
        else:  # built before or after the purge
            assert built == [index_of(queue)] and index_valid(look, queue)
        ddl_session.close()
    assert look.execute(
        "SELECT count(*) FROM pgmq.pending_indexes() WHERE queue_name LIKE 'bl\\_%'"
    ).fetchone() == (0,)
