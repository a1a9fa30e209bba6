"""django-pgmq settings: one ``PGMQ`` dict in Django settings, with defaults and checks.

``PGMQ = {"DATABASE": "default"}`` names the database alias the module-level
functions use. Unknown keys and bad values are reported by ``manage.py check``.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core import checks

DEFAULTS: dict[str, Any] = {
    # Database alias of the module-level functions, commands and worker.
    "DATABASE": "default",
    # Worker: seconds between heartbeats (worker record, vt extension, samples).
    "WORKER_HEARTBEAT": 10.0,
    # Seconds between two samples of one queue's figures (QueueSample), whichever worker takes them.
    "SAMPLE_INTERVAL": 60.0,
    # Days a queue sample is kept.
    "SAMPLE_RETENTION_DAYS": 7,
    # Dashboard: tables up to this many rows are counted exactly, larger ones estimated.
    "DASHBOARD_EXACT_LIMIT": 50_000,
    # Dashboard: seconds a visible message may wait before its queue is flagged.
    "DASHBOARD_BACKLOG_AGE": 300,
    # Bearer token that opens the Prometheus endpoint without a staff session (None: staff only).
    "METRICS_TOKEN": None,
    # Periodic schedules, by name, applied by migrate and at worker start (schedule_settings.py).
    "SCHEDULES": {},
    # Whether workers (pgmq_consume) send the due ticks of schedules.
    "WORKER_SCHEDULES": True,
    # Seconds between a worker's calls of pgmq.enqueue_due_schedules().
    "SCHEDULE_INTERVAL": 1.0,
    # Which database holds a queue: ordered (shell pattern, alias) pairs, or the dotted
    # path of a router with db_for_queue(queue_name); unmatched queues stay on DATABASE.
    "QUEUE_DATABASES": None,
    # Replica the admin's read-only pages and Prometheus read from: an alias (replica of
    # DATABASE) or {queue database alias: replica alias}. Consumers never read from it.
    "READ_DATABASE": None,
    # Let a routed send run outside the caller's transaction.atomic() on another alias.
    "ALLOW_CROSS_DATABASE_SEND": False,
    # How long a finished workflow (no step waiting or sent) is kept: a timedelta or seconds.
    "WORKFLOW_RETENTION": timedelta(days=7),
}

# key -> (test, what a valid value is)
_VALID: dict[str, tuple[Any, str]] = {
    "DATABASE": (lambda v: isinstance(v, str) and v != "", "a database alias"),
    "WORKER_HEARTBEAT": (lambda v: _number(v) and v > 0, "a positive number of seconds"),
    "SAMPLE_INTERVAL": (lambda v: _number(v) and v > 0, "a positive number of seconds"),
    "SAMPLE_RETENTION_DAYS": (lambda v: _whole(v) and v >= 1, "a whole number of days, 1 or more"),
    "DASHBOARD_EXACT_LIMIT": (lambda v: _whole(v) and v >= 0, "a whole number of rows, 0 or more"),
    "DASHBOARD_BACKLOG_AGE": (lambda v: _number(v) and v > 0, "a positive number of seconds"),
    "METRICS_TOKEN": (
        lambda v: v is None or (isinstance(v, str) and len(v) >= 16),
        "None or a string of 16 characters or more",
    ),
    "SCHEDULES": (lambda v: isinstance(v, dict), "a dict of schedules by name"),
    "WORKER_SCHEDULES": (lambda v: isinstance(v, bool), "True or False"),
    "SCHEDULE_INTERVAL": (lambda v: _number(v) and 0 < v <= 3600, "seconds, above 0, at most 3600"),
    "QUEUE_DATABASES": (
        lambda v: v is None or _dotted(v) or _routes(v),
        "None, a dotted path to a router, or a list of (pattern, database alias) pairs",
    ),
    "READ_DATABASE": (
        lambda v: v is None or _alias(v) or (isinstance(v, dict) and _aliases(v.items())),
        "None, a database alias, or a dict from database alias to replica alias",
    ),
    "ALLOW_CROSS_DATABASE_SEND": (lambda v: isinstance(v, bool), "True or False"),
    "WORKFLOW_RETENTION": (
        lambda v: (isinstance(v, timedelta) and v >= timedelta(0)) or (_number(v) and v >= 0),
        "a timedelta or a number of seconds, 0 or more",
    ),
}


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _alias(value: Any) -> bool:
    return isinstance(value, str) and value != ""


def _aliases(pairs: Any) -> bool:
    return all(isinstance(p, tuple | list) and len(p) == 2 and all(map(_alias, p)) for p in pairs)


def _dotted(value: Any) -> bool:
    return isinstance(value, str) and "." in value.strip(".")


def _routes(value: Any) -> bool:
    return isinstance(value, list | tuple) and _aliases(value)


def get(key: str) -> Any:
    """The value of ``PGMQ[key]``, or its default when unset or None."""
    value = getattr(settings, "PGMQ", {}).get(key)
    return DEFAULTS.get(key) if value is None else value


def workflow_retention_seconds() -> float:
    """``PGMQ["WORKFLOW_RETENTION"]`` in seconds (a timedelta or a number of seconds)."""
    value = get("WORKFLOW_RETENTION")
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


def database_alias() -> str:
    """The database alias module-level functions use."""
    return get("DATABASE")


def is_postgresql(alias: str) -> bool:
    """Whether the alias is a PostgreSQL database (Django's backend or one built on it,
    such as the embedded server's): asks the backend, connects to nothing."""
    from django.db import connections

    return connections[alias].vendor == "postgresql"


def connection_params(using: str, application_name: str = "django-pgmq") -> dict[str, Any]:
    """psycopg keyword arguments for the alias, as Django would connect, in autocommit
    (for a connection of our own: the worker's listener, the index builds); the
    alias's own ``application_name``, if it sets one, wins."""
    from django.db import connections

    params = connections[using].get_connection_params()
    for key in ("cursor_factory", "context"):
        params.pop(key, None)
    params.setdefault("application_name", application_name)
    return {**params, "autocommit": True}


@checks.register()
def check_settings(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """Report a malformed ``PGMQ`` setting before anything runs."""
    errors: list[checks.CheckMessage] = []
    raw = getattr(settings, "PGMQ", {})
    if not isinstance(raw, dict):
        return [checks.Error("PGMQ must be a dict", id="django_pgmq.E001")]
    for key in sorted(set(raw) - set(DEFAULTS)):
        errors.append(
            checks.Error(
                f"PGMQ has an unknown key {key!r}",
                hint=f"known keys: {', '.join(sorted(DEFAULTS))}",
                id="django_pgmq.E002",
            )
        )
    for key, value in sorted(raw.items()):
        if key in _VALID and not _VALID[key][0](value):
            errors.append(
                checks.Error(
                    f"PGMQ[{key!r}] is {value!r}; it must be {_VALID[key][1]}",
                    id="django_pgmq.E005",
                )
            )
    errors += _check_alias("PGMQ['DATABASE']", raw.get("DATABASE", DEFAULTS["DATABASE"]))
    for name, alias in _named_aliases(raw):
        errors += _check_alias(name, alias)
    if _dotted(raw.get("QUEUE_DATABASES")):
        errors += _check_router(raw["QUEUE_DATABASES"])
    return errors


def _named_aliases(raw: dict[str, Any]) -> list[tuple[str, str]]:
    """Each well-formed alias QUEUE_DATABASES and READ_DATABASE name, with where it is."""
    named: list[tuple[str, str]] = []
    routes: Any = raw.get("QUEUE_DATABASES")
    if _routes(routes):
        named += [(f"PGMQ['QUEUE_DATABASES'] route {p!r}", a) for p, a in routes]
    replica: Any = raw.get("READ_DATABASE")
    if _alias(replica):
        named.append(("PGMQ['READ_DATABASE']", replica))
    elif isinstance(replica, dict) and _aliases(replica.items()):
        for primary, alias in replica.items():
            named += [
                ("PGMQ['READ_DATABASE'] key", primary),
                ("PGMQ['READ_DATABASE'] value", alias),
            ]
    return named


def _check_alias(name: str, alias: Any) -> list[checks.CheckMessage]:
    """An alias a setting names must be a PostgreSQL database in DATABASES."""
    from django.db import connections

    if not isinstance(alias, str):
        return []  # reported by the value checks
    if alias not in connections.databases:
        return [
            checks.Error(f"{name} is {alias!r}, which is not in DATABASES", id="django_pgmq.E003")
        ]
    if not is_postgresql(alias):
        return [
            checks.Error(
                f"{name} {alias!r} is not a PostgreSQL database",
                hint="django-pgmq needs django.db.backends.postgresql (or a backend built on it)",
                id="django_pgmq.E004",
            )
        ]
    return []


def _check_router(path: str) -> list[checks.CheckMessage]:
    """A router path must import and have ``db_for_queue``."""
    from django.utils.module_loading import import_string

    try:
        router = import_string(path)
    except ImportError as exc:
        return [
            checks.Error(
                f"PGMQ['QUEUE_DATABASES'] router {path!r} cannot be imported: {exc}",
                id="django_pgmq.E006",
            )
        ]
    if not callable(getattr(router, "db_for_queue", None)):
        return [
            checks.Error(
                f"PGMQ['QUEUE_DATABASES'] router {path!r} has no db_for_queue(queue_name) method",
                id="django_pgmq.E006",
            )
        ]
    return []
