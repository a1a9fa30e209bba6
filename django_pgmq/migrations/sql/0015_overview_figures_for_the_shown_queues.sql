-- 0015_overview_figures_for_the_shown_queues: overview figures for the shown queues only
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
CREATE OR REPLACE FUNCTION pgmq._dashboard_all_stats(exact_limit bigint DEFAULT 50000, max_reads jsonb DEFAULT '{}'::jsonb)
 RETURNS SETOF pgmq._dashboard_stats
 LANGUAGE sql
AS $function$
    SELECT * FROM pgmq._dashboard_stats_of(
        ARRAY(SELECT m.queue_name::text FROM pgmq.meta m ORDER BY m.queue_name), exact_limit, max_reads
    )
$function$
;
COMMENT ON FUNCTION pgmq._dashboard_all_stats(bigint,jsonb) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._dashboard_idle_queues(names text[])
 RETURNS TABLE(queue_name text, idle boolean)
 LANGUAGE sql
 STABLE
AS $function$
    SELECT m.queue_name::text,
           coalesce(lc.relkind = 'r' AND ac.relkind = 'r'
                    AND pg_relation_size(lc.oid) = 0 AND pg_relation_size(ac.oid) = 0, false)
    FROM unnest(names) WITH ORDINALITY AS u(n, o)
    JOIN pgmq.meta m ON m.queue_name = u.n
    LEFT JOIN pg_class lc
        ON lc.relnamespace = 'pgmq'::regnamespace AND lc.relname = pgmq.format_table_name(m.queue_name, 'q')
    LEFT JOIN pg_class ac
        ON ac.relnamespace = 'pgmq'::regnamespace AND ac.relname = pgmq.format_table_name(m.queue_name, 'a')
    ORDER BY u.o
$function$
;
COMMENT ON FUNCTION pgmq._dashboard_idle_queues(text[]) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._dashboard_stats_of(names text[], exact_limit bigint DEFAULT 50000, max_reads jsonb DEFAULT '{}'::jsonb)
 RETURNS SETOF pgmq._dashboard_stats
 LANGUAGE plpgsql
AS $function$
DECLARE
    q record;
    limits jsonb := coalesce(max_reads, '{}');
    r pgmq._dashboard_stats;
BEGIN
    IF exact_limit IS NULL OR exact_limit < 1 THEN
        RAISE EXCEPTION 'exact_limit must be a positive number of rows, got %', exact_limit
            USING ERRCODE = 'PQ004';
    END IF;
    FOR q IN SELECT i.queue_name, i.idle FROM pgmq._dashboard_idle_queues(names) i LOOP
        BEGIN
            IF q.idle THEN
                r := ROW(
                    q.queue_name, 0, 0, 0, 0, NULL, NULL, NULL, 0, 0, 0,
                    CASE WHEN limits ? q.queue_name THEN 0 END,
                    coalesce(pg_sequence_last_value(pg_get_serial_sequence(
                        format('pgmq.%I', pgmq.format_table_name(q.queue_name, 'q')), 'msg_id'
                    )::regclass), 0),
                    '{}'::text[]
                );
                RETURN NEXT r;
            ELSE
                RETURN NEXT pgmq._dashboard_queue_stats(
                    q.queue_name, exact_limit, (limits ->> q.queue_name)::integer
                );
            END IF;
        EXCEPTION
            WHEN undefined_table OR SQLSTATE 'PQ002' THEN
                CONTINUE;
        END;
    END LOOP;
END
$function$
;
COMMENT ON FUNCTION pgmq._dashboard_stats_of(text[],bigint,jsonb) IS NULL;

