"""A consumer thread: read a due queue, run its handler, settle, repeat.

Each thread uses its own Django database connection (Django's connections are
per thread), closed when the thread ends.
"""

from __future__ import annotations

import logging
import random
import threading
from time import monotonic
from typing import TYPE_CHECKING

from django.db import DatabaseError, connections

from ..errors import PgmqError
from .process import Processor

if TYPE_CHECKING:
    from .runner import Worker

log = logging.getLogger("django_pgmq.worker")

MAX_ERROR_BACKOFF = 5.0


class ConsumerThread(threading.Thread):
    """Reads and handles messages until the worker stops."""

    def __init__(self, worker: Worker, index: int) -> None:
        super().__init__(name=f"pgmq-consumer-{index}", daemon=True)
        self.worker = worker
        self.errors = 0

    def run(self) -> None:
        worker = self.worker
        try:
            while not worker.stopping.is_set():
                due = worker.schedule.due()
                if not due:
                    worker.schedule.wait()
                for queue, token in due:
                    if worker.stopping.is_set():
                        break
                    self._guarded_turn(queue, token)
        finally:
            connections.close_all()

    def _guarded_turn(self, queue: str, token: int) -> None:
        try:
            self._turn(queue, token)
            self.errors = 0
        except (DatabaseError, PgmqError) as exc:
            self._back_off(queue, exc, traceback=False)
        except Exception as exc:
            self._back_off(queue, exc, traceback=True)

    def _back_off(self, queue: str, exc: Exception, *, traceback: bool) -> None:
        """Log, drop this thread's connection and wait before reading ``queue`` again."""
        self.errors += 1
        delay = min(0.1 * 2**self.errors, MAX_ERROR_BACKOFF) * (0.5 + random.random() / 2)
        log.error(
            "%s: %s: %s; retrying in %.1fs",
            queue,
            type(exc).__name__,
            str(exc).strip().splitlines()[0] if str(exc).strip() else "",
            delay,
            exc_info=exc if traceback else None,
        )
        connections[self.worker.manager.using].close()
        self.worker.schedule.postpone(queue, delay)

    def _turn(self, queue: str, token: int) -> None:
        worker = self.worker
        settings = worker.settings[queue]
        wanted = worker.budget.take(settings.batch)
        if not wanted:
            worker.schedule.read_done(queue, token, 0)
            return
        claimed_at = monotonic()
        try:
            messages = worker.manager.read(queue, vt=settings.vt, qty=wanted)
        except BaseException:
            worker.budget.give_back(wanted)
            raise
        worker.budget.give_back(wanted - len(messages))
        worker.schedule.read_done(queue, token, len(messages))
        if not messages:
            return
        worker.holdings.add(queue, [m.msg_id for m in messages], settings.vt, claimed_at)
        outcome = Processor(settings, worker.manager, worker.holdings, worker.stopping).run(
            messages
        )
        worker.budget.give_back(outcome.released)
        worker.record(queue, outcome, monotonic() - claimed_at)
