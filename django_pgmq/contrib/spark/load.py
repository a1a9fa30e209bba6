"""Pipeline job: load Parquet or JSON-lines files into a queue (``pgmq_spark_load``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pyspark.sql import SparkSession

from ...errors import InvalidArgument
from .conninfo import ConnectionInfo, spark_options

FORMATS = ("parquet", "json")
_SUFFIXES = {".parquet": "parquet", ".json": "json", ".jsonl": "json", ".ndjson": "json"}


def detect_format(path: str) -> str:
    """``parquet`` or ``json`` from the file name, or from the files in a local directory."""
    local = Path(path)
    if local.suffix.lower() in _SUFFIXES:
        return _SUFFIXES[local.suffix.lower()]
    if local.is_dir():
        found = {
            _SUFFIXES[p.suffix.lower()]
            for p in local.rglob("*")
            if p.is_file() and p.suffix.lower() in _SUFFIXES
        }
        if len(found) == 1:
            return found.pop()
    raise InvalidArgument(f"cannot tell the format of {path}: give --format parquet or json")


def load_into_queue(
    spark: SparkSession,
    conn: ConnectionInfo,
    queue: str,
    path: str,
    *,
    fmt: str | None = None,
    atomic: bool = False,
    progress: Callable[[str], None] = print,
) -> int:
    """Send every row of the files as a message (its ``message`` column, or the whole row)."""
    fmt = fmt or detect_format(path)
    if fmt not in FORMATS:
        raise InvalidArgument(f"format must be parquet or json, got {fmt!r}")
    frame = spark.read.parquet(path) if fmt == "parquet" else spark.read.json(path)
    rows = frame.count()
    progress(f"1/2 read {rows} rows from {path} ({fmt})")
    options = {**spark_options(conn), "queue": queue, "atomic": str(atomic).lower()}
    frame.write.format("pgmq").options(**options).mode("append").save()
    progress(f'2/2 sent {rows} messages to queue "{queue}"' + (" (atomic)" if atomic else ""))
    return rows
