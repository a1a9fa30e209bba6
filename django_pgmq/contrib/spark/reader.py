"""Batch read of a queue or its archive: a non-locking snapshot split into msg_id ranges.

Nothing is claimed and no ``vt`` changes: each partition is a plain
``SELECT`` of its ``msg_id`` range, streamed with COPY. The ranges are fixed
when the query is planned (from min/max ``msg_id`` under the pushed filters), so
messages sent later are not read; each partition sees the rows committed when
it runs (with ``numPartitions`` 1 the whole read is one consistent snapshot).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader, Filter, InputPartition
from pyspark.sql.types import StructType

from ... import sqlrun
from . import filters, statements
from .copyout import copy_batches
from .db import connection
from .schema import selected_columns, timestamp_columns
from .source_options import Options


class MsgIdRange(InputPartition):
    """One partition of a batch read: msg_id from ``lo`` to ``hi`` inclusive."""

    def __init__(self, lo: int, hi: int) -> None:
        super().__init__((lo, hi))
        self.lo = lo
        self.hi = hi


def split_range(lo: int, hi: int, parts: int) -> list[MsgIdRange]:
    """``[lo, hi]`` cut into at most ``parts`` contiguous ranges of near-equal width."""
    width = hi - lo + 1
    parts = max(1, min(parts, width))
    step = -(-width // parts)
    return [MsgIdRange(start, min(start + step - 1, hi)) for start in range(lo, hi + 1, step)]


class _PushFilters:
    """``pushFilters`` that Spark's "pushdown disabled" check takes for the base method.

    Spark 4.x refuses a reader that overrides ``pushFilters`` when
    ``spark.sql.python.filterPushdown.enabled`` is false (the default) instead of
    just not calling it. Presenting the bound method with the base ``__func__``
    lets a default session read (Spark filters the rows itself), while a session
    with pushdown on calls ``_push_filters`` and PostgreSQL filters.
    """

    def __get__(self, reader: Any, owner: type | None = None) -> Any:
        if reader is None:
            return self
        bound = functools.partial(reader._push_filters)
        bound.__func__ = DataSourceReader.pushFilters  # type: ignore[attr-defined]
        return bound


class QueueReader(DataSourceReader):
    """Reads a queue (``source=queue``) or its archive (``source=archive``)."""

    pushFilters = _PushFilters()

    def __init__(self, options: Options, schema: StructType) -> None:
        self.options = options
        self.schema = schema
        self.columns = selected_columns(schema, options.source)
        self.predicates: list[filters.Predicate] = []

    def _push_filters(self, spark_filters: list[Filter]) -> Iterable[Filter]:
        """Keep the filters PostgreSQL can evaluate; hand the others back to Spark."""
        for f in spark_filters:
            predicates = filters.translate(f, self.options.source)
            if predicates is None:
                yield f
            else:
                self.predicates.extend(predicates)

    def partitions(self) -> list[MsgIdRange]:
        """msg_id ranges covering the rows under the pushed filters, as of planning."""
        opts = self.options
        table = statements.table(opts.queue, opts.source)
        where = statements.where(self.predicates)
        with connection(opts.conn, opts.queue) as db:
            db.run("require_queue", {"queue": opts.queue}, fetch=sqlrun.NOTHING)
            bounds = db.named_row("msg_id_bounds", table=table, where=where)
        if bounds["lo"] is None:
            return [MsgIdRange(0, -1)]
        return split_range(bounds["lo"], bounds["hi"], opts.num_partitions)

    # Spark hands read() one of the partitions partitions() made; pyspark types it as their base.
    def read(self, partition: MsgIdRange) -> Iterator[pa.RecordBatch]:  # type: ignore[override]
        """The rows of one msg_id range, as Arrow batches."""
        if partition.lo > partition.hi:
            return
        opts = self.options
        bounds = [("msg_id", ">=", partition.lo), ("msg_id", "<=", partition.hi)]
        parts = {
            "columns": statements.select_list(
                self.columns, timestamp_columns(self.schema, self.columns)
            ),
            "table": statements.table(opts.queue, opts.source),
            "where": statements.where([*self.predicates, *bounds]),
        }
        yield from copy_batches(opts.conn, "copy_out", parts, self.schema, opts.queue)
