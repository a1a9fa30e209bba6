"""Django's Tasks API (``django.tasks``; the ``django-tasks`` backport on Django 5.2) on pgmq.

``TASKS = {"default": {"BACKEND": "django_pgmq.tasks.PgmqBackend", "QUEUES": [...]}}``;
``manage.py pgmq_consume --tasks`` runs them. ``backend`` (enqueue, results),
``results`` (the result rows), ``runner`` (one task in the worker),
``worker_settings`` (the worker's settings for task queues), ``results_admin`` (the
results' admin), ``compat`` (where Django's API lives), ``workflows`` (chain, group and
chord of tasks: ``from django_pgmq.tasks import call, chain, group, chord``).
`PgmqBackend` is imported on first use, so the admin's part works on a Django 5.2
without the backport.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .backend import PgmqBackend
    from .workflows import call, chain, chord, group, workflow_id

_WORKFLOWS = ("call", "chain", "chord", "group", "workflow_id")


def __getattr__(name: str) -> Any:
    if name == "PgmqBackend":
        from .backend import PgmqBackend

        return PgmqBackend
    if name in _WORKFLOWS:
        from . import workflows

        return getattr(workflows, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["PgmqBackend", "call", "chain", "chord", "group", "workflow_id"]
