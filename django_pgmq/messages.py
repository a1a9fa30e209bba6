"""Records returned by the queue manager."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class Message:
    """One message as pgmq's ``message_record`` returns it."""

    msg_id: int
    read_ct: int
    enqueued_at: datetime
    last_read_at: datetime | None
    vt: datetime
    message: Any
    headers: dict[str, Any] | None


@dataclass(frozen=True)
class QueueInfo:
    """A row of ``pgmq.list_queues()``."""

    queue_name: str
    is_partitioned: bool
    is_unlogged: bool
    created_at: datetime
    database: str = ""  # the alias of the database holding the queue


@dataclass(frozen=True)
class QueueMetrics:
    """A row of ``pgmq.metrics()``: lengths, ages in seconds, and all-time message count."""

    queue_name: str
    queue_length: int
    newest_msg_age_sec: int | None
    oldest_msg_age_sec: int | None
    total_messages: int
    scrape_time: datetime
    queue_visible_length: int
    default_partition_length: int | None
    database: str = ""  # the alias of the database holding the queue


@dataclass(frozen=True)
class NotifyThrottle:
    """A row of ``pgmq.list_notify_insert_throttles()``: a queue whose inserts notify."""

    queue_name: str
    throttle_interval_ms: int
    last_notified_at: datetime


@dataclass(frozen=True)
class QueueLimits:
    """A row of ``pgmq.queue_limits()``: a limited queue's limits and where it stands.

    ``in_flight`` counts messages read and not yet deleted, archived or visible again;
    ``handed_out`` those handed out in the current ``rate_seconds`` window;
    ``next_free_at`` is when a read can get a message again while the queue is at a limit.
    """

    queue_name: str
    max_in_flight: int | None
    in_flight: int
    rate_count: int | None
    rate_seconds: float | None
    handed_out: int
    next_free_at: datetime | None
    database: str = ""  # the alias of the database holding the queue
