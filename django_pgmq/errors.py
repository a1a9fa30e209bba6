"""Exceptions raised by django-pgmq; each message names the queue and the cause."""

from __future__ import annotations

# A message of JSON null (None) is refused in these words everywhere (the admin's
# "JSON null is not allowed as a message." is their translated twin).
NULL_MESSAGE = "JSON null (None) is not allowed as a message"


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


class ScheduleNotFound(PgmqError, LookupError):
    """No schedule of that name exists in this database."""


class WorkflowNotFound(PgmqError, LookupError):
    """No workflow of that id exists in this database (finished ones go after retention)."""


class FeatureNotAvailable(PgmqError):
    """The operation needs something this installation does not have."""


class InsufficientPrivilege(PgmqError, PermissionError):
    """The database role lacks a privilege on a pgmq object (PostgreSQL's 42501).

    The message keeps PostgreSQL's text, which names the object ("permission denied for
    table q_orders", "must be owner of table q_orders"), and says which privilege that is.
    """


def privilege_named(text: str) -> str:
    """PostgreSQL's permission error text with the privilege it stands for and the remedy."""
    if "must be owner of" in text:
        needed = "ownership (only the role that created the queue, or the owner, may do this)"
    elif "pgmq privilege create_queues" in text:
        return (
            f"{text}; the owner grants it with manage.py pgmq_grant ROLE --create-queues "
            "or SELECT pgmq.grant_app_role('ROLE', create_queues => true)"
        )
    elif "pgmq privilege manage_queues" in text:
        return (
            f"{text}; the owner grants it with manage.py pgmq_grant ROLE --manage-queues "
            "or SELECT pgmq.grant_app_role('ROLE', manage_queues => true)"
        )
    elif "for schema" in text:
        needed = "USAGE on schema pgmq"
    elif "for function" in text or "for procedure" in text:
        needed = "EXECUTE"
    elif "for sequence" in text:
        needed = "USAGE or SELECT"
    else:
        needed = "SELECT, INSERT, UPDATE or DELETE"
    return (
        f"{text}; the role needs {needed}: an owner grants what an application role needs "
        "with manage.py pgmq_grant ROLE (--create-queues to create and drop queues, "
        "--manage-queues to change their attributes and schedules) "
        "or SELECT pgmq.grant_app_role('ROLE')"
    )


class CrossDatabaseTransaction(PgmqError):
    """A send would run outside the caller's transaction: the queue lives in another database."""


# The one map from SQLSTATE to exception, in the manner of psycopg.errors.lookup. Our SQL
# raises class PQ (sql/00_schema.sql); the others are PostgreSQL's own.
_BY_SQLSTATE: dict[str, type[PgmqError]] = {
    "PQ000": FeatureNotAvailable,
    "PQ001": InvalidQueueName,
    "PQ002": QueueNotFound,
    "PQ003": QueueNameConflict,
    "PQ004": InvalidArgument,
    "42501": InsufficientPrivilege,  # insufficient_privilege: psycopg.errors.InsufficientPrivilege
    "PQ005": ScheduleNotFound,
    "PQ006": WorkflowNotFound,
    "42P01": QueueNotFound,  # pgmq's own: relation "pgmq.q_<name>" does not exist
    "0A000": FeatureNotAvailable,
    "22P02": InvalidPayload,  # not valid JSON (e.g. a lone surrogate)
    "22P05": InvalidPayload,  # \u0000 in a string: jsonb cannot store it
}


def lookup(sqlstate: str | None) -> type[PgmqError] | None:
    """The PgmqError subclass a database error's SQLSTATE stands for, or None."""
    return _BY_SQLSTATE.get(sqlstate or "")


def from_sqlstate(sqlstate: str | None, text: str, queue: str | None) -> PgmqError | None:
    """The error a database error stands for, its message naming the queue; None if none.

    A missing table means a missing queue only when the statement was about one.
    """
    kind = lookup(sqlstate)
    if kind is QueueNotFound:
        return QueueNotFound(queue) if queue is not None else None
    if kind is None:
        return None
    if kind is InsufficientPrivilege:
        text = privilege_named(text)
    prefix = f'queue "{queue}": '
    if not queue or kind is QueueNameConflict or text.startswith(prefix):
        prefix = ""  # the database's own text names the queue already (PQ004 does)
    return kind(prefix + text)


def first_line(exc: BaseException) -> str:
    """The first line of an error's text (psycopg's often run over several lines), for a
    one-line log or check message; the error's class name when it has no text."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
