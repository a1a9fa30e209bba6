"""The queue page's attributes section: its forms (derived from the declared queue
attributes) and what the page shows of them.

Apart from the POST handlers (`attributes`), which redraw the queue page (`views`)
with a refused form kept, while `views` draws this section: so neither imports the
other's caller.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from ..attribute_spec import NUMBER_KINDS, AttributeSpec
from ..attributes_declared import DECLARED, LABELS
from ..manager import QueueManager
from .access import url
from .forms import JsonField

# What each kind of attribute asks for, beside its label (from the declaration).
_KIND_HELP = {
    "seconds": gettext_lazy("seconds; empty: not set"),
    "bytes": gettext_lazy("bytes"),
    "rate": gettext_lazy("COUNT/SECONDS: at most COUNT handed out in any SECONDS, e.g. 100/60"),
}
# Attributes with a control of their own: a checkbox left empty here would clear them.
_OWN_CONTROLS = ("paused",)


def attribute_field(spec: AttributeSpec) -> forms.Field:
    """The form field of one declared attribute (its kind decides the field)."""
    label = LABELS.get(spec.key, spec.label)
    help_text = _KIND_HELP.get(spec.kind, "")
    if spec.kind in NUMBER_KINDS:
        return forms.IntegerField(
            label=label, min_value=spec.minimum, required=False, help_text=help_text
        )
    if spec.kind == "switch":
        return forms.BooleanField(label=label, required=False)
    if spec.kind == "queue":
        return forms.CharField(label=label, max_length=47, required=False)
    return forms.CharField(label=label, required=False, help_text=help_text)


class BaseAttributesForm(forms.Form):
    """The attributes form's behaviour; its fields come from the declaration."""

    specs: tuple[AttributeSpec, ...] = ()

    @classmethod
    def of(cls, attributes: dict[str, Any]) -> BaseAttributesForm:
        """The form showing a queue's current attributes."""
        initial = {k: v for k, v in attributes.items() if k in cls.base_fields}
        for spec in cls.specs:
            if spec.kind == "rate" and isinstance(rate := initial.get(spec.key), dict):
                initial[spec.key] = f"{rate.get('count')}/{rate.get('seconds')}"
        return cls(initial=initial)

    def clean(self) -> dict[str, Any]:
        """Rate fields (``COUNT/SECONDS``) as the attribute's object; the SQL API checks
        the ranges."""
        cleaned = super().clean() or {}
        for spec in self.specs:
            if spec.kind == "rate" and spec.key in cleaned:
                try:
                    cleaned[spec.key] = _rate(cleaned[spec.key])
                except forms.ValidationError as exc:
                    self.add_error(spec.key, exc)
        return cleaned

    def attributes(self) -> dict[str, Any]:
        """What to merge into the queue's attributes: empty fields remove theirs."""
        data: dict[str, Any] = {
            k: None if v is None or v == "" or v is False else v
            for k, v in self.cleaned_data.items()
        }
        for spec in self.specs:
            if spec.kind == "queue" and data.get(spec.key):
                data[spec.key] = data[spec.key].strip()
        return data


def _rate(text: str | None) -> dict[str, int | float] | None:
    """``COUNT/SECONDS`` as a rate attribute's object (None when empty)."""
    text = (text or "").strip()
    if not text:
        return None
    count, _sep, seconds = text.partition("/")
    try:
        per = float(seconds)
        return {"count": int(count), "seconds": int(per) if per.is_integer() else per}
    except ValueError:
        raise forms.ValidationError(_("must be COUNT/SECONDS, such as 100/60")) from None


def attributes_form_class(specs: tuple[AttributeSpec, ...]) -> type[BaseAttributesForm]:
    """A form with one field per declared attribute but those with their own control;
    an empty field removes its attribute."""
    fields: dict[str, Any] = {
        spec.key: attribute_field(spec) for spec in specs if spec.key not in _OWN_CONTROLS
    }
    return type("AttributesForm", (BaseAttributesForm,), {"specs": specs, **fields})


AttributesForm = attributes_form_class(DECLARED)


class RedriveForm(forms.Form):
    contains = JsonField(
        label=gettext_lazy("Only messages containing"),
        required=False,
        help_text=gettext_lazy("a JSON object"),
    )

    def clean_contains(self) -> dict | None:
        value = self.cleaned_data["contains"]
        if value is not None and not isinstance(value, dict):
            raise forms.ValidationError(_("must be a JSON object"))
        return value


def context(db: str, queue: str) -> dict[str, Any]:
    """What queue.html's attributes section needs."""
    manager = QueueManager(db)
    attributes = manager.get_queue_attributes(queue)
    return {
        "attributes": sorted(attributes.items()),
        "attributes_form": AttributesForm.of(attributes),
        "attributes_url": url("attributes", db, queue),
        "redrive_url": url("redrive", db, queue),
        "redrive_form": RedriveForm(),
        "dead_letter_sources": manager.dead_letter_sources(queue),
    }
