"""Access to the SQL files under ``django_pgmq/sql``: install scripts, and parsing the
named-query file (`sqlrun.statements` registers its statements)."""

from __future__ import annotations

import re
from importlib.resources import files

_NAME = re.compile(r"^--\s*name:\s*(\w+)\s*$", re.MULTILINE)


def read(filename: str) -> str:
    """The text of ``django_pgmq/sql/<filename>``."""
    return files("django_pgmq").joinpath("sql", filename).read_text(encoding="utf-8")


_TRAILING_COMMENTS = re.compile(r"(\n\s*--[^\n]*)+\s*$")


def parse(text: str) -> list[tuple[str, str]]:
    """The statements of a named-query file's text: (its ``-- name:``, its text), in order.

    Comment lines after a statement (a section's heading) belong to what follows, so they
    are not part of the statement's text; comments at its start or inside it are."""
    parts = _NAME.split(text)
    # parts = [preamble, name1, body1, name2, body2, ...]
    return [
        (name, _TRAILING_COMMENTS.sub("", body.strip()))
        for name, body in zip(parts[1::2], parts[2::2], strict=True)
    ]
