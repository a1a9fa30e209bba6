"""pgmq create and name checks.

Written by ``python -m django_pgmq.sqlmigrate make``. The SQL it runs is frozen in
migrations/sql/ (0024_pgmq_create_and_name_checks.sql, and its _reverse) and is never edited.
"""

from django.db import migrations

from django_pgmq.migrations import _frozen


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0023_periodic_schedules")]

    operations = [
        migrations.RunSQL(
            sql=_frozen.read("0024_pgmq_create_and_name_checks.sql"),
            reverse_sql=_frozen.read("0024_pgmq_create_and_name_checks_reverse.sql"),
        )
    ]
