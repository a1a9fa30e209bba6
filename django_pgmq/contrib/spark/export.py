"""Pipeline job: move old archive rows to Parquet, partitioned by day (``pgmq_spark_export``).

A run is recorded in ``pgmq.spark_export_run`` before anything is written: its
rows are those archived before ``cutoff`` with ``msg_id <= max_msg_id``, fixed
at the start. Stages, each resumable:

1. *started*: Spark writes the rows to ``PATH/_pgmq_staging/<run>/day=.../``
   (overwritten when a crashed run is resumed, so never twice);
2. *written*: each file is renamed to ``PATH/day=YYYY-MM-DD/<run>-<file>``
   (renames are atomic; a resumed run skips the moved ones);
3. *published*: the rows are deleted from the archive in one transaction,
   refused if that would remove more rows than were written;
4. *done*.

So a rerun after any failure finishes the same run: no row is lost (deleted
only once its file is in place) and none is written twice. Readers of ``PATH``
skip ``_pgmq_staging`` (Spark ignores paths starting with ``_``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from typing import Any
from uuid import UUID

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from ... import records, sqlrun
from ...errors import PgmqError
from . import statements
from .conninfo import ConnectionInfo, spark_options
from .db import connection

STAGING_DIR = "_pgmq_staging"


def __getattr__(name: str) -> Any:
    """`ExportRun`, whose home this module was until it moved to `django_pgmq.records`:
    still importable from here, with a DeprecationWarning."""
    return records._moved(__name__, name, {"ExportRun": ("django_pgmq.records", records.ExportRun)})


def export_archive(
    spark: SparkSession,
    conn: ConnectionInfo,
    queue: str,
    path: str,
    older_than_seconds: int,
    *,
    num_partitions: int = 1,
    progress: Callable[[str], None] = print,
) -> records.ExportRun:
    """Export, publish, then remove archive rows older than the cut-off; resumes a run."""
    run, resumed = _open_run(conn, queue, path, older_than_seconds)
    note = " (resuming an unfinished run)" if resumed else ""
    progress(
        f'1/4 queue "{queue}" run {run.run_id}{note}: rows archived before '
        f"{run.cutoff:%Y-%m-%d %H:%M:%S} UTC with msg_id <= {run.max_msg_id}"
    )
    staging = f"{path.rstrip('/')}/{STAGING_DIR}/{run.run_id}"
    exported = run.exported
    if run.stage == "started":
        rows = _archive_rows(spark, conn, queue, run, num_partitions)
        spark.conf.set("spark.sql.session.timeZone", "UTC")  # days are UTC days
        rows.write.mode("overwrite").partitionBy("day").parquet(staging)
        exported = spark.read.schema(rows.schema).parquet(staging).count()
        _set_stage(conn, run, "written", exported=exported)
    progress(f"2/4 wrote {exported} rows to {staging}")
    if run.stage in ("started", "written"):
        moved = publish(spark, staging, path, run.run_id)
        _set_stage(conn, run, "published")
        progress(f"3/4 published {moved} file(s) under {path}/day=YYYY-MM-DD/")
    else:
        progress("3/4 files already published")
    removed = _remove_rows(conn, queue, run, exported or 0)
    _set_stage(conn, run, "done", removed=removed)
    progress(f'4/4 removed {removed} rows from the archive of queue "{queue}"')
    return records.ExportRun(run.run_id, run.cutoff, run.max_msg_id, exported, "done")


def _open_run(
    conn: ConnectionInfo, queue: str, path: str, older_than_seconds: int
) -> tuple[records.ExportRun, bool]:
    """The unfinished run for (queue, path), or a new one; and whether it was resumed."""
    with connection(conn, queue) as db:
        db.run("require_queue", {"queue": queue}, fetch=sqlrun.NOTHING)
        key = {"queue": queue, "path": path}
        found = db.run("export_open_run", key, fetch=sqlrun.NAMED)
        if found:
            return _export_run(found[0]), True
        params = {**key, "older_than": older_than_seconds}
        [row] = db.run("spark_export_run", params, fetch=sqlrun.NAMED)
        return _export_run(row), False


def _export_run(columns: dict[str, Any]) -> records.ExportRun:
    """An `ExportRun` from a ``pgmq.spark_export_run`` row read by column name."""
    return records.ExportRun(**{f.name: columns[f.name] for f in fields(records.ExportRun)})


def _archive_rows(
    spark: SparkSession,
    conn: ConnectionInfo,
    queue: str,
    run: records.ExportRun,
    num_partitions: int,
) -> DataFrame:
    options = {
        **spark_options(conn),
        "queue": queue,
        "source": "archive",
        "numPartitions": str(num_partitions),
    }
    return (
        spark.read.format("pgmq")
        .options(**options)
        .load()
        .where((F.col("archived_at") < F.lit(run.cutoff)) & (F.col("msg_id") <= run.max_msg_id))
        .withColumn("day", F.date_format("archived_at", "yyyy-MM-dd"))
    )


def publish(spark: SparkSession, staging: str, path: str, run_id: UUID) -> int:
    """Rename the staged files into ``path/day=.../<run>-<file>``; returns how many moved."""
    jvm: Any = spark._jvm  # Hadoop's FileSystem: local paths, HDFS and object stores alike
    hadoop_path = jvm.org.apache.hadoop.fs.Path
    root = hadoop_path(staging)
    fs = root.getFileSystem(spark._jsc.hadoopConfiguration())
    if not fs.exists(root):
        return 0
    moved = 0
    files = fs.listFiles(root, True)
    while files.hasNext():
        source = files.next().getPath()
        name = source.getName()
        if name.startswith(("_", ".")):
            continue  # _SUCCESS markers and checksum files
        day_dir = hadoop_path(hadoop_path(path), source.getParent().getName())
        fs.mkdirs(day_dir)
        if not fs.rename(source, hadoop_path(day_dir, f"{run_id}-{name}")):
            raise PgmqError(f"could not move {source.toString()} into {day_dir.toString()}")
        moved += 1
    fs.delete(root, True)
    parent = root.getParent()
    if not fs.listStatus(parent):
        fs.delete(parent, False)
    return moved


def _remove_rows(conn: ConnectionInfo, queue: str, run: records.ExportRun, exported: int) -> int:
    """Delete the run's rows from the archive, unless that would remove unexported rows."""
    table = statements.table(queue, "archive")
    params = {"cutoff": run.cutoff, "max_msg_id": run.max_msg_id}
    with connection(conn, queue) as db, db.transaction():
        removed = db.run("export_remove", params, fetch=sqlrun.ROWCOUNT, table=table)
        if removed > exported:
            raise PgmqError(
                f'queue "{queue}": export run {run.run_id} would remove {removed} archive rows '
                f"but wrote {exported}; nothing was removed and the run stays open: look for rows "
                "archived with an old archived_at after the run started"
            )
    return removed


def _set_stage(
    conn: ConnectionInfo, run: records.ExportRun, stage: str, **counts: int | None
) -> None:
    params = {"run_id": run.run_id, "stage": stage, "exported": None, "removed": None, **counts}
    with connection(conn) as db:
        db.run("spark_export_set_stage", params, fetch=sqlrun.NOTHING)
