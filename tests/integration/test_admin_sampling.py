"""Queue samples for the admin's charts: every queue, one elected sampler per database."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from django_pgmq.internal import InternalManager
from django_pgmq.models import QueueSample
from django_pgmq.worker.sampling import sample_all_queues

WEEK = timedelta(days=7)


@pytest.fixture
def m(db) -> InternalManager:
    return InternalManager()


def _sampled(queue: str) -> list[QueueSample]:
    return list(QueueSample.objects.filter(queue=queue))


def test_a_sample_records_the_figures_of_every_queue(queue, queue_name):
    """Committed messages (a sample in the sending transaction would see none visible)."""
    m = InternalManager()
    other = queue_name + "_idle"
    m.create_queue(other)  # no worker consumes it: sampled all the same
    try:
        ids = m.send_batch(queue, [{"n": i} for i in range(5)])
        m.send(queue, {"later": True}, delay=600)
        m.read(queue, vt=600, qty=1)
        m.archive(queue, ids[1:3])

        assert sample_all_queues(m, interval=60, retention=WEEK) >= 2
        [sample] = _sampled(queue)
        figures = (
            sample.queue_length,
            sample.queue_visible_length,
            sample.in_flight_length,
            sample.delayed_length,
        )
        assert figures == (4, 2, 1, 1)
        assert (sample.archive_size, sample.total_messages) == (2, 6)
        assert [s.queue_length for s in _sampled(other)] == [0]
    finally:
        m.drop_queue(other)


def test_a_queue_sampled_recently_is_skipped_and_old_samples_are_deleted(m, queue_name):
    m.create_queue(queue_name)
    old = QueueSample.objects.create(
        queue="elsewhere",
        queue_length=0,
        queue_visible_length=0,
        in_flight_length=0,
        delayed_length=0,
        archive_size=0,
        total_messages=0,
    )
    QueueSample.objects.filter(pk=old.pk).update(sampled_at=timezone.now() - timedelta(days=8))
    assert sample_all_queues(m, interval=60, retention=WEEK) >= 1
    assert sample_all_queues(m, interval=60, retention=WEEK) == 0
    assert len(_sampled(queue_name)) == 1
    assert not QueueSample.objects.filter(queue="elsewhere").exists()


def test_only_the_holder_of_the_sampler_lock_samples(m, queue_name, pg_connect):
    """A second sampler (another worker) skips the round while the first holds the lock."""
    m.create_queue(queue_name)
    other = pg_connect(autocommit=False)
    [[elected]] = other.execute(
        "SELECT pg_try_advisory_xact_lock(hashtext('django_pgmq.queue_sampler'))"
    ).fetchall()
    assert elected
    assert sample_all_queues(m, interval=60, retention=WEEK) is None
    assert _sampled(queue_name) == []
    other.rollback()
    assert sample_all_queues(m, interval=60, retention=WEEK) >= 1
    assert len(_sampled(queue_name)) == 1


def test_pgmq_maintain_samples_the_queues(m, queue_name):
    m.create_queue(queue_name)
    m.send(queue_name, {"n": 1})
    call_command("pgmq_maintain", verbosity=0)
    assert [s.queue_length for s in _sampled(queue_name)] == [1]


def test_a_worker_samples_queues_it_does_not_consume(queue, queue_name):
    m = InternalManager()
    idle = queue_name + "_idle"
    m.create_queue(idle)
    try:
        m.send_batch(idle, [{"n": i} for i in range(4)])
        m.send(queue, {"n": 1, "sleep": 2})  # heartbeats beat while it runs
        call_command(
            "pgmq_consume",
            queue,
            handler="tests.handlers.handle",
            until_empty=True,
            poll_interval=0.05,
            heartbeat=0.1,
            verbosity=0,
        )
        assert [s.queue_length for s in _sampled(idle)] == [4]
    finally:
        m.drop_queue(idle)


def test_the_old_names_of_the_renamed_fields_still_work_with_a_warning(db, queue_name):
    """``QueueSample.depth``, ``visible``, ``in_flight`` and ``delayed`` are
    ``queue_length``, ``queue_visible_length``, ``in_flight_length`` and ``delayed_length``,
    ``QueueConfig.max_reads`` is ``max_receive_count``; the old names stay as deprecated
    properties, the columns as they were."""
    from django_pgmq.models import QueueConfig

    with pytest.warns(DeprecationWarning, match=r"QueueConfig.max_reads is deprecated"):
        config = QueueConfig.objects.create(queue=queue_name, max_reads=3)
    assert QueueConfig.objects.get(queue=queue_name).max_receive_count == 3
    with pytest.warns(DeprecationWarning, match="use max_receive_count"):
        assert config.max_reads == 3
    figures = dict(archive_size=0, total_messages=0)
    with (
        pytest.warns(DeprecationWarning, match=r"QueueSample.depth is deprecated"),
        pytest.warns(DeprecationWarning, match=r"QueueSample.visible is deprecated"),
        pytest.warns(DeprecationWarning, match=r"QueueSample.in_flight is deprecated"),
        pytest.warns(DeprecationWarning, match=r"QueueSample.delayed is deprecated"),
    ):
        sample = QueueSample.objects.create(
            queue=queue_name, depth=4, visible=2, in_flight=1, delayed=3, **figures
        )
    stored = QueueSample.objects.get(pk=sample.pk)
    assert (stored.in_flight_length, stored.delayed_length) == (1, 3)
    with pytest.warns(DeprecationWarning, match="use in_flight_length"):
        assert stored.in_flight == 1
    with pytest.warns(DeprecationWarning, match="use delayed_length"):
        assert stored.delayed == 3
    with pytest.warns(DeprecationWarning, match="use queue_length"):
        assert QueueSample.objects.get(pk=sample.pk).depth == 4
    with pytest.warns(DeprecationWarning, match=r"QueueSample.visible is deprecated"):
        assert QueueSample.objects.get(pk=sample.pk).visible == 2
    assert QueueSample._meta.get_field("queue_visible_length").column == "visible"
    assert QueueConfig._meta.get_field("max_receive_count").column == "max_reads"
    assert QueueSample._meta.get_field("queue_length").column == "depth"
    assert QueueSample._meta.get_field("in_flight_length").column == "in_flight"
    assert QueueSample._meta.get_field("delayed_length").column == "delayed"
