"""Give every queue its access function (sql/15_queue_ops.sql) and route the message
functions through it, so their statements are planned once per session, not per call."""

from django.db import migrations

from django_pgmq import sqlfiles

INSTALL_FILES = ["05_names.sql", "15_queue_ops.sql", "10_queues.sql", "20_messages.sql"]

EXISTING_QUEUES = "SELECT pgmq._install_queue_ops(m.queue_name) FROM pgmq.meta m;"


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0006_dashboard_spark_stats")]

    # Backwards: the functions stay. They keep pgmq's names, arguments and results,
    # so the earlier migrations' code works with them.
    operations = [
        migrations.RunSQL(
            sql="\n".join(sqlfiles.read(name) for name in INSTALL_FILES) + EXISTING_QUEUES,
            reverse_sql=migrations.RunSQL.noop,
        )
    ]
