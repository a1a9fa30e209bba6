"""queue attributes.

Written by ``python -m django_pgmq.sqlmigrate make``. The SQL it runs is frozen in
migrations/sql/ (0013_queue_attributes.sql, and its _reverse) and is never edited.
"""

from django.db import migrations

from django_pgmq.migrations import _frozen


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0012_flat_cost_per_queue")]

    operations = [
        migrations.RunSQL(
            sql=_frozen.read("0013_queue_attributes.sql"),
            reverse_sql=_frozen.read("0013_queue_attributes_reverse.sql"),
        )
    ]
