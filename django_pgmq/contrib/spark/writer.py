"""Writes of a DataFrame into a queue: one ``COPY ... FROM STDIN`` per partition.

Default (at-least-once per task): each task copies straight into the queue and
commits. A failed task leaves nothing, but a failed *job* keeps the partitions
that had committed, and a task that is retried after committing sends its rows
twice.

``atomic=true`` (all-or-nothing): tasks copy into an unlogged staging table,
tagged with their task attempt; the job's commit moves exactly the rows of the
attempts Spark committed into the queue, in one transaction, and drops the
table; an abort drops it. So a failed job sends nothing and a retried task
nothing twice. Staging tables of jobs whose driver died are dropped by the next
atomic write after ``staleStageHours``. (Two-phase commit was the other way:
it needs ``max_prepared_transactions`` > 0, off by default, and a prepared
transaction left behind holds its locks until someone resolves it.)

Streaming writes work the same per micro-batch; with ``atomic=true`` and a
``writerId`` the batch id is recorded with the commit, so a micro-batch Spark
replays after a failure is written once (exactly-once).
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pyarrow as pa
from psycopg import sql
from pyspark.sql.datasource import (
    DataSourceArrowWriter,
    DataSourceStreamArrowWriter,
    WriterCommitMessage,
)
from pyspark.sql.types import StructType

from ... import sqlrun
from ...errors import InvalidArgument, InvalidPayload
from . import statements
from .db import Db, connection
from .rows import RowLayout, to_csv
from .source_options import Options

_QUEUE_COLUMNS = ("vt", "message", "headers")
_TEMP_STAGE = "pgmq_spark_rows"  # a task's rows bound for a queue with send-side attributes
_STAGE_COLUMNS = ("part", "attempt", *_QUEUE_COLUMNS)
_JSON_HINT = (
    '; a string "message" column must hold JSON text: build it with '
    "to_json(struct(...)), or give a struct/map column"
)


@dataclass(frozen=True)
class PgmqCommit(WriterCommitMessage):
    """What one task wrote: its partition, its attempt tag and its row count."""

    partition: int
    attempt: int
    rows: int


def _task_ids() -> tuple[int, int]:
    """This task's partition id and a tag unique to this attempt."""
    from pyspark import TaskContext

    ctx = TaskContext.get()
    if ctx is None:  # called outside Spark (tests, direct use)
        return 0, random.getrandbits(62)
    return ctx.partitionId(), ctx.taskAttemptId()


class _Copier:
    """The part shared by batch and streaming writers: COPY a task's rows, commit or abort."""

    def __init__(self, options: Options, schema: StructType, stage: str | None) -> None:
        self.options = options
        self.layout = RowLayout.of(schema, options.queue)
        self.stage = stage

    def _copy(self, iterator: Iterator[pa.RecordBatch]) -> PgmqCommit:
        """Send every row of this task in one transaction, into the queue or a stage.

        A queue with send-side attributes (``pgmq._spark_checked_send``) is not copied
        into: without a job stage, the rows go into a temporary table and from there
        through ``pgmq.send_batch``'s checks, in this task's transaction.
        """
        opts = self.options
        part, attempt = _task_ids()
        rows = 0
        try:
            with connection(opts.conn, opts.queue) as db, db.transaction():
                send = db.named_row("spark_checked_send", {"queue": opts.queue})
                now, checked = send["now"], send["checked"]
                db.run("utc_session", fetch=sqlrun.NOTHING)  # vt is sent as UTC text
                table, staged = self._target(db, checked)
                names = _STAGE_COLUMNS if staged else _QUEUE_COLUMNS
                columns = sql.SQL(", ").join(map(sql.Identifier, names))
                with db.copy("copy_in", table=table, columns=columns) as copy:
                    for batch in iterator:
                        if batch.num_rows:
                            copy.write(self._lines(batch, now, part, attempt, staged))
                            rows += batch.num_rows
                if staged and not self.stage:
                    params = {"queue": opts.queue, "stage": f"pg_temp.{_TEMP_STAGE}"}
                    db.run("spark_send_staged", params, fetch=sqlrun.NOTHING)
        except InvalidPayload as exc:
            raise InvalidPayload(str(exc) + _JSON_HINT) from None
        return PgmqCommit(part, attempt, rows)

    def _target(self, db: Db, checked: bool) -> tuple[sql.Identifier, bool]:
        """The table this task copies into, and whether it is a stage: the job's stage, a
        temporary one (its queue's sends are checked), or the queue itself."""
        if self.stage:
            return sql.Identifier("pgmq", self.stage), True
        if checked:
            db.run("temp_stage", fetch=sqlrun.NOTHING)
            return sql.Identifier("pg_temp", _TEMP_STAGE), True
        return statements.table(self.options.queue), False

    def _lines(
        self, batch: pa.RecordBatch, now: object, part: int, attempt: int, staged: bool
    ) -> bytes:
        """CSV lines for the queue's table, or (``staged``) a stage's, where a row that
        gives no delay has no vt (its send applies the queue's ``delivery_delay``)."""
        queue = self.options.queue
        columns = {
            "vt": self.layout.visible_at(batch, now, queue, given_only=staged),  # type: ignore[arg-type]
            "message": self.layout.messages(batch, queue),
            "headers": self.layout.headers_of(batch, queue),
        }
        if staged:
            n = batch.num_rows
            columns = {
                "part": pa.repeat(pa.scalar(part, pa.int32()), n),
                "attempt": pa.repeat(pa.scalar(attempt, pa.int64()), n),
                **columns,
            }
        return to_csv(columns)

    def _commit(self, messages: Sequence[WriterCommitMessage | None], batch_id: int | None) -> int:
        """Move the committed attempts' rows from the stage into the queue; rows moved."""
        if not self.stage:
            return sum(m.rows for m in messages if isinstance(m, PgmqCommit))
        attempts = [m.attempt for m in messages if isinstance(m, PgmqCommit)]
        params = {"stage": self.stage, "attempts": attempts, "batch_id": batch_id}
        with connection(self.options.conn, self.options.queue) as db:
            return db.row("spark_stage_commit", params)[0]

    def _abort(self) -> None:
        if self.stage:
            with connection(self.options.conn, self.options.queue) as db:
                db.run("spark_stage_abort", {"stage": self.stage}, fetch=sqlrun.NOTHING)


def create_stage(options: Options, writer_id: str | None = None) -> str:
    """Make the staging table of an atomic write, dropping stale ones of dead jobs first."""
    with connection(options.conn, options.queue) as db:
        if writer_id is None:
            hours = {"hours": options.stale_stage_hours}
            db.run("spark_stage_drop_stale", hours, fetch=sqlrun.NOTHING)
        params = {"queue": options.queue, "writer_id": writer_id}
        return db.row("spark_stage_create", params)[0]


def check_queue(options: Options) -> None:
    """Fail early, on the driver, when the queue does not exist."""
    with connection(options.conn, options.queue) as db:
        db.run("require_queue", {"queue": options.queue}, fetch=sqlrun.NOTHING)


class QueueWriter(_Copier, DataSourceArrowWriter):
    """``df.write.format("pgmq").option("queue", q).mode("append").save()``."""

    def __init__(self, options: Options, schema: StructType) -> None:
        check_queue(options)
        stage = create_stage(options) if options.atomic else None
        super().__init__(options, schema, stage)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> PgmqCommit:
        return self._copy(iterator)

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        self._commit(messages, None)

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        self._abort()


class QueueStreamWriter(_Copier, DataSourceStreamArrowWriter):
    """``df.writeStream.format("pgmq")``: at-least-once, or exactly-once with ``writerId``."""

    def __init__(self, options: Options, schema: StructType) -> None:
        check_queue(options)
        if options.atomic and not options.writer_id:
            raise InvalidArgument(
                "a streaming write with option('atomic', 'true') needs option('writerId', ...): "
                "a stable name for this query, kept with its checkpoint"
            )
        stage = create_stage(options, options.writer_id) if options.atomic else None
        super().__init__(options, schema, stage)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> PgmqCommit:
        return self._copy(iterator)

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        self._commit(messages, batchId)

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        self._abort()
