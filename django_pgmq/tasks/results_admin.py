"""The admin of Django task results: list, filter, inspect, retry the failed ones.

Registered by ``django_pgmq/admin.py``. Imports nothing of Django's Tasks API
until the retry action runs, so the admin works on a Django without it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html

from ..models import TaskResultRecord

if TYPE_CHECKING:
    from .backend import PgmqBackend


class TaskResultRecordAdmin(admin.ModelAdmin):
    """Task results, every field read-only; the one change is "retry" on FAILED ones."""

    list_display = [
        "task_path",
        "status",
        "queue_name",
        "priority",
        "attempts",
        "enqueued_at",
        "finished_at",
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
        "errors_display",
    )
    fields = readonly_fields

    @admin.display(description="attempts")
    def attempts(self, record: TaskResultRecord) -> int:
        return len(record.worker_ids)

    @admin.display(description="errors")
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

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.action(description="Retry selected failed tasks", permissions=["change"])
    def retry_failed(self, request: HttpRequest, queryset: QuerySet) -> None:
        """Enqueue each selected FAILED task again; the others are left alone."""
        from .compat import task_backends

        failed = list(queryset.filter(status=TaskResultRecord.Status.FAILED))
        for record in failed:
            # Only PgmqBackend writes these rows, so record.backend names one.
            cast("PgmqBackend", task_backends[record.backend]).retry(record)
        skipped = queryset.count() - len(failed)
        self.message_user(
            request,
            f"{len(failed)} task(s) enqueued again"
            + (f"; {skipped} not FAILED, left alone" if skipped else ""),
            messages.SUCCESS if failed else messages.WARNING,
        )
