"""A consumer thread: read a due queue, run its handler, settle, repeat.

Each thread uses its own Django database connection (Django's connections are
per thread), closed when the thread ends.
"""

from __future__ import annotations

import logging
import random
import threading
from time import monotonic
from typing import TYPE_CHECKING, Protocol

from django.db import DatabaseError, connections

from .. import isolation
from ..errors import PgmqError
from ..records import Message
from . import logs, signals
from .process import Processor, Reader

if TYPE_CHECKING:
    from ..internal import InternalManager
    from .budget import Budget
    from .config import QueueSettings
    from .held import Holdings
    from .outcome import Outcome
    from .schedule import Schedule

log = logging.getLogger("django_pgmq.worker")

MAX_ERROR_BACKOFF = 5.0


class ConsumerHost(Protocol):
    """What a consumer thread uses of the worker that runs it (`worker.Worker`).

    Named here so that this module need not import the worker, which imports it: the
    worker owns the threads, the threads see only this.
    """

    manager: InternalManager
    settings: dict[str, QueueSettings]
    stopping: threading.Event
    holdings: Holdings
    budget: Budget
    schedule: Schedule
    paused: frozenset[str]
    limited: frozenset[str]

    def record(self, queue: str, outcome: Outcome, elapsed: float) -> None: ...


class ConsumerThread(threading.Thread):
    """Reads and handles messages until the worker stops."""

    def __init__(self, worker: ConsumerHost, index: int) -> None:
        super().__init__(name=f"pgmq-consumer-{index}", daemon=True)
        self.worker = worker
        self.errors = 0
        # queue -> (messages, claimed_at): a batch read with the previous batch's commit
        self.following: dict[str, tuple[list[Message], float]] = {}

    def run(self) -> None:
        signals.block_in_this_thread()
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
            self._hand_back_following()
            connections.close_all()

    def _hand_back_following(self) -> None:
        """On exit: make the batches read ahead visible again, their read taken back."""
        worker = self.worker
        for queue, (messages, _) in list(self.following.items()):
            ids = [m.msg_id for m in messages]
            try:
                worker.manager.set_vt_seconds(queue, ids, 0, unread=True)
            except (DatabaseError, PgmqError) as exc:
                log.warning("%s: handing back %d message(s) failed: %s", queue, len(ids), exc)
            worker.holdings.drop(queue, ids)
            worker.budget.give_back(len(messages))
        self.following.clear()

    def _guarded_turn(self, queue: str, token: int) -> None:
        with logs.queue_context(queue):
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
        with self.worker.holdings.claiming():  # no moment when a message is read but not held
            self._take_turn(queue, token)

    def _take_turn(self, queue: str, token: int) -> None:
        worker = self.worker
        settings = worker.settings[queue]
        following = self.following.pop(queue, None)
        messages, claimed_at = following or self._claim(queue, token)
        if not messages:
            return
        worker.holdings.add(queue, [m.msg_id for m in messages], settings.vt, claimed_at)
        ahead: list[tuple[list[Message], float]] = []

        def read_next(reader: Reader) -> list[Message]:
            ahead.append(self._claim(queue, token, reader))
            return ahead[-1][0]

        processor = Processor(settings, worker.manager, worker.holdings, worker.stopping)
        try:
            outcome = processor.run(messages, read_next)
        except BaseException:
            for batch, _ in ahead:  # rolled back with the transaction that read them
                worker.budget.give_back(len(batch))
            raise
        if ahead and ahead[-1][0]:
            self.following[queue] = ahead[-1]
            # Held from now on: the heartbeat keeps them hidden while other queues' turns run.
            worker.holdings.add(queue, [m.msg_id for m in ahead[-1][0]], settings.vt, ahead[-1][1])
        worker.budget.give_back(outcome.released)
        worker.schedule.retry_at(queue, outcome.retry_at)  # committed: read each when visible
        worker.record(queue, outcome, monotonic() - claimed_at)

    def _wait_for_a_slot(self, queue: str, token: int) -> bool:
        """After an empty read of a limited queue: when it is at its limit (not empty), read
        it next when a slot frees (its FREE notification wakes it earlier); True then."""
        rows = self.worker.manager.queue_limits(queue)
        free_at = rows[0].next_free_at if rows else None
        if free_at is None:
            return False
        self.worker.schedule.at_limit(queue, token, free_at)
        return True

    def _claim(
        self, queue: str, token: int, reader: Reader | None = None
    ) -> tuple[list[Message], float]:
        """Read a batch of ``queue`` within the budget; the messages and when they were read.

        ``reader`` (the processor's: it also acknowledges the batch before) reads
        instead of a plain read, and is called even when the budget is spent.
        """
        worker = self.worker
        settings = worker.settings[queue]
        wanted = 0 if queue in worker.paused else worker.budget.take(settings.batch)
        if not wanted:
            worker.schedule.read_done(queue, token, 0)
            if reader is not None:
                reader(0)
            return [], 0.0
        claimed_at = monotonic()
        try:
            if reader is not None:
                messages = reader(wanted)
            else:  # READ COMMITTED whatever the server's default level (isolation.py)
                with isolation.read_committed(worker.manager.alias_for(queue), autocommit_too=True):
                    if settings.priority:
                        messages = worker.manager.read_by_priority(
                            queue,
                            vt=settings.vt,
                            qty=wanted,
                            synchronous_commit=settings.synchronous_commit,
                        )
                    else:
                        messages = worker.manager.read(queue, vt=settings.vt, qty=wanted)
        except BaseException:
            worker.budget.give_back(wanted)
            raise
        worker.budget.give_back(wanted - len(messages))
        if not messages and queue in worker.limited and self._wait_for_a_slot(queue, token):
            return messages, claimed_at
        worker.schedule.read_done(queue, token, len(messages))
        if not messages and worker.schedule.throttled(queue):
            # Empty: the next insert should wake this worker at once, not after the window.
            worker.manager.rearm_notify(queue)
        return messages, claimed_at
