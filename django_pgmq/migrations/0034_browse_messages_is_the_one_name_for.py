"""browse_messages is the one name for message browsing.

Written by ``python -m django_pgmq.sqlmigrate make``. The SQL it runs is frozen in
migrations/sql/ (0034_browse_messages_is_the_one_name_for.sql, and its _reverse) and is never
edited.
"""

from django.db import migrations

from django_pgmq.migrations import _frozen


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0033_task_enqueue_through_the_id_router")]

    operations = [
        migrations.RunSQL(
            sql=_frozen.read("0034_browse_messages_is_the_one_name_for.sql"),
            reverse_sql=_frozen.read("0034_browse_messages_is_the_one_name_for_reverse.sql"),
        )
    ]
