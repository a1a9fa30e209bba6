"""worker_hide_failed_named_once.

Written by ``python -m django_pgmq.sqlmigrate make``. The SQL it runs is frozen in
migrations/sql/ (0031_worker_hide_failed_named_once.sql, and its _reverse) and is never edited.
"""

from django.db import migrations

from django_pgmq.migrations import _frozen


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0030_index_builds_give_way_to_queue_ddl")]

    operations = [
        migrations.RunSQL(
            sql=_frozen.read("0031_worker_hide_failed_named_once.sql"),
            reverse_sql=_frozen.read("0031_worker_hide_failed_named_once_reverse.sql"),
        )
    ]
