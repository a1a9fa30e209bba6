"""Install the Spark data source's tables and functions (django_pgmq/contrib/spark)."""

from django.db import migrations

from django_pgmq.migrations import _frozen

DROP = """
DO $drop$
DECLARE
    stage text;
BEGIN
    FOR stage IN SELECT stage_table FROM pgmq.spark_stage LOOP
        EXECUTE format('DROP TABLE IF EXISTS pgmq.%I', stage);
    END LOOP;
END
$drop$;
DROP FUNCTION IF EXISTS pgmq.spark_stage_drop_stale(interval);
DROP FUNCTION IF EXISTS pgmq.spark_stage_abort(text);
DROP FUNCTION IF EXISTS pgmq.spark_stage_commit(text, bigint[], bigint);
DROP FUNCTION IF EXISTS pgmq.spark_stage_create(text, text);
DROP FUNCTION IF EXISTS pgmq.spark_ack(text, text, bigint, text);
DROP FUNCTION IF EXISTS pgmq.spark_hold(text, text, bigint, bigint, integer);
DROP FUNCTION IF EXISTS pgmq.spark_claim(text, text, integer, integer, bigint, bigint);
DROP FUNCTION IF EXISTS pgmq._spark_consumer_lock(text, text);
DROP TABLE IF EXISTS pgmq.spark_stats, pgmq.spark_export_run, pgmq.spark_sink_batch,
    pgmq.spark_stage, pgmq.spark_stream_batch;
"""


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "0004_dashboard")]

    operations = [migrations.RunSQL(sql=_frozen.read("0005_spark.sql"), reverse_sql=DROP)]
