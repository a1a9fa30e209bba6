"""The typed Spark schema of a queue and of its archive, and pruning by a user schema.

Timestamps are Spark TIMESTAMP values (instants, read in UTC); ``message`` and
``headers`` are JSON text, ready for ``from_json`` or ``get_json_object``.
"""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import (
    DataType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from ...errors import InvalidArgument

_QUEUE: list[tuple[str, DataType, bool]] = [
    ("msg_id", LongType(), False),
    ("read_ct", IntegerType(), False),
    ("enqueued_at", TimestampType(), False),
    ("last_read_at", TimestampType(), True),
    ("vt", TimestampType(), False),
    ("message", StringType(), True),
    ("headers", StringType(), True),
]
_ARCHIVE = [*_QUEUE[:4], ("archived_at", TimestampType(), False), *_QUEUE[4:]]


def columns(source: str) -> list[tuple[str, DataType, bool]]:
    """Column name, Spark type and nullability of a queue (``queue``) or archive table."""
    return _ARCHIVE if source == "archive" else _QUEUE


def full_schema(source: str) -> StructType:
    """Every column of the source, in table order."""
    return StructType([StructField(n, t, nullable) for n, t, nullable in columns(source)])


def selected_columns(schema: StructType, source: str) -> list[str]:
    """The table columns a (possibly user-given, pruned) schema asks for, in its order."""
    known = {name: dtype for name, dtype, _ in columns(source)}
    chosen = []
    for f in schema.fields:
        name = f.name.lower()
        if name not in known:
            raise InvalidArgument(
                f"column {f.name!r} is not in the pgmq {source} schema; "
                f"available: {', '.join(known)}"
            )
        if f.dataType != known[name]:
            raise InvalidArgument(
                f"column {f.name!r} must be {known[name].simpleString()} in a pgmq {source} "
                f"schema, got {f.dataType.simpleString()}"
            )
        chosen.append(name)
    if len(set(chosen)) != len(chosen):
        raise InvalidArgument("a column appears twice in the schema given to the pgmq source")
    return chosen


def arrow_schema(schema: StructType) -> pa.Schema:
    """The Arrow schema Spark expects for ``schema`` (timestamps in UTC)."""
    return to_arrow_schema(schema, timezone="UTC")


def timestamp_columns(schema: StructType, names: list[str]) -> set[str]:
    """The selected columns that are timestamps (COPY sends them as epoch microseconds)."""
    return {
        name
        for name, f in zip(names, schema.fields, strict=True)
        if isinstance(f.dataType, TimestampType)
    }
