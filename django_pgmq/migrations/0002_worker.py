"""The worker: its tables (queue settings, live workers, queue samples) and SQL helpers."""

import django.db.models.functions.datetime
from django.db import migrations, models

from django_pgmq.migrations import _frozen

DROP_FUNCTIONS = """
DROP FUNCTION IF EXISTS pgmq._dead_letter(text, bigint, text, text);
DROP FUNCTION IF EXISTS pgmq._set_vt_seconds(text, bigint[], double precision, boolean);
"""


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0001_initial")]

    operations = [
        migrations.RunSQL(sql=_frozen.read("0002_worker.sql"), reverse_sql=DROP_FUNCTIONS),
        migrations.CreateModel(
            name="QueueConfig",
            fields=[
                ("queue", models.CharField(max_length=47, primary_key=True, serialize=False)),
                (
                    "max_reads",
                    models.PositiveIntegerField(
                        default=5,
                        help_text="Reads after which a failing message is dead-lettered; 0: never.",
                    ),
                ),
                ("dead_letter_queue", models.CharField(blank=True, max_length=47)),
                (
                    "on_success",
                    models.CharField(
                        choices=[("archive", "archive"), ("delete", "delete")],
                        default="archive",
                        max_length=7,
                    ),
                ),
                (
                    "vt",
                    models.PositiveIntegerField(
                        default=30, help_text="Visibility timeout, seconds."
                    ),
                ),
                (
                    "batch",
                    models.PositiveIntegerField(default=10, help_text="Messages read at a time."),
                ),
                ("updated_at", models.DateTimeField(auto_now=True)),
            ],
            options={"verbose_name": "queue configuration", "ordering": ["queue"]},
        ),
        migrations.CreateModel(
            name="Worker",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("host", models.CharField(max_length=255)),
                ("pid", models.PositiveIntegerField()),
                ("queues", models.JSONField(default=list)),
                ("concurrency", models.PositiveIntegerField(default=1)),
                (
                    "started_at",
                    models.DateTimeField(db_default=django.db.models.functions.datetime.Now()),
                ),
                (
                    "heartbeat_at",
                    models.DateTimeField(db_default=django.db.models.functions.datetime.Now()),
                ),
                ("expires_at", models.DateTimeField()),
                ("processed", models.BigIntegerField(default=0)),
                ("failed", models.BigIntegerField(default=0)),
            ],
            options={"ordering": ["started_at"]},
        ),
        migrations.CreateModel(
            name="QueueSample",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("queue", models.CharField(max_length=47)),
                (
                    "sampled_at",
                    models.DateTimeField(db_default=django.db.models.functions.datetime.Now()),
                ),
                ("depth", models.BigIntegerField()),
                ("visible", models.BigIntegerField()),
                ("in_flight", models.BigIntegerField()),
                ("delayed", models.BigIntegerField()),
                ("archive_size", models.BigIntegerField()),
                ("total_messages", models.BigIntegerField()),
            ],
            options={
                "ordering": ["queue", "sampled_at"],
                "indexes": [
                    models.Index(fields=["queue", "sampled_at"], name="pgmq_sample_queue_at"),
                    models.Index(fields=["sampled_at"], name="pgmq_sample_at"),
                ],
            },
        ),
    ]
