"""The task results' labels in the user's language: verbose names only, no SQL (Django's
migration state follows the model; the table is unchanged)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("django_pgmq", "0046_figure_rows_by_name_and_one_channel"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="taskresultrecord",
            options={
                "ordering": ["-enqueued_at"],
                "verbose_name": "task result",
                "verbose_name_plural": "task results",
            },
        ),
        migrations.AlterField(
            model_name="taskresultrecord",
            name="args",
            field=models.JSONField(default=list, verbose_name="arguments"),
        ),
        migrations.AlterField(
            model_name="taskresultrecord",
            name="backend",
            field=models.CharField(max_length=100, verbose_name="backend"),
        ),
        migrations.AlterField(
            model_name="taskresultrecord",
            name="enqueued_at",
            field=models.DateTimeField(verbose_name="enqueued"),
        ),
        migrations.AlterField(
            model_name="taskresultrecord",
            name="errors",
            field=models.JSONField(blank=True, default=list, verbose_name="errors"),
        ),
        migrations.AlterField(
            model_name="taskresultrecord",
            name="finished_at",
            field=models.DateTimeField(blank=True, null=True, verbose_name="finished"),
        ),
        migrations.AlterField(
            model_name="taskresultrecord",
            name="id",
            field=models.UUIDField(primary_key=True, serialize=False, verbose_name="ID"),
        ),
        migrations.AlterField(
            model_name="taskresultrecord",
            name="kwargs",
            field=models.JSONField(default=dict, verbose_name="keyword arguments"),
        ),
        migrations.AlterField(
            model_name="taskresultrecord",
            name="last_attempted_at",
            field=models.DateTimeField(blank=True, null=True, verbose_name="last attempted"),
        ),
        migrations.AlterField(
            model_name="taskresultrecord",
            name="max_attempts",
            field=models.PositiveIntegerField(
                default=1,
                help_text="Attempts (workers) after which a failure is final.",
                verbose_name="max attempts",
            ),
        ),
        migrations.AlterField(
            model_name="taskresultrecord",
            name="msg_id",
            field=models.BigIntegerField(
                blank=True,
                help_text="Its message on the queue.",
                null=True,
                verbose_name="message ID",
            ),
        ),
        migrations.AlterField(
            model_name="taskresultrecord",
            name="priority",
            field=models.SmallIntegerField(default=0, verbose_name="priority"),
        ),
        migrations.AlterField(
            model_name="taskresultrecord",
            name="queue_name",
            field=models.CharField(max_length=47, verbose_name="queue"),
        ),
        migrations.AlterField(
            model_name="taskresultrecord",
            name="return_value",
            field=models.JSONField(blank=True, null=True, verbose_name="return value"),
        ),
        migrations.AlterField(
            model_name="taskresultrecord",
            name="run_after",
            field=models.DateTimeField(blank=True, null=True, verbose_name="run after"),
        ),
        migrations.AlterField(
            model_name="taskresultrecord",
            name="started_at",
            field=models.DateTimeField(blank=True, null=True, verbose_name="started"),
        ),
        migrations.AlterField(
            model_name="taskresultrecord",
            name="status",
            field=models.CharField(
                choices=[
                    ("READY", "Ready"),
                    ("RUNNING", "Running"),
                    ("FAILED", "Failed"),
                    ("SUCCESSFUL", "Successful"),
                ],
                default="READY",
                max_length=10,
                verbose_name="status",
            ),
        ),
        migrations.AlterField(
            model_name="taskresultrecord",
            name="task_path",
            field=models.CharField(max_length=255, verbose_name="task"),
        ),
        migrations.AlterField(
            model_name="taskresultrecord",
            name="worker_ids",
            field=models.JSONField(blank=True, default=list, verbose_name="workers"),
        ),
    ]
