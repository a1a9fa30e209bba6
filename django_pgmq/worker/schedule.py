"""When to read each queue: at once when woken, often during a throttle window, else on poll.

pgmq's insert notifications are throttled: after one, further inserts in the
same window send none. So a woken queue is read again and again until a full
throttle window passes with nothing new; a throttled message then costs no
more latency than a notified one. With no notification a queue is read every
poll interval, and when a message this worker retried becomes visible again (its
backoff ends: no insert notifies it).
"""

from __future__ import annotations

import heapq
import logging
import threading
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from time import monotonic

log = logging.getLogger("django_pgmq.worker")

MIN_STEP = 0.005  # seconds between reads during a throttle window, at least
MAX_STEP = 0.05  # and at most


class Schedule:
    """Per queue, the next time to read it; threads wait here for the earliest one."""

    def __init__(
        self, queues: Iterable[str], poll_interval: float, throttles: Mapping[str, float]
    ) -> None:
        now = monotonic()
        self._queues = list(queues)
        self._poll = poll_interval
        self._throttle = {q: throttles.get(q, 0.0) for q in self._queues}
        self._next = dict.fromkeys(self._queues, now)
        self._hot_until = dict.fromkeys(self._queues, 0.0)
        self._wakes = dict.fromkeys(self._queues, 0)
        self._retries: dict[str, list[float]] = {q: [] for q in self._queues}  # heaps
        self._cond = threading.Condition()
        self._closed = False

    def set_throttles(self, throttles: Mapping[str, float]) -> None:
        """Use these throttle windows (seconds) from now on."""
        with self._cond:
            self._throttle.update({q: throttles.get(q, 0.0) for q in self._queues})

    def throttled(self, queue: str) -> bool:
        """Whether ``queue``'s insert notifications are throttled (a window above 0)."""
        with self._cond:
            return self._throttle.get(queue, 0.0) > 0

    def wake(self, queue: str | None = None) -> None:
        """A notification for ``queue`` (None: every queue): read it now and through its window."""
        with self._cond:
            now = monotonic()
            for q in self._queues if queue is None else [queue]:
                if q in self._next:
                    self._next[q] = now
                    self._hot_until[q] = max(self._hot_until[q], now + self._throttle[q])
                    self._wakes[q] += 1
            self._cond.notify_all()

    def retry_at(self, queue: str, times: Iterable[float]) -> None:
        """Retried messages of ``queue`` become visible at these monotonic ``times``:
        read it then, whatever the poll interval (a read starting later sees them)."""
        with self._cond:
            retries = self._retries.get(queue)
            if retries is None:
                return
            for at in times:
                heapq.heappush(retries, at)
            if retries and retries[0] < self._next[queue]:
                self._next[queue] = retries[0]
                self._cond.notify_all()

    def due(self) -> list[tuple[str, int]]:
        """Queues to read now, each with a token for `read_done`."""
        with self._cond:
            now = monotonic()
            due = [q for q in self._queues if self._next[q] <= now]
            for q in due:  # this read starts after they are visible: it serves them
                while self._retries[q] and self._retries[q][0] <= now:
                    heapq.heappop(self._retries[q])
            return [(q, self._wakes[q]) for q in due]

    def read_done(self, queue: str, token: int, got: int) -> None:
        """After a read of ``got`` messages: read again at once, soon, or on the next poll."""
        with self._cond:
            now = monotonic()
            if got:
                self._next[queue] = now
                self._hot_until[queue] = max(self._hot_until[queue], now + self._throttle[queue])
            elif self._wakes[queue] != token:
                pass  # woken while reading: the read may have missed it, so read again
            elif now < self._hot_until[queue]:
                step = min(max(self._throttle[queue] / 10, MIN_STEP), MAX_STEP)
                self._next[queue] = min(now + step, self._hot_until[queue], self._retry(queue))
            elif self._retry(queue) < now + self._poll:
                self._next[queue] = self._retry(queue)
                log.debug(
                    "%s: idle; next read in %.3fs, for a retry", queue, self._next[queue] - now
                )
            else:
                self._next[queue] = now + self._poll
                log.debug("%s: idle; next poll in %gs", queue, self._poll)

    def _retry(self, queue: str) -> float:
        """When the next retried message of ``queue`` is visible (inf: none waits)."""
        retries = self._retries[queue]
        return retries[0] if retries else float("inf")

    def at_limit(self, queue: str, token: int, free_at: datetime) -> None:
        """``queue`` is at its max_in_flight or rate_limit: read it when a slot frees
        (``free_at``, the database's clock), at the latest on the next poll; a wake-up
        (a slot freed by an archive, delete or set_vt) reads it at once."""
        with self._cond:
            if self._wakes[queue] != token:
                self._next[queue] = monotonic()  # woken while reading: read again now
                return
            wait = (free_at - datetime.now(UTC)).total_seconds()
            self._next[queue] = monotonic() + min(max(wait, 0.0), self._poll)
            self._hot_until[queue] = 0.0
            log.debug("%s: at its limit; next read in %.3fs", queue, max(wait, 0.0))

    def postpone(self, queue: str, delay: float) -> None:
        """Do not read ``queue`` for ``delay`` seconds (after an error)."""
        with self._cond:
            self._next[queue] = max(self._next[queue], monotonic() + delay)

    def wait(self) -> None:
        """Block until a queue is due, a wake-up, or `close`."""
        with self._cond:
            if self._closed:
                return
            timeout = min(self._next.values()) - monotonic()
            if timeout > 0:
                self._cond.wait(timeout)

    def close(self) -> None:
        """Release every waiting thread, now and later (shutdown)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
