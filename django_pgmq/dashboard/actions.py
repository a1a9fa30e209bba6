"""The dashboard's actions: each checks its permission first, then acts, then logs.

Every action is a POST (CSRF-checked by the admin); purge and drop show a
confirmation page on GET, the others redirect a GET to the queue's page, and a
library error becomes a message on the page (see posting.py). Each change is
written to Django's admin log.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.admin import ModelAdmin
from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.utils.translation import gettext as _

from ..errors import PgmqError
from ..internal import InternalManager
from ..manager import QueueManager
from ..pausing import set_paused
from .access import current_db, log, require, url
from .display import summary
from .forms import (
    ACTIONS,
    ACTIONS_DONE,
    CreateQueueForm,
    MessageActionForm,
    NotifyForm,
    SendMessageForm,
)
from .pages import queue_or_404
from .refusals import refusal
from .views import confirm, create_form, queue_page


def send(request: HttpRequest, admin: ModelAdmin, queue: str) -> HttpResponse:
    """Send one message from the form; an invalid form comes back with its errors."""
    require(request, "change")
    db = current_db(request)
    row = queue_or_404(db, queue)
    form = SendMessageForm(request.POST)
    if not form.is_valid():
        return queue_page(request, admin, queue, send_form=form)
    data = form.cleaned_data
    try:
        with transaction.atomic(using=db):  # a savepoint: the page is drawn after an error
            msg_id = QueueManager(db).send(
                row.name, data["message"], delay=data["delay"], headers=data["headers"]
            )
    except PgmqError as exc:  # the queue's attributes refuse it: the form stays as it was
        form.add_error(None, _("Not sent: %s") % refusal(exc))
        return queue_page(request, admin, queue, send_form=form)
    log(request, row.name, "change", f"Sent message {msg_id}: {summary(data['message'])}", db)
    messages.success(
        request, _("Sent message %(id)s to %(queue)s.") % {"id": msg_id, "queue": row.name}
    )
    return HttpResponseRedirect(url("change", db, row.name))


def _apply(manager: InternalManager, queue: str, dlq: str | None, data: dict) -> list[int]:
    """Run one message action; returns the ids it touched (new ids for a requeue)."""
    action, source, ids = data["action"], data["source"], data["ids"]
    if action == "archive":
        return manager.archive(queue, ids)
    if action == "visible":
        return [m.msg_id for m in manager.set_vt(queue, ids, 0)]
    if source == "dlq":
        assert dlq is not None  # message_action refuses "dlq" without one first
        if action == "delete":
            return manager.delete(dlq, ids)
        return manager.dashboard_requeue(dlq, ids, target=queue)
    if action == "delete":
        return manager.delete(queue, ids)
    return manager.dashboard_requeue(queue, ids, from_archive=True)


def message_action(request: HttpRequest, admin: ModelAdmin, queue: str) -> HttpResponse:
    """Archive, delete, make visible or requeue the selected messages."""
    require(request, "view")
    db = current_db(request)
    form = MessageActionForm(request.POST)
    if form.is_valid():
        require(request, ACTIONS[form.cleaned_data["action"]][1])
    row = queue_or_404(db, queue)
    source = request.POST.get("source") or "live"
    back = HttpResponseRedirect(url("change", db, row.name, source=source))
    if not form.is_valid():
        errors = "; ".join(str(e) for errs in form.errors.values() for e in errs)
        messages.error(request, _("Nothing done: %s") % errors)
        return back
    data = form.cleaned_data
    if data["source"] == "dlq" and not row.dead_letter:
        messages.error(request, _("%s has no dead-letter queue.") % row.name)
        return back
    done = _apply(InternalManager(db), row.name, row.dead_letter, data)
    label = ACTIONS_DONE[data["action"]]
    text = f"{label} ({data['source']}): {len(done)} of {len(data['ids'])} messages"
    log(request, row.name, "change", f"{text}, ids {data['ids']}", db)
    messages.success(
        request,
        _("%(action)s (%(source)s): %(done)d of %(asked)d messages.")
        % {"action": label, "source": data["source"], "done": len(done), "asked": len(data["ids"])},
    )
    return back


def purge(request: HttpRequest, admin: ModelAdmin, queue: str) -> HttpResponse:
    """Ask (GET) then delete every live message of the queue (POST); the archive stays."""
    require(request, "purge")
    db = current_db(request)
    row = queue_or_404(db, queue)
    if request.method != "POST":
        return confirm(request, admin, db, row, what="purge", post_url=url("purge", db, row.name))
    removed = QueueManager(db).purge_queue(row.name)
    log(request, row.name, "change", f"Purged {removed} messages", db)
    messages.success(
        request, _("Purged %(n)d messages from %(queue)s.") % {"n": removed, "queue": row.name}
    )
    return HttpResponseRedirect(url("change", db, row.name))


def drop(request: HttpRequest, admin: ModelAdmin, queue: str) -> HttpResponse:
    """Ask (GET) then drop the queue with its archive (POST)."""
    require(request, "delete")
    db = current_db(request)
    row = queue_or_404(db, queue)
    if request.method != "POST":
        return confirm(request, admin, db, row, what="drop", post_url=url("delete", db, row.name))
    QueueManager(db).drop_queue(row.name)
    log(request, row.name, "delete", f"Dropped queue ({row.stats.queue_length} live messages)", db)
    messages.success(request, _("Dropped queue %s.") % row.name)
    return HttpResponseRedirect(url("changelist", db))


def notify(request: HttpRequest, admin: ModelAdmin, queue: str) -> HttpResponse:
    """Turn insert notifications of the queue on (with a throttle) or off."""
    require(request, "change")
    db = current_db(request)
    row = queue_or_404(db, queue)
    form = NotifyForm(request.POST)
    back = HttpResponseRedirect(url("change", db, row.name))
    if not form.is_valid():
        messages.error(request, _("Nothing done: %s") % form.errors.as_text())
        return back
    manager = QueueManager(db)
    if form.cleaned_data["enabled"]:
        throttle = form.cleaned_data["throttle_ms"]
        throttle = 250 if throttle is None else throttle
        manager.enable_notify(row.name, throttle)
        text = _("Enabled insert notifications (throttle %d ms)") % throttle
    else:
        manager.disable_notify(row.name)
        text = _("Disabled insert notifications")
    log(request, row.name, "change", text, db)
    messages.success(request, _("%(text)s on %(queue)s.") % {"text": text, "queue": row.name})
    return back


def pause(request: HttpRequest, admin: ModelAdmin, queue: str) -> HttpResponse:
    """Pause (``paused=1``) or resume (``paused=0``) the queue's consumption (its attribute)."""
    require(request, "change")
    db = current_db(request)
    row = queue_or_404(db, queue)
    paused = request.POST.get("paused") == "1"
    set_paused(db, row.name, paused)
    if paused:
        text = _("Paused consumption: reads of the queue return nothing until it is resumed")
    else:
        text = _("Resumed consumption")
    log(request, row.name, "change", text, db)
    messages.success(request, _("%(text)s (%(queue)s).") % {"text": text, "queue": row.name})
    return HttpResponseRedirect(url("change", db, row.name))


def create(request: HttpRequest, admin: ModelAdmin) -> HttpResponse:
    """Show (GET) or handle (POST) the create-queue form; an existing name is an error."""
    require(request, "add")
    db = current_db(request)
    form = CreateQueueForm(request.POST if request.method == "POST" else None)
    if not form.is_valid():
        return create_form(request, admin, db, form)
    name, manager = form.cleaned_data["name"], QueueManager(db)
    existing = [q.queue_name for q in manager.list_queues() if q.queue_name.lower() == name.lower()]
    if existing:
        form.add_error(
            "name", _("Queue %s already exists (table names ignore case).") % existing[0]
        )
        return create_form(request, admin, db, form)
    try:
        manager.create_queue(name, unlogged=form.cleaned_data["unlogged"])
    except PgmqError as exc:
        form.add_error("name", refusal(exc))
        return create_form(request, admin, db, form)
    unlogged = form.cleaned_data["unlogged"]
    log(request, name, "add", "Created unlogged queue" if unlogged else "Created queue", db)
    created = _("Created unlogged queue %s.") if unlogged else _("Created queue %s.")
    messages.success(request, created % name)
    return HttpResponseRedirect(url("change", db, name))
