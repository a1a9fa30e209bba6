-- 0013_metrics_all_in_chunks: metrics_all counts 200 queues per statement
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._metrics_sql(text);
CREATE OR REPLACE FUNCTION pgmq.metrics(queue_name text)
 RETURNS pgmq.metrics_result
 LANGUAGE plpgsql
AS $function$
DECLARE
    stored text := pgmq._require_queue(queue_name);
    qtable text := pgmq.format_table_name(queue_name, 'q');
    result pgmq.metrics_result;
BEGIN
    EXECUTE format(
        $q$
        SELECT
            $1::text,
            count(*),
            extract(epoch FROM now() - max(enqueued_at))::integer,
            extract(epoch FROM now() - min(enqueued_at))::integer,
            coalesce(pg_sequence_last_value(pg_get_serial_sequence($2, 'msg_id')::regclass), 0),
            now(),
            count(*) FILTER (WHERE vt <= now()),
            $3
        FROM pgmq.%I
        $q$,
        qtable
    ) INTO result USING stored, format('pgmq.%I', qtable),
        pgmq._default_partition_length(stored);  -- NULL unless partitioned (45_partitions.sql)
    RETURN result;
END
$function$
;
COMMENT ON FUNCTION pgmq.metrics(text) IS NULL;

CREATE OR REPLACE FUNCTION pgmq.metrics_all()
 RETURNS SETOF pgmq.metrics_result
 LANGUAGE plpgsql
AS $function$
DECLARE
    name text;
BEGIN
    FOR name IN SELECT queue_name FROM pgmq.meta ORDER BY queue_name LOOP
        RETURN NEXT pgmq.metrics(name);
    END LOOP;
END
$function$
;
COMMENT ON FUNCTION pgmq.metrics_all() IS NULL;

