"""limits by slots.

Written by ``python -m django_pgmq.sqltools.migrate make``. The SQL it runs is frozen in
migrations/sql/ (0045_limits_by_slots.sql, and its _reverse) and is never edited.
"""

from django.db import migrations

from django_pgmq.migrations import _frozen


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0044_a_client_s_own_statements_of_read_pop")]

    operations = [
        migrations.RunSQL(
            sql=_frozen.read("0045_limits_by_slots.sql"),
            reverse_sql=_frozen.read("0045_limits_by_slots_reverse.sql"),
        )
    ]
