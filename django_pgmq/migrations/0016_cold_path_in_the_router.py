"""Cold path in the router, and metrics_all without name lookups.

Written by ``python -m django_pgmq.sqlmigrate make``. The SQL it runs is frozen in
migrations/sql/ (0016_cold_path_in_the_router.sql, and its _reverse) and is never edited.
"""

from django.db import migrations

from django_pgmq.migrations import _frozen


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0015_overview_figures_for_the_shown_queues")]

    operations = [
        migrations.RunSQL(
            sql=_frozen.read("0016_cold_path_in_the_router.sql"),
            reverse_sql=_frozen.read("0016_cold_path_in_the_router_reverse.sql"),
        )
    ]
