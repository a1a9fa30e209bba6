"""The example project with django-celery-results as Celery's result backend.

The canvas test (tests/acceptance/test_celery_canvas.py) runs its worker and its client
with these settings: results, chord counters and group results in the project's own
database, the backend users of a Django project commonly run.
"""

from example_project.settings import *  # noqa: F403

INSTALLED_APPS = [*INSTALLED_APPS, "django_celery_results"]  # noqa: F405
CELERY_RESULT_BACKEND = "django-db"
CELERY_RESULT_EXTENDED = True
