"""``--max-messages``: how many messages a worker may still take."""

from __future__ import annotations

import threading


class Budget:
    """A count of messages left to read; unlimited when created with None."""

    def __init__(self, limit: int | None) -> None:
        self._left = limit
        self._lock = threading.Lock()

    def take(self, wanted: int) -> int:
        """Reserve up to ``wanted`` messages; 0 once the budget is spent."""
        with self._lock:
            if self._left is None:
                return wanted
            granted = min(wanted, self._left)
            self._left -= granted
            return granted

    def give_back(self, count: int) -> None:
        """Return reserved messages that were not read (or were handed back)."""
        if count <= 0:
            return
        with self._lock:
            if self._left is not None:
                self._left += count
