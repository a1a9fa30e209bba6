"""The ``pgmq`` Spark data source: batch and streaming reads and writes of queues.

Registered by name through the top-level ``pyspark_pgmq`` module, which
PySpark finds on its own (any installed ``pyspark_*`` module exposing
``DefaultSource``), so ``spark.read.format("pgmq")`` needs no register call.
"""

from __future__ import annotations

from pyspark.sql.datasource import DataSource
from pyspark.sql.types import StructType

from ...errors import InvalidArgument
from . import source_options as opts
from .reader import QueueReader
from .schema import full_schema
from .stream import QueueStreamReader
from .writer import QueueStreamWriter, QueueWriter


class PgmqDataSource(DataSource):
    """``format("pgmq")`` with ``queue`` and ``dsn`` (or the Django settings).

    See docs/guide/spark.md.
    """

    @classmethod
    def name(cls) -> str:
        return "pgmq"

    def __init__(self, options: dict[str, str]) -> None:
        super().__init__(options)
        self.parsed = opts.parse(options)

    def schema(self) -> StructType:
        return full_schema(self.parsed.source)

    def reader(self, schema: StructType) -> QueueReader:
        return QueueReader(self.parsed, schema)

    def writer(self, schema: StructType, overwrite: bool) -> QueueWriter:
        _append_only(overwrite)
        return QueueWriter(self.parsed, schema)

    def streamReader(self, schema: StructType) -> QueueStreamReader:
        if self.parsed.source != "queue":
            raise InvalidArgument(
                "a streaming read takes messages from a live queue: option('source', 'archive') "
                "is for batch reads only"
            )
        return QueueStreamReader(self.parsed, schema)

    def streamWriter(self, schema: StructType, overwrite: bool) -> QueueStreamWriter:
        _append_only(overwrite)
        return QueueStreamWriter(self.parsed, schema)


def _append_only(overwrite: bool) -> None:
    if overwrite:
        raise InvalidArgument(
            'the pgmq source only appends messages: use .mode("append") '
            "(to empty a queue first, call pgmq.purge_queue)"
        )
