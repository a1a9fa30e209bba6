-- 0008_attributes_limits_schedules_tasks_workflows_and_roles: attributes limits schedules tasks workflows and roles
-- Frozen when written; never edit a released migration.
-- 0038_dashboard_figures_take_pgmq_s_names_in
-- 0038_dashboard_figures_take_pgmq_s_names_in: dashboard figures take pgmq's names in_flight_length, delayed_length, newest_msg_age_sec, poison_length
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
-- By hand: the type's columns renamed in place (same order and types; no data
-- is stored in this type, functions returning it read it by name).
ALTER TYPE pgmq._dashboard_stats RENAME ATTRIBUTE in_flight TO in_flight_length;
ALTER TYPE pgmq._dashboard_stats RENAME ATTRIBUTE delayed TO delayed_length;
ALTER TYPE pgmq._dashboard_stats RENAME ATTRIBUTE newest_age_sec TO newest_msg_age_sec;
ALTER TYPE pgmq._dashboard_stats RENAME ATTRIBUTE poison TO poison_length;
CREATE OR REPLACE FUNCTION pgmq._dashboard_stats_of(names text[], exact_limit bigint DEFAULT 50000, max_receive_count jsonb DEFAULT '{}'::jsonb)
 RETURNS SETOF pgmq._dashboard_stats
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF exact_limit IS NULL OR exact_limit < 1 THEN
        RAISE EXCEPTION 'exact_limit must be a positive number of rows, got %', exact_limit
            USING ERRCODE = 'PQ004';
    END IF;
    RETURN QUERY
    SELECT f.queue_name AS queue_name,
           f.queue_length AS queue_length,
           f.queue_visible_length AS queue_visible_length,
           f.in_flight_length AS in_flight_length,
           f.delayed_length AS delayed_length,
           f.oldest_msg_age_sec AS oldest_msg_age_sec,
           f.newest_msg_age_sec AS newest_msg_age_sec,
           f.oldest_visible_age_sec AS oldest_visible_age_sec,
           a.archive_size AS archive_size,
           a.archived_hour AS archived_hour,
           a.archived_day AS archived_day,
           f.poison_length AS poison_length,
           f.total_messages AS total_messages,
           f.estimated || a.estimated AS estimated
    FROM unnest(names) WITH ORDINALITY AS u(n, o)
    -- The real time, not the transaction's start (see the top of 30_metrics.sql).
    JOIN pgmq._queue_figures(names, exact_limit, max_receive_count, clock_timestamp()) f
        ON f.queue_name = u.n
    CROSS JOIN LATERAL pgmq._dashboard_archive_figures(f.queue_name, exact_limit, f.scrape_time) a
    ORDER BY u.o;
END
$function$
;
COMMENT ON FUNCTION pgmq._dashboard_stats_of(text[],bigint,jsonb) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._dashboard_stats_of(text[],bigint,jsonb) FROM PUBLIC;
