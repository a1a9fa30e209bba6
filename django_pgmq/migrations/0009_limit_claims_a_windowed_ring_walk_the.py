"""limit claims: a windowed ring walk, the record in the read.

Written by ``python -m django_pgmq.sqltools.migrate make``. The SQL it runs is frozen in
migrations/sql/ (0009_limit_claims_a_windowed_ring_walk_the.sql, and its _reverse) and is
never edited.
"""

from django.db import migrations

from django_pgmq.migrations import _frozen


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0008_attributes_limits_schedules_tasks_workflows_and_roles")]

    operations = [
        migrations.RunSQL(
            sql=_frozen.read("0009_limit_claims_a_windowed_ring_walk_the.sql"),
            reverse_sql=_frozen.read("0009_limit_claims_a_windowed_ring_walk_the_reverse.sql"),
        )
    ]
