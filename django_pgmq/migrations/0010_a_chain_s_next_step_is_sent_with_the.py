"""a chain's next step is sent with the send's one builder's text, its tables named by
format_table_name.

Written by ``python -m django_pgmq.sqltools.migrate make``. The SQL it runs is frozen,
never edited, in migrations/sql/0010_a_chain_s_next_step_is_sent_with_the.sql
and its _reverse.
"""

from django.db import migrations

from django_pgmq.migrations import _frozen


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0009_limit_claims_walk_a_window_a_chain_step")]

    operations = [
        migrations.RunSQL(
            sql=_frozen.read("0010_a_chain_s_next_step_is_sent_with_the.sql"),
            reverse_sql=_frozen.read("0010_a_chain_s_next_step_is_sent_with_the_reverse.sql"),
        )
    ]
