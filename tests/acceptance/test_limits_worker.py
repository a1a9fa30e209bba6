"""Workers (real processes) on a limited queue: never more in flight than max_in_flight,
waiting at the limit rather than polling as if empty, and a SIGKILLed worker's slots
free when their vt passes."""

from __future__ import annotations

import signal
import threading
import time

import pytest
from django.db import connection

import django_pgmq as pgmq
from example_project.demo.models import HandlerRun
from tests.worker_process import start_worker_fixture, wait_until  # noqa: F401

pytestmark = pytest.mark.slow

HANDLER = ("--handler", "tests.handlers.handle_outside")


def in_flight(queue: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            f'SELECT count(*) FROM pgmq."q_{queue}" WHERE read_ct > 0 AND vt > clock_timestamp()'
        )
        return cursor.fetchone()[0]


def test_two_workers_never_hold_more_than_max_in_flight_and_wait_at_the_limit(queue, start_worker):
    pgmq.set_queue_attributes(queue, max_in_flight=2)
    pgmq.send_batch(queue, [{"n": n, "sleep": 0.2} for n in range(12)])
    workers = [
        start_worker(queue, *HANDLER, "--concurrency", "4", "--batch", "4", "-v", "2")
        for _ in range(2)
    ]
    peak, done = 0, threading.Event()

    def watch() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, in_flight(queue))
            time.sleep(0.01)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        wait_until(lambda: pgmq.metrics(queue).queue_length == 0, "all 12 handled")
    finally:
        done.set()
        watcher.join()
    assert peak == 2
    assert HandlerRun.objects.filter(finished_at__isnull=False).count() == 12
    assert any(w.count(rf"{queue}: at its limit; next read in") for w in workers)
    for worker in workers:
        worker.signal(signal.SIGTERM)
        assert worker.wait() == 0


def test_a_sigkilled_workers_slots_free_after_its_vt(queue, start_worker):
    pgmq.set_queue_attributes(queue, max_in_flight=2)
    pgmq.send_batch(queue, [{"n": n, "sleep": 60} for n in range(4)])
    worker = start_worker(queue, *HANDLER, "--vt", "2", "--concurrency", "4", "--batch", "1")
    wait_until(lambda: HandlerRun.objects.count() == 2, "two handlers started")
    worker.signal(signal.SIGKILL)
    worker.wait()
    assert in_flight(queue) == 2
    assert pgmq.read(queue, vt=30, qty=5) == []  # the dead worker's slots are still taken
    wait_until(lambda: in_flight(queue) == 0, "the dead worker's vts to pass")
    got = pgmq.read(queue, vt=30, qty=5)
    assert len(got) == 2  # both slots free by themselves, and no more than two
    assert in_flight(queue) == 2
