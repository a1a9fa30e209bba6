"""QueueManager methods: create, drop, purge and list queues; their metrics."""

from __future__ import annotations

from typing import Any

from ..names import table_name, validate_queue_name
from ..records import QueueInfo, QueueMetrics
from .plumbing import Base, _record


class QueueOps(Base):
    """Create, drop, purge and list queues; their metrics."""

    # -- queues -------------------------------------------------------------

    def create_queue(self, queue: str, *, unlogged: bool = False, **attributes: Any) -> None:
        """Create a queue (idempotent); an unlogged queue is faster but lost on a crash.

        ``attributes`` (``deduplication_window=300``, ``priorities=True``, ...) are
        merged into the queue's attributes, as `set_queue_attributes` does.
        """
        validate_queue_name(queue)
        self._fetch("create_unlogged" if unlogged else "create", {"queue": queue}, queue)
        if attributes:
            self.set_queue_attributes(queue, **attributes)  # type: ignore[attr-defined]

    def drop_queue(self, queue: str) -> bool:
        """Drop a queue and its archive; False when there was no such queue."""
        validate_queue_name(queue)
        return bool(self._fetch("drop_queue", {"queue": queue}, queue)[0][0])

    def purge_queue(self, queue: str) -> int:
        """Delete every live message (the archive stays); returns how many."""
        validate_queue_name(queue)
        return int(self._fetch("purge_queue", {"queue": queue}, queue)[0][0])

    def list_queues(self) -> list[QueueInfo]:
        """Every queue, by name: database by database when routed (`each_database`,
        ``PGMQ["DATABASE"]`` first); ``database`` names each one's."""
        return [
            _record(QueueInfo, row, database=alias)
            for alias in self.each_database()
            for row in self._fetch_named("list_queues", {}, None, alias=alias)
        ]

    # -- metrics ------------------------------------------------------------

    def metrics(self, queue: str) -> QueueMetrics:
        """Lengths, ages and total count of one queue."""
        validate_queue_name(queue)
        [row] = self._fetch_named("metrics", {"queue": queue}, queue)
        return _record(QueueMetrics, row, database=self.alias_for(queue))

    def archive_count(self, queue: str) -> int:
        """How many messages the queue's archive (``pgmq.a_<queue>``) holds."""
        archive = table_name(queue, "a")
        return int(self._fetch("archive_count", {}, queue, {"archive": archive})[0][0])

    def metrics_all(self) -> list[QueueMetrics]:
        """Metrics of every queue, by name: database by database when routed, like
        `list_queues`; ``database`` names each one's."""
        return [
            _record(QueueMetrics, row, database=alias)
            for alias in self.each_database()
            for row in self._fetch_named("metrics_all", {}, None, alias=alias)
        ]
