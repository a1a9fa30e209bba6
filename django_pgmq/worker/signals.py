"""SIGTERM and SIGINT: the first asks for a graceful stop, a second exits at once.

The handler only records the first signal; the worker's main loop acts on it
(see `Caught.reason`). A Python signal handler runs in the main thread between
two bytecodes, possibly while that thread holds a lock: ``threading.Event``
guards its flag with a plain (non-reentrant) lock, which the main thread holds
for a moment on every ``Event.wait()`` of its loop, so a handler that set the
worker's stop event could deadlock the main thread with itself (the worker
then never stopped on SIGTERM).

Python runs signal handlers in the main thread only, and only between two
bytecodes: a signal the kernel hands to another thread waits until the main
thread next runs Python code. So the worker's other threads block SIGTERM and
SIGINT (`block_in_this_thread`: the kernel then delivers them to the main
thread), and the main thread never waits long in one call (`join`): a second
signal exits at once even while a handler still runs.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
from collections.abc import Iterator
from time import monotonic
from types import FrameType

log = logging.getLogger("django_pgmq.worker")

SIGNALS = (signal.SIGTERM, signal.SIGINT)
STEP = 0.2  # seconds: the longest wait of the main thread in one call


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


def block_in_this_thread() -> None:
    """Keep SIGTERM and SIGINT away from the calling thread: the main thread gets them."""
    if threading.current_thread() is threading.main_thread():
        return
    if hasattr(signal, "pthread_sigmask"):  # POSIX
        signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)


def join(thread: threading.Thread, timeout: float) -> None:
    """``thread.join(timeout)`` in short waits, so the main thread handles signals meanwhile."""
    deadline = monotonic() + timeout
    while thread.is_alive():
        left = deadline - monotonic()
        if left <= 0:
            return
        thread.join(min(left, STEP))
