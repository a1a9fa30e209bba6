"""Give every queue its access function (sql/15_queue_ops.sql) and route the message
functions through it, so their statements are planned once per session, not per call."""

from django.db import migrations

from django_pgmq.migrations import _frozen


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0006_dashboard_spark_stats")]

    # Backwards: the functions stay. They keep pgmq's names, arguments and results,
    # so the earlier migrations' code works with them.
    operations = [
        migrations.RunSQL(
            sql=_frozen.read("0007_queue_ops.sql"),
            reverse_sql=migrations.RunSQL.noop,
        )
    ]
