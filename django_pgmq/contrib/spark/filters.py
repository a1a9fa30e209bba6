"""Spark filters the pgmq source evaluates in PostgreSQL: on msg_id, times and read_ct.

Only simple comparisons of one indexed or cheap column with a literal are
taken; anything else stays with Spark, so results never depend on what was
pushed.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pyspark.sql.datasource import Filter, In, IsNotNull

from .statements import OPERATORS

Predicate = tuple[str, str, Any]

_INTEGER_COLUMNS = {"msg_id", "read_ct"}
_TIME_COLUMNS = {"enqueued_at", "archived_at"}


def pushable_columns(source: str) -> set[str]:
    """Columns whose filters go to PostgreSQL for this source."""
    times = _TIME_COLUMNS if source == "archive" else _TIME_COLUMNS - {"archived_at"}
    return _INTEGER_COLUMNS | times


def translate(f: Filter, source: str) -> list[Predicate] | None:
    """SQL predicates equivalent to ``f``, or None when Spark must evaluate it."""
    attribute: tuple[str, ...] = getattr(f, "attribute", ())
    if len(attribute) != 1 or attribute[0].lower() not in pushable_columns(source):
        return None
    column = attribute[0].lower()
    if isinstance(f, IsNotNull):
        return []  # these columns are NOT NULL
    if isinstance(f, In):
        values = [_value(column, v) for v in f.value]
        if column not in _INTEGER_COLUMNS or not values or None in values:
            return None
        return [(column, "= ANY", values)]
    op = OPERATORS.get(type(f).__name__)
    value = _value(column, getattr(f, "value", None))
    if op is None or value is None:
        return None
    return [(column, op, value)]


def _value(column: str, value: Any) -> int | datetime | None:
    """The literal as PostgreSQL should compare it, or None when its type does not fit."""
    if column in _INTEGER_COLUMNS:
        ok = isinstance(value, int) and not isinstance(value, bool)
        return value if ok else None
    if isinstance(value, datetime):
        # Spark hands TIMESTAMP literals over as naive local times of this process.
        return value.astimezone(UTC) if value.tzinfo is None else value
    return None
