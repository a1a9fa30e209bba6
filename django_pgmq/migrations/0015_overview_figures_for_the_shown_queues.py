"""overview figures for the shown queues only.

Written by ``python -m django_pgmq.sqlmigrate make``. The SQL it runs is frozen in
migrations/sql/ (0015_overview_figures_for_the_shown_queues.sql, and its _reverse) and is
never edited.
"""

from django.db import migrations

from django_pgmq.migrations import _frozen


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0014_queuesample_oldest_enqueued_at")]

    operations = [
        migrations.RunSQL(
            sql=_frozen.read("0015_overview_figures_for_the_shown_queues.sql"),
            reverse_sql=_frozen.read("0015_overview_figures_for_the_shown_queues_reverse.sql"),
        )
    ]
