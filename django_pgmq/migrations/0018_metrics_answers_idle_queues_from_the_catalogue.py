"""metrics answers idle queues from the catalogue.

Written by ``python -m django_pgmq.sqlmigrate make``. The SQL it runs is frozen in
migrations/sql/ (0018_metrics_answers_idle_queues_from_the_catalogue.sql, and its _reverse)
and is never edited.
"""

from django.db import migrations

from django_pgmq.migrations import _frozen


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0017_attributes_for_clients")]

    operations = [
        migrations.RunSQL(
            sql=_frozen.read("0018_metrics_answers_idle_queues_from_the_catalogue.sql"),
            reverse_sql=_frozen.read(
                "0018_metrics_answers_idle_queues_from_the_catalogue_reverse.sql"
            ),
        )
    ]
