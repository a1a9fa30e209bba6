"""Limit slots free lazily.

Written by ``python -m django_pgmq.sqltools.migrate make``. The SQL it runs is frozen in
migrations/sql/ (0049_limit_slots_free_lazily.sql, and its _reverse) and is never edited.
"""

from django.db import migrations

from django_pgmq.migrations import _frozen


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0048_workflows_advanced_by_the")]

    operations = [
        migrations.RunSQL(
            sql=_frozen.read("0049_limit_slots_free_lazily.sql"),
            reverse_sql=_frozen.read("0049_limit_slots_free_lazily_reverse.sql"),
        )
    ]
