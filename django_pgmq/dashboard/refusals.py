"""A refusal of the library or the SQL layer, as a page in the user's language says it.

The errors' own texts are English (they are the API's, and the SQL's for every client).
In another language the page leads with a translated sentence chosen by the error's
class (one class per SQLSTATE, `errors._BY_SQLSTATE`) and keeps the exact text after it,
so the user reads what went wrong in their language and still sees the value refused.
"""

from __future__ import annotations

from django.utils.functional import Promise
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _

from ..errors import (
    CrossDatabaseTransaction,
    FeatureNotAvailable,
    InsufficientPrivilege,
    InvalidArgument,
    InvalidPayload,
    InvalidQueueName,
    PgmqError,
    QueueNameConflict,
    QueueNotFound,
    ScheduleNotFound,
)

# Most specific first: InvalidPayload and InvalidQueueName are ValueErrors as InvalidArgument is.
LEADS: tuple[tuple[type[PgmqError], Promise], ...] = (
    (QueueNotFound, _("The queue does not exist.")),
    (ScheduleNotFound, _("The schedule does not exist.")),
    (InvalidQueueName, _("Not a valid queue name.")),
    (QueueNameConflict, _("Another queue already uses this name.")),
    (InvalidPayload, _("The message cannot be stored as JSON.")),
    (InvalidArgument, _("The database refused a value.")),
    (InsufficientPrivilege, _("The database role lacks a privilege for this.")),
    (FeatureNotAvailable, _("This installation cannot do that.")),
    (CrossDatabaseTransaction, _("The queue lives in another database than the transaction.")),
)


def refusal(exc: BaseException) -> str:
    """``exc``'s text, led by a translated sentence naming its kind when the page is not
    in English (the texts' own language)."""
    text = str(exc)
    if (get_language() or "en").split("-")[0] == "en":
        return text
    lead = next((lead for kind, lead in LEADS if isinstance(exc, kind)), None)
    return text if lead is None else f"{lead} ({text})"
