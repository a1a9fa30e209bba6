"""PySpark registers every installed ``pyspark_*`` module's ``DefaultSource`` by its name.

This module makes ``spark.read.format("pgmq")`` work with no register call; the
source itself lives in `django_pgmq.contrib.spark`.
"""

from django_pgmq.contrib.spark.source import PgmqDataSource as DefaultSource

__all__ = ["DefaultSource"]
