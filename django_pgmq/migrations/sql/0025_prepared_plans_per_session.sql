-- 0025_prepared_plans_per_session: prepared plans per session
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
CREATE OR REPLACE FUNCTION pgmq._queue_ops_route(queue_name text, p_op "char", p_qty integer, p_secs integer, p_vt timestamp with time zone, p_ids bigint[], p_msgs jsonb[], p_headers jsonb[], p_cond jsonb)
 RETURNS SETOF pgmq.message_record
 LANGUAGE plpgsql
AS $function$
DECLARE
    -- checks the name first, as pgmq's per-message functions do (sql/05_names.sql)
    qtable text := pgmq._message_table_name(queue_name, 'q');
    attrs jsonb;
    low bigint := 0;
    op "char" := CASE WHEN p_op = 's' AND cardinality(p_msgs) = 1 THEN '1' ELSE p_op END;
    stmt text;
    key text;
    state text;
BEGIN
    IF p_op = 'r' OR p_op = 'p' THEN
        low := pgmq._low_water_mark(queue_name);
    END IF;
    SELECT a.attributes INTO attrs
    FROM pgmq.queue_attributes a WHERE lower(a.queue_name) = lower($1);
    IF attrs IS NOT NULL THEN
        RETURN QUERY SELECT * FROM pgmq._queue_ops_with_attributes(
            queue_name, attrs, p_op, p_qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond, low);
        RETURN;
    END IF;
    IF op IN ('r', 'p', 'a', 'd') THEN
        stmt := 'pgmq_' || op::text || '_' || qtable;
        -- '-' may not appear in a setting's name (as for the low-water mark)
        key := 'pgmq.prep_' || op::text || '_' || replace(qtable, '-', '$');
        state := coalesce(current_setting(key, true), '');
        IF state = 'p' OR state = '3' THEN
            IF NOT EXISTS (SELECT FROM pg_prepared_statements s WHERE s.name = stmt) THEN
                IF octet_length(stmt) > 63
                   OR (SELECT count(*) FROM pg_prepared_statements s WHERE s.name LIKE 'pgmq\_%') >= 32 THEN
                    state := 'c';
                ELSE
                    EXECUTE format(
                        'PREPARE %I ("char", integer, integer, timestamptz, bigint[], jsonb[], jsonb[], jsonb, bigint) AS %s',
                        stmt, pgmq._queue_ops_sql_for(qtable, op, '$9'));
                END IF;
            END IF;
            IF state <> 'p' THEN
                PERFORM set_config(key, CASE state WHEN 'c' THEN 'c' ELSE 'p' END, false);
            END IF;
            IF state <> 'c' THEN
                RETURN QUERY SELECT * FROM pgmq._queue_ops_run_prepared(stmt, p_qty, p_secs, p_ids, p_cond, low);
                RETURN;
            END IF;
        ELSIF state IN ('', '0', '1', '2') THEN
            PERFORM set_config(key, (coalesce(nullif(state, ''), '0')::integer + 1)::text, false);
        ELSIF state <> 'c' THEN
            PERFORM set_config(key, '1', false);
        END IF;
    END IF;
    RETURN QUERY EXECUTE pgmq._queue_ops_sql_for(qtable, op, '$9')
        USING p_op, p_qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond, low;
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_route(text,"char",integer,integer,timestamp with time zone,bigint[],jsonb[],jsonb[],jsonb) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_route(text,"char",integer,integer,timestamp with time zone,bigint[],jsonb[],jsonb[],jsonb) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_run_prepared(stmt text, p_qty integer, p_secs integer, p_ids bigint[], p_cond jsonb, low bigint)
 RETURNS SETOF pgmq.message_record
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
 SET enable_bitmapscan TO 'off'
AS $function$
BEGIN
    RETURN QUERY EXECUTE format(
        'EXECUTE %I(NULL, %L, %L, NULL, %L, NULL, NULL, %L, %L)', stmt, p_qty, p_secs, p_ids, p_cond, low);
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_run_prepared(text,integer,integer,bigint[],jsonb,bigint) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_run_prepared(text,integer,integer,bigint[],jsonb,bigint) FROM PUBLIC;

