-- 0017_attributes_for_clients: attributes for clients
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
CREATE OR REPLACE FUNCTION pgmq._read_by_priority(queue_name text, vt integer, qty integer)
 RETURNS SETOF pgmq.message_record
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(pgmq._require_queue(queue_name), 'q');
BEGIN
    IF vt IS NULL OR vt < 0 OR qty IS NULL OR qty < 1 THEN
        RAISE EXCEPTION 'vt must be 0 or more and qty 1 or more, got vt % and qty %',
            coalesce(vt::text, 'NULL'), coalesce(qty::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    RETURN QUERY EXECUTE format(
        $q$
        WITH claimed AS (
            SELECT msg_id FROM pgmq.%1$I
            WHERE vt <= clock_timestamp()
            ORDER BY pgmq._task_priority(headers) DESC, msg_id
            LIMIT $1
            FOR UPDATE SKIP LOCKED
        ), updated AS (
            UPDATE pgmq.%1$I m
            SET vt = clock_timestamp() + make_interval(secs => $2),
                read_ct = m.read_ct + 1,
                last_read_at = clock_timestamp()
            FROM claimed
            WHERE m.msg_id = claimed.msg_id
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message,
                      m.headers
        )
        SELECT msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers
        FROM updated
        ORDER BY pgmq._task_priority(headers) DESC, msg_id
        $q$,
        qtable
    ) USING qty, vt;
END
$function$
;
COMMENT ON FUNCTION pgmq._read_by_priority(text,integer,integer) IS NULL;

CREATE OR REPLACE FUNCTION pgmq.celery_next_visible(queues text[])
 RETURNS timestamp with time zone
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
    queue text;
    earliest timestamptz;
    candidate timestamptz;
BEGIN
    FOREACH queue IN ARRAY queues LOOP
        CONTINUE WHEN NOT EXISTS (SELECT 1 FROM pgmq.meta m WHERE m.queue_name = queue);
        BEGIN
            EXECUTE format('SELECT min(vt) FROM pgmq.%I', pgmq.format_table_name(queue, 'q'))
                INTO candidate;
            earliest := least(earliest, candidate);
        EXCEPTION WHEN undefined_table THEN
            NULL;  -- dropped just now
        END;
    END LOOP;
    RETURN earliest;
END
$function$
;
COMMENT ON FUNCTION pgmq.celery_next_visible(text[]) IS NULL;

CREATE OR REPLACE FUNCTION pgmq.celery_send(queue text, msg jsonb, headers jsonb DEFAULT NULL::jsonb, deliver_at timestamp with time zone DEFAULT NULL::timestamp with time zone, notify boolean DEFAULT true)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    sent bigint;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pgmq.meta m WHERE m.queue_name = queue) THEN
        RETURN NULL;
    END IF;
    SELECT pgmq.send(queue, msg, headers, coalesce(deliver_at, clock_timestamp())) INTO sent;
    IF notify THEN
        PERFORM pg_notify('pgmq.q_' || queue || '.INSERT', '');
    END IF;
    RETURN sent;
END
$function$
;
COMMENT ON FUNCTION pgmq.celery_send(text,jsonb,jsonb,timestamp with time zone,boolean) IS NULL;

