"""Exceptions raised by django-pgmq; each message names the queue and the cause."""

from __future__ import annotations


class PgmqError(Exception):
    """Base class of every django-pgmq error."""


class InvalidQueueName(PgmqError, ValueError):
    """The queue name breaks the naming rules (length, characters)."""


class QueueNotFound(PgmqError, LookupError):
    """The queue does not exist in this database."""

    def __init__(self, queue: str, detail: str = "") -> None:
        self.queue = queue
        text = f'queue "{queue}" does not exist'
        super().__init__(f"{text}: {detail}" if detail else f"{text}; create it first")


class QueueNameConflict(PgmqError):
    """Another queue already uses the table this name maps to (names differ only in case)."""


class InvalidPayload(PgmqError, ValueError):
    """A message or its headers cannot be stored as JSON."""


class InvalidArgument(PgmqError, ValueError):
    """An argument is out of range or of the wrong type (vt, qty, delay, ids...)."""


class FeatureNotAvailable(PgmqError):
    """The operation needs something this installation does not have."""
