"""Install the pgmq schema and SQL API from ``django_pgmq/sql``."""

from django.db import migrations, models

from django_pgmq import sqlfiles

INSTALL_FILES = [
    "00_schema.sql",
    "05_names.sql",
    "10_queues.sql",
    "15_queue_ops.sql",
    "20_messages.sql",
    "30_metrics.sql",
    "40_notify.sql",
    "45_partitions.sql",
    "50_fifo.sql",
    "60_topics.sql",
]


class Migration(migrations.Migration):
    initial = True
    dependencies = []

    operations = [
        migrations.RunSQL(
            sql="\n".join(sqlfiles.read(name) for name in INSTALL_FILES),
            reverse_sql="DROP SCHEMA IF EXISTS pgmq CASCADE;",
        ),
        migrations.CreateModel(
            name="Queue",
            fields=[
                ("queue_name", models.CharField(max_length=47, primary_key=True, serialize=False)),
                ("is_partitioned", models.BooleanField()),
                ("is_unlogged", models.BooleanField()),
                ("created_at", models.DateTimeField()),
            ],
            options={
                "db_table": 'pgmq"."meta',
                "ordering": ["queue_name"],
                "managed": False,
            },
        ),
    ]
