"""Read rows as Arrow record batches: ``COPY (SELECT ...) TO STDOUT`` parsed by pyarrow.

COPY streams rows without a cursor round trip per batch, and pyarrow's CSV
reader parses them in C++, so a partition costs about what a JDBC scan does.
Timestamps arrive as epoch microseconds and become UTC Arrow timestamps.
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Mapping

import pyarrow as pa
import pyarrow.compute as pc
from psycopg import sql
from pyarrow import csv
from pyspark.sql.types import IntegerType, LongType, StructType, TimestampType

from .conninfo import ConnectionInfo
from .db import connection
from .schema import arrow_schema

_BLOCK_SIZE = 4 << 20


class _CopyStream(io.RawIOBase):
    """A read-only file over a psycopg ``COPY ... TO STDOUT``.

    libpq hands COPY data over one row at a time; each read fills the caller's
    buffer with as many rows as fit, so pyarrow parses big blocks, not rows.
    """

    def __init__(self, first: bytes, rest: Iterator[bytes | bytearray | memoryview]) -> None:
        self._chunk = memoryview(first)
        self._rest = rest

    def readable(self) -> bool:
        return True

    def readinto(self, target: bytearray | memoryview) -> int:  # type: ignore[override]
        view = memoryview(target).cast("B")
        filled = 0
        while filled < len(view):
            if not self._chunk:
                chunk = next(self._rest, None)
                if chunk is None:
                    break
                self._chunk = memoryview(chunk)
            size = min(len(view) - filled, len(self._chunk))
            view[filled : filled + size] = self._chunk[:size]
            self._chunk = self._chunk[size:]
            filled += size
        return filled


def _wire_type(dtype: object) -> pa.DataType:
    if isinstance(dtype, TimestampType | LongType):
        return pa.int64()
    if isinstance(dtype, IntegerType):
        return pa.int32()
    return pa.string()


def copy_batches(
    conn_info: ConnectionInfo,
    name: str,
    parts: Mapping[str, sql.Composable],
    schema: StructType,
    queue: str,
) -> Iterator[pa.RecordBatch]:
    """Run the named ``COPY (...) TO STDOUT (FORMAT csv)`` whose columns follow ``schema``."""
    target = arrow_schema(schema)
    names = [f"c{i}" for i in range(len(schema.fields))]
    convert = csv.ConvertOptions(
        column_types={n: _wire_type(f.dataType) for n, f in zip(names, schema.fields, strict=True)},
        null_values=[""],
        strings_can_be_null=True,
        quoted_strings_can_be_null=False,
    )
    read = csv.ReadOptions(column_names=names, block_size=_BLOCK_SIZE)
    with connection(conn_info, queue) as db, db.copy(name, **parts) as copy:
        chunks = iter(copy)
        first = next(chunks, None)
        if first is None:
            return
        stream = _CopyStream(bytes(first), chunks)
        for batch in csv.open_csv(stream, read_options=read, convert_options=convert):
            yield _to_target(batch, schema, target)


def _to_target(batch: pa.RecordBatch, schema: StructType, target: pa.Schema) -> pa.RecordBatch:
    arrays = []
    for array, field, arrow_field in zip(batch.columns, schema.fields, target, strict=True):
        if isinstance(field.dataType, TimestampType):
            array = pc.cast(array, arrow_field.type)
        arrays.append(array)
    return pa.RecordBatch.from_arrays(arrays, schema=target)
