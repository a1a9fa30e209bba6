"""Queue samples (`QueueSample`) for the admin's charts: every queue of a database.

One sampler per database and round: whoever takes the advisory lock first (a
worker's heartbeat, or ``pgmq_maintain``) samples every queue not sampled within
the last interval; the others skip the round. Samples older than
``PGMQ["SAMPLE_RETENTION_DAYS"]`` are deleted as new ones are taken. The sampler of a
round also enforces the queues' retention attributes (``pgmq.enforce_retention``).
"""

from __future__ import annotations

from datetime import timedelta

from django.db import transaction
from django.db.models.functions import Now

from .. import conf
from ..manager import QueueManager


def sample_all_queues(
    manager: QueueManager, *, interval: float, retention: timedelta
) -> int | None:
    """Sample every queue not sampled within ``interval`` seconds; how many (None: not elected)."""
    from ..models import QueueSample

    samples = QueueSample.objects.using(manager.using)
    with transaction.atomic(using=manager.using):
        if not manager.claim_sampler():
            return None
        recent = set(
            samples.filter(sampled_at__gt=Now() - timedelta(seconds=interval * 0.9)).values_list(
                "queue", flat=True
            )
        )
        due = {q.queue_name for q in manager.list_queues()} - recent
        if not due:  # another sampler took this round already: no figures to compute
            return 0
        stats = manager.dashboard_stats(exact_limit=max(int(conf.get("DASHBOARD_EXACT_LIMIT")), 1))
        rows = [
            QueueSample(
                queue=s.queue_name,
                depth=s.depth,
                visible=s.visible,
                in_flight=s.in_flight,
                delayed=s.delayed,
                archive_size=s.archive_size,
                total_messages=s.total_messages,
            )
            for s in stats
            if s.queue_name in due
        ]
        samples.bulk_create(rows)
        samples.filter(sampled_at__lt=Now() - retention).delete()
        manager.enforce_retention()
    return len(rows)
