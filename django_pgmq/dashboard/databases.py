"""Which databases the dashboard can show; its settings are in ``conf`` (``PGMQ``)."""

from __future__ import annotations

from django.db import connections

from .. import conf


def database_aliases() -> list[str]:
    """The PostgreSQL database aliases a dashboard can be shown for, default first."""
    default = conf.database_alias()
    others = sorted(
        alias for alias in connections.databases if alias != default and conf.is_postgresql(alias)
    )
    return [default, *others]
