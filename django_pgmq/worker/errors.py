"""Exceptions a handler raises to steer the worker."""

from __future__ import annotations


class PoisonMessage(Exception):
    """Raise from a handler (or a consumer's ``decode``) to dead-letter the message at once.

    For a message that can never succeed, such as a payload the handler cannot
    decode: retrying it would only fail again.
    """


class Unsettled(PoisonMessage):
    """Read more than ``max_receive_count`` times, never settled: its runner died or overran.

    Such a message (say, one whose handler crashes the process) is dead-lettered
    without running its handler again.
    """
