-- 0017_attributes_for_clients: attributes for clients
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
    IF attrs ? 'dead_letter_queue' THEN
        PERFORM pgmq._ensure_dead_letter_queue(attrs ->> 'dead_letter_queue');
    END IF;
    RETURN QUERY EXECUTE pgmq._queue_ops_attr_sql(
        stored, 'r', '0', attrs || '{"priorities": true}'::jsonb)
    USING 'r'::"char", qty, vt, NULL::timestamptz, NULL::bigint[], NULL::jsonb[],
          NULL::jsonb[], '{}'::jsonb;
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
        CONTINUE WHEN (pgmq._queue_attributes(queue) -> 'paused') = 'true'::jsonb;
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
    SELECT pgmq.send(queue, msg, headers, deliver_at) INTO sent;
    IF notify THEN
        PERFORM pg_notify('pgmq.q_' || queue || '.INSERT', '');
    END IF;
    RETURN sent;
END
$function$
;
COMMENT ON FUNCTION pgmq.celery_send(text,jsonb,jsonb,timestamp with time zone,boolean) IS NULL;

