"""Handler durations: each worker process collects them per queue and, every sample
interval and when it stops, writes one `HandlerTiming` row per queue (count, p50, p95)."""

from __future__ import annotations

import random
import statistics
import threading
from collections.abc import Iterable
from datetime import timedelta

from django.db.models.functions import Now

MAX_KEPT = 5000  # observations kept per queue between two heartbeats (a uniform sample past it)


class Timings:
    """Handler durations per queue since the last drain; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seen: dict[str, int] = {}
        self._kept: dict[str, list[float]] = {}

    def add(self, queue: str, seconds: float) -> None:
        """Record one handler call of ``queue`` that took ``seconds``."""
        with self._lock:
            seen = self._seen.get(queue, 0) + 1
            self._seen[queue] = seen
            kept = self._kept.setdefault(queue, [])
            if len(kept) < MAX_KEPT:
                kept.append(seconds)
            elif (slot := random.randrange(seen)) < MAX_KEPT:  # reservoir sampling
                kept[slot] = seconds

    def drain(self, queues: Iterable[str] | None = None) -> dict[str, tuple[int, list[float]]]:
        """Per queue (of ``queues``, default all): how many calls, and the durations kept;
        those queues then start afresh. A worker on several databases drains each
        database's queues into that database."""
        with self._lock:
            names = list(self._seen) if queues is None else [q for q in queues if q in self._seen]
            drained = {q: (self._seen.pop(q), self._kept.pop(q)) for q in names}
        return drained


TIMINGS = Timings()


def percentile(values: list[float], pct: int) -> float:
    """The ``pct``-th percentile of ``values`` (inclusive method; one value: itself)."""
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[pct - 1]


def record_timings(
    using: str, timings: Timings, *, retention: timedelta, queues: Iterable[str] | None = None
) -> int:
    """Write the drained durations (of ``queues``, default all) as one row per queue;
    rows past ``retention`` go."""
    from ..models import HandlerTiming

    rows = [
        HandlerTiming(
            queue=queue,
            calls=calls,
            p50_ms=percentile(kept, 50) * 1000,
            p95_ms=percentile(kept, 95) * 1000,
        )
        for queue, (calls, kept) in timings.drain(queues).items()
        if kept
    ]
    objects = HandlerTiming.objects.using(using)
    objects.bulk_create(rows)
    objects.filter(recorded_at__lt=Now() - retention).delete()
    return len(rows)
