"""Workflows advanced by the acknowledgement.

Written by ``python -m django_pgmq.sqltools.migrate make``. The SQL it runs is frozen in
migrations/sql/ (0048_workflows_advanced_by_the.sql, and its _reverse) and is
never edited.
"""

from django.db import migrations

from django_pgmq.migrations import _frozen


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0047_task_result_labels_translated")]

    operations = [
        migrations.RunSQL(
            sql=_frozen.read("0048_workflows_advanced_by_the.sql"),
            reverse_sql=_frozen.read("0048_workflows_advanced_by_the_reverse.sql"),
        )
    ]
