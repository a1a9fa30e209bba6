"""queue figures read by column name; oldest_msg_age_sec, one name per fact.

Written by ``python -m django_pgmq.sqlmigrate make``. The SQL it runs is frozen in
migrations/sql/ (0032_queue_figures_read_by_column_name_oldest.sql, and its _reverse)
and is never edited.
"""

from django.db import migrations

from django_pgmq.migrations import _frozen


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0031_worker_hide_failed_named_once")]

    operations = [
        migrations.RunSQL(
            sql=_frozen.read("0032_queue_figures_read_by_column_name_oldest.sql"),
            reverse_sql=_frozen.read("0032_queue_figures_read_by_column_name_oldest_reverse.sql"),
        )
    ]
