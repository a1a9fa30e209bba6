"""Queue-name rules, shared by Python and mirrored by ``pgmq.validate_queue_name`` in SQL.

A name is 1 to 47 characters of ASCII letters, digits, ``_`` and ``-``; it
starts with a letter, digit or ``_`` and never holds ``--``. Its tables are
``q_<lower(name)>`` and ``a_<lower(name)>``, always quoted, so 47 keeps every
derived identifier (``archived_at_idx_<name>``, partition names) within
PostgreSQL's 63 bytes.
"""

from __future__ import annotations

import re

from .errors import InvalidQueueName

MAX_QUEUE_NAME_LENGTH = 47
# The dead-letter queue of a queue that names none: ``<queue>_dlq`` (the worker's
# default, the admin's overview and the Prometheus scrape, which gets it as a parameter).
DEAD_LETTER_SUFFIX = "_dlq"
# A queue's notification channel for an event, as SQL's pgmq._queue_channel spells it
# (tests/integration/test_notify_channels.py fails when they differ): INSERT_EVENT on a
# send (pgmq's channel), FREE_EVENT when one of its max_in_flight slots may have freed.
CHANNEL = "pgmq.q_{queue}.{event}"
INSERT_EVENT, FREE_EVENT = "INSERT", "FREE"
_ALLOWED = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]*\Z")
_PGMQ_FORBIDDEN = re.compile(r"[$;']|--")


def validate_queue_name(name: object) -> str:
    """Return ``name`` if it is a valid queue name, else raise `InvalidQueueName`."""
    if not isinstance(name, str):
        raise InvalidQueueName(f"queue name must be a string, got {type(name).__name__}")
    if not name:
        raise InvalidQueueName("queue name must not be empty")
    shown = name if len(name) <= 60 else name[:57] + "..."
    if len(name) > MAX_QUEUE_NAME_LENGTH:
        raise InvalidQueueName(
            f"queue name is too long, maximum length is {MAX_QUEUE_NAME_LENGTH} characters: "
            f"{shown!r} has {len(name)}"
        )
    if _PGMQ_FORBIDDEN.search(name):  # pgmq's own text first, then every character refused
        raise InvalidQueueName(
            f"queue name contains invalid characters: $, ;, --, or \\': {shown!r} "
            f"({_refused(name)}; use ASCII letters, digits, '_' and '-')"
        )
    if not _ALLOWED.match(name):
        raise InvalidQueueName(
            f"queue name {shown!r} is invalid ({_refused(name)}): use ASCII letters, digits, "
            "'_' and '-' (not first)"
        )
    return name


def _refused(name: str) -> str:
    """Every character of ``name`` that no queue name may hold, named (a space is shown)."""
    found = list(dict.fromkeys(c for c in name if not re.match(r"[A-Za-z0-9_-]", c)))
    if "--" in name:
        found.append("--")
    if not found:  # only the first character is wrong
        return f"it starts with {name[0]!r}"
    shown = ", ".join("a space" if c == " " else repr(c) for c in found)
    return f"refused: {shown}"


def table_name(name: str, prefix: str = "q") -> str:
    """The unquoted table name of a queue: ``q_orders`` for ``Orders``."""
    return f"{prefix}_{validate_queue_name(name).lower()}"


def notify_channel(name: str) -> str:
    """The channel of the queue stored as ``name``: ``pgmq.q_<name>.INSERT``.

    The trigger uses the spelling stored in pgmq.meta; when the caller's spelling
    may differ in case, ask ``QueueManager.notify_channel(queue)`` instead.
    """
    return CHANNEL.format(queue=validate_queue_name(name), event=INSERT_EVENT)


def limit_channel(name: str) -> str:
    """The channel a queue stored as ``name`` notifies when one of its ``max_in_flight``
    slots may have freed (an archive, delete or set_vt): ``pgmq.q_<name>.FREE``."""
    return CHANNEL.format(queue=validate_queue_name(name), event=FREE_EVENT)
