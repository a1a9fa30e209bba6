"""Kept statements carry the attribute guard; read, pop, archive, delete and a
one-message send skip a layer.

Written by ``python -m django_pgmq.sqltools.migrate make``. The SQL it runs is frozen in
migrations/sql/ (0042_kept_statements_carry_the_attribute.sql, and its _reverse) and is
never edited.
"""

from django.db import migrations

from django_pgmq.migrations import _frozen


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0041_metrics_of_many_queues_sequences_in_one")]

    operations = [
        migrations.RunSQL(
            sql=_frozen.read("0042_kept_statements_carry_the_attribute.sql"),
            reverse_sql=_frozen.read("0042_kept_statements_carry_the_attribute_reverse.sql"),
        )
    ]
