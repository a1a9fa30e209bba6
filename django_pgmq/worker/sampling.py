"""Queue samples (`QueueSample`) for the admin's charts and the overview's order.

One sampler per database and round: whoever takes the advisory lock first (a
worker's heartbeat, or ``pgmq_maintain``) samples the queues not sampled within the
last interval; the others skip the round. The cost stays bounded at 10,000 queues:
idle queues (neither table has a page) are sampled as zeros from one catalogue pass,
and at most ``BUSY_PER_ROUND`` other queues are counted per round, those sampled
longest ago first, so every queue gets its turn. Samples older than
``PGMQ["SAMPLE_RETENTION_DAYS"]`` are deleted as new ones are taken. The sampler of a
round also enforces the queues' retention attributes (``pgmq.enforce_retention``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import timedelta
from typing import TypeVar

from django.db import transaction
from django.db.models import F, OuterRef, Subquery
from django.db.models.functions import Now

from .. import conf
from ..internal import InternalManager

T = TypeVar("T")

# Queues holding messages (or pages) counted per round: about a second of work.
BUSY_PER_ROUND = 500
# Queues read per savepoint: the locks of one chunk's tables at most are held at once.
CHUNK = 250


def read_in_chunks(
    using: str, names: list[str], read: Callable[[list[str]], Iterable[T]]
) -> list[T]:
    """``read`` each chunk of ``names`` in a savepoint rolled back right after.

    The reads change nothing; rolling the savepoint back releases the AccessShareLocks
    they took on each queue's tables, so a round over 10,000 queues fits PostgreSQL's
    default lock table (``max_locks_per_transaction``) instead of holding 20,000 locks.
    """
    found: list[T] = []
    for start in range(0, len(names), CHUNK):
        with transaction.atomic(using=using):  # a savepoint inside the round's transaction
            found.extend(read(names[start : start + CHUNK]))
            transaction.set_rollback(True, using=using)
    return found


def stalest_queues(using: str, queues: list[str], limit: int) -> list[str]:
    """At most ``limit`` of ``queues``: never sampled first, then the longest ago."""
    from ..models import Queue, QueueSample

    if len(queues) <= limit:
        return queues
    last = (
        QueueSample.objects.using(using)
        .filter(queue=OuterRef("queue_name"))
        .order_by("-sampled_at")
        .values("sampled_at")[:1]
    )
    return list(
        Queue.objects.using(using)
        .filter(queue_name__in=queues)
        .annotate(last=Subquery(last))
        .order_by(F("last").asc(nulls_first=True), "queue_name")
        .values_list("queue_name", flat=True)[:limit]
    )


def sample_all_queues(
    manager: InternalManager, *, interval: float, retention: timedelta
) -> int | None:
    """Sample the queues not sampled within ``interval`` seconds; how many (None: not elected)."""
    from ..models import QueueSample

    samples = QueueSample.objects.using(manager.using)
    with transaction.atomic(using=manager.using):
        if not manager.dashboard_claim_sampler():
            return None
        recent = set(
            samples.filter(sampled_at__gt=Now() - timedelta(seconds=interval * 0.9)).values_list(
                "queue", flat=True
            )
        )
        due = [q.queue_name for q in manager.list_queues() if q.queue_name not in recent]
        if not due:  # another sampler took this round already: no figures to compute
            return 0
        idle = read_in_chunks(
            manager.using, due, lambda c: manager.dashboard_idle_queues(c).items()
        )
        busy = [name for name, empty in idle if not empty]
        chosen = [name for name, empty in idle if empty]
        chosen += stalest_queues(manager.using, busy, BUSY_PER_ROUND)
        limit = max(int(conf.get("DASHBOARD_EXACT_LIMIT")), 1)
        stats = read_in_chunks(
            manager.using, chosen, lambda c: manager.dashboard_stats_of(c, exact_limit=limit)
        )
        taken = manager.dashboard_record_samples(stats)
        samples.filter(sampled_at__lt=Now() - retention).delete()
    # After the commit, in autocommit: each queue's retention batches commit one by one.
    manager.enforce_retention()
    manager.enforce_workflow_retention()
    return taken
