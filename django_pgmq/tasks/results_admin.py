"""The admin of Django task results: list, filter, inspect, retry the failed ones.

Registered by ``django_pgmq/admin.py``. Imports nothing of Django's Tasks API
until the retry action runs, so the admin works on a Django without it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from ..models import TaskResultRecord
from .step_ids import workflow_of

if TYPE_CHECKING:
    from datetime import datetime

    from .backend import PgmqBackend


def _short_time(value: datetime | None) -> str:
    """A list cell's time in the admin's zone, short enough for 1280 px: 2026-11-26 11:34:16."""
    if value is None:
        return "-"
    return timezone.localtime(value).strftime("%Y-%m-%d %H:%M:%S")


def _cut(text: str, css: str) -> str:
    """A list cell's text on one line, cut with an ellipsis by CSS (the whole text in the title)."""
    return format_html('<span class="{}" title="{}">{}</span>', css, text, text)


class TaskResultRecordAdmin(admin.ModelAdmin):
    """Task results, every field read-only; the one change is "retry" on FAILED ones."""

    change_list_template = "django_pgmq/admin/task_results/change_list.html"  # no nav sidebar

    list_display = [
        "task",
        "status",
        "queue",
        "priority",
        "attempts",
        "enqueued",
        "finished",
    ]
    list_filter = ["status", "task_path", "queue_name", "backend"]
    search_fields = ["=id", "task_path"]
    date_hierarchy = "enqueued_at"
    actions = ["retry_failed"]
    readonly_fields = (
        "id",
        "task_path",
        "status",
        "backend",
        "queue_name",
        "priority",
        "run_after",
        "enqueued_at",
        "started_at",
        "last_attempted_at",
        "finished_at",
        "args",
        "kwargs",
        "return_value",
        "worker_ids",
        "max_attempts",
        "msg_id",
        "workflow",
        "errors_display",
    )
    fields = readonly_fields

    class Media:
        css = {"all": ["django_pgmq/results.css"]}  # one line a row: the list fits 1280 px

    @admin.display(description=_("task"), ordering="task_path")
    def task(self, record: TaskResultRecord) -> str:
        """The task's dotted path, its start cut with an ellipsis when long (the whole path in
        the title)."""
        return format_html(  # cut at its start: the task's own name, at the end, shows
            '<span class="pgmq-task" title="{}"><bdi>{}</bdi></span>', *[record.task_path] * 2
        )

    @admin.display(description=_("queue"), ordering="queue_name")
    def queue(self, record: TaskResultRecord) -> str:
        return _cut(record.queue_name, "pgmq-queue")

    @admin.display(description=_("attempts"))
    def attempts(self, record: TaskResultRecord) -> int:
        return len(record.worker_ids)

    @admin.display(description=_("errors"))
    def errors_display(self, record: TaskResultRecord) -> str:
        """Each attempt's error: its exception class and traceback."""
        if not record.errors:
            return "-"
        return format_html(
            "<pre>{}</pre>",
            "\n\n".join(
                f"{e.get('exception_class_path')}\n{e.get('traceback')}" for e in record.errors
            ),
        )

    @admin.display(description="workflow")
    def workflow(self, record: TaskResultRecord) -> str:
        """The workflow this task is a step of (its id holds it), linked to its page."""
        wid = workflow_of(record.id)
        if wid is None:
            return "-"
        page = reverse("admin:django_pgmq_queue_workflow", args=(str(wid),))
        return format_html('<a href="{}?db={}">{}</a>', page, record._state.db, wid)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        """A result's page is read-only ("View task result", no save buttons); the change
        permission still allows the list's "retry" action."""
        return obj is None and super().has_change_permission(request)

    @admin.display(description=_("enqueued"), ordering="enqueued_at")
    def enqueued(self, record: TaskResultRecord) -> str:
        return _short_time(record.enqueued_at)

    @admin.display(description=_("finished"), ordering="finished_at")
    def finished(self, record: TaskResultRecord) -> str:
        return _short_time(record.finished_at)

    @admin.action(description=_("Retry selected failed tasks"), permissions=["change"])
    def retry_failed(self, request: HttpRequest, queryset: QuerySet) -> None:
        """Enqueue each selected FAILED task again; the others are left alone."""
        from .compat import task_backends

        failed = list(queryset.filter(status=TaskResultRecord.Status.FAILED))
        for record in failed:
            # Only PgmqBackend writes these rows, so record.backend names one.
            cast("PgmqBackend", task_backends[record.backend]).retry(record)
        skipped = queryset.count() - len(failed)
        done = ngettext(
            "%(count)d task enqueued again", "%(count)d tasks enqueued again", len(failed)
        ) % {"count": len(failed)}
        if skipped:
            done += ngettext(
                "; %(count)d not failed, left alone", "; %(count)d not failed, left alone", skipped
            ) % {"count": skipped}
        self.message_user(request, done, messages.SUCCESS if failed else messages.WARNING)
