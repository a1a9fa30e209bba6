"""Streaming read of a live queue: offsets are claimed batches recorded in PostgreSQL.

``latestOffset`` claims visible messages (``FOR UPDATE SKIP LOCKED``, vt pushed
forward, read_ct + 1) and records their ids as the consumer's next batch in
``pgmq.spark_stream_batch``, in one transaction; the offset is
``{"batch": n}``. A msg_id mark would skip messages that commit after a higher
id, so it is never used. ``partitions(start, end)`` reads back the ids of the
batches in ``(start, end]``, so a replay after a failure reads the same
messages (minus any another consumer claimed after their vt passed, which it
then owns). A batch is acknowledged (``ack``: archive, delete or none) only
once Spark has committed it: Spark asks for the next offset, or plans the next
batch, from a committed start, and calls ``commit``. A batch that was claimed
but never planned (the driver died in between) is offered again first.

Several queries on one queue never read the same message within its vt (row
locks and vt). Each query has a ``consumer`` name, unique per queue, kept with
its checkpoint; two running queries with one name are refused.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import psycopg
import pyarrow as pa
from psycopg import sql
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import StructType

from ... import sqlrun
from ...errors import PgmqError
from . import statements
from .copyout import copy_batches
from .db import Db
from .schema import selected_columns, timestamp_columns
from .source_options import Options

_LOCK_WAIT_SECONDS = 15.0


class ConsumerBusy(PgmqError):
    """Another running streaming query already uses this consumer name on this queue."""


class ClaimedSlice(InputPartition):
    """Part of a micro-batch: message ids claimed in batches ``(after, upto]``."""

    def __init__(self, after: int, upto: int, ids: list[int]) -> None:
        super().__init__((after, upto, len(ids)))
        self.after = after
        self.upto = upto
        self.ids = ids


def _batch(offset: dict) -> int:
    return int(offset.get("batch", 0))


class QueueStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """``spark.readStream.format("pgmq").option("queue", q).load()``."""

    def __init__(self, options: Options, schema: StructType) -> None:
        self.options = options
        self.schema = schema
        self.columns = selected_columns(schema, "queue")
        self.target: int | None = None  # highest msg_id to drain under availableNow
        self._conn: psycopg.Connection | None = None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_conn"] = None  # executors open their own connections
        return state

    # -- driver side: one connection holding the consumer lock for the query's life --

    def _db(self) -> psycopg.Connection:
        if self._conn is None or self._conn.closed:
            conn = self.options.conn.connect()
            deadline = time.monotonic() + _LOCK_WAIT_SECONDS
            while not self._call(conn, "consumer_try_lock"):
                if time.monotonic() > deadline:
                    conn.close()
                    raise ConsumerBusy(
                        f'queue "{self.options.queue}": consumer "{self.options.consumer}" is '
                        "already used by a running streaming query; give each query its own "
                        "option('consumer', ...)"
                    )
                time.sleep(0.5)
            self._conn = conn
        return self._conn

    def _call(self, conn: psycopg.Connection, name: str, **params: Any) -> Any:
        opts = self.options
        params.update(queue=opts.queue, consumer=opts.consumer)
        row = self._on(conn).run(name, params, fetch=sqlrun.ONE)
        return row[0] if row else None

    def _on(self, conn: psycopg.Connection) -> Db:
        """The runner on this reader's connection, its errors worded for the Spark source."""
        return Db(conn, self.options.conn, self.options.queue)

    def _ack(self, upto: int) -> None:
        self._call(self._db(), "spark_ack", upto=upto, mode=self.options.ack)

    # -- the DataSourceStreamReader API --

    def initialOffset(self) -> dict:
        """After the consumer's last acknowledged batch: unacknowledged ones are read again."""
        return {"batch": int(self._call(self._db(), "stream_initial"))}

    def getDefaultReadLimit(self) -> ReadLimit:
        return ReadMaxRows(self.options.max_messages_per_batch)

    def prepareForTriggerAvailableNow(self) -> None:
        """Drain only messages already in the queue now (newer ids are left for later)."""
        table = statements.table(self.options.queue)
        self.target = int(self._on(self._db()).row("max_msg_id", table=table)[0])

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        """Acknowledge up to ``start`` (committed), then offer a pending or a new batch."""
        done = _batch(start)
        self._ack(done)
        conn = self._db()
        pending = self._call(conn, "stream_pending", after=done)
        if pending is not None:
            self._call(conn, "spark_hold", after=done, upto=pending, vt=self.options.vt)
            return {"batch": int(pending)}
        if isinstance(limit, ReadAllAvailable):
            qty = None
        elif isinstance(limit, ReadMaxRows):
            qty = limit.max_rows
        else:
            qty = self.options.max_messages_per_batch
        batch = self._call(
            conn,
            "spark_claim",
            vt=self.options.vt,
            qty=qty,
            max_msg_id=self.target,
            min_batch=done,
        )
        return start if batch is None else {"batch": int(batch)}

    def partitions(self, start: dict, end: dict) -> list[ClaimedSlice]:
        """The claimed ids of batches ``(start, end]``, held for another vt, in slices."""
        after, upto = _batch(start), _batch(end)
        if upto <= after:
            return []
        self._ack(after)
        conn = self._db()
        self._call(conn, "spark_hold", after=after, upto=upto, vt=self.options.vt)
        params = {
            "queue": self.options.queue,
            "consumer": self.options.consumer,
            "after": after,
            "upto": upto,
        }
        rows = self._on(conn).run("stream_batches", params, fetch=sqlrun.NAMED)
        ids = sorted(i for row in rows for i in row["msg_ids"])
        parts = max(1, min(self.options.num_partitions, len(ids)))
        size = -(-len(ids) // parts) if ids else 0
        return [ClaimedSlice(after, upto, ids[i : i + size]) for i in range(0, len(ids), size or 1)]

    # Spark hands read() one of the partitions partitions() made; pyspark types it as their base.
    def read(self, partition: ClaimedSlice) -> Iterator[pa.RecordBatch]:  # type: ignore[override]
        """The claimed messages still carrying this consumer's claim."""
        if not partition.ids:
            return
        opts = self.options
        parts = {
            "columns": statements.select_list(
                self.columns, timestamp_columns(self.schema, self.columns), alias="q"
            ),
            "table": statements.table(opts.queue),
            "queue": sql.Literal(opts.queue),
            "consumer": sql.Literal(opts.consumer),
            "after": sql.Literal(partition.after),
            "upto": sql.Literal(partition.upto),
            "ids": sql.Literal(partition.ids),
        }
        yield from copy_batches(opts.conn, "copy_out_claimed", parts, self.schema, opts.queue)

    def commit(self, end: dict) -> None:
        """Spark committed every batch up to ``end``: acknowledge their messages."""
        self._ack(_batch(end))

    def stop(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
