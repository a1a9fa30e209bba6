"""concurrency and rate limits.

Written by ``python -m django_pgmq.sqlmigrate make``. The SQL it runs is frozen in
migrations/sql/ (0022_concurrency_and_rate_limits.sql, and its _reverse) and is never edited.
"""

from django.db import migrations

from django_pgmq.migrations import _frozen


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0021_issue_22_periphery_and_two_roles")]

    operations = [
        migrations.RunSQL(
            sql=_frozen.read("0022_concurrency_and_rate_limits.sql"),
            reverse_sql=_frozen.read("0022_concurrency_and_rate_limits_reverse.sql"),
        )
    ]
