"""App configuration for django-pgmq."""

from django.apps import AppConfig


class DjangoPgmqConfig(AppConfig):
    name = "django_pgmq"
    label = "django_pgmq"
    verbose_name = "Message queues (pgmq)"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import conf  # noqa: F401  (registers the settings checks)
        from .notify import hook_pgtrigger_command

        # Queue triggers reach pgtrigger's registry when its command runs, not here:
        # ready() must not query a database that may be unreachable or not migrated.
        hook_pgtrigger_command()
