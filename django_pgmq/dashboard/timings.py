"""Handler duration percentiles of a queue for the admin, from workers' `HandlerTiming` rows."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.utils import timezone

from ..models import HandlerTiming

WINDOW = timedelta(hours=1)


@dataclass(frozen=True)
class HandlerDurations:
    """Calls in the window; p50 is the calls-weighted mean of the intervals' medians,
    p95 the worst interval's (percentiles of intervals cannot be merged exactly)."""

    calls: int
    p50_ms: float | None
    p95_ms: float | None


def handler_durations(using: str, queue: str, since: timedelta = WINDOW) -> HandlerDurations:
    """p50 and p95 handler durations of ``queue`` over the last ``since``."""
    rows = list(
        HandlerTiming.objects.using(using)
        .filter(queue=queue, recorded_at__gte=timezone.now() - since)
        .values_list("calls", "p50_ms", "p95_ms")
    )
    calls = sum(c for c, _, _ in rows)
    if not calls:
        return HandlerDurations(0, None, None)
    p50 = sum(c * p for c, p, _ in rows) / calls
    return HandlerDurations(calls, p50, max(p for _, _, p in rows))
