-- Metrics: lengths, ages and the all-time message count of a queue.

-- The query of one queue's metrics row (stored: its name as in pgmq.meta), with the
-- name and tables as literals, so metrics_all can run many at once.
CREATE OR REPLACE FUNCTION pgmq._metrics_sql(stored text)
RETURNS text
LANGUAGE sql STABLE
AS $fn$
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
$fn$;

CREATE OR REPLACE FUNCTION pgmq.metrics(queue_name text)
RETURNS pgmq.metrics_result
LANGUAGE plpgsql
AS $fn$
DECLARE
    result pgmq.metrics_result;
BEGIN
    -- _default_partition_length is NULL unless the queue is partitioned (45_partitions.sql).
    EXECUTE pgmq._metrics_sql(pgmq._require_queue(queue_name)) INTO result;
    RETURN result;
END
$fn$;

-- Every queue's metrics, ordered by name. Queues are counted 200 to a statement (a
-- UNION ALL of their queries): one parse, plan and round of executor start-up per 200
-- queues instead of per queue, which keeps 10,000 queues under a second.
CREATE OR REPLACE FUNCTION pgmq.metrics_all()
RETURNS SETOF pgmq.metrics_result
LANGUAGE plpgsql
AS $fn$
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
$fn$;
