"""Which databases the dashboard can show; its settings are in ``conf`` (``PGMQ``)."""

from __future__ import annotations

from django.db import connections

from .. import conf


def database_aliases() -> list[str]:
    """The PostgreSQL database aliases a dashboard can be shown for, default first."""
    default = conf.database_alias()
    others = sorted(
        alias
        for alias, settings in connections.databases.items()
        if alias != default and settings.get("ENGINE") == "django.db.backends.postgresql"
    )
    return [default, *others]
