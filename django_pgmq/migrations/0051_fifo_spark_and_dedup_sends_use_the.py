"""FIFO spark and dedup sends use the builders, a cheaper reclaim.

Written by ``python -m django_pgmq.sqltools.migrate make``. The SQL it runs is frozen in
migrations/sql/ (0051_fifo_spark_and_dedup_sends_use_the.sql, and its _reverse) and is
never edited.
"""

from django.db import migrations

from django_pgmq.migrations import _frozen


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0050_one_statement_builder_per_operation_and")]

    operations = [
        migrations.RunSQL(
            sql=_frozen.read("0051_fifo_spark_and_dedup_sends_use_the.sql"),
            reverse_sql=_frozen.read("0051_fifo_spark_and_dedup_sends_use_the_reverse.sql"),
        )
    ]
