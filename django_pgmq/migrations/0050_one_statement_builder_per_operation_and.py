"""One statement builder per operation and fewer limit statements.

Written by ``python -m django_pgmq.sqltools.migrate make``. The SQL it runs is frozen in
migrations/sql/ (0050_one_statement_builder_per_operation_and.sql, and its _reverse) and is
never edited.
"""

from django.db import migrations

from django_pgmq.migrations import _frozen


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0049_limit_slots_free_lazily")]

    operations = [
        migrations.RunSQL(
            sql=_frozen.read("0050_one_statement_builder_per_operation_and.sql"),
            reverse_sql=_frozen.read("0050_one_statement_builder_per_operation_and_reverse.sql"),
        )
    ]
