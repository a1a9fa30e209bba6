"""Forms of the dashboard: send, create, filter, act on selected messages, notifications."""

from __future__ import annotations

import json
from typing import Any, cast

from django import forms
from django.utils.translation import gettext_lazy as _

from ..errors import InvalidQueueName
from ..names import validate_queue_name
from .charts import RANGES
from .refusals import refusal

SOURCES = [("live", _("Live messages")), ("archive", _("Archive")), ("dlq", _("Dead-letter queue"))]
ORDERS = [("newest", _("Newest first")), ("oldest", _("Oldest first"))]
PAGE_SIZES = [(25, "25"), (50, "50"), (100, "100"), (200, "200")]
# Actions on selected messages: label and the permission each needs (see access.py).
ACTIONS: dict[str, tuple[Any, str]] = {
    "archive": (_("Archive selected"), "change"),
    "visible": (_("Make selected visible now"), "change"),
    "requeue": (_("Requeue selected into the queue"), "change"),
    "delete": (_("Delete selected"), "delete"),
}
# What the success message calls each action once done.
ACTIONS_DONE: dict[str, Any] = {
    "archive": _("Archive"),
    "visible": _("Make visible now"),
    "requeue": _("Requeue"),
    "delete": _("Delete"),
}
# The actions each message list offers.
SOURCE_ACTIONS: dict[str, list[str]] = {
    "live": ["archive", "visible", "delete"],
    "archive": ["requeue"],
    "dlq": ["requeue", "delete"],
}


class JsonField(forms.CharField):
    """A textarea holding JSON, parsed on clean; the error says where the JSON breaks."""

    widget = forms.Textarea(attrs={"rows": 4, "cols": 60, "class": "pgmq-json"})

    def __init__(self, *, object_only: bool = False, message: bool = False, **kwargs: Any) -> None:
        self.object_only = object_only
        self.message = message  # a message: null refused in the manager's words
        super().__init__(**kwargs)

    def to_python(self, value: Any) -> Any:
        text = (super().to_python(value) or "").strip()
        if not text:
            return None
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError as exc:
            raise forms.ValidationError(_("Not valid JSON: %s") % exc) from exc
        if self.object_only and not isinstance(parsed, dict):
            raise forms.ValidationError(_('Must be a JSON object, like {"key": "value"}.'))
        if parsed is None and self.message:
            raise forms.ValidationError(_("JSON null is not allowed as a message."))
        if parsed is None:
            raise forms.ValidationError(_("JSON null is not allowed here."))
        return parsed


class SendMessageForm(forms.Form):
    message = JsonField(
        label=_("Message"), message=True, help_text=_("Any JSON value except null.")
    )
    headers = JsonField(
        label=_("Headers"),
        required=False,
        object_only=True,
        help_text=_("Optional JSON object."),
    )
    delay = forms.IntegerField(
        label=_("Delay"),
        min_value=0,
        max_value=2**31 - 1,
        initial=0,
        help_text=_("Seconds before it is visible."),
    )


class CreateQueueForm(forms.Form):
    name = forms.CharField(
        label=_("Name"), max_length=47, help_text=_("ASCII letters, digits, '_' and '-'.")
    )
    unlogged = forms.BooleanField(
        label=_("Unlogged"),
        required=False,
        help_text=_("Faster, but its messages are lost if the server crashes."),
    )

    def clean_name(self) -> str:
        try:
            return validate_queue_name(self.cleaned_data["name"])
        except InvalidQueueName as exc:
            raise forms.ValidationError(refusal(exc)) from exc


class MessageFilterForm(forms.Form):
    """The queue page's query string: what to list, in which order, and which page."""

    source = forms.ChoiceField(choices=SOURCES, required=False)
    order = forms.ChoiceField(label=_("Order"), choices=ORDERS, required=False)
    read_ct = forms.IntegerField(min_value=0, required=False, label=_("read_ct at least"))
    header = forms.CharField(required=False, max_length=200, label=_("Header key"))
    header_value = forms.CharField(required=False, max_length=1000, label=_("equal to"))
    contains = JsonField(
        required=False,
        label=_("Message contains"),
        widget=forms.TextInput(attrs={"size": 30, "placeholder": '{"kind": "order"}'}),
    )
    page_size = forms.TypedChoiceField(
        label=_("Page size"), choices=PAGE_SIZES, coerce=int, required=False
    )

    # What an empty query string means; bound to these, the form shows what is listed.
    DEFAULTS = {"order": "newest", "page_size": "50"}

    @classmethod
    def from_query(cls, query: Any) -> MessageFilterForm:
        """The filters of a query string (a QueryDict), defaults filled in."""
        return cls({**cls.DEFAULTS, **query.dict()})

    after = forms.IntegerField(min_value=1, required=False, widget=forms.HiddenInput)
    before = forms.IntegerField(min_value=1, required=False, widget=forms.HiddenInput)
    range = forms.ChoiceField(choices=[(r, r) for r in RANGES], required=False)

    def without_errors(self) -> MessageFilterForm:
        """The same filters minus the fields that did not validate (those take defaults).

        One bad field (a page size not offered, broken JSON) must not drop the others:
        above all not the source, or the archive's filter would list live messages.
        """
        kept = {k: v for k, v in self.data.items() if k not in self.errors}
        form = MessageFilterForm({**self.DEFAULTS, **kept})
        if not form.is_valid():  # cannot happen: each field left validated on its own
            form = MessageFilterForm(self.DEFAULTS)
            form.is_valid()
        return form

    def clean_contains(self) -> Any:
        value = self.cleaned_data["contains"]
        if value is not None and not isinstance(value, dict | list):
            raise forms.ValidationError(_("Must be a JSON object or array."))
        return value

    def browse_kwargs(self) -> dict[str, Any]:
        """Arguments for ``InternalManager.browse_messages`` (the source is chosen separately)."""
        data = self.cleaned_data
        return {
            "newest_first": data.get("order") != "oldest",
            "min_read_ct": data.get("read_ct"),
            "header_key": data.get("header") or None,
            "header_value": data.get("header_value") or None,
            "contains": data.get("contains"),
            "after_id": data.get("after"),
            "before_id": data.get("before") if not data.get("after") else None,
            "page_size": data.get("page_size") or 50,
        }


class MessageActionForm(forms.Form):
    """Selected message ids and what to do with them."""

    action = forms.ChoiceField(choices=[(name, label) for name, (label, _) in ACTIONS.items()])
    source = forms.ChoiceField(choices=SOURCES)
    ids = forms.TypedMultipleChoiceField(coerce=int, choices=(), required=True)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Any positive id may be posted; the database decides which still exist.
        raw = self.data.getlist("ids") if hasattr(self.data, "getlist") else []
        cast(forms.ChoiceField, self.fields["ids"]).choices = [
            (v, v) for v in raw if str(v).isdigit() and int(v) > 0
        ]

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        action, source = data.get("action"), data.get("source")
        if action and source and action not in SOURCE_ACTIONS[source]:
            raise forms.ValidationError(
                _("%(action)r does not apply to %(source)s messages")
                % {"action": action, "source": source}
            )
        return data


class NotifyForm(forms.Form):
    enabled = forms.BooleanField(required=False)
    throttle_ms = forms.IntegerField(min_value=0, max_value=2**31 - 1, initial=250, required=False)
