"""The dashboard's queue attributes: save them, and redrive a dead-letter queue.

The attributes are the queue's SQL ones (``pgmq.set_queue_attributes``): what this form
saves holds for every client. Pausing has its own button (actions.pause). A redrive
moves a dead-letter queue's messages back to the queues they came from, like SQS's. The
forms and what the queue page shows of them are `attribute_forms`.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.admin import ModelAdmin
from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.utils.translation import gettext as _

from ..errors import PgmqError
from ..manager import QueueManager
from .access import current_db, log, require, url
from .attribute_forms import AttributesForm, RedriveForm
from .pages import queue_or_404
from .refusals import refusal
from .views import queue_page


def edit(request: HttpRequest, admin: ModelAdmin, queue: str) -> HttpResponse:
    """Save the attributes form: all of it, or (on a bad value) nothing, with the error shown."""
    require(request, "change")
    db = current_db(request)
    row = queue_or_404(db, queue)
    form = AttributesForm(request.POST)
    if not form.is_valid():
        errors = "; ".join(
            f"{form.fields[k].label}: {' '.join(map(str, v))}" for k, v in form.errors.items()
        )
        messages.error(request, _("Attributes not saved: %s") % errors)
        return queue_page(request, admin, queue, attributes_form=form)
    try:
        with transaction.atomic(using=db):  # a savepoint: the page is drawn after an error
            saved = QueueManager(db).set_queue_attributes(row.name, **form.attributes())
    except PgmqError as exc:  # the form stays as the user filled it
        messages.error(request, _("Attributes not saved: %s") % refusal(exc))
        form.add_error(None, refusal(exc))
        return queue_page(request, admin, queue, attributes_form=form)
    shown = ", ".join(f"{k}={v}" for k, v in sorted(saved.items())) or _("none")
    log(request, row.name, "change", f"Set queue attributes: {shown}", db)
    messages.success(request, _("Saved the attributes of %(queue)s: %(attributes)s.")
                     % {"queue": row.name, "attributes": shown})  # fmt: skip
    return HttpResponseRedirect(url("change", db, row.name))


def redrive(request: HttpRequest, admin: ModelAdmin, queue: str) -> HttpResponse:
    """Move this dead-letter queue's messages (all, or those containing a JSON object) back."""
    require(request, "change")
    db = current_db(request)
    row = queue_or_404(db, queue)
    form = RedriveForm(request.POST)
    if not form.is_valid():
        messages.error(
            request,
            _("Nothing redriven: %s") % " ".join(map(str, form.errors.get("contains") or ())),
        )
        return queue_page(request, admin, queue, redrive_form=form)
    try:
        with transaction.atomic(using=db):
            moved = QueueManager(db).redrive(row.name, conditional=form.cleaned_data["contains"])
    except PgmqError as exc:
        messages.error(request, _("Nothing redriven: %s") % refusal(exc))
        return queue_page(request, admin, queue, redrive_form=form)
    if not moved:
        messages.info(request, _("No dead letter of %s had a queue to go back to.") % row.name)
        return HttpResponseRedirect(url("change", db, row.name))
    done = ", ".join(f"{n} → {source}" for source, n in sorted(moved.items()))
    log(request, row.name, "change", f"Redrove dead letters: {done}", db)
    messages.success(request, _("Redrove dead letters of %(queue)s: %(done)s.")
                     % {"queue": row.name, "done": done})  # fmt: skip
    return HttpResponseRedirect(url("change", db, row.name))
