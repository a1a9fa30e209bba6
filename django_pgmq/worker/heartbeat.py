"""The heartbeat thread: keeps held messages hidden, the worker's row fresh, samples taken.

A message whose handler (or whose wait in a batch) runs past half its vt gets
another vt, so a slow handler is never run twice at once. The thread keeps
going through shutdown, until the last handler has finished.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from time import monotonic

from django.db import DatabaseError, connections

from ..errors import PgmqError, first_line
from ..internal import InternalManager
from . import logs, signals
from .held import Holdings

log = logging.getLogger("django_pgmq.worker")

MAX_TICK = 0.5


class Heartbeat(threading.Thread):
    """Every tick: extend due messages; every ``interval``: call ``beat`` (row, samples)."""

    def __init__(
        self,
        manager: InternalManager,
        holdings: Holdings,
        *,
        min_vt: int,
        interval: float,
        beat: Callable[[], None],
    ) -> None:
        super().__init__(name="pgmq-heartbeat", daemon=True)
        self.manager = manager
        self.holdings = holdings
        self.tick = min(MAX_TICK, min_vt / 4, interval)
        self.interval = interval
        self.beat = beat
        self.finished = threading.Event()

    def run(self) -> None:
        signals.block_in_this_thread()
        next_beat = monotonic() + self.interval
        try:
            while not self.finished.wait(self.tick):
                self._guarded(self.extend_due)
                if monotonic() >= next_beat:
                    next_beat = monotonic() + self.interval
                    self._guarded(self.beat)
        finally:
            connections.close_all()

    def extend_due(self) -> None:
        """Give every held message past half its vt another vt."""
        for (queue, vt), msg_ids in self.holdings.due(monotonic()).items():
            with logs.queue_context(queue):
                at = monotonic()
                moved = self.manager.set_vt_seconds(queue, msg_ids, vt)
                self.holdings.extended(queue, moved, at)
                log.debug("%s: extended vt of %s by %ds", queue, moved, vt)

    def _guarded(self, action: Callable[[], None]) -> None:
        try:
            action()
        except (DatabaseError, PgmqError) as exc:
            log.warning("heartbeat: %s: %s", type(exc).__name__, first_line(exc))
            connections[self.manager.using].close()
        except Exception as exc:
            log.error("heartbeat: %s: %s", type(exc).__name__, exc, exc_info=exc)
            connections[self.manager.using].close()
