"""limit claims: fewer statements, generic plans, slot pages half free.

Written by ``python -m django_pgmq.sqltools.migrate make``. The SQL it runs is frozen in
migrations/sql/ (0050_limit_claims_fewer_statements_generic.sql, and its _reverse) and is
never edited.
"""

from django.db import migrations

from django_pgmq.migrations import _frozen


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0049_limit_slots_free_lazily")]

    operations = [
        migrations.RunSQL(
            sql=_frozen.read("0050_limit_claims_fewer_statements_generic.sql"),
            reverse_sql=_frozen.read("0050_limit_claims_fewer_statements_generic_reverse.sql"),
        )
    ]
