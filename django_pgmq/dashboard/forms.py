"""Forms of the dashboard: send, create, filter, act on selected messages, notifications."""

from __future__ import annotations

import json
from typing import Any

from django import forms

from ..errors import InvalidQueueName
from ..names import validate_queue_name
from .charts import RANGES

SOURCES = [("live", "Live messages"), ("archive", "Archive"), ("dlq", "Dead-letter queue")]
ORDERS = [("newest", "Newest first"), ("oldest", "Oldest first")]
PAGE_SIZES = [(25, "25"), (50, "50"), (100, "100"), (200, "200")]
# Actions on selected messages: label and the permission each needs (see access.py).
ACTIONS: dict[str, tuple[str, str]] = {
    "archive": ("Archive selected", "change"),
    "visible": ("Make selected visible now", "change"),
    "requeue": ("Requeue selected into the queue", "change"),
    "delete": ("Delete selected", "delete"),
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

    def __init__(self, *, object_only: bool = False, **kwargs: Any) -> None:
        self.object_only = object_only
        super().__init__(**kwargs)

    def to_python(self, value: Any) -> Any:
        text = super().to_python(value).strip()
        if not text:
            return None
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError as exc:
            raise forms.ValidationError(f"Not valid JSON: {exc}") from exc
        if self.object_only and not isinstance(parsed, dict):
            raise forms.ValidationError('Must be a JSON object, like {"key": "value"}.')
        if parsed is None:
            raise forms.ValidationError("JSON null is not allowed here.")
        return parsed


class SendMessageForm(forms.Form):
    message = JsonField(help_text="Any JSON value except null.")
    headers = JsonField(required=False, object_only=True, help_text="Optional JSON object.")
    delay = forms.IntegerField(
        min_value=0, max_value=2**31 - 1, initial=0, help_text="Seconds before it is visible."
    )


class CreateQueueForm(forms.Form):
    name = forms.CharField(max_length=47, help_text="ASCII letters, digits, '_' and '-'.")
    unlogged = forms.BooleanField(
        required=False, help_text="Faster, but its messages are lost if the server crashes."
    )

    def clean_name(self) -> str:
        try:
            return validate_queue_name(self.cleaned_data["name"])
        except InvalidQueueName as exc:
            raise forms.ValidationError(str(exc)) from exc


class MessageFilterForm(forms.Form):
    """The queue page's query string: what to list, in which order, and which page."""

    source = forms.ChoiceField(choices=SOURCES, required=False)
    order = forms.ChoiceField(choices=ORDERS, required=False)
    read_ct = forms.IntegerField(min_value=0, required=False, label="read_ct at least")
    header = forms.CharField(required=False, max_length=200, label="Header key")
    header_value = forms.CharField(required=False, max_length=1000, label="equal to")
    contains = JsonField(
        required=False,
        label="Message contains",
        widget=forms.TextInput(attrs={"size": 30, "placeholder": '{"kind": "order"}'}),
    )
    page_size = forms.TypedChoiceField(choices=PAGE_SIZES, coerce=int, required=False)

    # What an empty query string means; bound to these, the form shows what is listed.
    DEFAULTS = {"order": "newest", "page_size": "50"}

    @classmethod
    def from_query(cls, query: Any) -> MessageFilterForm:
        """The filters of a query string (a QueryDict), defaults filled in."""
        return cls({**cls.DEFAULTS, **query.dict()})

    after = forms.IntegerField(min_value=1, required=False, widget=forms.HiddenInput)
    before = forms.IntegerField(min_value=1, required=False, widget=forms.HiddenInput)
    range = forms.ChoiceField(choices=[(r, r) for r in RANGES], required=False)

    def clean_contains(self) -> Any:
        value = self.cleaned_data["contains"]
        if value is not None and not isinstance(value, dict | list):
            raise forms.ValidationError("Must be a JSON object or array.")
        return value

    def browse_kwargs(self) -> dict[str, Any]:
        """Arguments for ``QueueManager.browse_messages`` (the source is chosen separately)."""
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
        self.fields["ids"].choices = [(v, v) for v in raw if str(v).isdigit() and int(v) > 0]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        action, source = data.get("action"), data.get("source")
        if action and source and action not in SOURCE_ACTIONS[source]:
            raise forms.ValidationError(f"{action!r} does not apply to {source} messages")
        return data


class NotifyForm(forms.Form):
    enabled = forms.BooleanField(required=False)
    throttle_ms = forms.IntegerField(min_value=0, max_value=2**31 - 1, initial=250, required=False)
