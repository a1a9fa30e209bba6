"""The dashboard's pages: overview, queue page, workers, and the confirmation pages."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from typing import Any

from django.conf import settings
from django.contrib.admin import ModelAdmin
from django.contrib.admin.utils import unquote
from django.db import DatabaseError
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponsePermanentRedirect,
    HttpResponseRedirect,
)
from django.template.response import TemplateResponse
from django.urls import Resolver404, resolve
from django.utils import timezone
from django.utils.translation import gettext as _

from .. import conf, routing
from ..internal import InternalManager
from ..models import Queue, Worker
from . import all_databases
from .access import current_db, permissions, require, url
from .attribute_forms import context as attributes_context
from .charts import RANGES, queue_charts
from .databases import database_aliases, migrated
from .display import MessageView, duration
from .forms import ACTIONS, SOURCE_ACTIONS, CreateQueueForm, MessageFilterForm, SendMessageForm
from .listing import DEFAULT_DESCENDING, SORT_KEYS, BadListing, ListedPage, Listing, list_page
from .overview import QueueRow, load_overview, total_stats
from .pages import queue_or_404, render
from .timings import handler_durations


def not_found(request: HttpRequest, admin: ModelAdmin, reason: str) -> TemplateResponse:
    """The admin's 404 page of the dashboard, saying in one line what was not found."""
    aliases = database_aliases()
    asked = request.GET.get("db")
    db = asked if asked in aliases else aliases[0]
    response = render(request, admin, "not_found.html", _("Not found"), db, reason=reason)
    response.status_code = 404
    return response


def answers_404(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Wrap a dashboard view so that a bad queue name, queue or database gets the 404 page,
    and a database where django_pgmq is not migrated one line saying how to fix it."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, admin: ModelAdmin, **kwargs: Any) -> HttpResponse:
        try:
            db = current_db(request)
            if db != database_aliases()[0] and not migrated(db):  # other aliases: asked first
                return render(request, admin, "unavailable.html", _("Queues"), db, error=None)
            return view(request, *args, admin=admin, **kwargs)
        except Http404 as exc:
            return not_found(request, admin, str(exc) or _("This page does not exist."))

    return wrapped


def unknown_page(request: HttpRequest, admin: ModelAdmin, rest: str) -> HttpResponse:
    """Any other address under the dashboard: 404 with the admin's page.

    An address that only lacks its final slash is redirected, as APPEND_SLASH would.
    """
    require(request, "view")
    if settings.APPEND_SLASH and not request.path.endswith("/"):
        try:
            match = resolve(request.path_info + "/")
        except Resolver404:
            match = None
        if match is not None and match.url_name != "django_pgmq_queue_unknown":
            return HttpResponsePermanentRedirect(request.get_full_path(force_append_slash=True))
    raise Http404(_("The dashboard has no page at this address."))


def queue_root(request: HttpRequest, admin: ModelAdmin, queue: str) -> HttpResponse:
    """``<name>/``, as Django's admin links an object: redirect to the queue's page."""
    require(request, "view")
    db = current_db(request)
    return HttpResponseRedirect(url("change", db, queue_or_404(db, queue).name))


def overview(request: HttpRequest, admin: ModelAdmin) -> HttpResponse:
    """One page of queues (sorted and searched on the server), with figures for those only."""
    if all_databases.shows_every_database(request):  # routed queues: every database at once
        return all_databases.overview(request, admin)
    require(request, "view")
    db = current_db(request)
    try:
        listing = Listing.from_query(request.GET)
    except BadListing as exc:
        raise Http404(str(exc)) from exc
    read = routing.read_database(db)  # a read-only page: the replica, when there is one
    try:
        listed = list_page(read, listing)
        rows = load_overview(read, listed.names)
    except DatabaseError as exc:
        return render(request, admin, "unavailable.html", _("Queues"), db, error=exc)
    for row in rows:
        row.url = url("change", db, row.name)
    totals = {
        "queues": listed.matching if not listing.search else Queue.objects.using(read).count(),
        "attention": sum(1 for r in rows if r.flags),
        "workers": Worker.objects.using(read).alive().count(),
    }
    return render(
        request,
        admin,
        "overview.html",
        _("Queues"),
        db,
        rows=rows,
        totals=totals,
        total=total_stats(rows),
        listed=listed,
        listing=listing,
        columns=_sort_links(db, listing),
        pages=_page_links(db, listing, listed),
        sample_interval=conf.get("SAMPLE_INTERVAL"),
        add_url=url("add", db),
        exact_limit=conf.get("DASHBOARD_EXACT_LIMIT"),
        duration=duration,
        offers_all=len(routing.queue_databases()) > 1,
    )


def _sort_links(db: str, listing: Listing) -> dict[str, dict[str, Any]]:
    """Per sortable column: the URL its header links to and the arrow it shows now."""
    links = {}
    for key in SORT_KEYS:
        active = key == listing.sort
        descending = not listing.descending if active else DEFAULT_DESCENDING[key]
        links[key] = {
            "url": url(
                "changelist", db, o=key, dir="desc" if descending else "asc", q=listing.search
            ),
            "arrow": ("▼" if listing.descending else "▲") if active else "",
        }
    return links


def _page_links(db: str, listing: Listing, listed: ListedPage) -> dict[str, str | None]:
    """The first, previous, next and last page's URLs (None where there is none)."""

    def link(page: int) -> str:
        direction = "desc" if listing.descending else "asc"
        return url("changelist", db, o=listing.sort, dir=direction, q=listing.search, page=page)

    before, after = listed.page > 1, listed.page < listed.pages
    return {
        "first": link(1) if before else None,
        "prev": link(listed.page - 1) if before else None,
        "next": link(listed.page + 1) if after else None,
        "last": link(listed.pages) if after else None,
    }


@dataclass
class Page:
    """One page of messages and the links around it."""

    messages: list[MessageView]
    next_url: str | None
    prev_url: str | None
    first_url: str | None


def _page(request: HttpRequest, db: str, row: QueueRow, source: str, kwargs: dict) -> Page:
    """Fetch one page (one row more, to know whether another follows) and its links."""
    size = kwargs["page_size"]
    target = row.dead_letter if source == "dlq" and row.dead_letter else row.name
    found = InternalManager(db).browse_messages(
        target, archive=source == "archive", **{**kwargs, "page_size": size + 1}
    )
    backwards = kwargs["before_id"] is not None
    more = len(found) > size
    if more:
        found = found[1:] if backwards else found[:size]
    now = timezone.now()
    views = [MessageView(m, now) for m in found]
    paged = backwards or kwargs["after_id"] is not None
    keep = {k: v for k, v in request.GET.items() if k not in ("after", "before", "db")}

    def link(**cursor: Any) -> str:
        return url("change", db, row.name, **keep, **cursor)

    has_next = bool(views) and (more or backwards)
    has_prev = bool(views) and (more if backwards else paged)
    return Page(
        messages=views,
        next_url=link(after=views[-1].msg_id) if has_next else None,
        prev_url=link(before=views[0].msg_id) if has_prev else None,
        first_url=link() if paged else None,
    )


def queue_page(request: HttpRequest, admin: ModelAdmin, queue: str, **forms: Any) -> HttpResponse:
    """A queue's figures and charts, its messages (live, archive or dead letters), actions.

    ``forms`` (``send_form``, ``attributes_form``, ``redrive_form``) replace the empty
    forms: an action that refused its input shows the page with the user's form kept.
    """
    require(request, "view")
    db = current_db(request)
    row = queue_or_404(db, queue)
    if request.method == "GET" and row.name != unquote(queue):  # "Orders": the stored name
        keep = {k: v for k, v in request.GET.items() if k != "db"}
        return HttpResponseRedirect(url("change", db, row.name, **keep))
    filters = MessageFilterForm.from_query(request.GET)
    valid = filters.is_valid()
    applied = filters if valid else filters.without_errors()  # the valid ones still apply
    data = applied.cleaned_data
    kwargs = applied.browse_kwargs()
    source = data.get("source") or "live"
    if source == "dlq" and not row.dead_letter:
        source = "live"
    page = _page(request, db, row, source, kwargs)
    can = permissions(request)
    actions = [(name, ACTIONS[name][0]) for name in SOURCE_ACTIONS[source] if can[ACTIONS[name][1]]]
    return render(
        request,
        admin,
        "queue.html",
        _("Queue %s") % row.name,
        db,
        row=row,
        filters=filters,
        filtered=any(kwargs[k] is not None for k in ("min_read_ct", "header_key", "contains")),
        source=source,
        page=page,
        actions=actions,
        charts=queue_charts(db, row.name, data.get("range") or "hour"),
        source_urls=_source_urls(db, row),
        range_urls={r: url("change", db, row.name, source=source, range=r) for r in RANGES},
        action_url=url("messages", db, row.name),
        send_url=url("send", db, row.name),
        purge_url=url("purge", db, row.name),
        drop_url=url("delete", db, row.name),
        notify_url=url("notify", db, row.name),
        pause_url=url("pause", db, row.name),
        **{"send_form": SendMessageForm(), **attributes_context(db, row.name), **forms},
        bulk_url=url("bulk", db, row.name),
        bulk_actions=_bulk_actions(source, can),
        bulk_filters=_bulk_filters(data, source) if valid else [],
        durations=handler_durations(db, row.name),
        duration=duration,
    )


def _bulk_actions(source: str, can: dict[str, bool]) -> list[tuple[str, str]]:
    """The bulk actions the list ``source`` offers the user: (key, label)."""
    from .bulk import BULK_ACTIONS, BULK_SOURCE_ACTIONS, bulk_label

    offered = BULK_SOURCE_ACTIONS[source]
    return [(k, bulk_label(k, source)) for k in offered if can[BULK_ACTIONS[k][1]]]


def _bulk_filters(data: dict[str, Any], source: str) -> list[tuple[str, str]]:
    """The page's filters as (name, value) pairs, carried to the bulk confirmation page."""
    pairs = [("source", source)]
    for name in ("read_ct", "header", "header_value"):
        if data.get(name) not in (None, ""):
            pairs.append((name, str(data[name])))
    if data.get("contains") is not None:
        pairs.append(("contains", json.dumps(data["contains"])))
    return pairs


def _source_urls(db: str, row: QueueRow) -> list[tuple[str, str, str]]:
    """The message lists a queue page offers: (key, label, url)."""
    sources = [("live", _("Live messages")), ("archive", _("Archive"))]
    if row.dead_letter:
        sources.append(("dlq", _("Dead letters (%s)") % row.dead_letter))
    return [(key, label, url("change", db, row.name, source=key)) for key, label in sources]


def workers(request: HttpRequest, admin: ModelAdmin) -> HttpResponse:
    """Workers that registered, live first; those whose heartbeat stopped are marked stale."""
    require(request, "view")
    db = current_db(request)
    now = timezone.now()
    # Each row also gets the figures the template shows (not fields of the model).
    read = routing.read_database(db)  # a read-only page: the replica, when there is one
    rows: list[Any] = list(Worker.objects.using(read).order_by("-expires_at", "host", "pid"))
    for worker in rows:
        worker.stale = worker.expires_at <= now
        worker.heartbeat_age = duration((now - worker.heartbeat_at).total_seconds())
        worker.queue_links = [(q, url("change", db, q)) for q in worker.queues or ()]
    return render(request, admin, "workers.html", _("Workers"), db, workers=rows)


def confirm(
    request: HttpRequest, admin: ModelAdmin, db: str, row: QueueRow, *, what: str, post_url: str
) -> HttpResponse:
    """The page that asks before a purge or a drop, showing how many messages go."""
    return render(
        request,
        admin,
        "confirm.html",
        (_("Purge queue %s?") if what == "purge" else _("Drop queue %s?")) % row.name,
        db,
        row=row,
        what=what,
        post_url=post_url,
        queue_url=url("change", db, row.name),
    )


def create_form(
    request: HttpRequest, admin: ModelAdmin, db: str, form: CreateQueueForm
) -> HttpResponse:
    """The create-queue page."""
    return render(
        request, admin, "create.html", _("Create a queue"), db, form=form, post_url=url("add", db)
    )
