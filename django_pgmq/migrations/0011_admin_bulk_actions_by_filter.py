"""admin bulk actions by filter and the worker's record of failed attempts.

Written by ``python -m django_pgmq.sqlmigrate make``. The SQL it runs is frozen in
migrations/sql/ (0011_admin_bulk_actions_by_filter.sql, and its _reverse)
and is never edited.
"""

from django.db import migrations

from django_pgmq.migrations import _frozen


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0010_admin_operations")]

    operations = [
        migrations.RunSQL(
            sql=_frozen.read("0011_admin_bulk_actions_by_filter.sql"),
            reverse_sql=_frozen.read("0011_admin_bulk_actions_by_filter_reverse.sql"),
        )
    ]
