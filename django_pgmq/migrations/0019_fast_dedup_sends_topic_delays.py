"""Fast deduplicated sends on the hot path; topic sends without a delay take delivery_delay.

Written by ``python -m django_pgmq.sqlmigrate make``. The SQL it runs is frozen in
migrations/sql/ (0019_fast_dedup_sends_topic_delays.sql, and its _reverse) and is never edited.
"""

from django.db import migrations

from django_pgmq.migrations import _frozen


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0018_metrics_answers_idle_queues_from_the_catalogue")]

    operations = [
        migrations.RunSQL(
            sql=_frozen.read("0019_fast_dedup_sends_topic_delays.sql"),
            reverse_sql=_frozen.read("0019_fast_dedup_sends_topic_delays_reverse.sql"),
        )
    ]
