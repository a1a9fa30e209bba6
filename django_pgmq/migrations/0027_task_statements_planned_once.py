"""task statements planned once.

Written by ``python -m django_pgmq.sqlmigrate make``. The SQL it runs is frozen in
migrations/sql/ (0027_task_statements_planned_once.sql, and its _reverse) and is
never edited.
"""

from django.db import migrations

from django_pgmq.migrations import _frozen


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0026_lean_id_statements_and_fresher_marks")]

    operations = [
        migrations.RunSQL(
            sql=_frozen.read("0027_task_statements_planned_once.sql"),
            reverse_sql=_frozen.read("0027_task_statements_planned_once_reverse.sql"),
        )
    ]
