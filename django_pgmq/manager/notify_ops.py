"""QueueManager methods: insert notifications (sql/40_notify.sql, notify.py)."""

from __future__ import annotations

from ..names import notify_channel, validate_queue_name
from ..records import NotifyThrottle
from .plumbing import (
    Base,
    _check_int,
    _record,
)


class NotifyOps(Base):
    """Insert notifications (sql/40_notify.sql, notify.py)."""

    # -- notifications (sql/40_notify.sql, notify.py) -------------------------

    def enable_notify(self, queue: str, throttle_ms: int = 250) -> None:
        """Notify ``pgmq.q_<queue>.INSERT`` at commit, at most once per ``throttle_ms``."""
        validate_queue_name(queue)
        throttle = _check_int("throttle_ms", throttle_ms, 0)
        self._fetch("enable_notify_insert", {"queue": queue, "throttle": throttle}, queue)

    def disable_notify(self, queue: str) -> None:
        """Stop insert notifications of ``queue`` (a no-op when they are off)."""
        validate_queue_name(queue)
        self._fetch("disable_notify_insert", {"queue": queue}, queue)

    def update_notify(self, queue: str, throttle_ms: int) -> None:
        """Change the throttle of a queue whose notifications are on."""
        validate_queue_name(queue)
        throttle = _check_int("throttle_ms", throttle_ms, 0)
        self._fetch("update_notify_insert", {"queue": queue, "throttle": throttle}, queue)

    def list_notify_throttles(self) -> list[NotifyThrottle]:
        """Queues whose inserts notify, with their throttle and last notification."""
        rows = self._fetch_named("list_notify_insert_throttles", {}, None)
        return [_record(NotifyThrottle, row) for row in rows]

    def notify_throttles(self) -> dict[str, int]:
        """Queue name -> throttle in milliseconds, for every queue whose inserts notify."""
        return {t.queue_name: t.throttle_interval_ms for t in self.list_notify_throttles()}

    def notify_channel(self, queue: str) -> str:
        """The channel to LISTEN on, spelled as pgmq.meta stores the name: ``pgmq.q_Orders.INSERT``.

        The trigger uses the stored spelling, so a listener asking for ``orders``
        still gets the channel of the queue created as ``Orders``.
        """
        validate_queue_name(queue)
        return notify_channel(self._fetch("require_queue", {"queue": queue}, queue)[0][0])
