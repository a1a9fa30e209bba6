"""SIGTERM and SIGINT: the first asks for a graceful stop, a second exits at once."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType

log = logging.getLogger("django_pgmq.worker")

SIGNALS = (signal.SIGTERM, signal.SIGINT)


@contextlib.contextmanager
def graceful(stop: Callable[[str], None]) -> Iterator[None]:
    """While inside, the first signal calls ``stop(reason)``; the second ends the process.

    Outside the main thread (signals cannot be handled there) this does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []

    def handle(signum: int, frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        if received:
            log.warning("%s again: exiting now; held messages return when their vt ends", name)
            os._exit(128 + signum)
        received.append(signum)
        stop(f"{name} received")

    previous = {sig: signal.signal(sig, handle) for sig in SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
