"""Who may do what, which database a page shows, and the admin log of actions."""

from __future__ import annotations

from typing import Any, cast
from urllib.parse import urlencode

from django.contrib.admin.models import ADDITION, CHANGE, DELETION, LogEntry
from django.contrib.admin.utils import quote
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest
from django.urls import reverse
from django.utils.translation import gettext as _

from .. import routing
from ..models import Queue
from .databases import database_aliases

# Dashboard action -> the permission codename it needs (app label django_pgmq).
PERMISSIONS = {
    "view": "view_queue",
    "change": "change_queue",
    "add": "add_queue",
    "delete": "delete_queue",
    "purge": "purge_queue",
}
LOG_FLAGS = {"add": ADDITION, "change": CHANGE, "delete": DELETION}


def can(request: HttpRequest, action: str) -> bool:
    """Whether the user holds the permission ``action`` needs."""
    return request.user.has_perm(f"django_pgmq.{PERMISSIONS[action]}")


def require(request: HttpRequest, action: str) -> None:
    """Refuse with 403 unless the user holds the permission ``action`` needs."""
    if not can(request, action):
        raise PermissionDenied(_("this needs the django_pgmq.%s permission") % PERMISSIONS[action])


def permissions(request: HttpRequest) -> dict[str, bool]:
    """Every dashboard permission of the user, for templates: ``perms.purge`` and so on."""
    return {action: can(request, action) for action in PERMISSIONS}


def current_db(request: HttpRequest) -> str:
    """The database alias the page is about (``?db=``), the configured one by default."""
    aliases = database_aliases()
    alias = request.POST.get("db") or request.GET.get("db") or aliases[0]
    if alias not in aliases:
        raise Http404(_("no PostgreSQL database alias %r") % alias)
    return alias


# Pages that, without ?db=, show every queue database when PGMQ["QUEUE_DATABASES"] routes.
EVERY_DATABASE_PAGES = ("changelist", "schedules")


def url(name: str, db: str, queue: str | None = None, **params: Any) -> str:
    """An admin URL of the dashboard, keeping a non-default database in the query string
    (and the default one too where, without it, the page would show every database)."""
    args = (quote(queue),) if queue is not None else ()
    query = {k: v for k, v in params.items() if v not in (None, "")}
    routed = name in EVERY_DATABASE_PAGES and len(routing.queue_databases()) > 1
    if db != database_aliases()[0] or routed:
        query["db"] = db
    base = reverse(f"admin:django_pgmq_queue_{name}", args=args)
    return f"{base}?{urlencode(query)}" if query else base


def log(request: HttpRequest, queue: str, kind: str, message: str, db: str) -> None:
    """Record an action in Django's admin log (LogEntry), naming the database when not default."""
    if db != database_aliases()[0]:
        message = f"{message} (database {db})"
    LogEntry.objects.log_actions(
        # Only a signed-in staff user reaches a dashboard action: the pk is set.
        user_id=cast("int | str", request.user.pk),
        queryset=[Queue(queue_name=queue)],
        action_flag=LOG_FLAGS[kind],
        change_message=message,
        single_object=True,
    )
