"""a client's own statements of read, pop, archive, delete and send (the manager with
prepared statements on).

Written by ``python -m django_pgmq.sqltools.migrate make``. The SQL it runs is frozen in
migrations/sql/ (0044_a_client_s_own_statements_of_read_pop.sql, and its _reverse) and is never
edited.
"""

from django.db import migrations

from django_pgmq.migrations import _frozen


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0043_the_per_message_name_check_without_a")]

    operations = [
        migrations.RunSQL(
            sql=_frozen.read("0044_a_client_s_own_statements_of_read_pop.sql"),
            reverse_sql=_frozen.read("0044_a_client_s_own_statements_of_read_pop_reverse.sql"),
        )
    ]
