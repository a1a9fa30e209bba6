"""Wait for the database at start-up: a worker started before PostgreSQL waits, not exits.

One log line per failed attempt; the wait doubles from `FIRST_DELAY` up to
`MAX_DELAY` seconds. SIGTERM or SIGINT while waiting ends the wait (the worker
then exits 0 without having started).
"""

from __future__ import annotations

import logging
import random
from time import monotonic, sleep

from django.db import DatabaseError, connections

from ..errors import first_line
from . import signals

log = logging.getLogger("django_pgmq.worker")

FIRST_DELAY = 0.5
MAX_DELAY = 15.0


def wait_for_database(using: str, caught: signals.Caught) -> bool:
    """Connect to ``using``, retrying with backoff; False when a signal came first."""
    delay, attempt = FIRST_DELAY, 1
    while caught.reason is None:
        connection = connections[using]
        try:
            connection.ensure_connection()
            if connection.is_usable():
                if attempt > 1:
                    log.info("database %r is up (attempt %d)", using, attempt)
                return True
            raise DatabaseError("the connection is not usable")
        except DatabaseError as exc:
            connection.close()
            wait = delay * (0.75 + random.random() / 2)
            log.warning(
                "database %r unavailable (attempt %d): %s; retrying in %.1fs",
                using,
                attempt,
                first_line(exc.__cause__ or exc),
                wait,
            )
            _sleep_unless_signalled(wait, caught)
            delay, attempt = min(delay * 2, MAX_DELAY), attempt + 1
    log.info("%s while waiting for database %r: not started", caught.reason, using)
    return False


def _sleep_unless_signalled(seconds: float, caught: signals.Caught) -> None:
    """Sleep in short steps, so a signal ends the wait at once."""
    deadline = monotonic() + seconds
    while caught.reason is None and (left := deadline - monotonic()) > 0:
        sleep(min(left, signals.STEP))
