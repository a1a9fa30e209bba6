"""Static check: no body of schema pgmq, and no statement the Python sends (queries.sql),
calls a built-in function by its bare name.

A bare ``lower(x)`` resolves through the caller's search_path, where another role's
``public.lower(varchar)`` is a better match than ``pg_catalog.lower(text)``
(test_hostile_overloads.py plants such overloads and runs every operation). This scan
fails fast, naming the function and the call, when a newcomer writes one: write
``pg_catalog.lower(x::text)`` instead. SQL syntax that looks like a call (COALESCE,
GREATEST, CAST, EXISTS, ARRAY, ROW, type modifiers such as ``varchar(64)``, ``%I(`` in a
format string...) is not a call; a many-argument ``unnest(a, b)`` in FROM is PostgreSQL's
own expansion into ``pg_catalog.unnest`` calls, and ``TABLESAMPLE SYSTEM (n)`` names a
sampling method.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import django_pgmq

pytestmark = pytest.mark.django_db

SYNTAX = {
    *[
        "coalesce",
        "greatest",
        "least",
        "nullif",
        "exists",
        "array",
        "row",
        "in",
        "values",
        "any",
        "all",
        "some",
        "cast",
        "extract",
    ],
    *[
        "position",
        "substring",
        "trim",
        "overlay",
        "over",
        "filter",
        "within",
        "and",
        "or",
        "not",
        "case",
        "when",
        "then",
        "else",
    ],
    *[
        "if",
        "return",
        "returns",
        "select",
        "from",
        "where",
        "as",
        "on",
        "using",
        "table",
        "setof",
        "begin",
        "end",
        "loop",
        "raise",
    ],
    *[
        "perform",
        "into",
        "by",
        "group",
        "order",
        "limit",
        "offset",
        "with",
        "union",
        "lateral",
        "join",
        "set",
        "update",
        "insert",
    ],
    *[
        "delete",
        "create",
        "drop",
        "alter",
        "execute",
        "is",
        "like",
        "elsif",
        "while",
        "foreach",
        "exit",
        "continue",
        "returning",
    ],
    *[
        "conflict",
        "do",
        "nothing",
        "default",
        "primary",
        "key",
        "references",
        "unique",
        "check",
        "index",
        "concurrently",
    ],
    *[
        "partition",
        "for",
        "of",
        "interval",
        "timestamp",
        "timestamptz",
        "varchar",
        "numeric",
        "bit",
        "char",
        "character",
    ],
    *[
        "time",
        "decimal",
        "float",
        "double",
        "real",
        "bigint",
        "integer",
        "int",
        "smallint",
        "boolean",
        "text",
        "jsonb",
        "json",
    ],
    *["collate", "distinct", "escape", "similar", "normalize", "name", "collation"],
}
CALL = re.compile(r'(?<![\w.$%"@])([A-Za-z_][A-Za-z0-9_]*)(\s*)\(')


def _depth_comma(code: str, open_at: int) -> bool:
    """Whether the parenthesis at ``open_at`` holds a comma at its own level."""
    depth = 0
    for c in code[open_at:]:
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
            if depth == 0:
                return False
        elif c == "," and depth == 1:
            return True
    return False


def unqualified_calls(source: str, builtins: set[str]) -> list[tuple[str, str]]:
    """(function, the line) of each bare call of a built-in in ``source``."""
    found = []
    for line in source.splitlines():
        code = line.split("--", 1)[0]
        for m in CALL.finditer(code):
            name = m.group(1).lower()
            if name in SYNTAX or name not in builtins:
                continue
            before = code[: m.start()].rstrip()
            if before.endswith("::"):
                continue  # a type modifier
            if m.group(2) and before.count("'") % 2:
                continue  # prose in a literal: "length (12 hours)"
            if name == "system" and before.upper().endswith("TABLESAMPLE"):
                continue
            if name == "unnest" and _depth_comma(code, m.end() - 1):
                continue
            found.append((name, line.strip()))
    return found


@pytest.fixture
def builtins(pg_connect) -> set[str]:
    conn = pg_connect()
    return {
        r[0]
        for r in conn.execute(
            "SELECT DISTINCT proname::text FROM pg_catalog.pg_proc"
            " WHERE pronamespace = 'pg_catalog'::regnamespace"
        )
    }


# Bodies that queues' indexes evaluate: a changed body means a REINDEX of every such index
# at upgrade (a lock on each queue), so they keep their bare calls, which only take
# jsonb and integer arguments: pg_catalog's are exact matches, found first, and no
# other schema's overload can be a better one.
INDEXED = {
    "pgmq._task_priority(jsonb)": {"jsonb_typeof", "abs"},
}


def test_no_body_calls_a_builtin_by_its_bare_name(pg_connect, builtins) -> None:
    conn = pg_connect()
    rows = conn.execute(
        "SELECT p.oid::regprocedure::text, p.prosrc FROM pg_catalog.pg_proc p"
        " JOIN pg_catalog.pg_language l ON l.oid = p.prolang"
        " WHERE p.pronamespace = 'pgmq'::regnamespace AND l.lanname IN ('sql', 'plpgsql')"
    ).fetchall()
    assert len(rows) > 100
    bad = [
        f"{fn}: {name}() in: {line}"
        for fn, src in rows
        for name, line in unqualified_calls(src, builtins)
        if name not in INDEXED.get(fn, ())
    ]
    assert bad == [], "write pg_catalog.<name>(...):\n" + "\n".join(bad)


def test_no_statement_of_the_python_calls_a_builtin_by_its_bare_name(builtins) -> None:
    path = Path(django_pgmq.__file__).parent / "sql" / "queries.sql"
    bad = [f"{name}() in: {line}" for name, line in unqualified_calls(path.read_text(), builtins)]
    assert bad == [], "write pg_catalog.<name>(...):\n" + "\n".join(bad)
