"""a chain step sent without a subtransaction.

Written by ``python -m django_pgmq.sqltools.migrate make``. The SQL it runs is frozen in
migrations/sql/ (0052_a_chain_step_sent_without_a.sql, and its _reverse) and is never edited.
"""

from django.db import migrations

from django_pgmq.migrations import _frozen


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0051_fifo_spark_and_dedup_sends_use_the")]

    operations = [
        migrations.RunSQL(
            sql=_frozen.read("0052_a_chain_step_sent_without_a.sql"),
            reverse_sql=_frozen.read("0052_a_chain_step_sent_without_a_reverse.sql"),
        )
    ]
