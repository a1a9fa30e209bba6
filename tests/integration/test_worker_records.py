"""The tables the admin reads: live workers (Worker) and queue samples (QueueSample)."""

from __future__ import annotations

import os
from datetime import timedelta

import pytest
from django.utils import timezone

from django_pgmq import QueueManager
from django_pgmq.models import QueueSample, Worker
from django_pgmq.worker.presence import Presence
from django_pgmq.worker.sampling import sample_queues


@pytest.fixture
def m(db) -> QueueManager:
    return QueueManager()


def test_a_worker_registers_refreshes_and_removes_its_row(db):
    presence = Presence("default", ["orders", "emails"], concurrency=3, interval=10)
    presence.register()
    row = Worker.objects.get()
    assert (row.pid, row.queues, row.concurrency) == (os.getpid(), ["orders", "emails"], 3)
    assert row.expires_at - row.heartbeat_at == timedelta(seconds=30)
    assert Worker.objects.alive().count() == 1

    presence.beat(processed=12, failed=2)
    assert Worker.objects.values_list("processed", "failed").get() == (12, 2)
    presence.unregister()
    assert not Worker.objects.exists()


def test_a_beat_recreates_a_row_that_was_aged_out_meanwhile(db):
    presence = Presence("default", ["orders"], concurrency=1, interval=10)
    presence.register()
    Worker.objects.all().delete()
    presence.beat(processed=5, failed=0)
    assert Worker.objects.values_list("pid", "processed").get() == (os.getpid(), 5)


def test_rows_of_workers_that_stopped_beating_are_pruned(db):
    now = timezone.now()
    Worker.objects.create(host="gone", pid=1, expires_at=now - timedelta(seconds=1))
    Worker.objects.create(host="alive", pid=2, expires_at=now + timedelta(hours=1))
    assert [w.host for w in Worker.objects.expired()] == ["gone"]
    presence = Presence("default", ["orders"], concurrency=1, interval=10)
    presence.register()  # prunes as it starts
    assert sorted(Worker.objects.values_list("pid", flat=True)) == sorted([2, os.getpid()])


def test_a_sample_records_the_figures_of_a_queue(queue):
    """Committed messages (a sample in the sending transaction would see none visible)."""
    m = QueueManager()
    ids = m.send_batch(queue, [{"n": i} for i in range(5)])
    m.send(queue, {"later": True}, delay=600)
    m.read(queue, vt=600, qty=1)
    m.archive(queue, ids[1:3])

    assert sample_queues(m, [queue], interval=60, retention=timedelta(days=7)) == 1
    sample = QueueSample.objects.get()
    figures = (sample.depth, sample.visible, sample.in_flight, sample.delayed)
    assert figures == (4, 2, 1, 1)
    assert (sample.archive_size, sample.total_messages) == (2, 6)


def test_a_queue_sampled_recently_is_skipped_and_old_samples_are_deleted(m, queue_name):
    m.create_queue(queue_name)
    old = QueueSample.objects.create(
        queue="elsewhere",
        depth=0,
        visible=0,
        in_flight=0,
        delayed=0,
        archive_size=0,
        total_messages=0,
    )
    QueueSample.objects.filter(pk=old.pk).update(sampled_at=timezone.now() - timedelta(days=8))
    assert (
        sample_queues(m, [queue_name, "no_such_queue"], interval=60, retention=timedelta(days=7))
        == 1
    )
    assert sample_queues(m, [queue_name], interval=60, retention=timedelta(days=7)) == 0
    assert list(QueueSample.objects.values_list("queue", flat=True)) == [queue_name]
