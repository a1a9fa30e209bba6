"""The dashboard's schedule pages: every schedule, and one schedule's page.

A schedule's page edits it (cron, queue, message or a Django task with its
arguments, time zone, catch-up, on/off), runs it now, and shows its next five
ticks in the user's time zone (and the schedule's own), its last ticks with the
message each sent (or why pgmq.send refused it) and how many ticks were skipped.
A schedule declared in ``PGMQ["SCHEDULES"]`` can be edited too, but the next
``migrate`` or worker start puts the settings back: the page says so.

With ``PGMQ["QUEUE_DATABASES"]`` routes, a schedule lives in its queue's database: the
list without ``?db=`` shows every queue database's schedules with a database column
(a database that is down is named, the others still show), and every link and form
carries its schedule's database.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.admin import ModelAdmin
from django.contrib.admin.utils import quote, unquote
from django.core.exceptions import ImproperlyConfigured
from django.db import DatabaseError, transaction
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from .. import routing
from ..errors import InvalidArgument, PgmqError
from ..internal import InternalManager
from ..manager import QueueManager
from ..records import Schedule
from ..schedule_settings import apply, resolve
from .access import current_db, log, require
from .all_databases import DatabaseState, error_line, every_database_context
from .databases import database_aliases
from .forms import JsonField
from .pages import render
from .refusals import refusal

NEXT_TICKS = 5
LAST_TICKS = 20


def schedule_url(db: str, name: str | None = None) -> str:
    """The schedules page, or one schedule's page, keeping a non-default database; with
    several queue databases a schedule's page always names its database (two may hold
    one of the same name)."""
    if name is None:
        base = reverse("admin:django_pgmq_queue_schedules")
    else:
        base = reverse("admin:django_pgmq_queue_schedule", args=(quote(name),))
    routed = name is not None and len(routing.queue_databases()) > 1
    return base if db == database_aliases()[0] and not routed else f"{base}?{urlencode({'db': db})}"


class ScheduleForm(forms.Form):
    """A schedule as the admin edits it: a message, or a Django task with its arguments."""

    cron = forms.CharField(
        label=gettext_lazy("Cron"),
        max_length=200,
        help_text=gettext_lazy("Five fields, @daily and the like, or @every 30 seconds."),
    )
    queue = forms.CharField(
        label=gettext_lazy("Queue"),
        max_length=47,
        required=False,
        help_text=gettext_lazy("Where the message goes (for a task: its queue unless given)."),
    )
    message = JsonField(label=gettext_lazy("Message"), required=False, message=True)
    headers = JsonField(label=gettext_lazy("Headers"), required=False, object_only=True)
    task = forms.CharField(
        label=gettext_lazy("Task"),
        max_length=255,
        required=False,
        help_text=gettext_lazy("Dotted path of a Django task; then the message is the task's."),
    )
    args = JsonField(label=gettext_lazy("Task arguments"), required=False)
    kwargs = JsonField(
        label=gettext_lazy("Task keyword arguments"), required=False, object_only=True
    )
    time_zone = forms.CharField(label=gettext_lazy("Time zone"), max_length=64)
    catch_up = forms.IntegerField(
        label=gettext_lazy("Catch-up (seconds)"),
        min_value=0,
        help_text=gettext_lazy(
            "A tick missed by up to this long is still sent; older ones are skipped."
        ),
    )
    enabled = forms.BooleanField(label=gettext_lazy("Enabled"), required=False)

    def entry(self) -> dict[str, Any]:
        """The form as a settings entry (what `schedule_settings.resolve` reads)."""
        data = self.cleaned_data
        entry: dict[str, Any] = {
            "cron": data["cron"],
            "time_zone": data["time_zone"],
            "catch_up": data["catch_up"],
            "enabled": data["enabled"],
            "headers": data["headers"],
        }
        if data["queue"]:
            entry["queue"] = data["queue"]
        if data["task"]:
            entry |= {
                "task": data["task"],
                "args": data["args"] or [],
                "kwargs": data["kwargs"] or {},
            }
        else:
            entry["message"] = {} if data["message"] is None else data["message"]
        return entry


def initial(schedule: Schedule) -> dict[str, Any]:
    """The form's values for a stored schedule (a task's message back as task fields)."""
    values: dict[str, Any] = {
        "cron": schedule.cron,
        "queue": schedule.queue,
        "time_zone": schedule.time_zone,
        "catch_up": int(schedule.catch_up.total_seconds()),
        "enabled": schedule.enabled,
        "headers": json.dumps(schedule.headers) if schedule.headers else "",
    }
    message = schedule.message
    if isinstance(message, dict) and isinstance(message.get("task"), str) and "id" not in message:
        values |= {
            "task": message["task"],
            "args": json.dumps(message.get("args", [])),
            "kwargs": json.dumps(message.get("kwargs", {})),
        }
    else:
        values["message"] = json.dumps(message)
    return values


def schedule_list(request: HttpRequest, admin: ModelAdmin) -> HttpResponse:
    """Every schedule: cron, zone, queue, on/off, last and next tick, ticks skipped; of
    every queue database when routes exist and ``?db=`` names none."""
    require(request, "view")
    routed = len(routing.queue_databases()) > 1
    if not request.GET.get("db") and routed:
        return _every_database_list(request, admin)
    db = current_db(request)
    rows = [(s, schedule_url(db, s.name)) for s in InternalManager(db).list_schedules()]
    return render(
        request, admin, "schedules.html", _("Schedules"), db, rows=rows, offers_all=routed
    )


def _every_database_list(request: HttpRequest, admin: ModelAdmin) -> HttpResponse:
    """The schedules of every queue database, by name, each with its database."""
    rows: list[tuple[Schedule, str]] = []
    states = []
    for alias in routing.queue_databases():
        state = DatabaseState(alias)
        try:
            rows += [
                (s, schedule_url(alias, s.name)) for s in InternalManager(alias).list_schedules()
            ]
        except DatabaseError as exc:
            state.error = error_line(exc)
        states.append(state)
    rows.sort(key=lambda row: row[0].name)  # stable: a name in two databases keeps their order
    db = routing.queue_databases()[0]
    return render(
        request,
        admin,
        "schedules.html",
        _("Schedules"),
        db,
        rows=rows,
        states=states,
        down=[s for s in states if s.error],
        **every_database_context(states),
    )


def _schedule_database(request: HttpRequest, name: str) -> str:
    """The database a schedule's page is about: ``?db=``; without it, with routes, the one
    queue database holding the schedule (404 asking for ``?db=`` when two do)."""
    if request.POST.get("db") or request.GET.get("db") or len(routing.queue_databases()) == 1:
        return current_db(request)
    try:
        found = QueueManager().get_schedule(name)
    except InvalidArgument as exc:
        raise Http404(str(exc)) from exc
    return found.database if found is not None else current_db(request)


def schedule_page(request: HttpRequest, admin: ModelAdmin, name: str) -> HttpResponse:
    """One schedule: GET shows it; POST saves the form, turns it on or off, or runs it now."""
    require(request, "view")
    name = unquote(name)
    db = _schedule_database(request, name)
    manager = InternalManager(db)
    schedule = manager.get_schedule(name)
    if schedule is None:
        raise Http404(_("schedule %s does not exist") % name)
    form = ScheduleForm(initial=initial(schedule))
    if request.method == "POST":
        require(request, "change")
        action = request.POST.get("action", "save")
        if action == "save":
            form = ScheduleForm(request.POST)
            if form.is_valid() and _save(request, manager, name, form):
                log(request, schedule.queue, "change", f"Saved schedule {name}", db)
                messages.success(request, _("Saved schedule %s.") % name)
                return HttpResponseRedirect(schedule_url(db, name))
        elif action in ("enable", "disable"):
            manager.enable_schedule(name, action == "enable")
            log(request, schedule.queue, "change", f"Schedule {name}: {action}d", db)
            done = _("Enabled schedule %s.") if action == "enable" else _("Disabled schedule %s.")
            messages.success(request, done % name)
            return HttpResponseRedirect(schedule_url(db, name))
        elif action == "run":
            msg_id = manager.run_schedule_now(name)
            log(
                request,
                schedule.queue,
                "change",
                f"Schedule {name}: ran now (message {msg_id})",
                db,
            )
            messages.success(request, _("Sent message %(id)s now.") % {"id": msg_id})
            return HttpResponseRedirect(schedule_url(db, name))
    upcoming = []
    if schedule.next_tick is not None:
        after = schedule.next_tick - timedelta(microseconds=1)
        upcoming = manager.next_ticks(schedule.cron, schedule.time_zone, after=after, n=NEXT_TICKS)
    return render(
        request,
        admin,
        "schedule.html",
        _("Schedule %s") % name,
        db,
        schedule=schedule,
        form=form,
        upcoming=upcoming,
        ticks=manager.schedule_ticks(name, LAST_TICKS),
        list_url=schedule_url(db),
        post_url=schedule_url(db, name),
    )


def _timing_errors(manager: InternalManager, form: ScheduleForm) -> bool:
    """Check the cron and the time zone as the SQL will, each refusal on its own field;
    whether one was refused."""
    data = form.cleaned_data
    for field, cron, zone in (
        ("cron", data["cron"], "UTC"),
        ("time_zone", "@daily", data["time_zone"]),
    ):
        try:
            manager.next_ticks(cron, zone, n=1)
        except InvalidArgument as exc:
            form.add_error(field, refusal(exc))
    return bool(form.errors)


def _save(request: HttpRequest, manager: InternalManager, name: str, form: ScheduleForm) -> bool:
    """Apply the form; False (the error on the form, on its field when it names one) when
    the schedule is refused."""
    if _timing_errors(manager, form):
        return False
    try:
        item = resolve(name, form.entry())
        routes = routing.queue_databases()
        if len(routes) > 1 and manager.using in routes and item.database != manager.using:
            raise InvalidArgument(
                _(
                    "queue %(queue)s lives in database %(there)s, and a schedule lives in its "
                    "queue's database: remove this one and create it there"
                )
                % {"queue": item.queue, "there": item.database}
            )
        with transaction.atomic(using=manager.using):  # the queue too, or nothing
            apply(manager, item)
    except (ValueError, TypeError, ImportError, ImproperlyConfigured, PgmqError) as exc:
        form.add_error(None, refusal(exc))
        return False
    return True
