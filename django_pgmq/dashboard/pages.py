"""What every dashboard page shares: the admin's layout around it and the queue it shows.

Apart from ``views.py`` so that the pages in other modules (attributes, bulk actions)
use them without importing the views that import those modules.
"""

from __future__ import annotations

from typing import Any

from django.contrib.admin import ModelAdmin
from django.contrib.admin.utils import unquote
from django.http import Http404, HttpRequest
from django.template.response import TemplateResponse

from ..errors import InvalidQueueName, QueueNotFound
from ..models import Queue
from .access import permissions, url
from .databases import database_aliases
from .overview import QueueRow, load_queue


def render(
    request: HttpRequest, admin: ModelAdmin, template: str, title: str, db: str, **context: Any
) -> TemplateResponse:
    """A dashboard page inside the admin's layout, with the user's dashboard permissions."""
    base = {
        **admin.admin_site.each_context(request),
        "opts": Queue._meta,
        "title": title,
        "db": db,
        "databases": database_aliases(),
        "can": permissions(request),
        "overview_url": url("changelist", db),
        "workers_url": url("workers", db),
        "schedules_url": url("schedules", db),
        # The database selector: "all" where the page can show every queue database.
        "offers_all": False,
        "showing_all": False,
        "down_aliases": [],
        "workflows_url": url("workflows", db),
    }
    return TemplateResponse(request, f"django_pgmq/admin/{template}", {**base, **context})


def queue_or_404(db: str, queue: str) -> QueueRow:
    """The queue's overview line, or 404 when the name is invalid or no such queue exists."""
    try:
        return load_queue(db, unquote(queue))
    except (QueueNotFound, InvalidQueueName) as exc:
        raise Http404(str(exc)) from exc
