"""QueueManager methods: queue attributes (SQS-grade, kept in SQL for every client).

The attributes live in ``pgmq.queue_attributes`` and are enforced by the SQL API
(sql/25_attributes.sql); these methods only read and write them, pause and resume
a queue, run retention, and redrive a dead-letter queue.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..messages import QueueLimits
from ..names import validate_queue_name
from .plumbing import Base, _dump, _json

# The keys the SQL API knows (it checks their values; kept here for help texts).
ATTRIBUTE_KEYS = (
    "delivery_delay",
    "deduplication_window",
    "max_receive_count",
    "dead_letter_queue",
    "message_retention",
    "archive_retention",
    "max_message_size",
    "priorities",
    "paused",
    "max_in_flight",
    "rate_limit",
)


@dataclass(frozen=True)
class RetentionResult:
    """What `enforce_retention` deleted from one queue."""

    queue_name: str
    expired: int
    archive_deleted: int


class AttributeOps(Base):
    """Get and set queue attributes; pause, resume, retention and redrive."""

    def get_queue_attributes(self, queue: str) -> dict[str, Any]:
        """The queue's attributes (``{}`` for none)."""
        validate_queue_name(queue)
        return _json(self._fetch("get_queue_attributes", {"queue": queue}, queue)[0][0])

    def set_queue_attributes(self, queue: str, **attributes: Any) -> dict[str, Any]:
        """Merge attributes into the queue's (``None`` removes one); returns the whole set.

        A bad key or value raises `InvalidArgument` naming it, and changes nothing.
        """
        validate_queue_name(queue)
        params = {"queue": queue, "attributes": _dump(attributes, "attributes", queue)}
        return _json(self._fetch("set_queue_attributes", params, queue)[0][0])

    def pause_queue(self, queue: str) -> dict[str, Any]:
        """Stop reads (read, pop, the FIFO readers) from returning messages; sends go on."""
        return self.set_queue_attributes(queue, paused=True)

    def resume_queue(self, queue: str) -> dict[str, Any]:
        """Undo `pause_queue`."""
        return self.set_queue_attributes(queue, paused=None)

    def queue_limits(self, queue: str | None = None) -> list[QueueLimits]:
        """The limits of ``queue`` (or of every queue with ``max_in_flight`` or ``rate_limit``)
        and where each stands now: in flight, handed out in the current window."""
        if queue is not None:
            validate_queue_name(queue)
        return [QueueLimits(*row) for row in self._fetch("queue_limits", {"queue": queue}, queue)]

    def dead_letter_sources(self, queue: str) -> list[str]:
        """The queues whose ``dead_letter_queue`` attribute names ``queue``."""
        validate_queue_name(queue)
        return [row[0] for row in self._fetch("dead_letter_sources", {"queue": queue}, queue)]

    def enforce_retention(self, queue: str | None = None) -> list[RetentionResult]:
        """Delete messages and archived rows past the queues' retention attributes."""
        if queue is not None:
            validate_queue_name(queue)
        rows = self._fetch("enforce_retention", {"queue": queue}, queue)
        return [RetentionResult(*row) for row in rows]

    def redrive(
        self, dead_letter_queue: str, *, conditional: dict | None = None, limit: int | None = None
    ) -> dict[str, int]:
        """Move dead letters back to the queues they came from (those whose message
        contains ``conditional``, at most ``limit``); returns how many went to each queue."""
        validate_queue_name(dead_letter_queue)
        params = {
            "queue": dead_letter_queue,
            "conditional": _dump(conditional or {}, "conditional", dead_letter_queue),
            "limit": limit,
        }
        rows = self._fetch("redrive", params, dead_letter_queue)
        return {name: int(moved) for name, moved in rows}
