"""Records the internal layer returns: figures and rows the admin dashboard and metrics show.

Plain data, no Django imports: the dashboard builds its pages from them.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class QueueStats:
    """One queue's dashboard figures; names in ``estimated`` are estimates, not counts."""

    queue_name: str
    depth: int
    visible: int
    in_flight: int
    delayed: int
    oldest_msg_age_sec: int | None
    newest_age_sec: int | None
    oldest_visible_age_sec: int | None
    archive_size: int
    archived_hour: int
    archived_day: int
    poison: int | None
    total_messages: int
    estimated: frozenset[str]

    @property
    def oldest_age_sec(self) -> int | None:
        """Deprecated name of `oldest_msg_age_sec` (pgmq's name for the same figure)."""
        warnings.warn(
            "QueueStats.oldest_age_sec is deprecated: use oldest_msg_age_sec",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.oldest_msg_age_sec


@dataclass(frozen=True)
class BrowsedMessage:
    """A live or archived message as the queue page shows it (``archived_at`` for archives)."""

    msg_id: int
    read_ct: int
    enqueued_at: datetime
    last_read_at: datetime | None
    vt: datetime
    archived_at: datetime | None
    message: Any
    headers: dict[str, Any] | None


@dataclass(frozen=True)
class ThroughputBucket:
    """Messages archived in one time bucket, with enqueue-to-archive latency percentiles.

    Percentiles are None for a bucket older than the rows the latency limit let in.
    """

    start: datetime
    archived: int
    p50_sec: float | None
    p95_sec: float | None
    p99_sec: float | None
    truncated: bool
    latency_truncated: bool


@dataclass(frozen=True)
class StatsBucket:
    """One time bucket of ``pgmq.spark_stats`` summed for the charts (see 91_dashboard_stats.sql).

    ``p50_sec`` is the archived-weighted mean of the minutes' medians; ``p95_sec`` and
    ``p99_sec`` the worst minute's; ``last_minute`` the newest minute stored for the queue.
    """

    start: datetime
    archived: int
    p50_sec: float | None
    p95_sec: float | None
    p99_sec: float | None
    retries: int
    last_minute: datetime
