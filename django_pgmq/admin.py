"""The Django admin of django-pgmq: the Queue changelist is the queues dashboard.

Pages live under ``/admin/django_pgmq/queue/``: the overview, ``add/`` (create a
queue), ``workers/``, ``schedules/`` and ``schedules/<name>/edit/`` (periodic
schedules), ``workflows/`` and ``workflows/<id>/`` (workflows and their graphs), and
per queue ``<name>/change/`` (its page), ``delete/`` (drop), ``purge/``, ``send/``,
``messages/`` (actions on selected messages), ``notify/``, ``pause/`` (pause or resume
consumption), ``attributes/`` (set the queue's attributes), ``redrive/`` (move a
dead-letter queue's messages back), ``bulk/`` (act on every message matching a filter,
after a confirmation with the count). Any other address under it is the dashboard's 404
page; ``<name>/`` redirects to the queue's page, and so does a GET of an action's
address (they act on POST only). The views are in ``django_pgmq.dashboard``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from django.contrib import admin
from django.http import HttpResponse
from django.urls import URLPattern, path

from .dashboard import actions, attributes, bulk, schedules, views, workflows
from .dashboard.posting import action
from .models import Queue, TaskResultRecord
from .tasks.results_admin import TaskResultRecordAdmin


@admin.register(Queue)
class QueueAdmin(admin.ModelAdmin):
    """Queues of ``pgmq.meta``, shown through the dashboard's own pages."""

    def get_urls(self) -> list[URLPattern]:
        def page(view: Callable[..., HttpResponse], name: str, route: str) -> URLPattern:
            wrapped = self.admin_site.admin_view(partial(views.answers_404(view), admin=self))
            return path(route, wrapped, name=f"django_pgmq_queue_{name}")

        return [
            page(views.overview, "changelist", ""),
            page(actions.create, "add", "add/"),
            page(views.workers, "workers", "workers/"),
            page(schedules.schedule_list, "schedules", "schedules/"),
            page(schedules.schedule_page, "schedule", "schedules/<str:name>/edit/"),
            page(workflows.workflow_list, "workflows", "workflows/"),
            page(workflows.workflow_page, "workflow", "workflows/<str:workflow>/"),
            page(views.queue_page, "change", "<str:queue>/change/"),
            page(action(actions.drop, confirms=True), "delete", "<str:queue>/delete/"),
            page(action(actions.purge, confirms=True), "purge", "<str:queue>/purge/"),
            page(action(actions.send), "send", "<str:queue>/send/"),
            page(action(actions.message_action), "messages", "<str:queue>/messages/"),
            page(action(actions.notify), "notify", "<str:queue>/notify/"),
            page(action(actions.pause), "pause", "<str:queue>/pause/"),
            page(action(attributes.edit), "attributes", "<str:queue>/attributes/"),
            page(action(attributes.redrive), "redrive", "<str:queue>/redrive/"),
            page(
                action(bulk.bulk_action, confirms=True, atomic=False), "bulk", "<str:queue>/bulk/"
            ),
            page(views.queue_root, "queue", "<str:queue>/"),
            path(
                "<path:object_id>/history/",
                self.admin_site.admin_view(self.history_view),
                name="django_pgmq_queue_history",
            ),
            page(views.unknown_page, "unknown", "<path:rest>"),
        ]


admin.site.register(TaskResultRecord, TaskResultRecordAdmin)
