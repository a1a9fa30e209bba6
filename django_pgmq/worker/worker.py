"""The worker: starts the threads, waits for a reason to stop, then stops cleanly.

Threads: ``concurrency`` consumers (each with its own connection), one
listener (LISTEN connection, unless poll-only), one heartbeat, all on one
database. Queues on several databases get one `Worker` each, run together in
one process by `fleet.run_workers`, which runs every worker (one or several). The main thread
handles signals, checks ``--max-messages`` / ``--until-empty`` and shuts down:
running handlers get ``shutdown_timeout`` seconds, messages held but not
started are handed back at once, the worker's row is removed.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from time import monotonic

from django.db import DatabaseError, connections

from .. import conf, index_builds
from ..errors import PgmqError, first_line
from ..internal import InternalManager
from ..names import limit_channel, notify_channel
from ..pausing import paused_queues
from . import signals
from .budget import Budget
from .config import QueueSettings
from .heartbeat import Heartbeat
from .held import Holdings
from .listener import Listener
from .loop import ConsumerThread
from .outcome import Outcome
from .presence import Presence
from .sampling import sample_all_queues
from .schedule import Schedule
from .schedule_driver import ScheduleDriver
from .timing import TIMINGS, record_timings

log = logging.getLogger("django_pgmq.worker")

DEFAULT_THROTTLE_MS = 250
LISTENER_READY_TIMEOUT = 5.0


@dataclass(frozen=True)
class WorkerOptions:
    """How a worker runs (the command-line options that are not per queue)."""

    concurrency: int = 1
    poll_interval: float = 5.0
    listen: bool = True
    max_messages: int | None = None
    until_empty: bool = False
    shutdown_timeout: float = 30.0
    heartbeat: float | None = None  # None: PGMQ["WORKER_HEARTBEAT"]
    maintenance: Callable[[], None] | None = None  # run with the samples (e.g. purge results)
    schedules: bool = True  # drive the periodic schedules (schedule_driver.py)


class Worker:
    """Consumes the given queues until stopped (signal, `stop`, or an exit condition)."""

    def __init__(
        self, queues: Sequence[QueueSettings], options: WorkerOptions, using: str | None = None
    ) -> None:
        # One database per Worker, named (never routed per queue): its listener, threads,
        # heartbeat and row all use it. pgmq_consume makes one Worker per database.
        self.manager = InternalManager(using or conf.database_alias())
        self.settings = {s.queue: s for s in queues}
        self.options = options
        self.stopping = threading.Event()
        self.holdings = Holdings()
        self.budget = Budget(options.max_messages)
        self.schedule = Schedule(self.settings, options.poll_interval, {})
        self.interval = float(options.heartbeat or conf.get("WORKER_HEARTBEAT"))
        self.presence = Presence(
            self.manager.using, list(self.settings), options.concurrency, self.interval
        )
        self.heartbeat = Heartbeat(
            self.manager,
            self.holdings,
            min_vt=min(s.vt for s in queues),
            interval=self.interval,
            beat=self._beat,
        )
        self.listener: Listener | None = None
        self.driver: ScheduleDriver | None = None
        self.threads: list[ConsumerThread] = []
        self.processed = self.failed = self.finished = 0
        self.totals = Outcome()  # every batch's outcome added up, for the last line
        self.stop_reason = ""
        self._counts = threading.Lock()
        self._next_sample = 0.0
        self.paused: frozenset[str] = frozenset()  # queues the admin paused (see pausing.py)
        self.limited: frozenset[str] = frozenset()  # queues with max_in_flight or rate_limit
        self._caught = signals.Caught()  # the signals `run` catches
        self._logged = (0, 0, monotonic())  # processed, failed, when: the last totals' line

    # -- life cycle -------------------------------------------------------------

    def stop(self, reason: str = "stop requested") -> None:
        """Ask the worker to stop: no more reads; running handlers finish."""
        if not self.stopping.is_set():
            self.stop_reason = reason
            log.info("stopping: %s", reason)
        self.stopping.set()
        self.schedule.close()

    def _start(self) -> None:
        self.presence.register()
        self._refresh_paused()
        wakeup = self._start_listener() if self.options.listen else "poll only"
        log.info(
            "worker %s:%d started on database %r: concurrency %d, wake-up: %s, poll every %gs; "
            "queues: %s",
            socket.gethostname(),
            os.getpid(),
            self.manager.using,
            self.options.concurrency,
            wakeup,
            self.options.poll_interval,
            "; ".join(s.describe() for s in self.settings.values()),
        )
        self.heartbeat.start()
        if self.options.schedules:
            interval = float(conf.get("SCHEDULE_INTERVAL"))
            self.driver = ScheduleDriver(self.manager.using, interval, self.stopping)
            self.driver.start()
        self.threads = [ConsumerThread(self, i) for i in range(self.options.concurrency)]
        for thread in self.threads:
            thread.start()

    def _shutdown(self) -> None:
        self.stop(self.stop_reason or "shutting down")
        deadline = monotonic() + self.options.shutdown_timeout
        for thread in self.threads:
            signals.join(thread, deadline - monotonic())
        stuck = [t.name for t in self.threads if t.is_alive()]
        if stuck:
            log.error(
                "%d handler(s) still running after --shutdown-timeout %gs (%s); exiting "
                "without them: their messages return when their vt ends",
                len(stuck),
                self.options.shutdown_timeout,
                ", ".join(stuck),
            )
            self._guarded("releasing held messages", self._release_unstarted)
        if self.heartbeat.is_alive():
            self.heartbeat.finished.set()
            signals.join(self.heartbeat, 5)
        if self.listener is not None:
            signals.join(self.listener, 1)
        if self.driver is not None:
            signals.join(self.driver, 5)
        self._guarded("recording handler durations", self._record_timings)
        self._guarded("removing the worker's row", self.presence.unregister)
        connections.close_all()
        log.info("stopped (%s). %s", self.stop_reason, self.totals.totals())

    # -- wake-up ------------------------------------------------------------------

    def _start_listener(self) -> str:
        """Enable missing insert notifications, start the listener; describe the wake-up."""
        try:
            throttles = self.manager.notify_throttles()
            for queue in self.settings:
                if queue not in throttles:
                    self._enable_notify(queue)
            throttles = self.manager.notify_throttles()
        except (DatabaseError, PgmqError) as exc:
            log.warning("insert notifications unavailable (%s); polling only", exc)
            return "poll only (notifications unavailable)"
        notified = [q for q in self.settings if q in throttles]
        if not notified:
            return "poll only (no queue has notifications)"
        channels = {notify_channel(q): q for q in notified}
        # A limited queue's freed slot wakes its readers too (nothing is sent for others).
        channels.update({limit_channel(q): q for q in self.settings})
        self.schedule.set_throttles({q: throttles[q] / 1000 for q in notified})
        self.listener = Listener(self.manager.using, channels, self.schedule.wake, self.stopping)
        self.listener.start()
        if not self.listener.ready.wait(LISTENER_READY_TIMEOUT):
            log.warning("listener not connected yet; polling until it is")
        windows = ", ".join(f"{q} {throttles[q]}ms" for q in notified)  # each queue once
        return f"LISTEN/NOTIFY (throttle: {windows})"

    def _enable_notify(self, queue: str) -> None:
        try:
            self.manager.enable_notify(queue, DEFAULT_THROTTLE_MS)
            log.info("%s: enabled insert notifications (throttle %dms)", queue, DEFAULT_THROTTLE_MS)
        except (DatabaseError, PgmqError) as exc:
            log.warning("%s: cannot enable insert notifications (%s); polling it", queue, exc)

    # -- shared state -------------------------------------------------------------

    def record(self, queue: str, outcome: Outcome, elapsed: float) -> None:
        """Count a settled batch and log its line: INFO if not all done, else DEBUG.

        A line per clean batch would be thousands a second under load; at INFO
        the heartbeat logs the totals instead (see `_beat`).
        """
        with self._counts:
            self.processed += outcome.done
            self.failed += outcome.failed
            self.finished += outcome.finished
            self.totals.add(outcome)
        clean = not (outcome.failed or outcome.lost or outcome.released)
        level = logging.DEBUG if clean else logging.INFO
        if log.isEnabledFor(level):
            log.log(
                level,
                "%s: %d message(s) in %.1f ms: %s",
                queue,
                outcome.finished + outcome.released,
                elapsed * 1000,
                outcome.summary(),
            )

    def _beat(self) -> None:
        """The heartbeat's periodic work: the worker's row, the totals' line, samples when due."""
        processed, failed = self.processed, self.failed
        self.presence.beat(processed, failed)
        done, fails = processed - self._logged[0], failed - self._logged[1]
        if done or fails:
            log.info(
                "%d message(s) done, %d failed in the last %.0fs (%d done, %d failed in all)",
                done,
                fails,
                monotonic() - self._logged[2],
                processed,
                failed,
            )
        self._logged = (processed, failed, monotonic())
        self._refresh_paused()
        if monotonic() >= self._next_sample:
            interval = float(conf.get("SAMPLE_INTERVAL"))
            self._next_sample = monotonic() + interval
            retention = timedelta(days=float(conf.get("SAMPLE_RETENTION_DAYS")))
            sample_all_queues(self.manager, interval=interval, retention=retention)
            # Indexes other clients wanted (pgmq.pending_indexes()), built in the background.
            index_builds.build_in_background(self.manager.using)
            self._record_timings()
            if self.options.maintenance is not None:
                self.options.maintenance()

    def _record_timings(self) -> None:
        """Write this process's handler durations since the last time (for the admin)."""
        retention = timedelta(days=float(conf.get("SAMPLE_RETENTION_DAYS")))
        record_timings(self.manager.using, TIMINGS, retention=retention, queues=self.settings)

    def _refresh_paused(self) -> None:
        """Which queues are paused: reads of them stop (held messages still finish)."""
        paused = paused_queues(self.manager.using, self.settings)
        if paused != self.paused:
            log.info("paused queues: %s", ", ".join(sorted(paused)) or "none")
        self.paused = paused
        self.limited = frozenset(
            row.queue_name for row in self.manager.queue_limits() if row.queue_name in self.settings
        )

    def _drained(self) -> bool:
        """``--until-empty``: nothing visible now, nothing held, none of our retries waiting.

        Messages sent with a delay (or hidden by another consumer, or set aside)
        do not count: they may stay invisible for hours, and a drain must end.
        """
        if self.holdings.busy() or self.holdings.retries_waiting(monotonic()):
            return False  # the cheap answer first: no query while the worker is busy
        # Then the queues, then the holdings again: a message read in between is held
        # (or retried) by the time of the second look.
        if not self._queues_empty():
            return False
        return not (self.holdings.busy() or self.holdings.retries_waiting(monotonic()))

    def idle(self) -> bool:
        """``--until-empty`` (asked by the fleet): see `_drained`."""
        return self._drained()

    def _queues_empty(self) -> bool:
        """No message of its queues is visible now (paused queues are not waited for)."""
        try:
            readable = [q for q in self.settings if q not in self.paused]
            return all(self.manager.metrics(q).queue_visible_length == 0 for q in readable)
        except (DatabaseError, PgmqError) as exc:
            log.debug("checking for empty queues: %s", exc)
            connections[self.manager.using].close()
            return False

    def _release_unstarted(self) -> None:
        for queue, msg_ids in self.holdings.unstarted().items():
            released = self.manager.set_vt_seconds(queue, msg_ids, 0, unread=True)
            self.holdings.drop(queue, released)

    def _guarded(self, what: str, action: Callable[[], None]) -> None:
        """Run ``action`` on the main thread's connection; once more on a fresh one if it fails.

        That connection sits idle while the worker runs: a database restart
        meanwhile leaves it dead, and the first statement on it fails.
        """
        for attempt in (1, 2):
            try:
                action()
                return
            except (DatabaseError, PgmqError) as exc:
                connections[self.manager.using].close()
                if attempt == 2:
                    log.warning("%s failed: %s", what, first_line(exc))
