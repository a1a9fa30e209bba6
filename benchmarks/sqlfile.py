"""Named statements of the benchmark's ``.sql`` files (``-- name: <name>`` then the statement)."""

from __future__ import annotations

import re
from functools import cache
from importlib.resources import files

from psycopg import sql

_NAME = re.compile(r"^--\s*name:\s*(\w+)\s*$", re.MULTILINE)


@cache
def statements(filename: str) -> dict[str, str]:
    """The statements of ``benchmarks/sql/<filename>``, keyed by name."""
    text = files("benchmarks").joinpath("sql", filename).read_text(encoding="utf-8")
    parts = _NAME.split(text)
    return {name: body.strip() for name, body in zip(parts[1::2], parts[2::2], strict=True)}


def statement(filename: str, name: str, **identifiers: str) -> sql.Composable:
    """One statement, with its ``{slot}`` identifiers quoted by psycopg.sql."""
    text = statements(filename)[name]
    if not identifiers:
        return sql.SQL(text)  # type: ignore[arg-type]
    return sql.SQL(text).format(**{k: sql.Identifier(v) for k, v in identifiers.items()})  # type: ignore[arg-type]
