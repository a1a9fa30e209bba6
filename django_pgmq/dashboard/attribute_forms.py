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

from ..attribute_spec import KINDS, AttributeSpec, show_attribute
from ..attributes_declared import DECLARED, LABELS
from ..manager import QueueManager
from ..names import MAX_QUEUE_NAME_LENGTH
from .access import url
from .forms import JsonField

# Attributes with a control of their own: a checkbox left empty here would clear them.
_OWN_CONTROLS = ("paused",)


class AttributeValueField(forms.CharField):
    """A typed attribute value, read by its kind's parser (the command line's)."""

    def __init__(self, spec: AttributeSpec, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.spec = spec

    def prepare_value(self, value: Any) -> Any:
        """A stored value (the form's initial) in the format every screen shows."""
        return value if value is None or isinstance(value, str) else self.spec.show(value)

    def to_python(self, value: Any) -> Any:
        """The value typed, parsed as on the command line (None when empty)."""
        text = super().to_python(value)
        if not text:
            return None
        try:
            return self.spec.parse(text)
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from None


def attribute_field(spec: AttributeSpec) -> forms.Field:
    """The form field of one declared attribute (its kind decides the field)."""
    label = LABELS.get(spec.key, spec.label)
    if spec.kind == "switch":
        return forms.BooleanField(label=label, required=False)
    max_length = MAX_QUEUE_NAME_LENGTH if spec.kind == "queue" else None
    return AttributeValueField(
        spec,
        label=label,
        required=False,
        help_text=KINDS[spec.kind].form_help,
        max_length=max_length,
    )


class BaseAttributesForm(forms.Form):
    """The attributes form's behaviour; its fields come from the declaration."""

    specs: tuple[AttributeSpec, ...] = ()

    @classmethod
    def of(cls, attributes: dict[str, Any]) -> BaseAttributesForm:
        """The form showing a queue's current attributes."""
        initial = {k: v for k, v in attributes.items() if k in cls.base_fields}
        return cls(initial=initial)

    def attributes(self) -> dict[str, Any]:
        """What to merge into the queue's attributes: empty fields remove theirs."""
        return {
            k: None if v is None or v == "" or v is False else v
            for k, v in self.cleaned_data.items()
        }


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
        "attributes": [
            (key, show_attribute(DECLARED, key, value)) for key, value in sorted(attributes.items())
        ],
        "attributes_form": AttributesForm.of(attributes),
        "attributes_url": url("attributes", db, queue),
        "redrive_url": url("redrive", db, queue),
        "redrive_form": RedriveForm(),
        "dead_letter_sources": manager.dead_letter_sources(queue),
    }
