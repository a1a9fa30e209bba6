"""Start, run, stop: autodiscovery, the worker's row, SIGTERM, a second signal, kill -9."""

from __future__ import annotations

import signal

import pytest

import django_pgmq as pgmq
from django_pgmq.models import QueueConfig, Worker
from example_project.demo.models import HandlerRun
from tests.worker_process import start_worker_fixture, wait_until  # noqa: F401

pytestmark = pytest.mark.slow

DEMO_QUEUE = "demo_events"


def archived_ids(queue: str) -> list[int]:
    """Ids in the queue's archive, read through the SQL API (a pgmq client would do this)."""
    from django.db import connection
    from psycopg import sql

    with connection.cursor() as cursor:
        cursor.execute(
            sql.SQL("SELECT msg_id FROM pgmq.{} ORDER BY msg_id").format(
                sql.Identifier(f"a_{queue.lower()}")
            )
        )
        return [row[0] for row in cursor.fetchall()]


@pytest.fixture
def demo_queue(manager):
    manager.create_queue(DEMO_QUEUE)
    yield DEMO_QUEUE
    for name in (DEMO_QUEUE, f"{DEMO_QUEUE}_dlq"):
        manager.drop_queue(name)


def test_an_autodiscovered_consumer_drains_its_queue_and_exits(demo_queue, start_worker):
    ids = pgmq.send_batch(demo_queue, [{"event": i} for i in range(30)])
    worker = start_worker(demo_queue, "--until-empty", "--poll-interval", "0.05", "-v", "2")
    assert worker.wait() == 0

    assert sorted(HandlerRun.objects.values_list("msg_id", flat=True)) == ids
    assert archived_ids(demo_queue) == ids
    # The decorator's settings were recorded for the admin; the worker removed its row.
    config = QueueConfig.objects.get(queue=demo_queue)
    assert (config.batch, config.max_receive_count, config.vt) == (20, 3, 30)
    assert config.dead_letter_queue == f"{demo_queue}_dlq"
    assert not Worker.objects.exists()
    assert "handler example_project.demo.consumers.record_event, batch=20" in worker.output
    assert worker.count(r"demo_events: \d+ message\(s\) in") == 2  # batches of 20 and 10


def test_clean_batches_log_totals_per_heartbeat_not_a_line_each(queue, start_worker):
    pgmq.send_batch(queue, [{"n": i} for i in range(6)])
    worker = start_worker(
        queue, "--handler", "tests.handlers.handle", "--batch", "2", "--heartbeat", "0.2"
    )
    worker.wait_for(r"6 message\(s\) done, 0 failed in the last \d+s \(6 done, 0 failed in all\)")
    pgmq.send_batch(queue, [{"fail_times": 1}])
    worker.wait_for(r"1 message\(s\) in .*: 0 done, 1 retried")  # not all done: at INFO
    worker.signal(signal.SIGTERM)
    assert worker.wait() == 0
    assert worker.count(r"message\(s\) in .*: 2 done") == 0  # clean batches: DEBUG only
    assert (
        "stopped (SIGTERM received). 6 message(s) settled (6 done); 7 attempt(s), 1 of them failed"
        in worker.output
    )


def test_a_running_worker_keeps_its_row_fresh_and_removes_it_on_sigterm(queue, start_worker):
    worker = start_worker(queue, "--handler", "tests.handlers.handle", "--heartbeat", "0.2")
    worker.wait_for("started on database")
    pgmq.send_batch(queue, [{"n": i} for i in range(5)])
    row = wait_until(
        lambda: Worker.objects.filter(pid=worker.pid, processed=5).first(), "5 processed"
    )
    assert row.queues == [queue]
    assert Worker.objects.alive().filter(pk=row.pk).exists()
    worker.signal(signal.SIGTERM)
    assert worker.wait() == 0
    assert not Worker.objects.filter(pk=row.pk).exists()


def test_sigterm_mid_batch_finishes_the_running_handler_and_releases_the_rest(queue, start_worker):
    ids = pgmq.send_batch(queue, [{"sleep": 0.5} for _ in range(10)])
    worker = start_worker(
        queue, "--handler", "tests.handlers.handle_outside", "--batch", "10", "--vt", "60"
    )
    wait_until(lambda: HandlerRun.objects.exists(), "a handler to start")
    worker.signal(signal.SIGTERM)
    assert worker.wait() == 0

    handled = sorted(HandlerRun.objects.values_list("msg_id", flat=True))
    assert handled == archived_ids(queue)  # whatever started was finished and archived
    # The rest is visible again at once (vt 60 would otherwise hide it for a minute),
    # unread: the worker handed it back without running its handler.
    rest = pgmq.read(queue, vt=30, qty=100)
    assert sorted(handled + [m.msg_id for m in rest]) == ids
    assert rest and all(m.read_ct == 1 for m in rest)
    assert f"{len(rest)} released" in worker.output


# Failed once in about six full-suite runs (the message had left the queue after
# the second signal); not reproduced alone. Rerun once while that is investigated,
# and show the worker's output and the archive when it fails.
@pytest.mark.flaky(reruns=1)
def test_a_second_signal_exits_at_once(queue, start_worker):
    [msg_id] = pgmq.send_batch(queue, [{"sleep": 30}])
    worker = start_worker(queue, "--handler", "tests.handlers.handle_outside")
    wait_until(lambda: HandlerRun.objects.exists(), "the handler to start")
    worker.signal(signal.SIGTERM)
    worker.wait_for("stopping: SIGTERM received")
    worker.signal(signal.SIGINT)
    assert worker.wait() == 128 + signal.SIGINT
    # Nothing was acknowledged: the message comes back when its vt ends.
    assert pgmq.metrics(queue).queue_length == 1, (archived_ids(queue), worker.output)
    assert not archived_ids(queue)
    assert msg_id == HandlerRun.objects.get().msg_id


def test_kill_9_mid_batch_then_a_second_worker_handles_every_message_exactly_once(
    queue, start_worker
):
    ids = pgmq.send_batch(queue, [{"sleep": 0.1} for _ in range(20)])
    options = ("--handler", "tests.handlers.handle", "--batch", "5", "--vt", "2")
    first = start_worker(queue, *options, "--heartbeat", "0.2")
    wait_until(lambda: HandlerRun.objects.exists(), "the first worker to commit a batch")
    first.signal(signal.SIGKILL)
    first.wait()
    # Its row stays until it ages out (three missed heartbeats).
    wait_until(lambda: Worker.objects.expired().filter(pid=first.pid).exists(), "row expiry")
    # What it held comes back when its vt (2 s) ends; --until-empty does not wait for
    # messages another consumer holds, so start the second worker once they are back.
    wait_until(
        lambda: (m := pgmq.metrics(queue)).queue_visible_length == m.queue_length,
        "the killed worker's messages to be visible again",
    )

    second = start_worker(queue, *options, "--until-empty", "--poll-interval", "0.1")
    assert second.wait() == 0

    # Every message archived once, and its handler's write committed once with it.
    assert archived_ids(queue) == ids
    assert sorted(HandlerRun.objects.values_list("msg_id", flat=True)) == ids
    assert pgmq.metrics(queue).queue_length == 0
    assert not Worker.objects.exists()  # the killed worker's row was aged out
