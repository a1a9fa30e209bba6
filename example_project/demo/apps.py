"""The demo app: example models and consumers for django-pgmq."""

from django.apps import AppConfig


class DemoConfig(AppConfig):
    name = "example_project.demo"
    label = "demo"
    default_auto_field = "django.db.models.BigAutoField"
