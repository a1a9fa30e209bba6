-- 0040_sql_functions_declared_as_volatile_as: SQL functions declared as volatile as their bodies, so PostgreSQL inlines the statement builders; send_batch(queue, msgs) calls the router itself
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
CREATE OR REPLACE FUNCTION pgmq._dead_letter_headers(headers jsonb, queue_name text, msg_id bigint, read_ct integer, enqueued_at timestamp with time zone, error text)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
AS $function$
    SELECT CASE
               WHEN headers IS NULL THEN '{}'::jsonb
               WHEN jsonb_typeof(headers) = 'object' THEN headers
               ELSE jsonb_build_object('headers', headers)
           END
           || jsonb_build_object('dead_letter', jsonb_build_object(
                  'queue', queue_name,
                  'msg_id', msg_id,
                  'read_ct', read_ct,
                  'enqueued_at', enqueued_at,
                  'dead_lettered_at', clock_timestamp(),
                  'error', coalesce(error, CASE WHEN jsonb_typeof(headers -> 'attempt_errors') = 'array'
                                                THEN headers -> 'attempt_errors' -> -1 ->> 'error' END)));
$function$
;
COMMENT ON FUNCTION pgmq._dead_letter_headers(jsonb,text,bigint,integer,timestamp with time zone,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._dead_letter_headers(jsonb,text,bigint,integer,timestamp with time zone,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._fit_name(base text, suffix text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
    SELECT CASE
        WHEN octet_length(base || suffix) <= 63 THEN base || suffix
        ELSE left(base, 63 - octet_length(suffix) - 9) || '_'
             || left(encode(sha256(convert_to(base, 'UTF8')), 'hex'), 8) || suffix
    END;
$function$
;
COMMENT ON FUNCTION pgmq._fit_name(text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._fit_name(text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._notify_trigger_name(queue_name text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$
    SELECT CASE
        WHEN lower(queue_name) ~ '^[a-z0-9_]+$' THEN 'q_' || lower(queue_name) || '_notify_insert'
        ELSE 'pgmq_notify_' || left(encode(sha256(convert_to(lower(queue_name), 'UTF8')), 'hex'), 20)
    END;
$function$
;
COMMENT ON FUNCTION pgmq._notify_trigger_name(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._notify_trigger_name(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._partition_bound(by_id boolean, pos numeric)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
    SELECT CASE
        WHEN pos = '-Infinity'::numeric THEN 'MINVALUE'
        WHEN pos = 'Infinity'::numeric THEN 'MAXVALUE'
        WHEN by_id THEN (pos::bigint)::text
        ELSE to_char(to_timestamp(pos::double precision) AT TIME ZONE 'UTC',
                     CASE WHEN pos = trunc(pos) THEN 'YYYY-MM-DD"T"HH24:MI:SS"+00"'
                          ELSE 'YYYY-MM-DD"T"HH24:MI:SS.US"+00"' END)
    END;
$function$
;
COMMENT ON FUNCTION pgmq._partition_bound(boolean,numeric) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._partition_bound(boolean,numeric) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._partition_literal(by_id boolean, pos numeric)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
    SELECT CASE WHEN abs(pos) = 'Infinity'::numeric THEN pgmq._partition_bound(by_id, pos)
                ELSE quote_literal(pgmq._partition_bound(by_id, pos)) END;
$function$
;
COMMENT ON FUNCTION pgmq._partition_literal(boolean,numeric) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._partition_literal(boolean,numeric) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._partition_name(parent text, by_id boolean, step text, lo numeric)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
    SELECT pgmq._fit_name(parent, '_p' || CASE
        WHEN by_id THEN (lo::bigint)::text
        WHEN step::interval = date_trunc('day', step::interval)
            THEN to_char(to_timestamp(lo::double precision) AT TIME ZONE 'UTC', 'YYYYMMDD')
        ELSE to_char(to_timestamp(lo::double precision) AT TIME ZONE 'UTC', 'YYYYMMDD"_"HH24MISS')
    END);
$function$
;
COMMENT ON FUNCTION pgmq._partition_name(text,boolean,text,numeric) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._partition_name(text,boolean,text,numeric) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_ids_sql(qtable text, op "char")
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
    SELECT format(
        CASE op
        -- A function scan yields the arrays in order and the insert numbers rows as they
        -- come, so ids follow the array order; unnest pads a NULL headers array with NULLs.
        WHEN 's' THEN $sql$
        INSERT INTO pgmq.%1$I AS q (vt, message, headers)
        SELECT coalesce($4, clock_timestamp()), u.msg, u.hdr FROM unnest($6, $7) AS u(msg, hdr)
        RETURNING q.msg_id$sql$
        -- one message: a VALUES row plans in less time than a function scan
        WHEN '1' THEN $sql$
        INSERT INTO pgmq.%1$I AS q (vt, message, headers)
        VALUES (coalesce($4, clock_timestamp()), $6[1], $7[1])
        RETURNING q.msg_id$sql$
        WHEN 'a' THEN $sql$
        WITH moved AS (
            DELETE FROM pgmq.%1$I q WHERE q.msg_id = ANY($5)
            RETURNING q.msg_id, q.read_ct, q.enqueued_at, q.last_read_at, q.vt, q.message, q.headers
        )
        INSERT INTO pgmq.%2$I AS a (msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers)
        SELECT * FROM moved
        RETURNING a.msg_id$sql$
        WHEN 'd' THEN $sql$
        DELETE FROM pgmq.%1$I q WHERE q.msg_id = ANY($5)
        RETURNING q.msg_id$sql$
        END,
        qtable,
        'a' || substr(qtable, 2));
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_ids_sql(text,"char") IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_ids_sql(text,"char") FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_sql(queue_name text, op "char", low text DEFAULT '0'::text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
    SELECT pgmq._queue_ops_sql_for(pgmq.format_table_name(queue_name, 'q'), op, low);
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_sql(text,"char",text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_sql(text,"char",text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_sql_for(qtable text, op "char", low text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
    SELECT CASE
        WHEN op IN ('s', '1', 'a', 'd') THEN
            -- the statement pgmq._queue_ops_ids_sql gives, with the record's other columns
            pgmq._queue_ops_ids_sql(qtable, op) || $cols$, NULL::integer, NULL::timestamptz,
                  NULL::timestamptz, NULL::timestamptz, NULL::jsonb, NULL::jsonb$cols$
        ELSE format(
        CASE op
        WHEN 'r' THEN $sql$
        WITH claimed AS (
            UPDATE pgmq.%1$I m
            SET vt = clock_timestamp() + make_interval(secs => $3),
                read_ct = m.read_ct + 1,
                last_read_at = clock_timestamp()
            WHERE m.msg_id = ANY(ARRAY(%2$s))
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message, m.headers
        )
        SELECT * FROM claimed c ORDER BY c.msg_id
        $sql$
        WHEN 'p' THEN $sql$
        WITH removed AS (
            DELETE FROM pgmq.%1$I m
            WHERE m.msg_id = ANY(ARRAY(%2$s))
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message, m.headers
        )
        SELECT * FROM removed r ORDER BY r.msg_id
        $sql$
        WHEN 'v' THEN $sql$
        WITH moved AS (
            UPDATE pgmq.%1$I q SET vt = $4 WHERE q.msg_id = ANY($5)
            RETURNING q.msg_id, q.read_ct, q.enqueued_at, q.last_read_at, q.vt, q.message, q.headers
        )
        SELECT * FROM moved m ORDER BY m.msg_id
        $sql$
        END,
        qtable,
        -- read's and pop's pick: the oldest visible messages from the mark up, locked; the
        -- rows are then claimed with "= ANY(ARRAY(pick))", so the update looks up exactly
        -- the picked rows by key, whatever the plan's row estimates (a join could walk
        -- the table)
        format(
            $pick$
                SELECT q.msg_id FROM pgmq.%I q
                WHERE q.msg_id >= %s AND q.vt <= clock_timestamp()
                  AND ($8 IS NULL OR $8 = '{}'::jsonb OR q.message @> $8)
                ORDER BY q.msg_id
                LIMIT $2
                FOR UPDATE SKIP LOCKED
            $pick$,
            qtable, low))
        END;
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_sql_for(text,"char",text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_sql_for(text,"char",text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._send_checks_sql(attrs jsonb)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
    SELECT concat_ws(' AND ',
        CASE WHEN attrs ? 'max_message_size'
             THEN format('octet_length(u.msg::text) <= %s', (attrs ->> 'max_message_size')::integer) END,
        CASE WHEN (attrs -> 'priorities') = 'true'::jsonb THEN $t$
            CASE WHEN u.hdr -> 'priority' IS NULL OR jsonb_typeof(u.hdr) <> 'object' THEN true
                 WHEN jsonb_typeof(u.hdr -> 'priority') <> 'number'
                      OR (u.hdr ->> 'priority') !~ '^-?[0-9]{1,3}$' THEN false
                 ELSE abs((u.hdr ->> 'priority')::integer) <= 100 END$t$ END,
        CASE WHEN coalesce((attrs ->> 'deduplication_window')::integer, 0) > 0 THEN $t$
            CASE WHEN u.hdr -> 'deduplication_id' IS NULL OR jsonb_typeof(u.hdr) <> 'object' THEN true
                 WHEN jsonb_typeof(u.hdr -> 'deduplication_id') <> 'string' THEN false
                 ELSE char_length(u.hdr ->> 'deduplication_id') BETWEEN 1 AND 128 END$t$ END);
$function$
;
COMMENT ON FUNCTION pgmq._send_checks_sql(jsonb) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._send_checks_sql(jsonb) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[])
 RETURNS SETOF bigint
 LANGUAGE plpgsql
AS $function$ BEGIN RETURN QUERY SELECT * FROM pgmq.send_batch(queue_name, msgs, NULL::jsonb[], NULL::timestamptz); END $function$
;
COMMENT ON FUNCTION pgmq.send_batch(text,jsonb[]) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.send_batch(text,jsonb[]) TO PUBLIC;

