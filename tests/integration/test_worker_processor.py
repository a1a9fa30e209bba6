"""One batch through the Processor: savepoints, acknowledgement, retries, release."""

from __future__ import annotations

import contextlib
import threading

import psycopg
import pytest
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from django_pgmq import QueueManager
from django_pgmq.internal import InternalManager
from django_pgmq.worker.config import resolve
from django_pgmq.worker.held import Holdings
from django_pgmq.worker.process import Processor
from django_pgmq.worker.registry import Consumer
from example_project.demo.models import HandlerRun
from tests import handlers


def processor(queue: str, handler, *, stopping: bool = False, **settings) -> Processor:
    spec = Consumer(handler, **settings)
    event = threading.Event()
    if stopping:
        event.set()
    return Processor(resolve(queue, spec, {}, None), InternalManager(), Holdings(), event)


def live_ids(queue: str) -> list[int]:
    with connection.cursor() as cursor:
        cursor.execute(
            psycopg.sql.SQL("SELECT msg_id FROM pgmq.{} ORDER BY msg_id").format(
                psycopg.sql.Identifier(f"q_{queue.lower()}")
            )
        )
        return [row[0] for row in cursor.fetchall()]


@pytest.fixture
def m(db) -> QueueManager:
    return QueueManager()


@pytest.fixture
def q(m, queue_name) -> str:
    m.create_queue(queue_name)
    return queue_name


@pytest.mark.parametrize("failing", [0, 1, 2])
def test_one_failure_in_a_shared_transaction_undoes_only_its_own_work(m, q, failing):
    payloads = [{"n": i} for i in range(3)]
    payloads[failing] = {"fail_times": 1}
    ids = m.send_batch(q, payloads)
    messages = m.read(q, vt=30, qty=3)
    outcome = processor(q, handlers.handle_write_then_fail).run(messages)

    assert (outcome.done, outcome.retried, outcome.dead) == (2, 1, 0)
    good = [i for n, i in enumerate(ids) if n != failing]
    assert sorted(HandlerRun.objects.values_list("msg_id", flat=True)) == good
    assert m.archive_count(q) == 2
    assert live_ids(q) == [ids[failing]]  # waiting for its retry
    assert m.read(q, vt=30, qty=3) == []


def test_a_message_out_of_reads_goes_to_the_dead_letter_queue(m, q):
    msg_id = m.send(q, {"fail_times": 9})
    outcome = processor(q, handlers.handle, max_receive_count=1, dead_letter="dead").run(
        m.read(q, vt=30, qty=1)
    )
    assert (outcome.done, outcome.dead) == (0, 1)
    [letter] = m.read("dead", vt=30, qty=1)
    assert letter.headers["dead_letter"]["msg_id"] == msg_id


def test_a_message_read_past_max_receive_count_without_a_verdict_is_dead_lettered_unrun(m, q):
    """As when its handler crashed the worker each time: it is not run once more."""
    msg_id = m.send(q, {"n": 1})
    for _ in range(3):  # three reads that ended without a verdict (vt 0: visible again)
        m.read(q, vt=0, qty=1)
    outcome = processor(q, handlers.handle, max_receive_count=3, dead_letter="dead").run(
        m.read(q, vt=30, qty=1)
    )
    assert (outcome.done, outcome.dead) == (0, 1)
    assert not HandlerRun.objects.exists()
    [letter] = m.read("dead", vt=30, qty=1)
    assert letter.headers["dead_letter"]["msg_id"] == msg_id
    assert letter.headers["dead_letter"]["error"].startswith("Unsettled: read 4 times")


@pytest.mark.parametrize(
    ("settings", "low", "high"),
    [
        ({"retry_delay": 2.0, "max_retry_delay": 3.0}, 1.5, 3.0),  # 2 * 2**4, capped at 3
        ({"retry_delay": 2.0}, 16.0, 32.0),  # the default cap (60 s) not reached
        ({"retry_delay": 120.0, "max_retry_delay": 30.0}, 60.0, 120.0),  # never below 120
    ],
)
def test_a_failed_message_is_hidden_for_its_capped_backoff(m, q, settings, low, high):
    """Its fifth read fails: the message is visible again after retry_delay doubled four
    times, up to max_retry_delay, with jitter (half to all of it), as the database says."""
    m.send(q, {"fail_times": 99})
    for _ in range(4):
        m.read(q, vt=0, qty=1)
    [message] = m.read(q, vt=300, qty=1)
    assert message.read_ct == 5
    outcome = processor(q, handlers.handle, max_receive_count=0, **settings).run([message])
    assert (outcome.done, outcome.retried) == (0, 1)
    with connection.cursor() as cursor:
        cursor.execute(
            psycopg.sql.SQL(
                "SELECT extract(epoch FROM vt - clock_timestamp())::float8 FROM pgmq.{}"
            ).format(psycopg.sql.Identifier(f"q_{q.lower()}"))
        )
        [[hidden]] = cursor.fetchall()
    assert low - 1 <= hidden <= high, hidden  # a second's slack for the statements between


def test_when_stopping_nothing_starts_and_every_message_is_handed_back_unread(m, q):
    ids = m.send_batch(q, [{"n": 1}, {"n": 2}])
    outcome = processor(q, handlers.handle, stopping=True).run(m.read(q, vt=60, qty=2))
    assert (outcome.done, outcome.released) == (0, 2)
    assert not HandlerRun.objects.exists()
    again = m.read(q, vt=60, qty=2)
    assert [(x.msg_id, x.read_ct) for x in again] == [(ids[0], 1), (ids[1], 1)]


def test_a_delete_consumer_deletes_instead_of_archiving(m, q):
    m.send(q, {"n": 1})
    outcome = processor(q, handlers.handle, on_success="delete").run(m.read(q, vt=30, qty=1))
    assert outcome.done == 1
    assert (m.archive_count(q), live_ids(q)) == (0, [])


def test_a_message_taken_elsewhere_before_its_turn_is_not_run(queue, pg_connect):
    """Its vt ran out and another consumer archived it first: running it would do it twice."""
    manager = QueueManager()
    taken, kept = manager.send_batch(queue, [{"n": 1}, {"n": 2}])
    messages = manager.read(queue, vt=30, qty=2)
    pg_connect().execute("SELECT pgmq.archive(%s, %s::bigint)", [queue, taken])

    outcome = processor(queue, handlers.handle).run(messages)
    assert (outcome.done, outcome.lost) == (1, 1)
    assert list(HandlerRun.objects.values_list("msg_id", flat=True)) == [kept]
    assert manager.archive_count(queue) == 2


def test_while_its_handler_runs_nobody_else_can_read_or_acknowledge_a_message(queue, pg_connect):
    manager = QueueManager()
    msg_id = manager.send(queue, {"n": 1})
    other = pg_connect()
    other.execute("SET lock_timeout = '200ms'")
    seen = {}

    def handler(message):
        # vt 0: visible again at once, yet the lock keeps other readers away.
        seen["read"] = other.execute("SELECT * FROM pgmq.read(%s, 30, 10)", [queue]).fetchall()
        with pytest.raises(psycopg.errors.LockNotAvailable):
            other.execute("SELECT pgmq.archive(%s, %s::bigint)", [queue, message.msg_id])

    outcome = processor(queue, handler).run(manager.read(queue, vt=0, qty=1))
    assert seen["read"] == []
    assert outcome.done == 1
    assert manager.archive_count(queue) == 1
    assert msg_id not in [m.msg_id for m in manager.read(queue, vt=0, qty=10)]


def _record(message) -> None:
    HandlerRun.objects.create(
        msg_id=message.msg_id, read_ct=message.read_ct, pid=0, started_at=timezone.now()
    )


def test_a_failed_handler_s_on_commit_callbacks_are_dropped_the_others_kept(
    m, q, django_capture_on_commit_callbacks
):
    """Its savepoint was never sent (no query), yet its callbacks go with its failure."""
    ids = m.send_batch(q, [{"n": i} for i in range(3)])
    calls: list[int] = []

    def handler(message):
        calls.append(message.msg_id)
        transaction.on_commit(lambda: None)
        if len(calls) == 2:
            raise RuntimeError("planned")
        _record(message)

    with django_capture_on_commit_callbacks() as callbacks:
        outcome = processor(q, handler).run(m.read(q, vt=30, qty=3))
    assert (outcome.done, outcome.retried) == (2, 1)
    assert len(callbacks) == 2
    assert sorted(HandlerRun.objects.values_list("msg_id", flat=True)) == [ids[0], ids[2]]


def test_a_handler_that_swallowed_a_failed_query_is_retried_without_undoing_others(m, q):
    """Its transaction state is broken: its savepoint is rolled back, the chunk goes on."""
    ids = m.send_batch(q, [{"n": i} for i in range(3)])
    calls: list[int] = []

    def handler(message):
        calls.append(message.msg_id)
        _record(message)
        if len(calls) == 2:
            with contextlib.suppress(DatabaseError), connection.cursor() as cursor:
                cursor.execute("SELECT 1/0")

    outcome = processor(q, handler).run(m.read(q, vt=30, qty=3))
    assert (outcome.done, outcome.retried) == (2, 1)
    assert sorted(HandlerRun.objects.values_list("msg_id", flat=True)) == [ids[0], ids[2]]
    assert live_ids(q) == [ids[1]]


def test_a_handler_that_asked_for_a_rollback_keeps_no_writes(m, q):
    """transaction.set_rollback(True) in a handler undoes its writes, as atomic() would."""
    ids = m.send_batch(q, [{"n": i} for i in range(3)])
    calls: list[int] = []

    def handler(message):
        calls.append(message.msg_id)
        _record(message)
        if len(calls) == 2:
            transaction.set_rollback(True)

    outcome = processor(q, handler).run(m.read(q, vt=30, qty=3))
    assert outcome.done == 3
    assert sorted(HandlerRun.objects.values_list("msg_id", flat=True)) == [ids[0], ids[2]]
    assert m.archive_count(q) == 3


def test_the_next_batch_is_read_in_the_transaction_that_acknowledges_this_one(m, q):
    """One commit per batch: the next read commits with this batch's archive."""
    ids = m.send_batch(q, [{"n": i} for i in range(4)])
    outcome = processor(q, handlers.handle).run(m.read(q, vt=30, qty=2), lambda read: read(2))
    assert outcome.done == 2
    assert [(x.msg_id, x.read_ct) for x in outcome.following] == [(ids[2], 1), (ids[3], 1)]
    assert m.read(q, vt=30, qty=4) == []  # all four taken: two archived, two read ahead


def test_no_batch_is_read_ahead_when_the_chunk_rolls_back(m, q):
    """The first handler failed: its transaction, with any read in it, is undone."""
    ids = m.send_batch(q, [{"fail_times": 1}, {"n": 2}, {"n": 3}])
    calls: list[int] = []

    def read_next(read):
        calls.append(1)
        return read(1)

    outcome = processor(q, handlers.handle).run(m.read(q, vt=30, qty=1), read_next)
    assert (outcome.retried, outcome.following) == (1, [])
    assert calls == []
    assert [(x.msg_id, x.read_ct) for x in m.read(q, vt=30, qty=3)] == [(ids[1], 1), (ids[2], 1)]


def test_read_ahead_batches_are_handed_back_unread_when_a_consumer_thread_ends(m, q):
    from django_pgmq.worker.loop import ConsumerThread
    from django_pgmq.worker.worker import Worker, WorkerOptions

    ids = m.send_batch(q, [{"n": 1}, {"n": 2}])
    worker = Worker([resolve(q, Consumer(handlers.handle), {}, None)], WorkerOptions())
    thread = ConsumerThread(worker, 0)
    thread.following[q] = (m.read(q, vt=60, qty=2), 0.0)
    thread._hand_back_following()
    assert thread.following == {}
    assert [(x.msg_id, x.read_ct) for x in m.read(q, vt=30, qty=2)] == [(ids[0], 1), (ids[1], 1)]


def test_outside_any_transaction_the_last_statement_carries_the_commit(transactional_db, queue):
    """One round trip less per batch; the handlers' on-commit callbacks still run, once."""
    from django.test.utils import CaptureQueriesContext

    m = QueueManager()
    ids = m.send_batch(queue, [{"n": i} for i in range(4)])
    committed: list[int] = []

    def handler(message):
        _record(message)
        transaction.on_commit(lambda: committed.append(message.msg_id))

    with CaptureQueriesContext(connection) as captured:
        outcome = processor(queue, handler).run(m.read(queue, vt=30, qty=2), lambda read: read(2))
    assert outcome.done == 2 and committed == ids[:2]
    statements = [q["sql"] for q in captured.captured_queries]
    assert statements[-2].rstrip().endswith("COMMIT") and "pgmq.archive" in statements[-2]
    assert statements[-1] == "COMMIT"  # what Django logs for its commit: psycopg sent nothing
    assert not connection.in_atomic_block and connection.get_autocommit()
    # Committed: seen from another connection, as is the read of the next batch.
    with psycopg.connect(**_params()) as other:
        archived = other.execute(
            psycopg.sql.SQL("SELECT count(*) FROM pgmq.{}").format(
                psycopg.sql.Identifier(f"a_{queue.lower()}")
            )
        ).fetchone()[0]
    assert archived == 2
    assert [(x.msg_id, x.read_ct) for x in outcome.following] == [(ids[2], 1), (ids[3], 1)]
    assert sorted(HandlerRun.objects.values_list("msg_id", flat=True)) == ids[:2]


def test_inside_a_callers_transaction_nothing_commits_early(m, q):
    """The `db` fixture's transaction wraps the chunk: its statements commit nothing."""
    ids = m.send_batch(q, [{"n": i} for i in range(3)])
    outcome = processor(q, handlers.handle).run(m.read(q, vt=30, qty=2), lambda read: read(1))
    assert outcome.done == 2 and [x.msg_id for x in outcome.following] == [ids[2]]
    assert connection.in_atomic_block  # still the test's transaction
    with psycopg.connect(**_params()) as other:  # which has committed nothing
        assert other.execute(
            "SELECT count(*) FROM pgmq.meta WHERE queue_name = %s", [q]
        ).fetchone() == (0,)


def _params() -> dict:
    keep = ("host", "port", "user", "password", "dbname")
    params = connection.get_connection_params()
    return {k: v for k, v in params.items() if k in keep and v not in (None, "")}
