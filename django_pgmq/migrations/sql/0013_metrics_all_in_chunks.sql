-- 0013_metrics_all_in_chunks: metrics_all counts 200 queues per statement
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
CREATE OR REPLACE FUNCTION pgmq._metrics_sql(stored text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT format(
        $q$
        SELECT
            %1$L::text,
            count(*),
            extract(epoch FROM now() - max(enqueued_at))::integer,
            extract(epoch FROM now() - min(enqueued_at))::integer,
            coalesce(pg_sequence_last_value(pg_get_serial_sequence(%2$L, 'msg_id')::regclass), 0),
            now(),
            count(*) FILTER (WHERE vt <= now()),
            pgmq._default_partition_length(%1$L)
        FROM pgmq.%3$I
        $q$,
        stored,
        format('pgmq.%I', pgmq.format_table_name(stored, 'q')),
        pgmq.format_table_name(stored, 'q'));
$function$
;
COMMENT ON FUNCTION pgmq._metrics_sql(text) IS NULL;

CREATE OR REPLACE FUNCTION pgmq.metrics(queue_name text)
 RETURNS pgmq.metrics_result
 LANGUAGE plpgsql
AS $function$
DECLARE
    result pgmq.metrics_result;
BEGIN
    -- _default_partition_length is NULL unless the queue is partitioned (45_partitions.sql).
    EXECUTE pgmq._metrics_sql(pgmq._require_queue(queue_name)) INTO result;
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
    names text[] := ARRAY(SELECT m.queue_name FROM pgmq.meta m ORDER BY m.queue_name);
    chunk constant integer := 200;
    first integer := 1;
BEGIN
    WHILE first <= coalesce(cardinality(names), 0) LOOP
        RETURN QUERY EXECUTE
            'SELECT * FROM (' || (
                SELECT string_agg(pgmq._metrics_sql(n), ' UNION ALL ' ORDER BY o)
                FROM unnest(names[first:first + chunk - 1]) WITH ORDINALITY AS u(n, o)
            ) || ') AS m ORDER BY 1';
        first := first + chunk;
    END LOOP;
END
$function$
;
COMMENT ON FUNCTION pgmq.metrics_all() IS NULL;

