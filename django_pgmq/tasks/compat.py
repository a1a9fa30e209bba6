"""Django's Tasks API from wherever this Django has it: ``django.tasks`` (6.0+) or the
``django-tasks`` backport (``django_tasks``, for Django 5.2).

Everything else in this package imports those names from here, so one class
path (``django_pgmq.tasks.PgmqBackend``) works on both lines.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import django
from django.core.exceptions import ImproperlyConfigured

# A type checker reads the names as django.tasks's (django-stubs): the backport has the same API.
if TYPE_CHECKING or django.VERSION >= (6, 0):
    from django.tasks import (
        DEFAULT_TASK_QUEUE_NAME,
        Task,
        TaskContext,
        TaskResult,
        TaskResultStatus,
        task,
        task_backends,
    )
    from django.tasks.backends.base import BaseTaskBackend
    from django.tasks.base import TaskError
    from django.tasks.exceptions import InvalidTask, TaskResultDoesNotExist
    from django.tasks.signals import task_enqueued, task_finished, task_started
    from django.utils.json import normalize_json
else:  # pragma: no cover - the Django 5.2 line
    try:
        from django_tasks import (
            DEFAULT_TASK_QUEUE_NAME,
            TaskContext,
            TaskResult,
            TaskResultStatus,
            task,
            task_backends,
        )
    except ImportError as exc:
        raise ImproperlyConfigured(
            "django_pgmq.tasks needs Django 6.0+ (django.tasks) or, on Django 5.2, "
            "the django-tasks backport: pip install 'django-pgmq[tasks]'"
        ) from exc
    from django_tasks.backends.base import BaseTaskBackend
    from django_tasks.base import Task, TaskError
    from django_tasks.exceptions import InvalidTaskError as InvalidTask
    from django_tasks.exceptions import TaskResultDoesNotExist
    from django_tasks.signals import task_enqueued, task_finished, task_started
    from django_tasks.utils import normalize_json

__all__ = [
    "DEFAULT_TASK_QUEUE_NAME",
    "BaseTaskBackend",
    "InvalidTask",
    "Task",
    "TaskContext",
    "TaskError",
    "TaskResult",
    "TaskResultDoesNotExist",
    "TaskResultStatus",
    "normalize_json",
    "task",
    "task_backends",
    "task_enqueued",
    "task_finished",
    "task_started",
]
