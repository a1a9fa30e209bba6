"""Settings of the example project.

The database is ``DATABASE_URL`` when set, otherwise an embedded PostgreSQL
whose data lives in ``.pgdata/`` beside this project (``PGMQ_EMBEDDED_DIR``
moves it). Nothing needs to be installed or running.
"""

import os
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent

SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "django-pgmq-example-not-secret")
DEBUG = os.environ.get("DJANGO_DEBUG", "1") == "1"
ALLOWED_HOSTS = ["localhost", "127.0.0.1", "[::1]", "testserver"]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "pgtrigger",
    "django_pgmq",
    "example_project.demo",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "example_project.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

WSGI_APPLICATION = "example_project.wsgi.application"


def _database(name_suffix: str = "") -> dict:
    """A DATABASES entry: DATABASE_URL when set, else the embedded server.

    ``name_suffix`` gives a second database on the same server (alias "other",
    used by the tests of multi-database support). ``PGMQ_TEST_DB_PREFIX`` lets
    several test runs share one server without sharing test databases.
    """
    url = os.environ.get("DATABASE_URL")
    entry: dict
    if url:
        import dj_database_url

        entry = dict(dj_database_url.parse(url))
        entry["NAME"] += name_suffix
    else:
        from django_pgmq import embedded

        data_dir = os.environ.get("PGMQ_EMBEDDED_DIR", str(BASE_DIR / ".pgdata" / "data"))
        entry = embedded.django_database(data_dir, "django_pgmq" + name_suffix)
    prefix = os.environ.get("PGMQ_TEST_DB_PREFIX", "test_")
    entry["TEST"] = {"NAME": prefix + entry["NAME"]}
    return entry


DATABASES = {"default": _database(), "other": _database("_other")}

PGMQ = {"DATABASE": "default"}

USE_TZ = True
TIME_ZONE = "UTC"
LANGUAGE_CODE = "en-us"
STATIC_URL = "static/"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    # django_pgmq's text lines: UTC time, level, [worker host:pid] [queue], message.
    "formatters": {"pgmq": {"()": "django_pgmq.worker.logs.TextFormatter"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "pgmq"}},
    "loggers": {"django_pgmq": {"handlers": ["console"], "level": "INFO"}},
}

# ---- Celery (django_pgmq.contrib.celery) -- appended by the Celery integration ----
# The broker is this project's database: a Celery queue is a pgmq queue, and a task
# sent inside transaction.atomic() exists only if the transaction commits.
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "django-pgmq://")
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": int(os.environ.get("CELERY_VISIBILITY_TIMEOUT", "1800")),
}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Results come back through the broker itself (a reply queue per client): no other server.
CELERY_RESULT_BACKEND = os.environ.get("CELERY_RESULT_BACKEND", "rpc://")
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# ---- end of Celery settings ----

# ---- Django Tasks (django_pgmq.tasks) ----
# Each queue name is a pgmq queue (made on first enqueue, or when a worker starts);
# `manage.py pgmq_consume --tasks` runs them. Django 6.x has django.tasks; on 5.2
# install the backport: pip install "django-pgmq[tasks]".
TASKS = {
    "default": {
        "BACKEND": "django_pgmq.tasks.PgmqBackend",
        "QUEUES": ["default", "emails", "demo_tasks"],  # demo_tasks: manage.py pgmq_demo
    },
    # Failed tasks run again, up to twice, after a backoff from 0.2 s.
    "retrying": {
        "BACKEND": "django_pgmq.tasks.PgmqBackend",
        "QUEUES": ["retrying"],
        "OPTIONS": {"retries": 2, "retry_delay": 0.2, "retention_days": 7},
    },
}
# ---- end of Django Tasks settings ----
