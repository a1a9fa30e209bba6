"""limited reads on a short claim; single-id acknowledgements check their own statement's text
only.

Written by ``python -m django_pgmq.sqltools.migrate make``. The SQL it runs is frozen,
never edited, in migrations/sql/0010_limited_reads_on_a_short_claim_single_id.sql
and its _reverse.
"""

from django.db import migrations

from django_pgmq.migrations import _frozen


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0009_limit_claims_walk_a_window_a_chain_step")]

    operations = [
        migrations.RunSQL(
            sql=_frozen.read("0010_limited_reads_on_a_short_claim_single_id.sql"),
            reverse_sql=_frozen.read("0010_limited_reads_on_a_short_claim_single_id_reverse.sql"),
        )
    ]
