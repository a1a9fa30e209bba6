"""The dashboard's workflow pages: every workflow (paged), and one workflow's page.

A workflow's page lists each step (state, queue, message, result or error, sent and
finished times) and draws its dependency graph as an inline SVG (`workflow_graph`).
A bad or unknown id gets the dashboard's 404 page with one line saying so.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.admin import ModelAdmin
from django.db import DatabaseError
from django.http import Http404, HttpRequest, HttpResponse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from .. import routing
from ..errors import WorkflowNotFound
from ..manager import QueueManager
from .access import current_db, require, url
from .display import duration
from .pages import render
from .workflow_graph import MAX_STEPS, GraphStep, graph

PAGE_SIZE = 50
STEPS_PER_PAGE = 500  # a workflow's page lists its steps this many at a time
LIST_STATUSES = ("running", "done", "failed", "cancelled")  # pgmq.list_workflows's
# A step's or a workflow's status (SQL's word) -> what the page says.
STATUS_LABELS = {
    "waiting": gettext_lazy("waiting"),
    "sent": gettext_lazy("sent"),
    "done": gettext_lazy("done"),
    "failed": gettext_lazy("failed"),
    "cancelled": gettext_lazy("cancelled"),
    "running": gettext_lazy("running"),
}


def status_label(status: str) -> str:
    """The translated word for a status (the SQL word when it is a new one)."""
    return str(STATUS_LABELS.get(status, status))


@dataclass
class WorkflowRow:
    """One line of the workflows list."""

    id: int
    status: str
    label: str
    done: int
    total: int
    age: str
    url: str


def whole_number(name: str, raw: str | None) -> int | None:
    """``?<name>=``: None when absent, else a whole number of at least 1 (Http404 naming
    the value otherwise)."""
    if raw in (None, ""):
        return None
    try:
        value = int(str(raw))
    except ValueError:
        value = 0
    if not 1 <= value < 2**63:
        raise Http404(
            _("%(name)s must be a whole number of at least 1, got %(value)r")
            % {"name": name, "value": raw}
        )
    return value


def workflow_list(request: HttpRequest, admin: ModelAdmin) -> HttpResponse:
    """Workflows newest first, a page at a time (``?before=ID``), optionally of one status
    (``?status=``): status, steps done / total, age."""
    require(request, "view")
    db = current_db(request)
    before = whole_number("before", request.GET.get("before"))
    status = request.GET.get("status") or None
    if status is not None and status not in LIST_STATUSES:
        raise Http404(_("no workflow status %r") % status)
    read = routing.read_database(db)
    try:
        found = QueueManager(read).list_workflows(status, PAGE_SIZE + 1, before)
    except DatabaseError as exc:
        return render(request, admin, "unavailable.html", _("Workflows"), db, error=exc)
    now = timezone.now()
    rows = [
        WorkflowRow(
            w.workflow_id,
            w.status,
            status_label(w.status),
            w.steps_done,
            w.steps_total,
            duration(_seconds(now, w.created_at)),
            url("workflow", db, str(w.workflow_id)),
        )
        for w in found[:PAGE_SIZE]
    ]
    more = len(found) > PAGE_SIZE
    return render(
        request,
        admin,
        "workflows.html",
        _("Workflows"),
        db,
        rows=rows,
        status=status,
        filters=[
            (key, status_label(key) if key else _("all"), url("workflows", db, status=key))
            for key in ("", *LIST_STATUSES)
        ],
        newest_url=url("workflows", db, status=status) if before else None,
        next_url=url("workflows", db, status=status, before=rows[-1].id) if more else None,
    )


def workflow_page(request: HttpRequest, admin: ModelAdmin, workflow: str) -> HttpResponse:
    """One workflow: its graph and each step's state, queue, message, result and times."""
    require(request, "view")
    db = current_db(request)
    wid = whole_number(_("workflow id"), workflow)
    assert wid is not None  # the address always has one
    read = routing.read_database(db)
    try:
        steps = QueueManager(read).workflow_graph(wid)
    except WorkflowNotFound:
        raise Http404(_("no workflow %d in database %s") % (wid, db)) from None
    drawn = None
    if len(steps) <= MAX_STEPS:
        drawn = graph(
            [GraphStep(s["step"], s["status"], tuple(s["after"])) for s in steps],
            _("Workflow %d") % wid,
            {k: str(v) for k, v in STATUS_LABELS.items()},
        )
    page = whole_number("page", request.GET.get("page")) or 1
    pages = (len(steps) + STEPS_PER_PAGE - 1) // STEPS_PER_PAGE
    if page > pages:
        raise Http404(
            _("workflow %(id)d has %(pages)d pages of steps") % {"id": wid, "pages": pages}
        )
    shown = steps[(page - 1) * STEPS_PER_PAGE : page * STEPS_PER_PAGE]
    rows = [_step_view(db, s) for s in shown]
    counts: dict[str, int] = {}
    for s in steps:
        counts[s["status"]] = counts.get(s["status"], 0) + 1
    return render(
        request,
        admin,
        "workflow.html",
        _("Workflow %d") % wid,
        db,
        workflow=wid,
        steps=rows,
        graph=drawn,
        max_steps=MAX_STEPS,
        counts=[(status_label(k), v) for k, v in sorted(counts.items())],
        list_url=url("workflows", db),
        page=page,
        pages=pages,
        prev_url=url("workflow", db, str(wid), page=page - 1) if page > 1 else None,
        next_url=url("workflow", db, str(wid), page=page + 1) if page < pages else None,
    )


def _step_view(db: str, step: dict[str, Any]) -> dict[str, Any]:
    """What the page shows of a step (`QueueManager.workflow_graph`'s row; JSON as text)."""

    def text(value: Any) -> str:
        return "" if value is None else json.dumps(value, ensure_ascii=False)

    return {
        **{k: step[k] for k in ("step", "status", "msg_id", "sent_at", "finished_at")},
        "status_label": status_label(step["status"]),
        "queue": step["queue_name"],
        "queue_url": url("change", db, step["queue_name"]),
        "message": text(step["message"]),
        "result": text(step["result"]),
        "error": text(step["error"]),
        "after": ", ".join(step["after"]),
    }


def _seconds(now: datetime, then: datetime | None) -> float:
    return 0.0 if then is None else max((now - then).total_seconds(), 0.0)
