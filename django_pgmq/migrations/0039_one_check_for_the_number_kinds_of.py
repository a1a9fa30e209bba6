"""one check for the number kinds of attributes.

Written by ``python -m django_pgmq.sqltools.migrate make``. The SQL it runs is frozen in
migrations/sql/ (0039_one_check_for_the_number_kinds_of.sql, and its _reverse) and is never edited.
"""

from django.db import migrations

from django_pgmq.migrations import _frozen


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0038_dashboard_figures_take_pgmq_s_names_in")]

    operations = [
        migrations.RunSQL(
            sql=_frozen.read("0039_one_check_for_the_number_kinds_of.sql"),
            reverse_sql=_frozen.read("0039_one_check_for_the_number_kinds_of_reverse.sql"),
        )
    ]
