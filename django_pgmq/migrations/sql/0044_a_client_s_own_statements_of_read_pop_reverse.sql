-- 0044_a_client_s_own_statements_of_read_pop: a client's own statements of read, pop, archive, delete and send (the manager with prepared statements on)
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._queue_ops_client_sql(text,"char",integer);
DROP FUNCTION IF EXISTS pgmq._queue_ops_ids_sql(text,"char",text,text,text,text,text);
DROP FUNCTION IF EXISTS pgmq._queue_ops_kept_sql(text,"char",text,text,text,text,text,text,text,text);
DROP FUNCTION IF EXISTS pgmq._queue_ops_sql_for(text,"char",text,text,text,text);
CREATE OR REPLACE FUNCTION pgmq._queue_ops_ids_sql(qtable text, op "char", cond text DEFAULT ''::text)
 RETURNS text
 LANGUAGE sql
 STABLE
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
            DELETE FROM pgmq.%1$I q WHERE q.msg_id = ANY($5)%3$s
            RETURNING q.msg_id, q.read_ct, q.enqueued_at, q.last_read_at, q.vt, q.message, q.headers
        )
        INSERT INTO pgmq.%2$I AS a (msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers)
        SELECT * FROM moved
        RETURNING a.msg_id$sql$
        WHEN 'd' THEN $sql$
        DELETE FROM pgmq.%1$I q WHERE q.msg_id = ANY($5)%3$s
        RETURNING q.msg_id$sql$
        END,
        qtable,
        'a' || substr(qtable, 2),
        cond);
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_ids_sql(text,"char",text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_ids_sql(text,"char",text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_keep(qtable text, op "char")
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    guard text := format(
        'NOT EXISTS (SELECT FROM pgmq.queue_attributes x WHERE lower(x.queue_name) = %L)',
        substr(qtable, 3));
BEGIN
    EXECUTE format(
        'PREPARE %I ("char", integer, integer, timestamptz, bigint[], jsonb[], jsonb[], jsonb, bigint) AS %s',
        pgmq._queue_ops_kept_name(qtable, op),
        CASE WHEN op IN ('a', 'd') THEN pgmq._queue_ops_ids_sql(qtable, op, ' AND ' || guard)
             ELSE pgmq._queue_ops_sql_for(qtable, op, '$9 AND ' || guard) END);
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_keep(text,"char") IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_keep(text,"char") FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_sql_for(qtable text, op "char", low text)
 RETURNS text
 LANGUAGE sql
 STABLE
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

