"""Which queues an overview page shows, in which order: paging, sorting and search on the server.

Sorting by depth or by oldest age over every queue reads the latest `QueueSample` of
each queue (one index probe per queue on the samples' (queue, sampled_at) index), not the queues'
tables: the exact figures are then computed for the page's queues only. A queue never
sampled sorts as an empty one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from math import ceil

from django.db.models import F, OuterRef, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.http import QueryDict
from django.utils.translation import gettext as _

from ..models import Queue, QueueSample

PAGE_SIZE = 50
SORT_KEYS = ("name", "depth", "age")
# Direction a column's first click sorts in: names A to Z, deepest and oldest first.
DEFAULT_DESCENDING = {"name": False, "depth": True, "age": True}


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
    if listing.sort == "depth":
        key = Coalesce(Subquery(latest.values("depth")[:1]), Value(0))
        order = F("key").desc() if listing.descending else F("key").asc()
    else:  # age: the older the oldest message, the larger the age; no message, no age
        key = Subquery(latest.values("oldest_enqueued_at")[:1])
        order = (
            F("key").asc(nulls_last=True) if listing.descending else F("key").desc(nulls_first=True)
        )
    return queues.annotate(key=key).order_by(order, "queue_name")


def list_page(using: str, listing: Listing) -> ListedPage:
    """The names of the page ``listing`` asks for (clamped to the pages there are)."""
    queues = Queue.objects.using(using).all()
    if listing.search:
        queues = queues.filter(queue_name__icontains=listing.search)
    matching = queues.count()
    pages = max(1, ceil(matching / PAGE_SIZE))
    page = min(max(listing.page, 1), pages)
    start = (page - 1) * PAGE_SIZE
    ordered = _ordered(queues, listing).values_list("queue_name", flat=True)
    return ListedPage(list(ordered[start : start + PAGE_SIZE]), matching, page, pages)
