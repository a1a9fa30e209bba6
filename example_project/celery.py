"""The example project's Celery app; its broker is this project's own database (``django-pgmq://``).

Run a worker with ``celery -A example_project worker``. Settings are the ``CELERY_*``
names in ``example_project/settings.py``.
"""

import os

from celery import Celery

import django_pgmq.contrib.celery  # noqa: F401  (registers the django-pgmq:// transport with kombu)

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "example_project.settings")

app = Celery("example_project")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
