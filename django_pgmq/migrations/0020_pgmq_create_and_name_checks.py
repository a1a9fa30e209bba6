"""pgmq create and name checks.

Written by ``python -m django_pgmq.sqlmigrate make``. The SQL it runs is frozen in
migrations/sql/ (0020_pgmq_create_and_name_checks.sql, and its _reverse) and is never edited.
"""

from django.db import migrations

from django_pgmq.migrations import _frozen


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0019_fast_dedup_sends_topic_delays")]

    operations = [
        migrations.RunSQL(
            sql=_frozen.read("0020_pgmq_create_and_name_checks.sql"),
            reverse_sql=_frozen.read("0020_pgmq_create_and_name_checks_reverse.sql"),
        )
    ]
