"""task_enqueue_through_the_id_router.

Written by ``python -m django_pgmq.sqlmigrate make``. The SQL it runs is frozen in
migrations/sql/ (0033_task_enqueue_through_the_id_router.sql, and its _reverse) and is
never edited.
"""

from django.db import migrations

from django_pgmq.migrations import _frozen


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0032_queue_figures_read_by_column_name_oldest")]

    operations = [
        migrations.RunSQL(
            sql=_frozen.read("0033_task_enqueue_through_the_id_router.sql"),
            reverse_sql=_frozen.read("0033_task_enqueue_through_the_id_router_reverse.sql"),
        )
    ]
