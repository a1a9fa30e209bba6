"""The overview of every queue database at once, when ``PGMQ["QUEUE_DATABASES"]`` routes queues.

Shown at the overview's address without ``?db=``: each database's queues (the same
page of each, searched alike), with a database column and a filter that opens one
database's own overview (``?db=ALIAS``). A database that cannot be read is listed as
down with its error; the others still show. Figures come from the replica when
``PGMQ["READ_DATABASE"]`` names one (`routing.read_database`).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.admin import ModelAdmin
from django.db import DatabaseError
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.translation import gettext as _

from .. import conf, routing
from .access import require, url
from .display import duration
from .listing import BadListing, Listing, list_page
from .overview import QueueRow, load_overview, total_stats
from .pages import render


@dataclass
class DatabaseState:
    """One queue database on the page: its alias, its own overview's URL, and its error if down."""

    alias: str
    url: str
    error: str = ""
    pages: int = 1


def shows_every_database(request: HttpRequest) -> bool:
    """Whether the overview request is for every database (routed queues, no ``?db=``)."""
    return "db" not in request.GET and len(routing.queue_databases()) > 1


def overview(request: HttpRequest, admin: ModelAdmin) -> HttpResponse:
    """Every queue database's queues on one page, with a database column and filter."""
    require(request, "view")
    try:
        listing = Listing.from_query(request.GET)
    except BadListing as exc:
        raise Http404(str(exc)) from exc
    rows: list[QueueRow] = []
    states = []
    for alias in routing.queue_databases():
        state = DatabaseState(alias, _own_overview(alias, listing))
        try:
            read = routing.read_database(alias)
            listed = list_page(read, listing)
            found = load_overview(read, listed.names)
            state.pages = listed.pages
        except DatabaseError as exc:
            state.error = _first_line(exc)
            found = []
        for row in found:
            row.url = url("change", alias, row.name)
            row.database = alias
        rows += found
        states.append(state)
    rows.sort(key=lambda r: (r.name, r.database))
    pages = max(s.pages for s in states)
    page = min(max(listing.page, 1), pages)
    return render(
        request,
        admin,
        "overview_all.html",
        _("Queues"),
        routing.queue_databases()[0],
        rows=rows,
        states=states,
        down=[s for s in states if s.error],
        total=total_stats(rows),
        listing=listing,
        pages=pages,
        page=page,
        prev_url=_page_url(listing, page - 1) if page > 1 else None,
        next_url=_page_url(listing, page + 1) if page < pages else None,
        exact_limit=conf.get("DASHBOARD_EXACT_LIMIT"),
        duration=duration,
    )


def _own_overview(alias: str, listing: Listing) -> str:
    """The URL of one database's own overview, ``?db=`` always given (the filter)."""
    query = {"db": alias, **({"q": listing.search} if listing.search else {})}
    return f"{reverse('admin:django_pgmq_queue_changelist')}?{urlencode(query)}"


def _page_url(listing: Listing, page: int) -> str:
    """This every-database page at another page number (search kept)."""
    query = {"page": str(page), **({"q": listing.search} if listing.search else {})}
    return f"{reverse('admin:django_pgmq_queue_changelist')}?{urlencode(query)}"


def _first_line(exc: BaseException) -> str:
    text = str(exc.__cause__ or exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
