"""The overview of every queue database at once, when ``PGMQ["QUEUE_DATABASES"]`` routes queues.

Shown at the overview's address without ``?db=``: the queues of every database as one
list, paged, searched and sorted (name, queue length, oldest age) as the one-database overview
is, with a database column; the toolbar's database selector says "all" and opens one
database's own overview (``?db=ALIAS``). A database that cannot be read is listed as
down with its error; the others still show. Figures come from the replica when
``PGMQ["READ_DATABASE"]`` names one (`routing.read_database`).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import ceil
from typing import Any

from django.contrib.admin import ModelAdmin
from django.db import DatabaseError
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.translation import gettext as _

from .. import conf, routing
from .access import require, url
from .display import duration
from .listing import (
    DEFAULT_DESCENDING,
    PAGE_SIZE,
    SORT_KEYS,
    BadListing,
    Listing,
    count_matching,
    first_entries,
    order_entries,
)
from .overview import QueueRow, load_overview, total_stats
from .pages import render


@dataclass
class DatabaseState:
    """One queue database on the page: its alias, and its error if down."""

    alias: str
    error: str = ""
    matching: int = 0  # its queues the search matches


def shows_every_database(request: HttpRequest) -> bool:
    """Whether the overview request is for every database (routed queues, no ``?db=`` or
    the selector's "all")."""
    return not request.GET.get("db") and len(routing.queue_databases()) > 1


def overview(request: HttpRequest, admin: ModelAdmin) -> HttpResponse:
    """Every queue database's queues on one page, with a database column and filter.

    One list over all databases, in any order the one-database overview offers (name,
    queue length, age; `listing.order_entries`): each database gives its first ``page x
    PAGE_SIZE`` queues in that order, the merge keeps the page's, and figures are
    computed for those only.
    """
    require(request, "view")
    try:
        listing = Listing.from_query(request.GET)
    except BadListing as exc:
        raise Http404(str(exc)) from exc
    states = [DatabaseState(alias) for alias in routing.queue_databases()]
    for state in states:
        try:
            state.matching = count_matching(routing.read_database(state.alias), listing)
        except DatabaseError as exc:
            state.error = error_line(exc)
    matching = sum(s.matching for s in states)
    pages = max(1, ceil(matching / PAGE_SIZE))
    page = min(max(listing.page, 1), pages)
    entries: list[tuple[str, str, Any]] = []
    for state in (s for s in states if not s.error):
        try:
            read = routing.read_database(state.alias)
            found = first_entries(read, listing, page * PAGE_SIZE)
        except DatabaseError as exc:
            state.error = error_line(exc)
            continue
        entries += [(state.alias, name, value) for name, value in found]
    order_entries(listing, entries)
    shown = entries[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
    rows = _rows(states, shown)
    return render(
        request,
        admin,
        "overview_all.html",
        _("Queues"),
        routing.queue_databases()[0],
        rows=rows,
        states=states,
        down=[s for s in states if s.error],
        **every_database_context(states),
        total=total_stats(rows),
        listing=listing,
        matching=matching,
        columns=_sort_links(listing),
        pages=pages,
        page=page,
        prev_url=_page_url(listing, page - 1) if page > 1 else None,
        next_url=_page_url(listing, page + 1) if page < pages else None,
        sample_interval=conf.get("SAMPLE_INTERVAL"),
        exact_limit=conf.get("DASHBOARD_EXACT_LIMIT"),
        duration=duration,
    )


def every_database_context(states: list[DatabaseState]) -> dict[str, Any]:
    """What an every-database page adds to its context: the selector on "all" (down
    databases marked), and the toolbar's links to the every-database pages."""
    return {
        "offers_all": True,
        "showing_all": True,
        "down_aliases": [s.alias for s in states if s.error],
        "overview_url": reverse("admin:django_pgmq_queue_changelist"),
        "schedules_url": reverse("admin:django_pgmq_queue_schedules"),
    }


def _rows(states: list[DatabaseState], shown: list[tuple[str, str, Any]]) -> list[QueueRow]:
    """The overview lines of the page's (database, name) entries, in the page's order; a
    database that fails now is marked down and its queues left out."""
    found: dict[tuple[str, str], QueueRow] = {}
    for state in states:
        names = [name for alias, name, _ in shown if alias == state.alias]
        if not names or state.error:
            continue
        try:
            loaded = load_overview(routing.read_database(state.alias), names)
        except DatabaseError as exc:
            state.error = error_line(exc)
            continue
        for row in loaded:
            row.url = url("change", state.alias, row.name)
            row.database = state.alias
            found[state.alias, row.name] = row
    return [found[alias, name] for alias, name, _ in shown if (alias, name) in found]


def _sort_links(listing: Listing) -> dict[str, dict[str, Any]]:
    """Per sortable column: the URL its header links to (this every-database page) and the
    arrow it shows now."""
    links = {}
    for key in SORT_KEYS:
        active = key == listing.sort
        descending = not listing.descending if active else DEFAULT_DESCENDING[key]
        query = {"o": key, "dir": "desc" if descending else "asc"}
        links[key] = {
            "url": _url({**query, **({"q": listing.search} if listing.search else {})}),
            "arrow": ("▼" if listing.descending else "▲") if active else "",
        }
    return links


def _page_url(listing: Listing, page: int) -> str:
    """This every-database page at another page number (order and search kept)."""
    query = {
        "o": listing.sort,
        "dir": "desc" if listing.descending else "asc",
        **({"q": listing.search} if listing.search else {}),
        "page": str(page),
    }
    return _url(query)


def _url(query: dict[str, str]) -> str:
    """The every-database overview with ``query`` (never ``db``: that is one database's)."""
    return f"{reverse('admin:django_pgmq_queue_changelist')}?{urlencode(query)}"


def error_line(exc: BaseException) -> str:
    """The first line of a database error, for a page that names a database down."""
    text = str(exc.__cause__ or exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
