"""Command-line values of queue attributes: durations (``14d``), sizes (``256KiB``), switches.

Shared by pgmq_create's attribute options and pgmq_attributes ``--set KEY=VALUE``, both
derived from the declared attributes (``attribute_spec``); the SQL API checks the
resulting values again (unknown keys, ranges).
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable
from typing import Any

from ..attribute_spec import AttributeSpec
from ..attributes_declared import DECLARED
from .command_base import positive_int

_DURATION = re.compile(r"^\s*(\d+)\s*(s|m|h|d|w)?\s*$", re.IGNORECASE)
_DURATION_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_SIZE = re.compile(r"^\s*(\d+)\s*(b|kb|kib|mb|mib)?\s*$", re.IGNORECASE)
_SIZE_UNITS = {"b": 1, "kb": 1000, "kib": 1024, "mb": 1000**2, "mib": 1024**2}
_SWITCHES = {"true": True, "yes": True, "on": True, "false": False, "no": False, "off": False}


def duration(text: str) -> int:
    """Seconds from ``300``, ``90s``, ``5m``, ``2h``, ``14d`` or ``1w``."""
    _refuse_negative(text)
    match = _DURATION.match(text)
    if not match:
        raise argparse.ArgumentTypeError(
            f"must be a duration such as 300, 90s, 5m, 2h, 14d or 1w, got {text!r}"
        )
    return int(match.group(1)) * _DURATION_UNITS[(match.group(2) or "s").lower()]


def size(text: str) -> int:
    """Bytes from ``1000``, ``64KB``, ``256KiB``, ``1MB`` or ``1MiB``."""
    _refuse_negative(text)
    match = _SIZE.match(text)
    if not match:
        raise argparse.ArgumentTypeError(
            f"must be a size such as 1000, 64KB, 256KiB or 1MiB, got {text!r}"
        )
    return int(match.group(1)) * _SIZE_UNITS[(match.group(2) or "b").lower()]


def _refuse_negative(text: str) -> None:
    """A negative duration or size gets its own message, not "must be a duration"."""
    if text.strip().startswith("-"):
        raise argparse.ArgumentTypeError(f"must be positive, got {text!r}")


def switch(text: str) -> bool:
    """A boolean from true/false, yes/no, on/off."""
    value = _SWITCHES.get(text.strip().lower())
    if value is None:
        raise argparse.ArgumentTypeError(f"must be true or false, got {text!r}")
    return value


def rate(text: str) -> dict[str, int]:
    """A ``rate_limit`` from ``COUNT/DURATION``: ``100/1m`` is at most 100 in any minute."""
    count, sep, per = text.partition("/")
    if not sep or not count.strip().isdigit() or int(count) < 1:
        raise argparse.ArgumentTypeError(
            f"must be COUNT/DURATION such as 100/1m or 10/2s, got {text!r}"
        )
    seconds = duration(per)
    if seconds < 1:
        raise argparse.ArgumentTypeError(f"the duration must be 1 second or more, got {text!r}")
    return {"count": int(count), "seconds": seconds}


def positive(text: str) -> int:
    """An integer, 1 or more."""
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be an integer, 1 or more, got {text!r}")
    return int(text)


def key_value(text: str) -> tuple[str, Any]:
    """An argparse type: ``KEY=VALUE`` of ``--set``; an empty VALUE (or ``null``) removes KEY."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"must be KEY=VALUE, got {text!r}")
    if raw.strip().lower() in ("", "null", "none"):
        return key, None
    spec = DECLARED_BY_KEY.get(key)
    if spec is None:  # unknown: the SQL API names it and lists the known keys
        return key, _json_or_text(raw)
    if spec.kind == "queue":
        return key, raw.strip()
    if spec.kind == "rate" and raw.strip().startswith("{"):
        return key, _json_or_text(raw)
    try:
        return key, KIND_TYPES[spec.kind](raw)
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"{key}: {exc}") from None


def _json_or_text(raw: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return raw


# How each kind of declared attribute is written on a command line: argparse type, metavar.
KIND_TYPES: dict[str, Callable[[str], Any]] = {
    "seconds": duration,
    "bytes": size,
    "count": positive,
    "switch": switch,
    "queue": str,
    "rate": rate,
}
KIND_METAVARS = {
    "seconds": "DURATION",
    "bytes": "SIZE",
    "count": "N",
    "switch": "true|false",
    "queue": "QUEUE",
    "rate": "COUNT/DURATION",
}
# What the help says each kind's values look like.
KIND_VALUES = {
    "seconds": "durations: 300, 5m, 2h, 14d",
    "bytes": "sizes: 1000, 256KiB, 1MiB",
    "count": "N",
    "switch": "true/false",
    "queue": "a queue",
    "rate": "COUNT/DURATION: 100/1m",
}
DECLARED_BY_KEY = {spec.key: spec for spec in DECLARED}


def add_attribute_options(parser: Any, specs: tuple[AttributeSpec, ...] = DECLARED) -> None:
    """pgmq_create's options: one per declared attribute that names one (dest: its key)."""
    for spec in specs:
        if spec.option is None:
            continue
        if spec.kind == "switch":
            parser.add_argument(
                spec.option, dest=spec.key, action="store_true", default=None, help=spec.help
            )
        else:
            parser.add_argument(
                spec.option,
                dest=spec.key,
                # pgmq_create's counts say "a positive integer", as its other options do
                type=positive_int if spec.kind == "count" else KIND_TYPES[spec.kind],
                metavar=KIND_METAVARS[spec.kind],
                help=spec.help,
            )


def attribute_options(
    options: dict[str, Any], specs: tuple[AttributeSpec, ...] = DECLARED
) -> dict[str, Any]:
    """The queue attributes pgmq_create's options ask for."""
    return {
        spec.key: options[spec.key]
        for spec in specs
        if spec.option is not None and options.get(spec.key) is not None
    }


def keys_help(specs: tuple[AttributeSpec, ...] = DECLARED) -> str:
    """The keys pgmq_attributes knows, grouped by how their values are written."""
    groups: dict[str, list[str]] = {}
    for spec in specs:
        groups.setdefault(spec.kind, []).append(spec.key)
    return "; ".join(f"{', '.join(keys)} ({KIND_VALUES[kind]})" for kind, keys in groups.items())


def describe(value: Any) -> str:
    """An attribute's value as pgmq_attributes prints it (JSON)."""
    return json.dumps(value)
