"""django-pgmq settings: one ``PGMQ`` dict in Django settings, with defaults and checks.

``PGMQ = {"DATABASE": "default"}`` names the database alias the module-level
functions use. Unknown keys and bad values are reported by ``manage.py check``.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core import checks

DEFAULTS: dict[str, Any] = {
    # Database alias of the module-level functions, commands and worker.
    "DATABASE": "default",
    # Worker: seconds between heartbeats (worker record, vt extension, samples).
    "WORKER_HEARTBEAT": 10.0,
    # Seconds between two depth samples of one queue (QueueSample), whichever worker takes them.
    "SAMPLE_INTERVAL": 60.0,
    # Days a depth sample is kept.
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
}


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def get(key: str) -> Any:
    """The value of ``PGMQ[key]``, or its default when unset or None."""
    value = getattr(settings, "PGMQ", {}).get(key)
    return DEFAULTS.get(key) if value is None else value


def database_alias() -> str:
    """The database alias module-level functions use."""
    return get("DATABASE")


def is_postgresql(alias: str) -> bool:
    """Whether the alias is a PostgreSQL database (Django's backend or one built on it,
    such as the embedded server's): asks the backend, connects to nothing."""
    from django.db import connections

    return connections[alias].vendor == "postgresql"


@checks.register()
def check_settings(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """Report a malformed ``PGMQ`` setting before anything runs."""
    from django.db import connections

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
    if isinstance(raw.get("SCHEDULES"), dict):
        from .schedule_settings import problems

        errors += [
            checks.Error(text, hint="see the Schedules guide", id="django_pgmq.E006")
            for text in problems(raw["SCHEDULES"])
        ]
    alias = raw.get("DATABASE", DEFAULTS["DATABASE"])
    if not isinstance(alias, str):
        pass  # reported above
    elif alias not in connections.databases:
        errors.append(
            checks.Error(
                f"PGMQ['DATABASE'] is {alias!r}, which is not in DATABASES",
                id="django_pgmq.E003",
            )
        )
    elif not is_postgresql(alias):
        errors.append(
            checks.Error(
                f"PGMQ['DATABASE'] {alias!r} is not a PostgreSQL database",
                hint="django-pgmq needs django.db.backends.postgresql (or a backend built on it)",
                id="django_pgmq.E004",
            )
        )
    return errors
