"""limit claims walk a window, a chain step sends its next step.

Written by ``python -m django_pgmq.sqltools.migrate make``. The SQL it runs is frozen,
never edited, in migrations/sql/0009_limit_claims_walk_a_window_a_chain_step.sql
and its _reverse.
"""

from django.db import migrations

from django_pgmq.migrations import _frozen


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0008_attributes_limits_schedules_tasks_workflows_and_roles")]

    operations = [
        migrations.RunSQL(
            sql=_frozen.read("0009_limit_claims_walk_a_window_a_chain_step.sql"),
            reverse_sql=_frozen.read("0009_limit_claims_walk_a_window_a_chain_step_reverse.sql"),
        )
    ]
