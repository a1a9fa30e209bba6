"""workflow results inline.

Written by ``python -m django_pgmq.sqltools.migrate make``. The SQL it runs is frozen in
migrations/sql/ (0053_workflow_results_inline.sql, and its _reverse) and is never edited.
"""

from django.db import migrations

from django_pgmq.migrations import _frozen


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0052_sql_api_fast_paths_limit_slots_by_key")]

    operations = [
        migrations.RunSQL(
            sql=_frozen.read("0053_workflow_results_inline.sql"),
            reverse_sql=_frozen.read("0053_workflow_results_inline_reverse.sql"),
        )
    ]
