"""App configuration for django-pgmq."""

from django.apps import AppConfig


class DjangoPgmqConfig(AppConfig):
    name = "django_pgmq"
    label = "django_pgmq"
    verbose_name = "Message queues (pgmq)"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import conf  # noqa: F401  (registers the settings checks)
