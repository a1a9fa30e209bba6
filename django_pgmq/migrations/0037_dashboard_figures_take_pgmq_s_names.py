"""dashboard figures take pgmq's names queue_length, queue_visible_length.

Written by ``python -m django_pgmq.sqltools.migrate make``. The SQL it runs is frozen in
migrations/sql/ (0037_dashboard_figures_take_pgmq_s_names.sql, and its _reverse) and is
never edited.

Issue 28 (one vocabulary): the dashboard's figures type ``pgmq._dashboard_stats`` renames
its columns ``depth`` and ``visible`` to pgmq's ``queue_length`` and
``queue_visible_length`` (its type change written by hand, in both directions), and
``QueueSample.visible`` is ``queue_visible_length``, its column keeping its name (Django's
state only, as migration 0035 did for ``queue_length``).
"""

from django.db import migrations, models

from django_pgmq.migrations import _frozen


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0036_queue_figures_computed_once_read_by")]

    operations = [
        migrations.RunSQL(
            sql=_frozen.read("0037_dashboard_figures_take_pgmq_s_names.sql"),
            reverse_sql=_frozen.read("0037_dashboard_figures_take_pgmq_s_names_reverse.sql"),
        ),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RenameField("queuesample", "visible", "queue_visible_length"),
                migrations.AlterField(
                    model_name="queuesample",
                    name="queue_visible_length",
                    field=models.BigIntegerField(db_column="visible"),
                ),
            ],
            database_operations=[],
        ),
    ]
