"""queue figures computed once, read by metrics and the dashboard.

Written by ``python -m django_pgmq.sqlmigrate make``. The SQL it runs is frozen in
migrations/sql/ (0036_queue_figures_computed_once_read_by.sql, and its _reverse)
and is never edited.
"""

from django.db import migrations

from django_pgmq.migrations import _frozen


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0035_one_vocabulary_model_fields")]

    operations = [
        migrations.RunSQL(
            sql=_frozen.read("0036_queue_figures_computed_once_read_by.sql"),
            reverse_sql=_frozen.read("0036_queue_figures_computed_once_read_by_reverse.sql"),
        )
    ]
