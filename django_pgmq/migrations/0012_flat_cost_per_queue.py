"""Flat cost per queue: a cold path for every queue, kept plans for a bounded hot set, and
metrics_all in chunks of 200 queues.

Written by ``python -m django_pgmq.sqlmigrate make``. The SQL it runs is frozen in
migrations/sql/ (0012_flat_cost_per_queue.sql, and its _reverse) and is never edited.
"""

from django.db import migrations

from django_pgmq.migrations import _frozen


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0011_admin_bulk_actions_by_filter")]

    operations = [
        migrations.RunSQL(
            sql=_frozen.read("0012_flat_cost_per_queue.sql"),
            reverse_sql=_frozen.read("0012_flat_cost_per_queue_reverse.sql"),
        )
    ]
