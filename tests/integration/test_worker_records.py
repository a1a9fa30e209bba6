"""The table the admin reads about live workers (Worker); samples: test_admin_sampling.py."""

from __future__ import annotations

import os
from datetime import timedelta

import pytest
from django.utils import timezone

from django_pgmq import QueueManager
from django_pgmq.models import Worker
from django_pgmq.worker.presence import Presence


@pytest.fixture
def m(db) -> QueueManager:
    return QueueManager()


def test_a_worker_registers_refreshes_and_removes_its_row(db):
    presence = Presence("default", ["orders", "emails"], concurrency=3, interval=10)
    presence.register()
    row = Worker.objects.get()
    assert (row.pid, row.queues, row.concurrency) == (os.getpid(), ["orders", "emails"], 3)
    assert row.expires_at - row.heartbeat_at == timedelta(seconds=20)  # two heartbeats
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
