"""The dashboard's settings, read from the ``PGMQ`` dict with defaults.

``DASHBOARD_EXACT_LIMIT``: tables up to this many rows are counted exactly, larger
ones estimated (and marked). ``DASHBOARD_BACKLOG_AGE``: seconds a visible message may
wait before its queue is flagged. ``METRICS_TOKEN``: a bearer token that opens the
Prometheus endpoint without a staff session.
"""

from __future__ import annotations

from typing import Any

from django.db import connections

from .. import conf

DEFAULTS: dict[str, Any] = {
    "DASHBOARD_EXACT_LIMIT": 50_000,
    "DASHBOARD_BACKLOG_AGE": 300,
    "METRICS_TOKEN": None,
}


def option(key: str) -> Any:
    """``PGMQ[key]`` when set, else the dashboard's default."""
    value = conf.get(key)
    return DEFAULTS[key] if value is None else value


def database_aliases() -> list[str]:
    """The PostgreSQL database aliases a dashboard can be shown for, default first."""
    default = conf.database_alias()
    others = sorted(
        alias
        for alias, settings in connections.databases.items()
        if alias != default and settings.get("ENGINE") == "django.db.backends.postgresql"
    )
    return [default, *others]
