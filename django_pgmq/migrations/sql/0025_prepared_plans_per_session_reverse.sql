-- 0025_prepared_plans_per_session: prepared plans per session
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._queue_ops_run_prepared(text,integer,integer,bigint[],jsonb,bigint);
CREATE OR REPLACE FUNCTION pgmq._queue_ops_route(queue_name text, p_op "char", p_qty integer, p_secs integer, p_vt timestamp with time zone, p_ids bigint[], p_msgs jsonb[], p_headers jsonb[], p_cond jsonb)
 RETURNS SETOF pgmq.message_record
 LANGUAGE plpgsql
AS $function$
DECLARE
    -- checks the name first, as pgmq's per-message functions do (sql/05_names.sql)
    qtable text := pgmq._message_table_name(queue_name, 'q');
    attrs jsonb;
    low bigint := 0;
BEGIN
    IF p_op = 'r' OR p_op = 'p' THEN
        low := pgmq._low_water_mark(queue_name);
    END IF;
    SELECT a.attributes INTO attrs
    FROM pgmq.queue_attributes a WHERE lower(a.queue_name) = lower($1);
    IF attrs IS NULL THEN
        RETURN QUERY EXECUTE pgmq._queue_ops_sql_for(
                qtable, CASE WHEN p_op = 's' AND cardinality(p_msgs) = 1 THEN '1' ELSE p_op END, '$9')
            USING p_op, p_qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond, low;
        RETURN;
    END IF;
    RETURN QUERY SELECT * FROM pgmq._queue_ops_with_attributes(
        queue_name, attrs, p_op, p_qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond, low);
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_route(text,"char",integer,integer,timestamp with time zone,bigint[],jsonb[],jsonb[],jsonb) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_route(text,"char",integer,integer,timestamp with time zone,bigint[],jsonb[],jsonb[],jsonb) FROM PUBLIC;

