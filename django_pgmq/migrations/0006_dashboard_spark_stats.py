"""Install the admin's long-range chart function over pgmq.spark_stats."""

from django.db import migrations

from django_pgmq.migrations import _frozen

DROP = "DROP FUNCTION IF EXISTS pgmq._dashboard_spark_stats(text, interval, interval);"


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0005_spark")]

    operations = [
        migrations.RunSQL(sql=_frozen.read("0006_dashboard_spark_stats.sql"), reverse_sql=DROP)
    ]
