"""Several workers and threads on one queue never run one message twice at once."""

from __future__ import annotations

import itertools
import signal
from collections import defaultdict

import pytest

import django_pgmq as pgmq
from example_project.demo.models import HandlerRun
from tests.worker_process import start_worker_fixture, wait_until  # noqa: F401

pytestmark = pytest.mark.slow

OUTSIDE = ("--handler", "tests.handlers.handle_outside")  # records each run as it starts


def overlapping_runs() -> list[tuple[int, str, str]]:
    """Runs of one message that overlapped in time (pid/thread of each)."""
    runs = defaultdict(list)
    for run in HandlerRun.objects.order_by("started_at"):
        runs[run.msg_id].append(run)
    return [
        (a.msg_id, f"{a.pid}/{a.thread}", f"{b.pid}/{b.thread}")
        for msg_runs in runs.values()
        for a, b in itertools.combinations(msg_runs, 2)
        if a.finished_at is None or b.started_at < a.finished_at
    ]


def test_two_workers_with_two_threads_each_never_run_a_message_twice_at_once(queue, start_worker):
    ids = pgmq.send_batch(queue, [{"sleep": 0.05} for _ in range(60)])
    options = (*OUTSIDE, "--concurrency", "2", "--batch", "3", "--vt", "5")
    workers = [
        start_worker(queue, *options, "--until-empty", "--poll-interval", "0.1") for _ in range(2)
    ]
    assert [w.wait() for w in workers] == [0, 0]

    assert overlapping_runs() == []
    assert sorted(set(HandlerRun.objects.values_list("msg_id", flat=True))) == ids
    assert pgmq.metrics(queue).queue_length == 0
    assert pgmq.QueueManager().archive_count(queue) == len(ids)


def test_a_handler_slower_than_vt_is_not_run_again_meanwhile(queue, start_worker):
    ids = pgmq.send_batch(queue, [{"sleep": 2.5}, {"sleep": 2.5}])
    options = (*OUTSIDE, "--batch", "1", "--vt", "1", "--poll-interval", "0.1")
    workers = [start_worker(queue, *options, "-v", "2") for _ in range(2)]
    wait_until(lambda: pgmq.metrics(queue).queue_length == 0, "both messages to be archived")
    for worker in workers:
        worker.signal(signal.SIGTERM)
    assert [w.wait() for w in workers] == [0, 0]

    # Each ran once: the heartbeat kept extending the 1 s vt while the handler slept.
    assert sorted(HandlerRun.objects.values_list("msg_id", flat=True)) == ids
    assert overlapping_runs() == []
    assert sum(w.count(r"extended vt of") for w in workers) >= 2
