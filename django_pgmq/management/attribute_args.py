"""Command-line values of queue attributes: durations (``14d``), sizes (``256KiB``), switches.

Shared by pgmq_create's attribute options and pgmq_attributes ``--set KEY=VALUE``; the
SQL API checks the resulting values again (unknown keys, ranges).
"""

from __future__ import annotations

import argparse
import json
import re
from typing import Any

_DURATION = re.compile(r"^\s*(\d+)\s*(s|m|h|d|w)?\s*$", re.IGNORECASE)
_DURATION_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_SIZE = re.compile(r"^\s*(\d+)\s*(b|kb|kib|mb|mib)?\s*$", re.IGNORECASE)
_SIZE_UNITS = {"b": 1, "kb": 1000, "kib": 1024, "mb": 1000**2, "mib": 1024**2}
_SWITCHES = {"true": True, "yes": True, "on": True, "false": False, "no": False, "off": False}

# How each key's value is written on a command line.
SECONDS_KEYS = (
    "delivery_delay",
    "deduplication_window",
    "message_retention",
    "archive_retention",
)
SWITCH_KEYS = ("priorities", "paused")


def duration(text: str) -> int:
    """Seconds from ``300``, ``90s``, ``5m``, ``2h``, ``14d`` or ``1w``."""
    match = _DURATION.match(text)
    if not match:
        raise argparse.ArgumentTypeError(
            f"must be a duration such as 300, 90s, 5m, 2h, 14d or 1w, got {text!r}"
        )
    return int(match.group(1)) * _DURATION_UNITS[(match.group(2) or "s").lower()]


def size(text: str) -> int:
    """Bytes from ``1000``, ``64KB``, ``256KiB``, ``1MB`` or ``1MiB``."""
    match = _SIZE.match(text)
    if not match:
        raise argparse.ArgumentTypeError(
            f"must be a size such as 1000, 64KB, 256KiB or 1MiB, got {text!r}"
        )
    return int(match.group(1)) * _SIZE_UNITS[(match.group(2) or "b").lower()]


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
    try:
        if key in SECONDS_KEYS:
            return key, duration(raw)
        if key == "max_message_size":
            return key, size(raw)
        if key in SWITCH_KEYS:
            return key, switch(raw)
        if key == "max_in_flight":
            return key, positive(raw)
        if key == "rate_limit" and not raw.strip().startswith("{"):
            return key, rate(raw)
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"{key}: {exc}") from None
    if key == "dead_letter_queue":
        return key, raw.strip()
    try:
        return key, json.loads(raw)
    except ValueError:
        return key, raw


def describe(value: Any) -> str:
    """An attribute's value as pgmq_attributes prints it (JSON)."""
    return json.dumps(value)
