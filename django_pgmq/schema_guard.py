"""Refuse to migrate a database whose ``pgmq`` schema this app did not make, or to go
back past the migration that brought queue attributes while a queue has some.

Runs on Django's ``pre_migrate`` signal, before any migration of the plan, so a
database with the pgmq extension, or with a ``pgmq`` schema of someone else's, is
left exactly as it was: on a first install, on an upgrade and on ``migrate zero``
(whose last step would otherwise drop that schema). Likewise a downgrade that would
unapply 0013 (queue attributes) is refused, changing nothing, while any queue has
attributes: its reverse drops them, so a paused queue would come back unpaused.

A release squashes the unreleased migrations into one that ``replaces`` them, and their
files are gone: a database with SOME but not all of them applied cannot be moved by
this release (Django would silently skip the rest). That is refused in one line naming
the last one applied and what to do. All of them applied is the squash applied (Django's
own rule), none of them is a database that runs the squash.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError
from django.db import connections

from . import sqlrun

# Migration 0001 (0.1.0) comments the schema so; an install of ours always carries it.
SCHEMA_MARK = "Message queues managed by django-pgmq"


def refuse_foreign_schema(plan: Any = None, using: str = "default", **kwargs: Any) -> None:
    """Raise CommandError, changing nothing, when the plan would touch a pgmq it does not own."""
    if not any(migration.app_label == "django_pgmq" for migration, _backwards in plan or ()):
        return
    [state] = sqlrun.run(connections[using], "refuse_foreign_schema", fetch=sqlrun.NAMED)
    if state["has_extension"]:
        raise CommandError(
            "django-pgmq: this database already has the pgmq extension installed; "
            "django-pgmq provides the same SQL API itself. Run DROP EXTENSION pgmq first "
            "if you mean to replace it, or point Django at another database. Nothing was migrated."
        )
    if state["has_schema"] and not state["comment"].startswith(SCHEMA_MARK):
        raise CommandError(
            'django-pgmq: schema "pgmq" already exists in this database and was not made '
            "by django-pgmq's migrations (a SQL-only pgmq install?). Move or drop it before "
            "running migrate. Nothing was migrated."
        )


def refuse_partly_squashed(plan: Any = None, using: str = "default", **kwargs: Any) -> None:
    """Raise CommandError, changing nothing, when the database has some but not all of the
    migrations that a squash of this release replaces (their files are gone)."""
    from django.db.migrations.loader import MigrationLoader
    from django.db.migrations.recorder import MigrationRecorder

    recorder = MigrationRecorder(connections[using])
    if not recorder.has_table():
        return
    applied = {name for app, name in recorder.applied_migrations() if app == "django_pgmq"}
    if not applied:
        return
    loader = MigrationLoader(None, ignore_no_migrations=True)
    for (app, name), migration in sorted(loader.disk_migrations.items()):
        replaced = [r for a, r in getattr(migration, "replaces", None) or () if a == app]
        if app != "django_pgmq" or not replaced:
            continue
        done = [r for r in replaced if r in applied]
        if done and len(done) < len(replaced):
            raise CommandError(
                f"django-pgmq: this database has {done[-1]} applied, one of the development "
                f"migrations that {name} replaces, but not the {len(replaced) - len(done)} "
                f"after it, and this release no longer has their files. Migrate it first "
                f"with the development version you installed it with (the last one before "
                f"this release: pip install that commit, or your previous checkout; "
                f"manage.py migrate django_pgmq), then install this release and migrate "
                f"again. Nothing was migrated."
            )


# The migration that brought queue attributes: unapplying it drops pgmq.queue_attributes.
# After a release's squash, the migration replacing it does.
ATTRIBUTES_MIGRATION = "0013_queue_attributes"


def _brings_attributes(migration: Any) -> bool:
    replaced = getattr(migration, "replaces", None) or ()
    return (
        migration.name == ATTRIBUTES_MIGRATION or ("django_pgmq", ATTRIBUTES_MIGRATION) in replaced
    )


def refuse_dropping_attributes(plan: Any = None, using: str = "default", **kwargs: Any) -> None:
    """Raise CommandError, changing nothing, when the plan unapplies 0013 while queues
    have attributes (the reverse would drop them silently)."""
    unapplies = any(
        backwards and migration.app_label == "django_pgmq" and _brings_attributes(migration)
        for migration, backwards in plan or ()
    )
    if not unapplies:
        return
    connection = connections[using]
    if not sqlrun.run(connection, "queue_attributes_installed", fetch=sqlrun.ONE)[0]:
        return
    names = sqlrun.run(connection, "queues_with_attributes", fetch=sqlrun.ONE)[0]
    if names:
        shown = ", ".join(f'"{name}"' for name in names[:10]) + (" ..." if len(names) > 10 else "")
        raise CommandError(
            f"django-pgmq: going back past {ATTRIBUTES_MIGRATION} would drop the attributes of "
            f"{len(names)} queue(s) ({shown}): paused queues would come back unpaused, limits "
            "and redrive would be lost. Remove them first (manage.py pgmq_attributes QUEUE "
            "--set KEY= for each key, or SELECT pgmq.set_queue_attributes(queue, "
            "'{\"KEY\": null}')). Nothing was migrated."
        )
