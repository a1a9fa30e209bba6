"""Pausing a queue's consumption: workers stop reading a paused queue within a heartbeat.

Kept behind these functions so that moving the flag into the queue's SQL
attributes later changes this module only. Today it is ``QueueConfig.paused``.
"""

from __future__ import annotations

from collections.abc import Iterable


def paused_queues(using: str, queues: Iterable[str] | None = None) -> frozenset[str]:
    """The paused queues among ``queues`` (every paused queue when None)."""
    from .models import QueueConfig

    rows = QueueConfig.objects.using(using).filter(paused=True)
    if queues is not None:
        rows = rows.filter(queue__in=list(queues))
    return frozenset(rows.values_list("queue", flat=True))


def set_paused(using: str, queue: str, paused: bool) -> None:
    """Pause (or resume) consumption of ``queue``; its other consumer settings are kept."""
    from .models import QueueConfig

    QueueConfig.objects.using(using).update_or_create(queue=queue, defaults={"paused": paused})
