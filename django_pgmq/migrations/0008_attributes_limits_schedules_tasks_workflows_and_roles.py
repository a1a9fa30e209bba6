"""0.2.0: queue attributes, limits, schedules, Django Tasks, workflows and roles.

Written by ``python -m django_pgmq.sqltools.squash`` for a release. It replaces the
development migrations from 0008_task_results
to 0053_workflow_results_inline:
a database with all of them applied is already here, one with some is refused
(schema_guard.refuse_partly_squashed). Its SQL is frozen in migrations/sql/
(0008_attributes_limits_schedules_tasks_workflows_and_roles*.sql) and is never edited.
"""

import django.db.models.functions.datetime
from django.db import migrations, models

from django_pgmq.migrations import _frozen


class Migration(migrations.Migration):
    replaces = [
        ("django_pgmq", "0008_task_results"),
        ("django_pgmq", "0010_admin_operations"),
        ("django_pgmq", "0011_admin_bulk_actions_by_filter"),
        ("django_pgmq", "0012_flat_cost_per_queue"),
        ("django_pgmq", "0013_queue_attributes"),
        ("django_pgmq", "0014_queuesample_oldest_enqueued_at"),
        ("django_pgmq", "0015_overview_figures_for_the_shown_queues"),
        ("django_pgmq", "0016_cold_path_in_the_router"),
        ("django_pgmq", "0017_attributes_for_clients"),
        ("django_pgmq", "0018_metrics_answers_idle_queues_from_the_catalogue"),
        ("django_pgmq", "0019_fast_dedup_sends_topic_delays"),
        ("django_pgmq", "0020_static_sql_core"),
        ("django_pgmq", "0021_issue_22_periphery_and_two_roles"),
        ("django_pgmq", "0022_concurrency_and_rate_limits"),
        ("django_pgmq", "0023_periodic_schedules"),
        ("django_pgmq", "0024_pgmq_create_and_name_checks"),
        ("django_pgmq", "0025_prepared_plans_per_session"),
        ("django_pgmq", "0026_lean_id_statements_and_fresher_marks"),
        ("django_pgmq", "0027_task_statements_planned_once"),
        ("django_pgmq", "0028_one_dead_letter_rule"),
        ("django_pgmq", "0029_queue_attributes_declared_once"),
        ("django_pgmq", "0030_index_builds_give_way_to_queue_ddl"),
        ("django_pgmq", "0031_worker_hide_failed_named_once"),
        ("django_pgmq", "0032_queue_figures_read_by_column_name_oldest"),
        ("django_pgmq", "0033_task_enqueue_through_the_id_router"),
        ("django_pgmq", "0034_browse_messages_is_the_one_name_for"),
        ("django_pgmq", "0035_one_vocabulary_model_fields"),
        ("django_pgmq", "0036_queue_figures_computed_once_read_by"),
        ("django_pgmq", "0037_dashboard_figures_take_pgmq_s_names"),
        ("django_pgmq", "0038_dashboard_figures_take_pgmq_s_names_in"),
        ("django_pgmq", "0039_one_check_for_the_number_kinds_of"),
        ("django_pgmq", "0040_sql_functions_declared_as_volatile_as"),
        ("django_pgmq", "0041_metrics_of_many_queues_sequences_in_one"),
        ("django_pgmq", "0042_kept_statements_carry_the_attribute"),
        ("django_pgmq", "0043_the_per_message_name_check_without_a"),
        ("django_pgmq", "0044_a_client_s_own_statements_of_read_pop"),
        ("django_pgmq", "0045_roles_that_hold_and_locks_that_never"),
        ("django_pgmq", "0046_figure_rows_by_name_and_one_channel"),
        ("django_pgmq", "0047_task_result_labels_translated"),
        ("django_pgmq", "0048_workflows_advanced_by_the"),
        ("django_pgmq", "0049_limit_slots_free_lazily"),
        ("django_pgmq", "0050_one_statement_builder_per_operation_and"),
        ("django_pgmq", "0051_fifo_spark_and_dedup_sends_use_the"),
        ("django_pgmq", "0052_sql_api_fast_paths_limit_slots_by_key"),
        ("django_pgmq", "0053_workflow_results_inline"),
    ]

    dependencies = [("django_pgmq", "0007_queue_ops")]

    operations = [
        migrations.RunSQL(
            sql=_frozen.read(
                "0008_attributes_limits_schedules_tasks_workflows_and_roles_part1.sql"
            ),
            reverse_sql=_frozen.read(
                "0008_attributes_limits_schedules_tasks_workflows_and_roles_part1_reverse.sql"
            ),
        ),
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
        migrations.RunSQL(
            sql=_frozen.read(
                "0008_attributes_limits_schedules_tasks_workflows_and_roles_part2.sql"
            ),
            reverse_sql=_frozen.read(
                "0008_attributes_limits_schedules_tasks_workflows_and_roles_part2_reverse.sql"
            ),
        ),
        migrations.AddField(
            model_name="queuesample",
            name="oldest_enqueued_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunSQL(
            sql=_frozen.read(
                "0008_attributes_limits_schedules_tasks_workflows_and_roles_part3.sql"
            ),
            reverse_sql=_frozen.read(
                "0008_attributes_limits_schedules_tasks_workflows_and_roles_part3_reverse.sql"
            ),
        ),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RenameField(
                    model_name="queueconfig",
                    old_name="max_reads",
                    new_name="max_receive_count",
                ),
                migrations.AlterField(
                    model_name="queueconfig",
                    name="max_receive_count",
                    field=models.PositiveIntegerField(
                        db_column="max_reads",
                        default=5,
                        help_text="Reads after which a failing message is dead-lettered; 0: never.",
                    ),
                ),
                migrations.RenameField(
                    model_name="queuesample",
                    old_name="depth",
                    new_name="queue_length",
                ),
                migrations.AlterField(
                    model_name="queuesample",
                    name="queue_length",
                    field=models.BigIntegerField(db_column="depth"),
                ),
            ],
        ),
        migrations.RunSQL(
            sql=_frozen.read(
                "0008_attributes_limits_schedules_tasks_workflows_and_roles_part4.sql"
            ),
            reverse_sql=_frozen.read(
                "0008_attributes_limits_schedules_tasks_workflows_and_roles_part4_reverse.sql"
            ),
        ),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RenameField(
                    model_name="queuesample",
                    old_name="visible",
                    new_name="queue_visible_length",
                ),
                migrations.AlterField(
                    model_name="queuesample",
                    name="queue_visible_length",
                    field=models.BigIntegerField(db_column="visible"),
                ),
            ],
        ),
        migrations.RunSQL(
            sql=_frozen.read(
                "0008_attributes_limits_schedules_tasks_workflows_and_roles_part5.sql"
            ),
            reverse_sql=_frozen.read(
                "0008_attributes_limits_schedules_tasks_workflows_and_roles_part5_reverse.sql"
            ),
        ),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RenameField(
                    model_name="queuesample",
                    old_name="in_flight",
                    new_name="in_flight_length",
                ),
                migrations.AlterField(
                    model_name="queuesample",
                    name="in_flight_length",
                    field=models.BigIntegerField(db_column="in_flight"),
                ),
                migrations.RenameField(
                    model_name="queuesample",
                    old_name="delayed",
                    new_name="delayed_length",
                ),
                migrations.AlterField(
                    model_name="queuesample",
                    name="delayed_length",
                    field=models.BigIntegerField(db_column="delayed"),
                ),
            ],
        ),
        migrations.RunSQL(
            sql=_frozen.read(
                "0008_attributes_limits_schedules_tasks_workflows_and_roles_part6.sql"
            ),
            reverse_sql=_frozen.read(
                "0008_attributes_limits_schedules_tasks_workflows_and_roles_part6_reverse.sql"
            ),
        ),
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
        migrations.RunSQL(
            sql=_frozen.read(
                "0008_attributes_limits_schedules_tasks_workflows_and_roles_part7.sql"
            ),
            reverse_sql=_frozen.read(
                "0008_attributes_limits_schedules_tasks_workflows_and_roles_part7_reverse.sql"
            ),
        ),
    ]
