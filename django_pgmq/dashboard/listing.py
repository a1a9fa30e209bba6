"""Which queues an overview page shows, in which order: paging, sorting and search on the server.

Sorting by queue length or by oldest age over every queue reads the latest `QueueSample` of
each queue (one index probe per queue on the samples' (queue, sampled_at) index), not the queues'
tables: the exact figures are then computed for the page's queues only. A queue never
sampled sorts as an empty one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from math import ceil
from typing import Any

from django.db.models import F, OuterRef, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.http import QueryDict
from django.utils.translation import gettext as _

from ..models import Queue, QueueSample

PAGE_SIZE = 50
SORT_KEYS = ("name", "queue_length", "age")
# Old sort keys still accepted in URLs (bookmarks), and the key each now means.
SORT_ALIASES = {"depth": "queue_length"}
# Direction a column's first click sorts in: names A to Z, longest and oldest first.
DEFAULT_DESCENDING = {"name": False, "queue_length": True, "age": True}


class BadListing(ValueError):
    """A query string the overview cannot follow; its message names the parameter."""


@dataclass(frozen=True)
class Listing:
    """What the user asked for: ``?o=`` sort key, ``?dir=``, ``?q=`` name search, ``?page=``."""

    sort: str = "name"
    descending: bool = False
    search: str = ""
    page: int = 1

    @classmethod
    def from_query(cls, params: QueryDict) -> Listing:
        """Parse the overview's query string; a page number out of range is clamped later."""
        sort = params.get("o") or "name"
        sort = SORT_ALIASES.get(sort, sort)
        if sort not in SORT_KEYS:
            raise BadListing(
                _("Unknown sort key %(key)r: use one of %(keys)s.")
                % {"key": sort, "keys": ", ".join(SORT_KEYS)}
            )
        direction = params.get("dir") or ("desc" if DEFAULT_DESCENDING[sort] else "asc")
        if direction not in ("asc", "desc"):
            raise BadListing(_("Unknown sort direction %r: use asc or desc.") % direction)
        search = (params.get("q") or "").strip()
        if "\x00" in search:
            raise BadListing(_("A search cannot contain a NUL character."))
        raw_page = (params.get("page") or "1").strip()
        if not re.fullmatch(r"[+-]?[0-9]+", raw_page):
            raise BadListing(_("Page %r is not a whole number.") % raw_page[:30])
        # Past 18 digits, any page is past the last: no int() of thousands of digits.
        page = int(raw_page) if len(raw_page) <= 18 else (-1 if raw_page[0] == "-" else 10**18)
        return cls(sort, direction == "desc", search, page)


@dataclass(frozen=True)
class ListedPage:
    """The queue names of one page, in order, and where the page sits in the whole list."""

    names: list[str]
    matching: int
    page: int
    pages: int

    @property
    def first(self) -> int:
        """The position of the page's first queue in the list (1-based; 0 when empty)."""
        return (self.page - 1) * PAGE_SIZE + 1 if self.names else 0

    @property
    def last(self) -> int:
        return self.first + len(self.names) - 1 if self.names else 0


def _ordered(queues: QuerySet, listing: Listing) -> QuerySet:
    """``queues`` in the listing's order; the name breaks ties (ascending), so pages are stable."""
    if listing.sort == "name":
        return queues.order_by("-queue_name" if listing.descending else "queue_name")
    latest = QueueSample.objects.filter(queue=OuterRef("queue_name")).order_by("-sampled_at", "-id")
    key: Coalesce | Subquery
    if listing.sort == "queue_length":
        key = Coalesce(Subquery(latest.values("queue_length")[:1]), Value(0))
        order = F("key").desc() if listing.descending else F("key").asc()
    else:  # age: the older the oldest message, the larger the age; no message, no age
        key = Subquery(latest.values("oldest_enqueued_at")[:1])
        order = (
            F("key").asc(nulls_last=True) if listing.descending else F("key").desc(nulls_first=True)
        )
    return queues.annotate(key=key).order_by(order, "queue_name")


def _matching(using: str, listing: Listing) -> QuerySet:
    """The queues of ``using`` whose names the listing's search matches."""
    queues = Queue.objects.using(using).all()
    if listing.search:
        queues = queues.filter(queue_name__icontains=listing.search)
    return queues


def count_matching(using: str, listing: Listing) -> int:
    """How many queues of ``using`` the listing's search matches."""
    return _matching(using, listing).count()


def first_entries(using: str, listing: Listing, limit: int) -> list[tuple[str, Any]]:
    """The first ``limit`` queues of ``using`` in the listing's order: (name, sort value),
    the value None for a name sort; what `sort_key` orders across databases."""
    queues = _ordered(_matching(using, listing), listing)
    if listing.sort == "name":
        return [(name, None) for name in queues.values_list("queue_name", flat=True)[:limit]]
    return list(queues.values_list("queue_name", "key")[:limit])


def order_entries(listing: Listing, entries: list[tuple[str, str, Any]]) -> None:
    """Sort (database, name, sort value) entries of several databases, in place, in the
    order `_ordered` gives one database's: a queue never sampled as an empty one, names
    breaking ties (ascending), then the databases' order."""
    if listing.sort == "name":
        entries.sort(key=lambda e: e[1], reverse=listing.descending)  # stable: database order
        return
    if listing.sort == "queue_length":
        sign = -1 if listing.descending else 1
        entries.sort(key=lambda e: (sign * (e[2] or 0), e[1]))
        return

    def age(entry: tuple[str, str, Any]) -> tuple:
        """By the oldest message's time: oldest first when descending; no message last
        (descending) or first (ascending)."""
        stamp = entry[2].timestamp() if entry[2] is not None else 0.0
        if listing.descending:
            return (entry[2] is None, stamp, entry[1])
        return (entry[2] is not None, -stamp, entry[1])

    entries.sort(key=age)


def list_page(using: str, listing: Listing) -> ListedPage:
    """The names of the page ``listing`` asks for (clamped to the pages there are)."""
    queues = _matching(using, listing)
    matching = queues.count()
    pages = max(1, ceil(matching / PAGE_SIZE))
    page = min(max(listing.page, 1), pages)
    start = (page - 1) * PAGE_SIZE
    ordered = _ordered(queues, listing).values_list("queue_name", flat=True)
    return ListedPage(list(ordered[start : start + PAGE_SIZE]), matching, page, pages)
