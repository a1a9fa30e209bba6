"""Install the Celery transport's tables and functions (``sql/80_celery.sql``)."""

from django.db import migrations

from django_pgmq.migrations import _frozen

REVERSE_SQL = """
DROP TABLE IF EXISTS pgmq.celery_consumer, pgmq.celery_binding, pgmq.celery_queue;
DROP SEQUENCE IF EXISTS pgmq.celery_session_seq;
DROP FUNCTION IF EXISTS
    pgmq._celery_lock_space(),
    pgmq.celery_open_session(),
    pgmq._celery_session_alive(integer),
    pgmq._celery_topic_regex(text),
    pgmq.celery_declare_queue(text, text, boolean, boolean, bigint, bigint),
    pgmq.celery_send(text, jsonb, jsonb, timestamptz, boolean),
    pgmq.celery_publish(text, text, jsonb, jsonb, timestamptz, boolean),
    pgmq.celery_bind(text, text, text, text),
    pgmq.celery_unbind(text, text, text),
    pgmq.celery_delete_exchange(text),
    pgmq._celery_fast(boolean),
    pgmq.celery_read(text, integer, integer, boolean),
    pgmq.celery_pop(text, integer, boolean),
    pgmq.celery_ack(text, bigint[], boolean, boolean),
    pgmq.celery_extend(text, bigint[], integer, boolean),
    pgmq.celery_release(text, bigint[], boolean, boolean),
    pgmq.celery_next_visible(text[]),
    pgmq.celery_consume(text, integer),
    pgmq._celery_drop_if_unused(text),
    pgmq.celery_cancel(text, integer),
    pgmq.celery_cleanup();
"""


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0001_initial")]

    operations = [
        migrations.RunSQL(sql=_frozen.read("0003_celery.sql"), reverse_sql=REVERSE_SQL),
    ]
