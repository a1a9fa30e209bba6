"""The consumer settings (``@consumer(...)``, ``pgmq_consume``), each declared once.

A setting is a typed field of `ConsumerSettings` whose `declare` says the rest: its
default, what a value must be (the check shared by the decorator, the command line and
`resolve`), its ``pgmq_consume`` option, the `QueueConfig` field that stores it and the
queue attribute that holds the same choice in SQL. From here come ``check_settings``,
the worker's defaults and `resolve()`'s maps (``worker/config.py``, whose `QueueSettings`
extends `ConsumerSettings`), `QueueConfig`'s field defaults, the command's options and
the options table in docs/guide/worker.md (``sqltools.regenerate``). Only `Consumer` and
the decorator's keywords are written by hand, beside it: tests/unit/test_consumer_settings.py
fails when they drift. Light to import (models.py does): the standard library, errors, names.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from typing import Any, get_type_hints

from .errors import InvalidArgument
from .names import validate_queue_name


@dataclass(frozen=True)
class Kind:
    """What a setting's value must be: its check, and how ``pgmq_consume`` reads one."""

    check: Callable[[str, Any], None]  # raises InvalidArgument naming the setting
    parse: Callable[[str], Any] | None = None  # the option's argparse type (None: text)


def seconds(text: str) -> float:
    """An argparse type: a positive number of seconds, fractions allowed."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, got {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be more than 0 seconds, got {text!r}")
    return value


def count(minimum: int) -> Kind:
    """An integer of at least ``minimum``."""

    def check(name: str, value: Any) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise InvalidArgument(f"{name} must be an integer of at least {minimum}, got {value!r}")

    what = {0: "a non-negative integer", 1: "a positive integer"}.get(
        minimum, f"an integer of at least {minimum}"
    )
    return Kind(check, lambda text: int_at_least(text, minimum, what))


def int_at_least(text: str, low: int, what: str) -> int:
    """An argparse type's work: ``text`` as an integer of at least ``low`` (``what`` it
    must be, for the error). The commands' ``positive_int`` and its kin use it too."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}") from None
    if value < low:
        raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}")
    return value


def duration(maximum: float) -> Kind:
    """Seconds, more than 0 and at most ``maximum``, fractions allowed."""

    def check(name: str, value: Any) -> None:
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not 0 < value <= maximum
        ):
            raise InvalidArgument(f"{name} must be seconds in (0, {maximum:g}], got {value!r}")

    return Kind(check, seconds)


def one_of(*choices: str) -> Kind:
    """One of ``choices``."""

    def check(name: str, value: Any) -> None:
        if value not in choices:
            raise InvalidArgument(
                f"{name} must be {' or '.join(map(repr, choices))}, got {value!r}"
            )

    return Kind(check)


def _queue_name(name: str, value: Any) -> None:
    validate_queue_name(value)


QUEUE = Kind(_queue_name)
ON_SUCCESS = ("archive", "delete")


@dataclass(frozen=True)
class Setting:
    """One consumer setting: the field's `declare` arguments, with its name and type."""

    default: Any  # None: none fixed (the dead-letter queue's follows from the queue's name)
    kind: Kind
    flag: str  # the pgmq_consume option
    help: str  # the option's help and the docs table's meaning, without a final period
    metavar: str | None = None
    const: Any = None  # set: the option is a switch giving this value (--delete)
    stored: str | None = None  # the QueueConfig field that keeps it
    attribute: str | None = None  # the queue attribute holding the same choice in SQL
    shown_default: str | None = None  # how help and docs show the default, when not its value
    unit: str = ""  # after the value in the start-up line (vt=30s)
    zero: str | None = None  # what 0 is called in the start-up line
    name: str = ""
    python_type: type = object  # its field's type

    @property
    def dest(self) -> str:
        """The name of the option's value in the command's options."""
        return self.flag.lstrip("-").replace("-", "_") if self.is_switch else self.name

    @property
    def is_switch(self) -> bool:
        return self.const is not None

    def default_text(self, markdown: bool = False) -> str:
        """The default as a person reads it (the queue's attribute first, when any): for
        ``--help``, or with names as code spans for the docs table (``markdown``)."""

        def code(text: str) -> str:
            return f"`{text}`" if markdown else text

        shown = code(self.shown_default) if self.shown_default else self.shown(self.default)
        return (
            f"the queue's {code(self.attribute)} attribute, else {shown}"
            if self.attribute
            else shown
        )

    def shown(self, value: Any) -> str:
        """A value as the start-up line and the help show it."""
        return f"{value:g}" if isinstance(value, float) else str(value)

    def in_log(self, value: Any) -> str:
        """``name=value`` for the start-up line."""
        if self.zero and value == 0:
            return f"{self.name}={self.zero}"
        return f"{self.name}={self.shown(value)}{self.unit}"

    def option_help(self) -> str:
        """The option's help: what it sets, and its default (a switch's goes without)."""
        if self.is_switch:
            return f"{self.help}."
        return f"{self.help} (default: {self.default_text()})."

    def argument(self) -> dict[str, Any]:
        """``add_argument``'s keywords for the option."""
        if self.is_switch:
            return {"action": "store_true", "help": self.option_help()}
        return {
            "dest": self.name,
            "type": self.kind.parse,
            "metavar": self.metavar,
            "help": self.option_help(),
        }

    def from_option(self, value: Any) -> Any:
        """The setting's value from the option's (None: not given)."""
        if self.is_switch:
            return self.const if value else None
        return value


def declare(default: Any, kind: Kind, flag: str, help: str, **more: Any) -> Any:
    """A `ConsumerSettings` field declaring one setting (the keywords of `Setting`)."""
    return field(metadata={"setting": Setting(default, kind, flag, help, **more)})


@dataclass(frozen=True, kw_only=True)
class ConsumerSettings:
    """Every consumer setting, resolved: `QueueSettings` is this and the queue's handler."""

    batch: int = declare(10, count(1), "--batch", "Read N at a time", metavar="N", stored="batch")
    vt: int = declare(
        30,
        count(1),
        "--vt",
        "Visibility timeout of reads",
        metavar="SECONDS",
        stored="vt",
        unit="s",
    )
    max_receive_count: int = declare(
        5,
        count(0),
        "--max-receives",
        "Dead-letter a failing message once read N times; 0: never",
        metavar="N",
        stored="max_receive_count",
        attribute="max_receive_count",
        zero="unlimited",
    )
    dead_letter: str = declare(
        None,
        QUEUE,
        "--dead-letter",
        "Dead-letter queue",
        metavar="QUEUE",
        stored="dead_letter_queue",
        attribute="dead_letter_queue",
        shown_default="QUEUE_dlq",
    )
    on_success: str = declare(
        "archive",
        one_of(*ON_SUCCESS),
        "--delete",
        "Delete handled messages instead of archiving them",
        const="delete",
        stored="on_success",
    )
    retry_delay: float = declare(
        1.0,
        duration(3600),
        "--retry-delay",
        "First retry delay, doubled per read up to --max-retry-delay, with jitter",
        metavar="SECONDS",
        unit="s",
    )
    max_retry_delay: float = declare(
        60.0,
        duration(86400),
        "--max-retry-delay",
        "Longest retry delay the doubling reaches (never below the first), before jitter",
        metavar="SECONDS",
        unit="s",
    )


def _declared() -> tuple[Setting, ...]:
    types = get_type_hints(ConsumerSettings)
    return tuple(
        replace(f.metadata["setting"], name=f.name, python_type=types[f.name])
        for f in fields(ConsumerSettings)
    )


SETTINGS: tuple[Setting, ...] = _declared()
"""Every setting, in declaration order (the order of the options, the docs and the log)."""
NAMES = frozenset(s.name for s in SETTINGS)
CONSUMER_DEFAULTS: dict[str, Any] = {s.name: s.default for s in SETTINGS if s.default is not None}
"""The defaults the worker uses when nothing else sets a value; `QueueConfig`'s too."""
