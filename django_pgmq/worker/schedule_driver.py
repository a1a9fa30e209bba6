"""The worker's schedule driver: a thread that sends the due ticks of periodic schedules.

Every worker runs one (unless ``PGMQ["WORKER_SCHEDULES"]`` is False or
``--no-schedules`` is given): about once a second (``PGMQ["SCHEDULE_INTERVAL"]``)
it calls ``pgmq.enqueue_due_schedules()`` on its own connection. No worker is
special: the database sends each tick once, whichever workers call, so
schedules keep firing while any one worker runs.
"""

from __future__ import annotations

import logging
import threading

from django.db import DatabaseError, connections

from ..errors import PgmqError, first_line
from ..manager import QueueManager

log = logging.getLogger("django_pgmq.worker")


class ScheduleDriver(threading.Thread):
    """Calls ``enqueue_due_schedules`` every ``interval`` seconds until ``stopping`` is set."""

    def __init__(self, using: str, interval: float, stopping: threading.Event) -> None:
        super().__init__(name="pgmq-schedules", daemon=True)
        self.using = using
        self.interval = interval
        self.stopping = stopping

    def run(self) -> None:
        manager = QueueManager(self.using)
        try:
            while not self.stopping.is_set():
                self.tick(manager)
                self.stopping.wait(self.interval)
        finally:
            connections[self.using].close()

    def tick(self, manager: QueueManager) -> None:
        """One call: log what it sent; on a database error, log it and reconnect next time."""
        try:
            for sent in manager.enqueue_due_schedules():
                log.info(
                    "schedule %s: tick %s sent to %s as message %d",
                    sent.schedule_name,
                    sent.tick.isoformat(),
                    sent.queue_name,
                    sent.msg_id,
                )
        except (DatabaseError, PgmqError) as exc:
            log.warning("sending due schedules failed: %s", first_line(exc))
            connections[self.using].close()
