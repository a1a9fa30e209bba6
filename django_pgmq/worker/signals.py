"""SIGTERM and SIGINT: the first asks for a graceful stop, a second exits at once.

The handler only records the first signal; the worker's main loop acts on it
(see `Caught.reason`). A Python signal handler runs in the main thread between
two bytecodes, possibly while that thread holds a lock: ``threading.Event``
guards its flag with a plain (non-reentrant) lock, which the main thread holds
for a moment on every ``Event.wait()`` of its loop, so a handler that set the
worker's stop event could deadlock the main thread with itself (the worker
then never stopped on SIGTERM).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
from collections.abc import Iterator
from types import FrameType

log = logging.getLogger("django_pgmq.worker")

SIGNALS = (signal.SIGTERM, signal.SIGINT)


class Caught:
    """The signals received while inside `graceful`."""

    def __init__(self) -> None:
        self.received: list[int] = []  # list.append is atomic: no lock in the handler

    @property
    def reason(self) -> str | None:
        """Why to stop ("SIGTERM received"), once a first signal came; else None."""
        if not self.received:
            return None
        return f"{signal.Signals(self.received[0]).name} received"


@contextlib.contextmanager
def graceful() -> Iterator[Caught]:
    """While inside, the first signal is recorded in the `Caught` given; a second ends the process.

    Outside the main thread (signals cannot be handled there) nothing is recorded.
    """
    caught = Caught()
    if threading.current_thread() is not threading.main_thread():
        yield caught
        return

    def handle(signum: int, frame: FrameType | None) -> None:
        if caught.received:
            name = signal.Signals(signum).name
            log.warning("%s again: exiting now; held messages return when their vt ends", name)
            os._exit(128 + signum)
        caught.received.append(signum)

    previous = {sig: signal.signal(sig, handle) for sig in SIGNALS}
    try:
        yield caught
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
