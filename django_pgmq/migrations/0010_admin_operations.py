"""The admin's operations: HandlerTiming (handler duration percentiles written by
workers), and the Queue model's names marked for translation."""

import django.db.models.functions.datetime
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0008_task_results")]

    operations = [
        migrations.AlterModelOptions(
            name="queue",
            options={
                "managed": False,
                "ordering": ["queue_name"],
                "permissions": [("purge_queue", "Can purge queue")],
                "verbose_name": "queue",
                "verbose_name_plural": "queues",
            },
        ),
        migrations.CreateModel(
            name="HandlerTiming",
            fields=[
                ("id", models.BigAutoField(primary_key=True, serialize=False)),
                ("queue", models.CharField(max_length=47)),
                (
                    "recorded_at",
                    models.DateTimeField(db_default=django.db.models.functions.datetime.Now()),
                ),
                ("calls", models.PositiveIntegerField()),
                ("p50_ms", models.FloatField()),
                ("p95_ms", models.FloatField()),
            ],
            options={
                "ordering": ["queue", "recorded_at"],
                "indexes": [
                    models.Index(fields=["queue", "recorded_at"], name="pgmq_timing_queue_at")
                ],
            },
        ),
    ]
