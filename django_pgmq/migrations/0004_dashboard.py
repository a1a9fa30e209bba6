"""Install the admin dashboard's SQL helpers and the custom ``purge_queue`` permission."""

from django.db import migrations

from django_pgmq.migrations import _frozen

DROP_FUNCTIONS = """
DROP FUNCTION IF EXISTS pgmq._dashboard_requeue(text, text, bigint[], boolean);
DROP FUNCTION IF EXISTS pgmq._dashboard_messages(
    text, boolean, boolean, integer, text, text, jsonb, bigint, bigint, integer);
DROP FUNCTION IF EXISTS pgmq._dashboard_throughput(text, interval, interval, bigint, bigint);
DROP FUNCTION IF EXISTS pgmq._dashboard_all_stats(bigint, jsonb);
DROP FUNCTION IF EXISTS pgmq._dashboard_queue_stats(text, bigint, integer);
DROP FUNCTION IF EXISTS pgmq._dashboard_count(regclass, bigint, timestamptz);
DROP FUNCTION IF EXISTS pgmq._dashboard_estimate(regclass, timestamptz);
DROP TYPE IF EXISTS pgmq._dashboard_stats;
"""


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0002_worker"), ("django_pgmq", "0003_celery")]

    operations = [
        migrations.RunSQL(sql=_frozen.read("0004_dashboard.sql"), reverse_sql=DROP_FUNCTIONS),
        migrations.AlterModelOptions(
            name="queue",
            options={
                "managed": False,
                "ordering": ["queue_name"],
                "permissions": [("purge_queue", "Can purge queue")],
            },
        ),
    ]
