"""Per-queue indexes are built CONCURRENTLY, outside the caller's transaction.

A consumer holds a transaction open on the queue; priorities are turned on (or the
queue becomes a task queue, or gets its FIFO index); a send from a third session
completes while the index is still pending, and the index is built once the
consumer's transaction is over. A plain CREATE INDEX in the caller's transaction
would wait for the consumer, and every send behind it would wait too.
"""

from __future__ import annotations

import psycopg
import pytest
from django.db import connection

from django_pgmq import QueueManager, index_builds
from django_pgmq.internal import InternalManager

pytestmark = pytest.mark.django_db(transaction=True)

INDEX_OF = {"priorities": "_priority", "task": "_priority", "fifo": "_fifo_idx"}


def index_state(db: psycopg.Connection, queue: str, kind: str) -> str:
    """'valid', 'invalid' or 'missing': the queue's index of that kind."""
    row = db.execute(
        "SELECT i.indisvalid FROM pg_index i WHERE i.indexrelid = to_regclass(%s)",
        [f"pgmq.q_{queue}{INDEX_OF[kind]}"],
    ).fetchone()
    return "missing" if row is None else ("valid" if row[0] else "invalid")


def want(kind: str, queue: str) -> None:
    manager = InternalManager()
    if kind == "priorities":
        manager.set_queue_attributes(queue, priorities=True)
    elif kind == "task":
        manager.enable_task_queue(queue)
    else:
        manager.create_fifo_index(queue)


@pytest.mark.parametrize("kind", ["priorities", "task", "fifo"])
def test_a_send_is_not_blocked_while_the_index_waits_for_a_consumer(pg_connect, queue, kind):
    consumer, sender, look = pg_connect(autocommit=False), pg_connect(), pg_connect()
    consumer.execute("SELECT * FROM pgmq.read(%s, 30, 1)", [queue])  # holds its transaction
    try:
        with connection.cursor() as cursor:  # the caller would wait here for a plain CREATE INDEX
            cursor.execute("SET lock_timeout = '10s'")
        try:
            want(kind, queue)
        finally:
            with connection.cursor() as cursor:
                cursor.execute("RESET lock_timeout")
        sender.execute("SET lock_timeout = '10s'")  # a blocked send fails instead of waiting
        sender.execute("SELECT pgmq.send(%s, '{\"n\": 1}')", [queue])
        assert index_state(look, queue, kind) != "valid"  # the build waits for the consumer
        pending = look.execute("SELECT index_name FROM pgmq.pending_indexes()").fetchall()
        assert (f"q_{queue}{INDEX_OF[kind]}",) in pending
    finally:
        consumer.commit()
    index_builds.wait_for_background(timeout=60)
    assert index_state(look, queue, kind) == "valid"
    assert look.execute("SELECT count(*) FROM pgmq.pending_indexes()").fetchone() == (0,)


def test_reads_work_before_the_index_exists(pg_connect, queue):
    db = pg_connect()
    db.execute("SET pgmq.defer_index_builds = on")  # as in a transaction that wrote
    db.execute("SELECT pgmq.set_queue_attributes(%s, '{\"priorities\": true}')", [queue])
    assert index_state(db, queue, "priorities") == "missing"  # nobody built it: plain SQL
    for priority in (1, 9, 5):
        db.execute(
            "SELECT pgmq.send(%s, '{}', jsonb_build_object('priority', %s))", [queue, priority]
        )
    read = db.execute("SELECT headers ->> 'priority' FROM pgmq.read(%s, 30, 3)", [queue])
    assert [r[0] for r in read.fetchall()] == ["9", "5", "1"]
    db.execute("SELECT pgmq.create_fifo_index(%s)", [queue])
    assert db.execute("SELECT count(*) FROM pgmq.read_grouped(%s, 30, 1)", [queue]).fetchone()


def test_an_invalid_index_left_by_a_failed_build_is_dropped_and_built_again(pg_connect, queue):
    db = pg_connect()
    db.execute("SET pgmq.defer_index_builds = on")  # a small table: else built at once
    db.execute("SELECT pgmq.send(%s, '{}'::jsonb, '{\"x-pgmq-group\": \"a\"}'::jsonb)", [queue])
    db.execute("SELECT pgmq.create_fifo_index(%s)", [queue])
    table, index = f"q_{queue}", f"q_{queue}_fifo_idx"
    # A failed concurrent build leaves an invalid index behind: a unique one on a duplicate.
    db.execute("SELECT pgmq.send(%s, '{}'::jsonb, '{\"x-pgmq-group\": \"a\"}'::jsonb)", [queue])
    with pytest.raises(psycopg.errors.UniqueViolation):
        db.execute(
            f'CREATE UNIQUE INDEX CONCURRENTLY "{index}" ON pgmq."{table}" '
            "(pgmq._fifo_group(headers))"
        )
    assert index_state(db, queue, "fifo") == "invalid"
    assert QueueManager().build_pending_indexes() == [index]
    assert index_state(db, queue, "fifo") == "valid"
    definition = db.execute("SELECT pg_get_indexdef(%s::regclass)", [f"pgmq.{index}"]).fetchone()
    assert "UNIQUE" not in definition[0] and "msg_id" in definition[0]


def test_the_wanted_indexes_are_read_by_column_name(pg_connect, queue, monkeypatch):
    """A build reads pgmq.pending_indexes()' rows by column name: with the
    columns reversed and one added in front, it builds the same index."""
    db = pg_connect()
    db.execute("SET pgmq.defer_index_builds = on")  # a small table: else built at once
    db.execute("SELECT pgmq.create_fifo_index(%s)", [queue])
    reordered = (
        "SELECT 'x' AS added, s.invalid, s.kind, s.index_name, s.queue_name "
        f"FROM ({index_builds._PENDING}) AS s"
    )
    monkeypatch.setattr(index_builds, "_PENDING", reordered)
    assert f"q_{queue}_fifo_idx" in QueueManager().build_pending_indexes()
    assert index_state(db, queue, "fifo") == "valid"


def test_a_background_build_whose_database_is_gone_logs_one_line_not_a_traceback(caplog):
    """A server restarted under a worker's background build (seen in the restart test):
    one WARNING naming the cause, no traceback; the worker's next run builds them."""
    from tests.second_server import add_alias, remove_alias

    # A plain PostgreSQL entry (the embedded backend would connect to its own socket) on a
    # port where nothing listens.
    closed = {"ENGINE": "django.db.backends.postgresql", "NAME": "postgres", "USER": "postgres"}
    closed |= {"HOST": "127.0.0.1", "PORT": "1"}
    add_alias("gone", closed)
    try:
        with caplog.at_level("DEBUG", logger="django_pgmq.index_builds"):
            index_builds._build_logged("gone")
    finally:
        remove_alias("gone")
    [record] = [r for r in caplog.records if r.name == "django_pgmq.index_builds"]
    assert record.levelname == "WARNING" and record.exc_info is None
    assert "the database is unavailable" in record.getMessage()
    assert "the next run retries" in record.getMessage()


def test_the_background_builds_log_with_the_worker_s_context(caplog):
    """In a worker, the index builds' lines name the worker and its queues like its own."""
    import logging

    from django_pgmq.worker import logs

    loggers = [
        logging.getLogger(name) for name in ("django_pgmq.worker", "django_pgmq.index_builds")
    ]
    saved = [(lg.level, list(lg.handlers), list(lg.filters), lg.propagate) for lg in loggers]
    try:
        logs.configure(logging.INFO, None, ["jobs"])
        with caplog.at_level("INFO", logger="django_pgmq.index_builds"):
            loggers[1].info("built index pgmq.q_jobs_priority")
    finally:
        for lg, (level, handlers, filters, propagate) in zip(loggers, saved, strict=True):
            lg.setLevel(level)
            lg.handlers[:], lg.filters[:], lg.propagate = handlers, filters, propagate
    [record] = [r for r in caplog.records if r.name == "django_pgmq.index_builds"]
    assert record.worker_id == logs.worker_id() and record.queue == "jobs"
