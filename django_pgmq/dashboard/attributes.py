"""The dashboard's queue attributes: show and edit them, and redrive a dead-letter queue.

The attributes are the queue's SQL ones (``pgmq.set_queue_attributes``): what this form
saves holds for every client. Pausing has its own button (actions.pause). A redrive
moves a dead-letter queue's messages back to the queues they came from, like SQS's.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.admin import ModelAdmin
from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from ..errors import PgmqError
from ..manager import QueueManager
from .access import current_db, log, require, url
from .forms import JsonField
from .pages import queue_or_404

_SECONDS = gettext_lazy("seconds; empty: not set")


class AttributesForm(forms.Form):
    """Every attribute but ``paused``; an empty field removes its attribute."""

    delivery_delay = forms.IntegerField(
        label=gettext_lazy("Delivery delay"), min_value=0, required=False, help_text=_SECONDS
    )
    deduplication_window = forms.IntegerField(
        label=gettext_lazy("Deduplication window"), min_value=0, required=False, help_text=_SECONDS
    )
    max_receive_count = forms.IntegerField(
        label=gettext_lazy("Max receive count"), min_value=1, required=False
    )
    dead_letter_queue = forms.CharField(
        label=gettext_lazy("Dead-letter queue"), max_length=47, required=False
    )
    message_retention = forms.IntegerField(
        label=gettext_lazy("Message retention"), min_value=1, required=False, help_text=_SECONDS
    )
    archive_retention = forms.IntegerField(
        label=gettext_lazy("Archive retention"), min_value=1, required=False, help_text=_SECONDS
    )
    max_message_size = forms.IntegerField(
        label=gettext_lazy("Max message size"),
        min_value=1,
        required=False,
        help_text=gettext_lazy("bytes"),
    )
    priorities = forms.BooleanField(label=gettext_lazy("Priorities"), required=False)
    max_in_flight = forms.IntegerField(
        label=gettext_lazy("Max in flight"),
        min_value=1,
        required=False,
        help_text=gettext_lazy("messages read and not yet deleted, archived or visible again"),
    )
    rate_limit = forms.CharField(
        label=gettext_lazy("Rate limit"),
        required=False,
        help_text=gettext_lazy(
            "COUNT/SECONDS: at most COUNT handed out in any SECONDS, e.g. 100/60"
        ),
    )

    @classmethod
    def of(cls, attributes: dict[str, Any]) -> AttributesForm:
        """The form showing a queue's current attributes."""
        initial = {k: v for k, v in attributes.items() if k in cls.base_fields}
        if isinstance(rate := initial.get("rate_limit"), dict):
            initial["rate_limit"] = f"{rate.get('count')}/{rate.get('seconds')}"
        return cls(initial=initial)

    def clean_rate_limit(self) -> dict[str, int | float] | None:
        """``COUNT/SECONDS`` as the attribute's object; the SQL API checks the ranges."""
        text = (self.cleaned_data["rate_limit"] or "").strip()
        if not text:
            return None
        count, _sep, seconds = text.partition("/")
        try:
            per = float(seconds)
            return {"count": int(count), "seconds": int(per) if per.is_integer() else per}
        except ValueError:
            raise forms.ValidationError(_("must be COUNT/SECONDS, such as 100/60")) from None

    def attributes(self) -> dict[str, Any]:
        """What to merge into the queue's attributes: empty fields remove theirs."""
        data: dict[str, Any] = {
            k: None if v is None or v == "" or v is False else v
            for k, v in self.cleaned_data.items()
        }
        if data.get("dead_letter_queue"):
            data["dead_letter_queue"] = data["dead_letter_queue"].strip()
        return data


class RedriveForm(forms.Form):
    contains = JsonField(
        label=gettext_lazy("Only messages containing"),
        required=False,
        help_text=gettext_lazy("a JSON object"),
    )

    def clean_contains(self) -> dict | None:
        value = self.cleaned_data["contains"]
        if value is not None and not isinstance(value, dict):
            raise forms.ValidationError(_("must be a JSON object"))
        return value


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
        return _queue_page_with(request, admin, queue, attributes_form=form)
    try:
        with transaction.atomic(using=db):  # a savepoint: the page is drawn after an error
            saved = QueueManager(db).set_queue_attributes(row.name, **form.attributes())
    except PgmqError as exc:  # the form stays as the user filled it
        messages.error(request, _("Attributes not saved: %s") % exc)
        form.add_error(None, str(exc))
        return _queue_page_with(request, admin, queue, attributes_form=form)
    shown = ", ".join(f"{k}={v}" for k, v in sorted(saved.items())) or _("none")
    log(request, row.name, "change", f"Set queue attributes: {shown}", db)
    messages.success(request, _("Saved the attributes of %(queue)s: %(attributes)s.")
                     % {"queue": row.name, "attributes": shown})  # fmt: skip
    return HttpResponseRedirect(url("change", db, row.name))


def _queue_page_with(
    request: HttpRequest, admin: ModelAdmin, queue: str, **forms: forms.Form
) -> HttpResponse:
    """The queue's page showing the user's own (bound, refused) forms."""
    from .views import queue_page  # views imports this module

    return queue_page(request, admin, queue, **forms)


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
        return _queue_page_with(request, admin, queue, redrive_form=form)
    try:
        with transaction.atomic(using=db):
            moved = QueueManager(db).redrive(row.name, conditional=form.cleaned_data["contains"])
    except PgmqError as exc:
        messages.error(request, _("Nothing redriven: %s") % exc)
        return _queue_page_with(request, admin, queue, redrive_form=form)
    if not moved:
        messages.info(request, _("No dead letter of %s had a queue to go back to.") % row.name)
        return HttpResponseRedirect(url("change", db, row.name))
    done = ", ".join(f"{n} → {source}" for source, n in sorted(moved.items()))
    log(request, row.name, "change", f"Redrove dead letters: {done}", db)
    messages.success(request, _("Redrove dead letters of %(queue)s: %(done)s.")
                     % {"queue": row.name, "done": done})  # fmt: skip
    return HttpResponseRedirect(url("change", db, row.name))


def context(db: str, queue: str) -> dict[str, Any]:
    """What queue.html's attributes section needs."""
    manager = QueueManager(db)
    attributes = manager.get_queue_attributes(queue)
    return {
        "attributes": sorted(attributes.items()),
        "attributes_form": AttributesForm.of(attributes),
        "attributes_url": url("attributes", db, queue),
        "redrive_url": url("redrive", db, queue),
        "redrive_form": RedriveForm(),
        "dead_letter_sources": manager.dead_letter_sources(queue),
    }
