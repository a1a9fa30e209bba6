-- 0045_tasks_durable_by_default: tasks durable by default
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
CREATE OR REPLACE FUNCTION pgmq._read_by_priority(queue_name text, vt integer, qty integer)
 RETURNS SETOF pgmq.message_record
 LANGUAGE plpgsql
AS $function$
DECLARE
    stored text := pgmq._require_queue(queue_name);
    attrs jsonb := coalesce(pgmq._queue_attributes(stored), '{}'::jsonb);
BEGIN
    IF vt IS NULL OR vt < 0 OR qty IS NULL OR qty < 1 THEN
        RAISE EXCEPTION 'vt must be 0 or more and qty 1 or more, got vt % and qty %',
            coalesce(vt::text, 'NULL'), coalesce(qty::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    RETURN QUERY SELECT * FROM pgmq._queue_ops_with_attributes(
        stored, attrs || '{"priorities": true}'::jsonb, 'r'::"char", qty, vt, NULL::timestamptz,
        NULL::bigint[], NULL::jsonb[], NULL::jsonb[], '{}'::jsonb, pgmq._low_water_mark(stored));
END
$function$
;
COMMENT ON FUNCTION pgmq._read_by_priority(text,integer,integer) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._read_by_priority(text,integer,integer) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._task_finish_and_start(task_queue text, done_id uuid, done_msg_id bigint, done_status text, done_finished_at timestamp with time zone, done_return_value jsonb, done_errors jsonb, next_id uuid, started timestamp with time zone, worker text)
 RETURNS TABLE(id uuid, backend text, queue_name text, task_path text, priority integer, status text, args jsonb, kwargs jsonb, run_after timestamp with time zone, enqueued_at timestamp with time zone, started_at timestamp with time zone, finished_at timestamp with time zone, last_attempted_at timestamp with time zone, return_value jsonb, errors jsonb, worker_ids jsonb, max_attempts integer, msg_id bigint)
 LANGUAGE plpgsql
AS $function$
#variable_conflict use_variable
BEGIN
    IF done_id IS NOT NULL THEN
        UPDATE django_pgmq_taskresultrecord AS t
        SET status = done_status, finished_at = done_finished_at,
            return_value = done_return_value, errors = done_errors
        WHERE t.id = done_id;
        IF FOUND THEN
            PERFORM pgmq.delete(task_queue, ARRAY[done_msg_id]);
        END IF;
    END IF;
    IF next_id IS NULL THEN
        RETURN;
    END IF;
    RETURN QUERY
    UPDATE django_pgmq_taskresultrecord AS t
    SET status = 'RUNNING',
        started_at = coalesce(t.started_at, started),
        last_attempted_at = started,
        worker_ids = t.worker_ids || pg_catalog.jsonb_build_array(worker)
    WHERE t.id = next_id AND t.status = 'READY'
    RETURNING t.id, t.backend::text, t.queue_name::text, t.task_path::text,
              t.priority::integer, t.status::text, t.args, t.kwargs, t.run_after,
              t.enqueued_at, t.started_at, t.finished_at, t.last_attempted_at,
              t.return_value, t.errors, t.worker_ids, t.max_attempts::integer, t.msg_id;
END
$function$
;
COMMENT ON FUNCTION pgmq._task_finish_and_start(text,uuid,bigint,text,timestamp with time zone,jsonb,jsonb,uuid,timestamp with time zone,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._task_finish_and_start(text,uuid,bigint,text,timestamp with time zone,jsonb,jsonb,uuid,timestamp with time zone,text) FROM PUBLIC;

