"""Command-line values of queue attributes: durations (``14d``), sizes (``256KiB``), switches.

Shared by pgmq_create's attribute options and pgmq_attributes ``--set KEY=VALUE``, both
derived from the declared attributes and kinds (``attribute_spec``, whose parsers the
admin form uses too); the SQL API checks the resulting values again (unknown keys, ranges).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

from .. import attribute_spec
from ..attribute_spec import KINDS, AttributeSpec, show_attribute
from ..attributes_declared import DECLARED
from .command_base import positive_int


def _argument_type(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """An argparse type from one of attribute_spec's parsers (ValueError -> argparse's)."""

    def argument_type(text: str) -> Any:
        try:
            return parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    argument_type.__name__ = parse.__name__
    argument_type.__doc__ = parse.__doc__
    return argument_type


duration = _argument_type(attribute_spec.duration)
size = _argument_type(attribute_spec.size)
switch = _argument_type(attribute_spec.switch)
rate = _argument_type(attribute_spec.rate)
positive = _argument_type(attribute_spec.integer)


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
    try:
        return key, spec.parse(raw)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{key}: {exc}") from None


def _json_or_text(raw: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return raw


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
                type=positive_int if spec.kind == "count" else _argument_type(spec.parse),
                metavar=KINDS[spec.kind].metavar,
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
    return "; ".join(f"{', '.join(keys)} ({KINDS[kind].examples})" for kind, keys in groups.items())


def describe(key: str, value: Any) -> str:
    """An attribute's value as pgmq_attributes prints it (the admin's format too)."""
    return show_attribute(DECLARED, key, value)
