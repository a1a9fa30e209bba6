"""Install the pgmq schema and SQL API (frozen as released in 0.1.0: sql/0001_initial.sql)."""

from django.db import migrations, models

from django_pgmq.migrations import _frozen


class Migration(migrations.Migration):
    initial = True
    dependencies = []

    operations = [
        migrations.RunSQL(
            sql=_frozen.read("0001_initial.sql"),
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
