"""A queue attribute as declared in SQL (``pgmq._queue_attribute_declaration()``), and
the one declaration of the attribute kinds: how a value of each kind is written, read
back and shown, wherever a person types or reads one (the errors in the active language:
the admin's; commands run in English).

The attributes are SQL's (sql/25_attributes.sql); the generated module
``attributes_declared.py`` holds its rows as `AttributeSpec`s. The kinds are declared
here, once (`KINDS`): the command line (``management/attribute_args.py``), the admin
form (``dashboard/attribute_forms.py``) and the docs table (``sqltools/attributes.py``)
all read them, so a value is parsed by one function and shown in one format everywhere.
SQL checks each kind's stored value (``pgmq._check_queue_attributes``);
tests/integration/test_attribute_declaration.py fails when a kind declared here has no
check there.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

# "limit": applied when a message is read, through the limit rows (sql/26_limits.sql).
SIDES = ("send", "read", "both", "retention", "limit")

_DURATION = re.compile(r"^\s*(\d+)\s*(s|m|h|d|w)?\s*$", re.IGNORECASE)
_RATE_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h|d|w)?\s*$", re.IGNORECASE)
_DURATION_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_SIZE = re.compile(r"^\s*(\d+)\s*(b|kb|kib|mb|mib)?\s*$", re.IGNORECASE)
_SIZE_UNITS = {"b": 1, "kb": 1000, "kib": 1024, "mb": 1000**2, "mib": 1024**2}
_SWITCHES = {"true": True, "yes": True, "on": True, "false": False, "no": False, "off": False}


def _rate_format() -> str:
    """What a rate must be (translated when a language is active: the admin's form)."""
    return _(
        'must be COUNT/DURATION such as 100/1m, 10/2s or 5/0.5s, or {"count": N, "seconds": S}, '
        "got %(text)r"
    )


def _refuse_negative(text: str) -> None:
    """A negative duration or size gets its own message, not "must be a duration"."""
    if text.strip().startswith("-"):
        raise ValueError(_("must be positive, got %(text)r") % {"text": text})


def duration(text: str) -> int:
    """Seconds from ``300``, ``90s``, ``5m``, ``2h``, ``14d`` or ``1w``; ValueError else."""
    _refuse_negative(text)
    match = _DURATION.match(text)
    if not match:
        raise ValueError(
            _("must be a duration such as 300, 90s, 5m, 2h, 14d or 1w, got %(text)r")
            % {"text": text}
        )
    return int(match.group(1)) * _DURATION_UNITS[(match.group(2) or "s").lower()]


def size(text: str) -> int:
    """Bytes from ``1000``, ``64KB``, ``256KiB``, ``1MB`` or ``1MiB``; ValueError else."""
    _refuse_negative(text)
    match = _SIZE.match(text)
    if not match:
        raise ValueError(
            _("must be a size such as 1000, 64KB, 256KiB or 1MiB, got %(text)r") % {"text": text}
        )
    return int(match.group(1)) * _SIZE_UNITS[(match.group(2) or "b").lower()]


def switch(text: str) -> bool:
    """A boolean from true/false, yes/no, on/off; ValueError else."""
    value = _SWITCHES.get(text.strip().lower())
    if value is None:
        raise ValueError(_("must be true or false, got %(text)r") % {"text": text})
    return value


def integer(text: str, minimum: int = 1) -> int:
    """An integer, ``minimum`` or more; ValueError else."""
    text = text.strip()
    if not text.isdigit() or int(text) < minimum:
        raise ValueError(
            _("must be an integer, %(minimum)s or more, got %(text)r")
            % {"minimum": minimum, "text": text}
        )
    return int(text)


def rate(text: str) -> dict[str, int | float]:
    """A ``rate_limit`` from ``COUNT/DURATION`` (``100/1m``: at most 100 in any minute;
    ``5/0.5s``) or its JSON object ``{"count": N, "seconds": S}``; ValueError else."""
    text = text.strip()
    if text.startswith("{"):
        try:
            value = json.loads(text)
        except ValueError:
            raise ValueError(_rate_format() % {"text": text}) from None
        if not isinstance(value, dict) or set(value) != {"count", "seconds"}:
            raise ValueError(_rate_format() % {"text": text})
        return value
    count, sep, per = text.partition("/")
    match = _RATE_DURATION.match(per)
    if not sep or not count.strip().isdigit() or int(count) < 1 or not match:
        raise ValueError(_rate_format() % {"text": text})
    seconds = float(match.group(1)) * _DURATION_UNITS[(match.group(2) or "s").lower()]
    if seconds <= 0:
        raise ValueError(
            _("the duration must be more than 0 seconds, got %(text)r") % {"text": text}
        )
    return {"count": int(count), "seconds": int(seconds) if seconds.is_integer() else seconds}


def show_rate(value: Any) -> str:
    """A ``rate_limit`` as ``COUNT/DURATION`` in the largest whole unit (``100/1m``), the
    text `rate` reads back; anything else as JSON."""
    if not isinstance(value, dict) or set(value) != {"count", "seconds"}:
        return json.dumps(value)
    seconds = value["seconds"]
    for unit, length in reversed(_DURATION_UNITS.items()):
        if isinstance(seconds, int | float) and seconds >= length and seconds % length == 0:
            return f"{value['count']}/{int(seconds // length)}{unit}"
    return f"{value['count']}/{seconds}s"


def show_switch(value: Any) -> str:
    """A switch as ``true`` / ``false`` (JSON's words, which `switch` reads back)."""
    return json.dumps(value)


@dataclass(frozen=True)
class Kind:
    """One kind of queue attribute: how its values are written and read, by people."""

    name: str
    # An integer at least the declared minimum (the SQL check says the same).
    number: bool
    # Text typed on the command line or in the admin form -> the stored JSON value.
    parse: Callable[[str, int | None], Any]
    # The stored value -> the text shown by pgmq_attributes and the admin (parse reads it).
    show: Callable[[Any], str]
    # Command line: the option's metavar and what the help says values look like.
    metavar: str
    examples: str
    # The docs table's "value" column ({minimum} filled in).
    docs: str
    # The admin form's help beside the field (a lazy translation), when the label is not enough.
    form_help: Any = ""


def _number(read: Callable[[str], int]) -> Callable[[str, int | None], int]:
    """A number kind's parser: ``read``, then at least the declared minimum."""

    def parse(text: str, minimum: int | None) -> int:
        value = read(text)
        if minimum is not None and value < minimum:
            raise ValueError(
                _("must be %(minimum)s or more, got %(text)r") % {"minimum": minimum, "text": text}
            )
        return value

    return parse


KINDS: dict[str, Kind] = {
    kind.name: kind
    for kind in (
        Kind(
            "seconds", True, _number(duration), str, "DURATION",
            "durations: 300, 5m, 2h, 14d", "integer seconds >= {minimum}",
            gettext_lazy("a duration such as 300, 90s, 5m, 2h or 14d; empty: not set"),
        ),
        Kind(
            "bytes", True, _number(size), str, "SIZE",
            "sizes: 1000, 256KiB, 1MiB", "integer bytes >= {minimum}",
            gettext_lazy("a size such as 1000, 256KiB or 1MiB"),
        ),
        Kind(
            "count", True, lambda text, minimum: integer(text, 1 if minimum is None else minimum),
            str, "N", "N", "integer >= {minimum}",
        ),
        Kind(
            "switch", False, lambda text, _minimum: switch(text), show_switch, "true|false",
            "true/false", "true / false",
        ),
        Kind(
            "queue", False, lambda text, _minimum: text.strip(), str, "QUEUE",
            "a queue", "another queue's name",
        ),
        Kind(
            "rate", False, lambda text, _minimum: rate(text), show_rate, "COUNT/DURATION",
            "COUNT/DURATION: 100/1m", "`COUNT/DURATION` (`100/1m`) or "
            '`{{"count": N, "seconds": S}}`, N integer >= 1, 0 < S <= 1 year',
            gettext_lazy("COUNT/DURATION: at most COUNT handed out in any DURATION, e.g. 100/1m"),
        ),
    )
}  # fmt: skip


@dataclass(frozen=True)
class AttributeSpec:
    """One declared queue attribute (a row of ``pgmq._queue_attribute_declaration()``)."""

    key: str
    kind: str
    minimum: int | None
    side: str
    option: str | None
    allowed: str
    help: str

    @property
    def label(self) -> str:
        """The admin form's label: ``max_in_flight`` -> ``Max in flight`` (and the
        project's spelling of "dead-letter")."""
        return self.key.replace("_", " ").capitalize().replace("ead letter", "ead-letter")

    def parse(self, text: str) -> Any:
        """A value typed by a person (command line, admin form) as the attribute's JSON
        value; ValueError naming what it must be."""
        return KINDS[self.kind].parse(text, self.minimum)

    def show(self, value: Any) -> str:
        """The attribute's value as every screen shows it (`parse` reads it back)."""
        return KINDS[self.kind].show(value)


def show_attribute(specs: Iterable[AttributeSpec], key: str, value: Any) -> str:
    """A queue's attribute as pgmq_attributes prints it and the admin shows it: by its
    kind's format, or as JSON for a key not declared."""
    spec = next((s for s in specs if s.key == key), None)
    return spec.show(value) if spec else json.dumps(value)
