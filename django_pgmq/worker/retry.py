"""Retry policy: exponential backoff with jitter, and when to give up."""

from __future__ import annotations

import random
from collections.abc import Callable

MAX_DELAY = 60.0


def backoff(
    read_ct: int, base: float, *, cap: float = MAX_DELAY, rand: Callable[[], float] = random.random
) -> float:
    """Seconds before a failed message is visible again.

    ``base`` doubles with each read, is capped at ``cap``, then "equal jitter"
    keeps it between half and all of that, so retries of one burst spread out.
    """
    exponent = min(max(read_ct - 1, 0), 32)
    delay = min(cap, base * 2.0**exponent)
    return delay / 2 + rand() * delay / 2


def exhausted(read_ct: int, max_receive_count: int) -> bool:
    """Whether a failed message has used up its reads (``max_receive_count`` 0: never)."""
    return max_receive_count > 0 and read_ct >= max_receive_count


def unsettled_too_often(read_ct: int, max_receive_count: int) -> bool:
    """Whether a message was read more than ``max_receive_count`` times without being settled.

    A failure at ``max_receive_count`` dead-letters the message, so more reads mean the
    earlier ones ended without a verdict: the worker died, or the vt ran out.
    """
    return max_receive_count > 0 and read_ct > max_receive_count
