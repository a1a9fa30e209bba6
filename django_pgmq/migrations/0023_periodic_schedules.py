"""periodic schedules.

Written by ``python -m django_pgmq.sqlmigrate make``. The SQL it runs is frozen in
migrations/sql/ (0023_periodic_schedules.sql, and its _reverse) and is never edited.
"""

from django.db import migrations

from django_pgmq.migrations import _frozen


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0022_concurrency_and_rate_limits")]

    operations = [
        migrations.RunSQL(
            sql=_frozen.read("0023_periodic_schedules.sql"),
            reverse_sql=_frozen.read("0023_periodic_schedules_reverse.sql"),
        )
    ]
