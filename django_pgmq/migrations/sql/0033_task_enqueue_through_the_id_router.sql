-- 0033_task_enqueue_through_the_id_router: task_enqueue_through_the_id_router
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
    stmt text;
BEGIN
    IF p_op = 'r' OR p_op = 'p' THEN
        low := pgmq._low_water_mark_for(qtable);
    END IF;
    SELECT a.attributes INTO attrs
    FROM pgmq.queue_attributes a WHERE lower(a.queue_name) = lower($1);
    IF attrs IS NOT NULL THEN
        RETURN QUERY SELECT * FROM pgmq._queue_ops_with_attributes(
            queue_name, attrs, p_op, p_qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond, low);
        RETURN;
    END IF;
    IF p_op = 'r' OR p_op = 'p' THEN
        stmt := pgmq._queue_ops_prepared(qtable, p_op);
        IF stmt IS NOT NULL THEN
            RETURN QUERY SELECT * FROM pgmq._queue_ops_run_prepared(stmt, p_qty, p_secs, p_ids, p_cond, low);
            RETURN;
        END IF;
    END IF;
    RETURN QUERY EXECUTE pgmq._queue_ops_sql_for(qtable, p_op, '$9')
        USING p_op, p_qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond, low;
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_route(text,"char",integer,integer,timestamp with time zone,bigint[],jsonb[],jsonb[],jsonb) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_route(text,"char",integer,integer,timestamp with time zone,bigint[],jsonb[],jsonb[],jsonb) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._task_enqueue(queue_name text, msg jsonb, headers jsonb, delay timestamp with time zone, result_id uuid, backend text, task_path text, priority integer, args jsonb, kwargs jsonb, run_after timestamp with time zone, enqueued_at timestamp with time zone, max_attempts integer)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    sent bigint;
BEGIN
    SELECT r.id INTO sent FROM pgmq._queue_ops_route_ids(
        queue_name, 's'::"char", delay, NULL::bigint[], ARRAY[msg], ARRAY[headers]) AS r(id);
    INSERT INTO django_pgmq_taskresultrecord AS t (
        id, backend, queue_name, task_path, priority, status, args, kwargs, run_after,
        enqueued_at, errors, worker_ids, max_attempts, msg_id)
    VALUES ($5, $6, $1, $7, $8, 'READY', $9, $10, $11, $12, '[]', '[]', $13, sent);
    RETURN sent;
END
$function$
;
COMMENT ON FUNCTION pgmq._task_enqueue(text,jsonb,jsonb,timestamp with time zone,uuid,text,text,integer,jsonb,jsonb,timestamp with time zone,timestamp with time zone,integer) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._task_enqueue(text,jsonb,jsonb,timestamp with time zone,uuid,text,text,integer,jsonb,jsonb,timestamp with time zone,timestamp with time zone,integer) FROM PUBLIC;

