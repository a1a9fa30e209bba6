"""Retry policy: exponential backoff with jitter, and when to give up."""

from __future__ import annotations

import random
from collections.abc import Callable

from ..consumer_settings import CONSUMER_DEFAULTS

MAX_DELAY: float = CONSUMER_DEFAULTS["max_retry_delay"]


def backoff(
    read_ct: int, base: float, *, cap: float = MAX_DELAY, rand: Callable[[], float] = random.random
) -> float:
    """Seconds before a failed message is visible again.

    ``base`` doubles with each read, up to ``cap`` (``max_retry_delay``), then "equal
    jitter" keeps it between half and all of that, so retries of one burst spread out.
    A cap below ``base`` does not cut the first delay: the delay stays ``base``.
    """
    exponent = min(max(read_ct - 1, 0), 32)
    delay = min(max(cap, base), base * 2.0**exponent)
    return delay / 2 + rand() * delay / 2


def read_past_limit(reads: int, max_receive_count: int) -> bool:
    """The one rule of "read too many times": a message may be handed out
    ``max_receive_count`` times (0: no limit), and a read beyond that dead-letters it.

    The SQL applies the same rule at read time (the claim of ``sql/25_attributes.sql``
    hands out only ``read_ct < max_receive_count``, ``sql/50_fifo.sql`` redrives
    ``read_ct > max_receive_count`` after its read); tests/integration/test_dead_letter_rule.py
    runs a table of counts through the SQL and these functions and fails when they differ.
    """
    return max_receive_count > 0 and reads > max_receive_count


def exhausted(read_ct: int, max_receive_count: int) -> bool:
    """Whether a message that failed on its ``read_ct``-th read has used up its reads:
    its next read would be past the limit (`read_past_limit`)."""
    return read_past_limit(read_ct + 1, max_receive_count)


def unsettled_too_often(read_ct: int, max_receive_count: int) -> bool:
    """Whether a message's ``read_ct``-th read is past the limit (`read_past_limit`).

    A failure at ``max_receive_count`` dead-letters the message, so such a read means the
    earlier ones ended without a verdict: the worker died, or the vt ran out.
    """
    return read_past_limit(read_ct, max_receive_count)
