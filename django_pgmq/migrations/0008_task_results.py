"""Django Tasks: the results table, and the priority-ordered read of task queues
(frozen as released: sql/0008_task_results.sql)."""

from django.db import migrations, models

from django_pgmq.migrations import _frozen

# pgmq._task_priority stays while a queue's index uses it: dropping it (CASCADE) took the
# task queues' priority indexes with it, and the forward cannot know which queues had
# one, so a round trip left task queues without theirs. Kept, the function is what the
# forward makes again (CREATE OR REPLACE, the same body), and the indexes hold.
REVERSE_SQL = """
DROP FUNCTION IF EXISTS pgmq._read_by_priority(text, integer, integer);
DROP FUNCTION IF EXISTS pgmq._enable_task_queue(text);
DO $keep$
BEGIN
    IF pg_catalog.to_regprocedure('pgmq._task_priority(jsonb)') IS NOT NULL
       AND NOT EXISTS (
           SELECT 1 FROM pg_catalog.pg_depend d
           WHERE d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass
             AND d.refclassid = 'pg_catalog.pg_proc'::pg_catalog.regclass
             AND d.refobjid = 'pgmq._task_priority(jsonb)'::pg_catalog.regprocedure)
    THEN
        DROP FUNCTION pgmq._task_priority(jsonb);
    END IF;
END
$keep$;
"""


class Migration(migrations.Migration):
    dependencies = [
        ("django_pgmq", "0007_queue_ops"),
    ]

    operations = [
        migrations.RunSQL(sql=_frozen.read("0008_task_results.sql"), reverse_sql=REVERSE_SQL),
        migrations.CreateModel(
            name="TaskResultRecord",
            fields=[
                ("id", models.UUIDField(primary_key=True, serialize=False)),
                ("backend", models.CharField(max_length=100)),
                ("queue_name", models.CharField(max_length=47)),
                ("task_path", models.CharField(max_length=255)),
                ("priority", models.SmallIntegerField(default=0)),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("READY", "Ready"),
                            ("RUNNING", "Running"),
                            ("FAILED", "Failed"),
                            ("SUCCESSFUL", "Successful"),
                        ],
                        default="READY",
                        max_length=10,
                    ),
                ),
                ("args", models.JSONField(default=list)),
                ("kwargs", models.JSONField(default=dict)),
                ("run_after", models.DateTimeField(blank=True, null=True)),
                ("enqueued_at", models.DateTimeField()),
                ("started_at", models.DateTimeField(blank=True, null=True)),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
                ("last_attempted_at", models.DateTimeField(blank=True, null=True)),
                ("return_value", models.JSONField(blank=True, null=True)),
                ("errors", models.JSONField(blank=True, default=list)),
                ("worker_ids", models.JSONField(blank=True, default=list)),
                (
                    "max_attempts",
                    models.PositiveIntegerField(
                        default=1, help_text="Attempts (worker_ids) after which a failure is final."
                    ),
                ),
                (
                    "msg_id",
                    models.BigIntegerField(
                        blank=True, help_text="Its message on the queue.", null=True
                    ),
                ),
            ],
            options={
                "verbose_name": "task result",
                "ordering": ["-enqueued_at"],
                "indexes": [
                    models.Index(
                        fields=["status", "finished_at"], name="pgmq_task_status_finished"
                    ),
                    models.Index(fields=["task_path"], name="pgmq_task_path"),
                    models.Index(fields=["queue_name", "status"], name="pgmq_task_queue_status"),
                    models.Index(fields=["enqueued_at"], name="pgmq_task_enqueued"),
                ],
            },
        ),
    ]
