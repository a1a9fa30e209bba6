"""The messages a worker holds: kept hidden while handled, handed back on shutdown."""

from __future__ import annotations

import contextlib
import threading
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass


@dataclass
class _Held:
    vt: int
    extend_at: float  # monotonic time from which the heartbeat extends its vt
    started: bool = False


class Holdings:
    """Messages read and not yet acknowledged, by (queue, msg_id); shared by all threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: dict[tuple[str, int], _Held] = {}
        self._claiming = 0  # reads under way whose messages are not added yet
        self._retries_until = 0.0  # monotonic time the last retry scheduled here comes back

    def add(self, queue: str, msg_ids: Iterable[int], vt: int, claimed_at: float) -> None:
        """Record messages read with visibility ``vt`` at monotonic time ``claimed_at``."""
        with self._lock:
            for msg_id in msg_ids:
                self._items[queue, msg_id] = _Held(vt, claimed_at + vt / 2)

    def start(self, queue: str, msg_ids: Iterable[int]) -> None:
        """Mark messages whose handler is about to run (never released on shutdown)."""
        with self._lock:
            for msg_id in msg_ids:
                held = self._items.get((queue, msg_id))
                if held is not None:
                    held.started = True

    def drop(self, queue: str, msg_ids: Iterable[int]) -> None:
        """Forget messages: acknowledged, retried, dead-lettered or released."""
        with self._lock:
            for msg_id in msg_ids:
                self._items.pop((queue, msg_id), None)

    def due(self, now: float) -> dict[tuple[str, int], list[int]]:
        """Messages past half their vt, grouped by (queue, vt): the heartbeat extends them."""
        groups: dict[tuple[str, int], list[int]] = defaultdict(list)
        with self._lock:
            for (queue, msg_id), held in self._items.items():
                if held.extend_at <= now:
                    groups[queue, held.vt].append(msg_id)
        return dict(groups)

    def extended(self, queue: str, msg_ids: Iterable[int], at: float) -> None:
        """Record that messages were hidden for another vt from monotonic time ``at``."""
        with self._lock:
            for msg_id in msg_ids:
                held = self._items.get((queue, msg_id))
                if held is not None:
                    held.extend_at = at + held.vt / 2

    def unstarted(self) -> dict[str, list[int]]:
        """Held messages whose handler has not started, by queue."""
        groups: dict[str, list[int]] = defaultdict(list)
        with self._lock:
            for (queue, msg_id), held in self._items.items():
                if not held.started:
                    groups[queue].append(msg_id)
        return dict(groups)

    @contextlib.contextmanager
    def claiming(self) -> Iterator[None]:
        """Around a read and the `add` of what it read: `busy` meanwhile (``--until-empty``)."""
        with self._lock:
            self._claiming += 1
        try:
            yield
        finally:
            with self._lock:
                self._claiming -= 1

    def busy(self) -> bool:
        """Whether any message is held or being read by this worker."""
        with self._lock:
            return bool(self._items) or self._claiming > 0

    def retrying(self, until: float) -> None:
        """Record a retry that makes its message visible again at monotonic time ``until``."""
        with self._lock:
            self._retries_until = max(self._retries_until, until)

    def retries_waiting(self, now: float) -> bool:
        """Whether a retry scheduled here is still in its backoff (``--until-empty`` waits)."""
        with self._lock:
            return self._retries_until > now

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)
