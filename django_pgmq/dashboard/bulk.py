"""Bulk actions: retry, delete or move every message matching the queue page's filters.

GET shows how many messages match (and the highest id, which bounds the action
to what the operator saw); POST acts on them in batches of `BATCH` ids, each its
own short transaction, so even a million matching rows never hold a long lock.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.admin import ModelAdmin
from django.db import DatabaseError, transaction
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from ..errors import InvalidQueueName, PgmqError
from ..internal import InternalManager
from ..names import validate_queue_name
from .access import current_db, log, require, url
from .forms import SOURCES, MessageFilterForm
from .overview import QueueRow
from .pages import queue_or_404, render
from .refusals import refusal

BATCH = 1000  # ids per statement and per transaction

# Bulk action -> (label, permission); which apply to which message list.
BULK_ACTIONS: dict[str, tuple[Any, str]] = {
    "retry": (gettext_lazy("Retry"), "change"),
    "archive": (gettext_lazy("Archive"), "change"),
    "move": (gettext_lazy("Move to another queue"), "change"),
    "delete": (gettext_lazy("Delete"), "delete"),
}
# What "retry" does to each list, as the menu says it.
RETRY_LABELS: dict[str, Any] = {
    "live": gettext_lazy("Retry now (make visible)"),
    "archive": gettext_lazy("Retry (requeue into the queue)"),
    "dlq": gettext_lazy("Retry (requeue into the queue)"),
}
BULK_SOURCE_ACTIONS: dict[str, list[str]] = {
    "live": ["retry", "archive", "move", "delete"],
    "archive": ["retry", "move"],
    "dlq": ["retry", "move", "delete"],
}


class BulkActionForm(forms.Form):
    """What to do with every matching message, and where a move goes."""

    bulk_action = forms.ChoiceField(
        choices=[(k, label) for k, (label, _p) in BULK_ACTIONS.items()],
        label=gettext_lazy("Action"),
    )
    source = forms.ChoiceField(choices=SOURCES)
    target = forms.CharField(required=False, max_length=47, label=gettext_lazy("Target queue"))
    last_id = forms.IntegerField(min_value=0, required=False, widget=forms.HiddenInput)

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        action, source = data.get("bulk_action"), data.get("source")
        if action and source and action not in BULK_SOURCE_ACTIONS[source]:
            raise forms.ValidationError(
                _("%(action)s does not apply to %(source)s messages")
                % {"action": action, "source": source}
            )
        if action == "move":
            try:
                data["target"] = validate_queue_name(data.get("target") or "")
            except InvalidQueueName as exc:
                self.add_error("target", refusal(exc))
        return data


@dataclass(frozen=True)
class BulkPlan:
    """One bulk action on one queue: where the messages are and what becomes of them."""

    queue: str  # the page's queue
    table_queue: str  # the queue whose table (live or archive) holds them
    archive: bool
    action: str
    target: str | None
    filters: dict[str, Any]

    @classmethod
    def of(cls, row: QueueRow, data: dict[str, Any], filters: dict[str, Any]) -> BulkPlan:
        source = data["source"]
        table_queue = row.name
        if source == "dlq":
            assert row.dead_letter is not None  # bulk_action refuses "dlq" without one first
            table_queue = row.dead_letter
        target = data.get("target") if data["bulk_action"] == "move" else None
        if data["bulk_action"] == "retry" and source != "live":
            target = row.name
        return cls(row.name, table_queue, source == "archive", data["bulk_action"], target, filters)

    def apply(self, manager: InternalManager, ids: list[int]) -> int:
        """Act on one batch of ids; how many it touched."""
        if self.action == "retry" and not self.archive and self.target is None:
            return len(manager.set_vt(self.table_queue, ids, 0))
        if self.action == "archive":
            return len(manager.archive(self.table_queue, ids))
        if self.action == "delete":
            return len(manager.delete(self.table_queue, ids))
        return len(
            manager.dashboard_requeue(
                self.table_queue, ids, target=self.target, from_archive=self.archive
            )
        )


def bulk_label(action: str, source: str) -> str:
    """The menu label of a bulk action on the list ``source``."""
    return str(RETRY_LABELS[source] if action == "retry" else BULK_ACTIONS[action][0])


@dataclass
class Progress:
    """What a bulk run did: messages touched, batches committed, and the error that stopped it."""

    done: int = 0
    batches: int = 0
    error: Exception | None = None


def run_in_batches(manager: InternalManager, plan: BulkPlan, last_id: int) -> Progress:
    """Act on every message matching the plan's filters up to ``last_id``, batch by batch.

    Each batch commits on its own; an error stops the run with what is committed so far
    (the failing batch rolls back whole), reported in `Progress.error`.
    """
    progress, after = Progress(), 0
    while True:
        try:
            with transaction.atomic(using=manager.using):
                ids = manager.dashboard_match_batch(
                    plan.table_queue,
                    archive=plan.archive,
                    after_id=after,
                    up_to_id=last_id,
                    max_rows=BATCH,
                    **plan.filters,
                )
                if not ids:
                    return progress
                touched = plan.apply(manager, ids)
        except (PgmqError, DatabaseError) as exc:
            progress.error = exc
            return progress
        progress.done += touched
        progress.batches += 1
        after = ids[-1]


def _filters(form: MessageFilterForm) -> dict[str, Any]:
    kwargs = form.browse_kwargs()
    return {k: kwargs[k] for k in ("min_read_ct", "header_key", "header_value", "contains")}


def _missing_target(manager: InternalManager, plan: BulkPlan) -> str | None:
    """Why a move cannot go to its target (None when it can)."""
    if plan.target is None:
        return None
    names = {info.queue_name.lower() for info in manager.list_queues()}
    if plan.target.lower() not in names:
        return _('queue "%s" does not exist; create it first') % plan.target
    if plan.target.lower() == plan.table_queue.lower() and not plan.archive:
        return _("the messages are in %s already") % plan.target
    return None


def bulk_action(request: HttpRequest, admin: ModelAdmin, queue: str) -> HttpResponse:
    """Ask (GET: the count of matching messages) then act on all of them (POST)."""
    require(request, "view")
    db = current_db(request)
    row = queue_or_404(db, queue)
    data = request.POST if request.method == "POST" else request.GET
    form, filters = BulkActionForm(data), MessageFilterForm.from_query(data)
    back = HttpResponseRedirect(url("change", db, row.name, source=data.get("source") or "live"))
    if not (form.is_valid() and filters.is_valid()):
        errors = [str(e) for f in (form, filters) for errs in f.errors.values() for e in errs]
        messages.error(request, _("Nothing done: %s") % "; ".join(errors))
        return back
    require(request, BULK_ACTIONS[form.cleaned_data["bulk_action"]][1])
    if form.cleaned_data["source"] == "dlq" and not row.dead_letter:
        messages.error(request, _("%s has no dead-letter queue.") % row.name)
        return back
    plan, manager = BulkPlan.of(row, form.cleaned_data, _filters(filters)), InternalManager(db)
    if why := _missing_target(manager, plan):
        messages.error(request, _("Nothing done: %s") % why)
        return back
    if request.method != "POST":
        return _confirmation(request, admin, db, row, plan, form.cleaned_data["source"])
    progress = run_in_batches(manager, plan, form.cleaned_data.get("last_id") or 0)
    _report(request, db, row, plan, form.cleaned_data["source"], progress)
    return back


def _confirmation(
    request: HttpRequest, admin: ModelAdmin, db: str, row: QueueRow, plan: BulkPlan, source: str
) -> HttpResponse:
    """The page that shows how many messages match, and asks."""
    count, last_id = InternalManager(db).dashboard_match_count(
        plan.table_queue, archive=plan.archive, **plan.filters
    )
    label = bulk_label(plan.action, source)
    return render(
        request,
        admin,
        "bulk_confirm.html",
        _("%(action)s: every matching message of %(queue)s?")
        % {"action": label, "queue": row.name},
        db,
        row=row,
        plan=plan,
        label=label,
        count=count,
        last_id=last_id or 0,
        query=request.GET,
        post_url=url("bulk", db, row.name),
        queue_url=url("change", db, row.name, source=source),
    )


def _report(
    request: HttpRequest, db: str, row: QueueRow, plan: BulkPlan, source: str, progress: Progress
) -> None:
    """The success (or partial-failure) message and the admin log line of a bulk run."""
    text = _("%(action)s (%(source)s): %(done)d messages in %(batches)d batches") % {
        "action": bulk_label(plan.action, source),
        "source": source,
        "done": progress.done,
        "batches": progress.batches,
    }
    if plan.target and plan.target != row.name:
        text += " " + _("to %s") % plan.target
    log(request, row.name, "change", f"{text}; filters {plan.filters}", db)
    if progress.error is None:
        messages.success(request, text + ".")
    else:
        stopped = _("stopped by an error, the rest left as it was: %s") % progress.error
        messages.error(request, f"{text}; {stopped}")
