"""SQL of the Spark source: named statements (``sql/queries.sql``, Spark section), composed safely.

Identifiers go in as `psycopg.sql.Identifier`, values as placeholders, or as
`psycopg.sql.Literal` where PostgreSQL takes none (inside ``COPY``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from psycopg import sql

from ... import sqlrun
from ...names import table_name

# Pushed-down comparisons: Spark filter class name -> SQL operator.
OPERATORS = {
    "EqualTo": "=",
    "GreaterThan": ">",
    "GreaterThanOrEqual": ">=",
    "LessThan": "<",
    "LessThanOrEqual": "<=",
}


def statement(name: str, **parts: sql.Composable) -> sql.Composed:
    """The named statement with its ``{placeholders}`` filled by composed SQL (to run one,
    `db.Db.run` takes the name and the parts)."""
    return sqlrun.compose(name, **parts)


def table(queue: str, source: str = "queue") -> sql.Identifier:
    """``pgmq.q_<queue>`` or ``pgmq.a_<queue>``, validated and quoted."""
    return sql.Identifier("pgmq", table_name(queue, "a" if source == "archive" else "q"))


def select_list(
    names: Iterable[str], timestamps: set[str], alias: str | None = None
) -> sql.Composed:
    """The selected columns; timestamps as epoch microseconds, which Arrow turns into UTC."""
    items = []
    for name in names:
        ident = sql.Identifier(alias, name) if alias else sql.Identifier(name)
        items.append(statement("epoch_us", column=ident) if name in timestamps else ident)
    return sql.SQL(", ").join(items)


def where(predicates: Iterable[tuple[str, str, Any]]) -> sql.Composable:
    """``col op literal AND ...`` for pushed-down predicates (``TRUE`` when there are none).

    ``op`` is one of `OPERATORS`' values or ``"= ANY"`` for an IN list.
    """
    parts = []
    for column, op, value in predicates:
        if op == "= ANY":
            parts.append(
                sql.SQL("{} = ANY ({})").format(sql.Identifier(column), sql.Literal(list(value)))
            )
        elif op in OPERATORS.values():
            parts.append(
                sql.SQL("{} {} {}").format(sql.Identifier(column), sql.SQL(op), sql.Literal(value))
            )
        else:  # pragma: no cover - filters.py only produces the operators above
            raise ValueError(f"unsupported operator {op!r}")
    return sql.SQL(" AND ").join(parts) if parts else sql.SQL("TRUE")
