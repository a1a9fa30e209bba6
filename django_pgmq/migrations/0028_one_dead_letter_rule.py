"""one_dead_letter_rule.

Written by ``python -m django_pgmq.sqlmigrate make``. The SQL it runs is frozen in
migrations/sql/ (0028_one_dead_letter_rule.sql, and its _reverse) and is never edited.
"""

from django.db import migrations

from django_pgmq.migrations import _frozen


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0027_task_statements_planned_once")]

    operations = [
        migrations.RunSQL(
            sql=_frozen.read("0028_one_dead_letter_rule.sql"),
            reverse_sql=_frozen.read("0028_one_dead_letter_rule_reverse.sql"),
        )
    ]
