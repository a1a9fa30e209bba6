"""A failing handler: retries with backoff, dead letters at max_receive_count, rolls back."""

from __future__ import annotations

import itertools

import pytest

import django_pgmq as pgmq
from example_project.demo.models import HandlerRun
from tests.worker_process import start_worker_fixture  # noqa: F401

pytestmark = pytest.mark.slow

WRITE_THEN_FAIL = ("--handler", "tests.handlers.handle_write_then_fail")
FAST = ("--poll-interval", "0.05", "--until-empty", "--heartbeat", "0.5")


@pytest.fixture
def dead_letters(queue, manager):
    """The default dead-letter queue of ``queue``, dropped after the test."""
    name = f"{queue}_dlq"
    yield name
    manager.drop_queue(name)


def test_a_failing_message_is_retried_with_growing_delays_until_it_succeeds(queue, start_worker):
    msg_id = pgmq.send(queue, {"fail_times": 2})
    worker = start_worker(
        queue, "--handler", "tests.handlers.handle_outside", "--retry-delay", "0.4", *FAST
    )
    assert worker.wait() == 0

    runs = list(HandlerRun.objects.filter(msg_id=msg_id).order_by("read_ct"))
    assert [r.read_ct for r in runs] == [1, 2, 3]
    assert worker.count(r"retried in") == 2
    assert "RuntimeError: planned failure on read 1" in worker.output  # logged with traceback
    assert "Traceback" in worker.output
    # Backoff with "equal jitter": at least half of 0.4 s, then of 0.8 s, between the runs.
    gaps = [(b.started_at - a.finished_at).total_seconds() for a, b in itertools.pairwise(runs)]
    assert gaps[0] >= 0.2
    assert gaps[1] >= 0.4
    assert pgmq.metrics(queue).queue_length == 0


def test_a_retry_is_read_when_its_backoff_ends_not_at_the_next_poll(queue, start_worker):
    msg_id = pgmq.send(queue, {"fail_times": 1})
    worker = start_worker(
        queue,
        *("--handler", "tests.handlers.handle_outside", "--retry-delay", "0.2"),
        *("--poll-interval", "3600", "--no-listen", "--until-empty", "--heartbeat", "0.5"),
    )
    assert worker.wait() == 0  # with an hour's poll and no wake-up, only the retry's own read
    runs = HandlerRun.objects.filter(msg_id=msg_id).order_by("read_ct")
    assert [r.read_ct for r in runs] == [1, 2]
    assert pgmq.metrics(queue).queue_length == 0


def test_a_message_failing_max_receive_count_times_moves_to_the_dead_letter_queue(
    queue, dead_letters, start_worker
):
    good = pgmq.send(queue, {"n": 1})
    bad = pgmq.send(queue, {"fail_times": 99}, headers={"trace": "abc"})
    worker = start_worker(
        queue, *WRITE_THEN_FAIL, "--max-receives", "3", "--retry-delay", "0.05", *FAST
    )
    assert worker.wait() == 0

    assert pgmq.metrics(queue).queue_length == 0
    [letter] = pgmq.read(dead_letters, vt=30, qty=10)
    assert letter.message == {"fail_times": 99}
    origin = letter.headers["dead_letter"]
    assert letter.headers["trace"] == "abc"
    assert (origin["queue"], origin["msg_id"], origin["read_ct"]) == (queue, bad, 3)
    assert origin["error"] == "RuntimeError: planned failure on read 3"
    # Each failing run wrote its row, then raised: the row rolled back with the run, three
    # times; the good message's row committed with its archive.
    assert list(HandlerRun.objects.values_list("msg_id", flat=True)) == [good]
    assert pgmq.QueueManager().archive_count(queue) == 1
