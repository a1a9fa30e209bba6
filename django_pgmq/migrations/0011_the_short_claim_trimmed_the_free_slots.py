"""the short claim trimmed: the free slots one array, the cursor checked without a regular
expression.

Written by ``python -m django_pgmq.sqltools.migrate make``. The SQL it runs is frozen,
never edited, in migrations/sql/0011_the_short_claim_trimmed_the_free_slots.sql
and its _reverse.
"""

from django.db import migrations

from django_pgmq.migrations import _frozen


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0010_limited_reads_on_a_short_claim_a_chain")]

    operations = [
        migrations.RunSQL(
            sql=_frozen.read("0011_the_short_claim_trimmed_the_free_slots.sql"),
            reverse_sql=_frozen.read("0011_the_short_claim_trimmed_the_free_slots_reverse.sql"),
        )
    ]
