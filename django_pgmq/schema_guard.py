"""Refuse to migrate a database whose ``pgmq`` schema this app did not make.

Runs on Django's ``pre_migrate`` signal, before any migration of the plan, so a
database with the pgmq extension, or with a ``pgmq`` schema of someone else's, is
left exactly as it was: on a first install, on an upgrade and on ``migrate zero``
(whose last step would otherwise drop that schema).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError
from django.db import connections

# Migration 0001 (0.1.0) comments the schema so; an install of ours always carries it.
SCHEMA_MARK = "Message queues managed by django-pgmq"

_STATE = """
SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pgmq'),
       to_regnamespace('pgmq') IS NOT NULL,
       coalesce(obj_description(to_regnamespace('pgmq'), 'pg_namespace'), '')
"""


def refuse_foreign_schema(plan: Any = None, using: str = "default", **kwargs: Any) -> None:
    """Raise CommandError, changing nothing, when the plan would touch a pgmq it does not own."""
    if not any(migration.app_label == "django_pgmq" for migration, _backwards in plan or ()):
        return
    with connections[using].cursor() as cursor:
        cursor.execute(_STATE)
        has_extension, has_schema, comment = cursor.fetchone()
    if has_extension:
        raise CommandError(
            "django-pgmq: this database already has the pgmq extension installed; "
            "django-pgmq provides the same SQL API itself. Run DROP EXTENSION pgmq first "
            "if you mean to replace it, or point Django at another database. Nothing was migrated."
        )
    if has_schema and not comment.startswith(SCHEMA_MARK):
        raise CommandError(
            'django-pgmq: schema "pgmq" already exists in this database and was not made '
            "by django-pgmq's migrations (a SQL-only pgmq install?). Move or drop it before "
            "running migrate. Nothing was migrated."
        )
