"""Exceptions a handler raises to steer the worker."""

from __future__ import annotations


class PoisonMessage(Exception):
    """Raise from a handler (or a consumer's ``decode``) to dead-letter the message at once.

    For a message that can never succeed, such as a payload the handler cannot
    decode: retrying it would only fail again.
    """


class Unsettled(PoisonMessage):
    """Read more than ``max_reads`` times and never settled: whoever ran it died or overran.

    Such a message (say, one whose handler crashes the process) is dead-lettered
    without running its handler again.
    """


class SettledByHandler(Exception):
    """Raised by a handler that settled its message itself, other than as done.

    For non-atomic handlers that acknowledge their own messages (Django tasks):
    the message is already dealt with, so the worker neither retries nor
    dead-letters it, and only counts it. ``how`` is one of `SETTLED_AS`.
    """

    def __init__(self, how: str, text: str = "") -> None:
        if how not in SETTLED_AS:
            raise ValueError(f"how must be one of {SETTLED_AS}, got {how!r}")
        super().__init__(text or how)
        self.how = how


# How a handler may settle a message itself: a final failure (a task's FAILED
# verdict), moved to a dead-letter queue, or left in the queue, hidden.
SETTLED_AS = ("failed", "dead-lettered", "set aside")
