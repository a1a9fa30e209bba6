"""Which databases the dashboard can show; its settings are in ``conf`` (``PGMQ``)."""

from __future__ import annotations

from django.db import DatabaseError, connections
from django.db.migrations.recorder import MigrationRecorder

from .. import conf


def database_aliases() -> list[str]:
    """The PostgreSQL database aliases a dashboard can be shown for, default first."""
    default = conf.database_alias()
    others = sorted(
        alias for alias in connections.databases if alias != default and conf.is_postgresql(alias)
    )
    return [default, *others]


def migrated(alias: str) -> bool:
    """Whether ``manage.py migrate --database <alias>`` installed django_pgmq there.

    Asked of Django's own migration records, so a database that lacks the app (an
    alias of the project for other data) gets a plain line with the command that
    fixes it, not an SQL error. A database that cannot be reached counts as migrated:
    the page then shows why it cannot be read.
    """
    try:
        recorder = MigrationRecorder(connections[alias])
        return recorder.has_table() and recorder.migration_qs.filter(app="django_pgmq").exists()
    except DatabaseError:
        return True
