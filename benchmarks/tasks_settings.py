"""Settings of ``python -m benchmarks.tasks``: the example project with one TASKS backend.

``BENCH_TASKS_BACKEND`` picks it: ``pgmq`` (django_pgmq.tasks.PgmqBackend) or ``db``
(django-tasks-db's DatabaseBackend, whose app is then installed). ``BENCH_ASYNC_COMMIT=1``
runs ours with OPTIONS ``"synchronous_commit": False`` (the opt-in; default: durable).
"""

import os

from example_project.settings import *  # noqa: F403
from example_project.settings import INSTALLED_APPS

if os.environ.get("BENCH_TASKS_BACKEND") == "db":
    INSTALLED_APPS = [*INSTALLED_APPS, "django_tasks_db"]
    TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
elif os.environ.get("BENCH_ASYNC_COMMIT") == "1":  # the opt-in: OPTIONS synchronous_commit
    TASKS = {
        "default": {
            "BACKEND": "django_pgmq.tasks.PgmqBackend",
            "OPTIONS": {"synchronous_commit": False},
        }
    }
else:  # the default: every commit durable
    TASKS = {"default": {"BACKEND": "django_pgmq.tasks.PgmqBackend"}}
LOGGING = {"version": 1, "disable_existing_loggers": False}
if os.environ.get("BENCH_PREPARED") == "1":  # psycopg's prepared statements on (off in Django)
    DATABASES["default"]["OPTIONS"] = {  # noqa: F405
        **DATABASES["default"].get("OPTIONS", {}),  # noqa: F405
        "prepare_threshold": 5,
    }
