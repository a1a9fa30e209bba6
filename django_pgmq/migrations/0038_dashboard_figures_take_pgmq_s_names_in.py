"""dashboard figures take pgmq's names in_flight_length, delayed_length, newest_msg_age_sec,
poison_length.

Written by ``python -m django_pgmq.sqltools.migrate make``. The SQL it runs is frozen in
migrations/sql/ (0038_dashboard_figures_take_pgmq_s_names_in.sql, and its _reverse) and is
never edited.

Issue 28 (one vocabulary), after 0037: the dashboard's figures type ``pgmq._dashboard_stats``
renames its columns ``in_flight``, ``delayed``, ``newest_age_sec`` and ``poison`` to the
source's (``pgmq._queue_figures``, pgmq's) ``in_flight_length``, ``delayed_length``,
``newest_msg_age_sec`` and ``poison_length`` (its type change written by hand, in both
directions), and ``_dashboard_stats_of`` no longer maps the names in ``estimated``.
``QueueSample.in_flight`` and ``.delayed`` are ``in_flight_length`` and ``delayed_length``,
their columns keeping their names (Django's state only, as 0035 and 0037 did).
"""

from django.db import migrations, models

from django_pgmq.migrations import _frozen


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0037_dashboard_figures_take_pgmq_s_names")]

    operations = [
        migrations.RunSQL(
            sql=_frozen.read("0038_dashboard_figures_take_pgmq_s_names_in.sql"),
            reverse_sql=_frozen.read("0038_dashboard_figures_take_pgmq_s_names_in_reverse.sql"),
        ),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RenameField("queuesample", "in_flight", "in_flight_length"),
                migrations.AlterField(
                    model_name="queuesample",
                    name="in_flight_length",
                    field=models.BigIntegerField(db_column="in_flight"),
                ),
                migrations.RenameField("queuesample", "delayed", "delayed_length"),
                migrations.AlterField(
                    model_name="queuesample",
                    name="delayed_length",
                    field=models.BigIntegerField(db_column="delayed"),
                ),
            ],
            database_operations=[],
        ),
    ]
