"""one_vocabulary_model_fields.

Issue 28 (one vocabulary): ``QueueConfig.max_reads`` is now ``max_receive_count`` (the
queue attribute's and the worker's name) and ``QueueSample.depth`` is ``queue_length``
(pgmq's name). The columns keep their names (``db_column``), so this changes Django's
state only: ``sqlmigrate`` shows no SQL, and the admin's SQL reading the columns is as it was.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0034_browse_messages_is_the_one_name_for")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RenameField("queueconfig", "max_reads", "max_receive_count"),
                migrations.AlterField(
                    model_name="queueconfig",
                    name="max_receive_count",
                    field=models.PositiveIntegerField(
                        db_column="max_reads",
                        default=5,
                        help_text="Reads after which a failing message is dead-lettered; 0: never.",
                    ),
                ),
                migrations.RenameField("queuesample", "depth", "queue_length"),
                migrations.AlterField(
                    model_name="queuesample",
                    name="queue_length",
                    field=models.BigIntegerField(db_column="depth"),
                ),
            ],
            database_operations=[],
        )
    ]
