"""Queue samples (`QueueSample`) for the admin's charts, taken from workers' heartbeats.

Several workers may consume a queue; a queue sampled by any of them within
the last interval is skipped. Samples older than ``PGMQ["SAMPLE_RETENTION_DAYS"]``
are deleted as new ones are taken.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta

from django.db import transaction
from django.db.models.functions import Now

from ..errors import QueueNotFound
from ..manager import QueueManager


def sample_queues(
    manager: QueueManager, queues: Iterable[str], *, interval: float, retention: timedelta
) -> int:
    """Record the figures of each queue not sampled within ``interval`` seconds; how many."""
    from ..models import QueueSample

    samples = QueueSample.objects.using(manager.using)
    queues = list(dict.fromkeys(queues))
    recent = set(
        samples.filter(
            queue__in=queues, sampled_at__gt=Now() - timedelta(seconds=interval * 0.9)
        ).values_list("queue", flat=True)
    )
    rows = []
    for queue in queues:
        if queue in recent:
            continue
        try:
            with transaction.atomic(using=manager.using):  # a missing queue spoils nothing
                [stats] = manager.dashboard_stats(queue)
        except QueueNotFound:
            continue  # a dead-letter queue not created yet, or a queue dropped meanwhile
        rows.append(
            QueueSample(
                queue=queue,
                depth=stats.depth,
                visible=stats.visible,
                in_flight=stats.in_flight,
                delayed=stats.delayed,
                archive_size=stats.archive_size,
                total_messages=stats.total_messages,
            )
        )
    samples.bulk_create(rows)
    samples.filter(sampled_at__lt=Now() - retention).delete()
    return len(rows)
