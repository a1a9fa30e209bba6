-- 0015_overview_figures_for_the_shown_queues: overview figures for the shown queues only
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._dashboard_idle_queues(text[]);
DROP FUNCTION IF EXISTS pgmq._dashboard_stats_of(text[],bigint,jsonb);
CREATE OR REPLACE FUNCTION pgmq._dashboard_all_stats(exact_limit bigint DEFAULT 50000, max_reads jsonb DEFAULT '{}'::jsonb)
 RETURNS SETOF pgmq._dashboard_stats
 LANGUAGE plpgsql
AS $function$
DECLARE
    name text;
BEGIN
    FOR name IN SELECT m.queue_name FROM pgmq.meta m ORDER BY m.queue_name LOOP
        BEGIN
            RETURN NEXT pgmq._dashboard_queue_stats(
                name, exact_limit, (coalesce(max_reads, '{}') ->> name)::integer
            );
        EXCEPTION
            WHEN undefined_table OR SQLSTATE 'PQ002' THEN
                CONTINUE;
        END;
    END LOOP;
END
$function$
;
COMMENT ON FUNCTION pgmq._dashboard_all_stats(bigint,jsonb) IS NULL;

