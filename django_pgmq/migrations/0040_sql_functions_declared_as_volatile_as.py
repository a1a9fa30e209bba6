"""SQL functions declared as volatile as their bodies, so PostgreSQL inlines them.

The routers' statement builders (IMMUTABLE, calling the STABLE format()) are STABLE;
send_batch(queue, msgs) calls the router itself. Written by ``python -m
django_pgmq.sqltools.migrate make``; the SQL it runs is frozen in migrations/sql/
(0040_sql_functions_declared_as_volatile_as.sql, and its _reverse), never edited.
"""

from django.db import migrations

from django_pgmq.migrations import _frozen


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0039_one_check_for_the_number_kinds_of")]

    operations = [
        migrations.RunSQL(
            sql=_frozen.read("0040_sql_functions_declared_as_volatile_as.sql"),
            reverse_sql=_frozen.read("0040_sql_functions_declared_as_volatile_as_reverse.sql"),
        )
    ]
