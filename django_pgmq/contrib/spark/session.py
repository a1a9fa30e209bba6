"""A SparkSession for the pipeline commands, with the pgmq source ready to use."""

from __future__ import annotations

import os
import pkgutil
import sys

from pyspark.sql import SparkSession

from .source import PgmqDataSource


def get_session(master: str | None = None, app_name: str = "django-pgmq") -> SparkSession:
    """The active session, or a new one (``local[*]`` unless ``master`` or spark-submit says).

    Workers run this interpreter (``PYSPARK_PYTHON``), timestamps are shown in UTC,
    and filters on msg_id, times and read_ct are pushed to PostgreSQL.
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(app_name)
    if master:
        builder = builder.master(master)
    if (master or "local").startswith("local"):
        builder = builder.config("spark.driver.bindAddress", "127.0.0.1").config(
            "spark.driver.host", "127.0.0.1"
        )
    spark = (
        builder.config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.python.filterPushdown.enabled", "true")
        .getOrCreate()
    )
    ensure_registered(spark)
    return spark


def ensure_registered(spark: SparkSession) -> None:
    """Register the source by hand when PySpark cannot discover ``pyspark_pgmq`` by itself.

    PySpark scans ``sys.path`` for ``pyspark_*`` modules; setuptools' default
    editable install hides packages from that scan.
    """
    if not any(m.name == "pyspark_pgmq" for m in pkgutil.iter_modules()):
        spark.dataSource.register(PgmqDataSource)
