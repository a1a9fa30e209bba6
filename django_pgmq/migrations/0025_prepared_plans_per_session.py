"""prepared plans per session.

Written by ``python -m django_pgmq.sqlmigrate make``. The SQL it runs is frozen in
migrations/sql/ (0025_prepared_plans_per_session.sql, and its _reverse) and is never edited.
"""

from django.db import migrations

from django_pgmq.migrations import _frozen


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0024_pgmq_create_and_name_checks")]

    operations = [
        migrations.RunSQL(
            sql=_frozen.read("0025_prepared_plans_per_session.sql"),
            reverse_sql=_frozen.read("0025_prepared_plans_per_session_reverse.sql"),
        )
    ]
