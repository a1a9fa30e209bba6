"""SQL API fast paths, limit slots by key, chain steps sent directly.

Written by ``python -m django_pgmq.sqltools.migrate make``. The SQL it runs is frozen in
migrations/sql/ (0052_sql_api_fast_paths_limit_slots_by_key.sql, and its _reverse) and is
never edited.
"""

from django.db import migrations

from django_pgmq.migrations import _frozen


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0051_fifo_spark_and_dedup_sends_use_the")]

    operations = [
        migrations.RunSQL(
            sql=_frozen.read("0052_sql_api_fast_paths_limit_slots_by_key.sql"),
            reverse_sql=_frozen.read("0052_sql_api_fast_paths_limit_slots_by_key_reverse.sql"),
        )
    ]
