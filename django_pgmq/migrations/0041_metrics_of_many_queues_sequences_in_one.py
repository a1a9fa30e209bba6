"""Metrics of many queues: sequences found in one pass, names checked once.

pgmq._metrics_facts finds every table's sequence from one pass over pg_sequence when it
is given more than 64 names (metrics_all, the dashboard over many queues) instead of
one look-up per table, and checks each name once instead of in every hash probe of its
joins. Written by ``python -m django_pgmq.sqltools.migrate make``; the SQL it runs is
frozen in migrations/sql/ (its .sql and _reverse.sql), never edited.
"""

from django.db import migrations

from django_pgmq.migrations import _frozen


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0040_sql_functions_declared_as_volatile_as")]

    operations = [
        migrations.RunSQL(
            sql=_frozen.read("0041_metrics_of_many_queues_sequences_in_one.sql"),
            reverse_sql=_frozen.read("0041_metrics_of_many_queues_sequences_in_one_reverse.sql"),
        )
    ]
