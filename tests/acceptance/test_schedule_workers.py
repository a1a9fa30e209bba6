"""Workers drive the schedules: killed and restarted at random, they send each tick once.

Three ``pgmq_consume`` processes run a one-second schedule; every moment one of them
is killed (SIGKILL, mid-call perhaps) and another started, and for a while none runs
at all. Every tick is then either sent exactly once or, for the downtime, counted as
skipped (only the latest missed tick goes out), and the ticks keep coming while any
one worker runs.
"""

from __future__ import annotations

import random
import signal
import time
from collections import Counter
from datetime import datetime, timedelta

import pytest

import django_pgmq as pgmq
from tests.worker_process import start_worker_fixture, wait_until  # noqa: F401

pytestmark = pytest.mark.slow

HANDLER = ("--handler", "tests.handlers.handle", "--poll-interval", "0.5")


@pytest.fixture
def ticks_queue(queue):
    name = queue + "_ticks"
    pgmq.create_queue(name)
    pgmq.create_schedule(
        "accept_every_second", "@every 1 seconds", name, {"beat": 1}, catch_up=timedelta(seconds=2)
    )
    yield name, pgmq.QueueManager().get_schedule("accept_every_second").next_tick
    pgmq.drop_schedule("accept_every_second")
    pgmq.drop_queue(name)


def sent_ticks(queue: str) -> list[datetime]:
    messages = pgmq.read(queue, vt=0, qty=10_000)
    return [datetime.fromisoformat(m.headers["schedule"]["tick"]) for m in messages]


def test_killed_and_restarted_workers_send_each_tick_once(queue, ticks_queue, start_worker):
    ticks_queue, first_tick = ticks_queue
    rng = random.Random(24)
    workers = [start_worker(queue, *HANDLER) for _ in range(3)]
    wait_until(lambda: len(sent_ticks(ticks_queue)) >= 2, "the first ticks")
    for _ in range(8):
        victim = workers.pop(rng.randrange(len(workers)))
        victim.signal(signal.SIGKILL)
        victim.wait()
        time.sleep(rng.uniform(0.2, 0.9))
        workers.append(start_worker(queue, *HANDLER))
    for worker in workers:  # downtime: no worker at all for 4 seconds
        worker.signal(signal.SIGKILL)
        worker.wait()
    time.sleep(0.5)  # a statement a killed worker's server process was running may still commit
    before_gap = len(sent_ticks(ticks_queue))
    time.sleep(4)
    assert len(sent_ticks(ticks_queue)) == before_gap
    last = start_worker(queue, *HANDLER)
    wait_until(lambda: len(sent_ticks(ticks_queue)) >= before_gap + 3, "ticks after the gap")
    last.signal(signal.SIGTERM)
    assert last.wait() == 0

    ticks = sent_ticks(ticks_queue)
    assert [t for t, n in Counter(ticks).items() if n > 1] == []
    schedule = pgmq.QueueManager().get_schedule("accept_every_second")
    # every tick from the first one on: sent once, or (while no worker ran) counted skipped
    span = int((max(ticks) - first_tick).total_seconds()) + 1
    assert len(ticks) + schedule.skipped == span
    gap = [b - a for a, b in zip(sorted(ticks), sorted(ticks)[1:], strict=False)]
    assert max(gap) >= timedelta(seconds=3)  # the 4-second gap: only the latest missed tick went


def test_a_worker_with_no_schedules_sends_none(queue, ticks_queue, start_worker):
    ticks_queue, _ = ticks_queue
    worker = start_worker(queue, *HANDLER, "--no-schedules", "-v", "1")
    worker.wait_for("worker .* started")
    time.sleep(2.5)
    assert sent_ticks(ticks_queue) == []
    worker.signal(signal.SIGTERM)
    assert worker.wait() == 0
