"""chain step sent by one statement.

Written by ``python -m django_pgmq.sqltools.migrate make``. The SQL it runs is frozen in
migrations/sql/ (0009_chain_step_sent_by_one_statement.sql, and its _reverse) and is never edited.
"""

from django.db import migrations

from django_pgmq.migrations import _frozen


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0008_attributes_limits_schedules_tasks_workflows_and_roles")]

    operations = [
        migrations.RunSQL(
            sql=_frozen.read("0009_chain_step_sent_by_one_statement.sql"),
            reverse_sql=_frozen.read("0009_chain_step_sent_by_one_statement_reverse.sql"),
        )
    ]
