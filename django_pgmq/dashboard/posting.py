"""What every action view of the dashboard shares: POST only, and no error page.

A GET of an action's address (a reload, a bookmark, a link followed by a crawler)
goes to the queue's page instead of an empty 405. An error of the library
(`PgmqError`: a message too large for the queue, a bad header, a missing
dead-letter queue ...) becomes an error message on the queue's page, never a
500. Views that can keep the user's form (send, attributes) catch it first.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib import messages
from django.contrib.admin import ModelAdmin
from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.utils.translation import gettext as _

from ..errors import PgmqError
from .access import current_db, require, url
from .pages import queue_or_404
from .refusals import refusal

ActionView = Callable[..., HttpResponse]


def queue_url(request: HttpRequest, queue: str) -> str:
    """The queue's page (its name as stored), or 404 when there is no such queue."""
    db = current_db(request)
    return url("change", db, queue_or_404(db, queue).name)


def action(view: ActionView, *, confirms: bool = False, atomic: bool = True) -> ActionView:
    """Wrap an action view: a GET goes to the queue's page (unless the view ``confirms``
    on GET: purge, drop, bulk), a `PgmqError` becomes a message on that page.

    ``atomic``: the view runs in a transaction (a savepoint inside the request's), so
    an error leaves nothing half done and the page can still be drawn. Bulk actions
    commit batch by batch instead, and report how far they got themselves.
    """

    @wraps(view)
    def wrapped(request: HttpRequest, *, admin: ModelAdmin, queue: str, **kwargs: Any) -> Any:
        if request.method != "POST" and not confirms:
            require(request, "view")
            return HttpResponseRedirect(queue_url(request, queue))
        try:
            if not atomic:
                return view(request, admin=admin, queue=queue, **kwargs)
            with transaction.atomic(using=current_db(request)):
                return view(request, admin=admin, queue=queue, **kwargs)
        except PgmqError as exc:
            messages.error(request, _("Nothing done: %s") % refusal(exc))
            return HttpResponseRedirect(queue_url(request, queue))

    return wrapped
