"""App configuration for django-pgmq."""

from typing import Any

from django.apps import AppConfig
from django.core import checks
from django.db.models.signals import post_migrate, pre_migrate
from django.utils.translation import gettext_lazy as _


def apply_schedules(**kwargs: Any) -> None:
    """``post_migrate``: apply ``PGMQ["SCHEDULES"]`` (imported here, when migrate runs)."""
    from .schedule_settings import apply_after_migrate

    apply_after_migrate(**kwargs)


def check_schedules(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """``manage.py check`` of ``PGMQ["SCHEDULES"]`` (imported here, when the checks run)."""
    from .schedule_settings import check_schedules

    return check_schedules(app_configs, **kwargs)


class DjangoPgmqConfig(AppConfig):
    name = "django_pgmq"
    label = "django_pgmq"
    verbose_name = _("Message queues (pgmq)")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import conf, routing  # noqa: F401  (register the settings checks)
        from .notify import hook_pgtrigger_command
        from .schema_guard import (
            refuse_dropping_attributes,
            refuse_foreign_schema,
            refuse_partly_squashed,
        )

        checks.register(check_schedules)

        # Before any migration runs: never install over, upgrade or drop a pgmq schema
        # this app did not make (the pgmq extension's, or a SQL-only install's).
        pre_migrate.connect(refuse_foreign_schema, sender=self, dispatch_uid="django_pgmq_guard")
        # Nor move a database that has only some of the migrations a release squashed.
        pre_migrate.connect(
            refuse_partly_squashed, sender=self, dispatch_uid="django_pgmq_squash_guard"
        )
        # Nor go back past 0013 while queues have attributes (its reverse would drop them).
        pre_migrate.connect(
            refuse_dropping_attributes, sender=self, dispatch_uid="django_pgmq_attributes_guard"
        )

        # After migrate: PGMQ["SCHEDULES"] applied to the database just migrated.
        post_migrate.connect(apply_schedules, sender=self, dispatch_uid="django_pgmq_schedules")

        # Queue triggers reach pgtrigger's registry when its command runs, not here:
        # ready() must not query a database that may be unreachable or not migrated.
        hook_pgtrigger_command()

        # Register our kombu scheme "django-pgmq" whenever kombu is installed. kombu's
        # own "pgmq" stays kombu's, unless this project's broker URL still uses it
        # (django-pgmq 0.1's scheme): then it means ours here, with a warning.
        try:
            from .contrib import celery
        except ModuleNotFoundError as exc:
            if exc.name not in ("kombu", "celery"):
                raise
        else:
            legacy = celery.legacy_broker_setting()
            if legacy is not None:
                celery.adopt_legacy_scheme(legacy)
