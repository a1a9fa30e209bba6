"""Shared by the Spark tests: one local Spark session per test run, helpers on the source.

Test modules skip themselves without PySpark (``pytest.importorskip``) before
importing this; the session (``local[2]``, UI off, bound to 127.0.0.1) is made
on first use and stopped when the test process exits.
"""

from __future__ import annotations

import atexit
import functools
import os
import sys

import pytest

pytest.importorskip("pyspark", reason="pyspark is not installed: pip install 'django-pgmq[spark]'")
pytest.importorskip("pyarrow", reason="pyarrow is not installed: pip install 'django-pgmq[spark]'")

import pyarrow as pa
from pyspark.sql import SparkSession

from django_pgmq.contrib.spark.source import PgmqDataSource


@functools.cache
def spark_session() -> SparkSession:
    """The one local Spark session of this test run; workers run this interpreter."""
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    session = (
        SparkSession.builder.master("local[2]")
        .appName("django-pgmq tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    atexit.register(session.stop)
    return session


def source(dsn: str, queue: str, **options: object) -> PgmqDataSource:
    """The data source as Spark would build it from ``.option(...)`` calls."""
    return PgmqDataSource({"dsn": dsn, "queue": queue, **{k: str(v) for k, v in options.items()}})


def read_all(reader, partitions) -> pa.Table:
    """Every row the reader returns for these partitions, as one Arrow table."""
    batches = [b for p in partitions for b in reader.read(p)]
    if not batches:
        return pa.table({})
    return pa.Table.from_batches(batches)
