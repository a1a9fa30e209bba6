-- 0042_kept_statements_carry_the_attribute: Kept statements carry the attribute guard; read, pop, archive, delete and a one-message send skip a layer
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._queue_ops_ids_sql(text,"char");
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

CREATE OR REPLACE FUNCTION pgmq._queue_ops_kept_key(qtable text, op "char")
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$ SELECT 'pgmq.prep_' || replace(op::text || 'g_' || qtable, '-', '$'); $function$
;
COMMENT ON FUNCTION pgmq._queue_ops_kept_key(text,"char") IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_kept_key(text,"char") FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_kept_missed(queue_name text, qtable text, op "char")
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF pgmq._queue_attributes(queue_name) IS NULL THEN
        RETURN true;
    END IF;
    PERFORM set_config(pgmq._queue_ops_kept_key(qtable, op), '0', false);
    RETURN false;
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_kept_missed(text,text,"char") IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_kept_missed(text,text,"char") FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_kept_name(qtable text, op "char")
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$ SELECT 'pgmq_' || op::text || 'g_' || qtable; $function$
;
COMMENT ON FUNCTION pgmq._queue_ops_kept_name(text,"char") IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_kept_name(text,"char") FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_kept_ready(qtable text, op "char")
 RETURNS text
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_prepared_statements s
                   WHERE s.name = pgmq._queue_ops_kept_name(qtable, op)) THEN
        PERFORM pgmq._queue_ops_keep(qtable, op);
    END IF;
    RETURN pgmq._queue_ops_kept_name(qtable, op);
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_kept_ready(text,"char") IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_kept_ready(text,"char") FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_prepared(qtable text, op "char")
 RETURNS text
 LANGUAGE plpgsql
AS $function$
DECLARE
    stmt text := pgmq._queue_ops_kept_name(qtable, op);
    key text := pgmq._queue_ops_kept_key(qtable, op);
    state text := coalesce(current_setting(key, true), '');
BEGIN
    IF state = 'p' OR state = '3' THEN
        IF NOT EXISTS (SELECT FROM pg_prepared_statements s WHERE s.name = stmt) THEN
            IF octet_length(stmt) > 63
               OR (SELECT count(*) FROM pg_prepared_statements s WHERE s.name LIKE 'pgmq\_%') >= 32 THEN
                state := 'c';
            ELSE
                PERFORM pgmq._queue_ops_keep(qtable, op);
            END IF;
        END IF;
        IF state <> 'p' THEN
            PERFORM set_config(key, CASE state WHEN 'c' THEN 'c' ELSE 'p' END, false);
        END IF;
        IF state <> 'c' THEN
            RETURN stmt;
        END IF;
    ELSIF state IN ('', '0', '1', '2') THEN
        PERFORM set_config(key, (coalesce(nullif(state, ''), '0')::integer + 1)::text, false);
    ELSIF state <> 'c' THEN
        PERFORM set_config(key, '1', false);
    END IF;
    RETURN NULL;
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_prepared(text,"char") IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_prepared(text,"char") FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_route_ids(queue_name text, p_op "char", p_vt timestamp with time zone, p_ids bigint[], p_msgs jsonb[], p_headers jsonb[])
 RETURNS SETOF bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    -- checks the name first, as pgmq's per-message functions do (sql/05_names.sql)
    qtable text := pgmq._message_table_name(queue_name, 'q');
    attrs jsonb;
    op "char" := CASE WHEN p_op = 's' AND cardinality(p_msgs) = 1 THEN '1' ELSE p_op END;
    stmt text;
    n bigint;
BEGIN
    -- archive and delete in a session that keeps the statement: the fast path (migration
    -- 0042, see "Kept plans"), with no separate attribute lookup
    IF (op = 'a' OR op = 'd') AND current_setting(pgmq._queue_ops_kept_key(qtable, op), true) = 'p' THEN
        RETURN QUERY SELECT * FROM pgmq._queue_ops_run_prepared_ids(
            pgmq._queue_ops_kept_ready(qtable, op), p_ids);
        GET DIAGNOSTICS n = ROW_COUNT;
        IF n > 0 OR pgmq._queue_ops_kept_missed(queue_name, qtable, op) THEN
            RETURN;
        END IF;
    END IF;
    SELECT a.attributes INTO attrs
    FROM pgmq.queue_attributes a WHERE lower(a.queue_name) = lower($1);
    IF attrs IS NOT NULL THEN
        RETURN QUERY SELECT r.msg_id FROM pgmq._queue_ops_with_attributes(
            queue_name, attrs, p_op, NULL::integer, NULL::integer, p_vt, p_ids, p_msgs, p_headers,
            NULL::jsonb, 0::bigint) r;
        RETURN;
    END IF;
    IF op = 'a' OR op = 'd' THEN
        stmt := pgmq._queue_ops_prepared(qtable, op);
        IF stmt IS NOT NULL THEN
            RETURN QUERY SELECT * FROM pgmq._queue_ops_run_prepared_ids(stmt, p_ids);
            RETURN;
        END IF;
    END IF;
    RETURN QUERY EXECUTE pgmq._queue_ops_ids_sql(qtable, op)
        USING p_op, NULL::integer, NULL::integer, p_vt, p_ids, p_msgs, p_headers, NULL::jsonb, 0::bigint;
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_route_ids(text,"char",timestamp with time zone,bigint[],jsonb[],jsonb[]) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_route_ids(text,"char",timestamp with time zone,bigint[],jsonb[],jsonb[]) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.pop(queue_name text, qty integer DEFAULT 1)
 RETURNS SETOF pgmq.message_record
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text;
    n bigint;
BEGIN
    IF qty IS NULL OR qty < 0 THEN
        RAISE EXCEPTION 'qty must be zero or more, got: %', coalesce(qty::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    qtable := pgmq._message_table_name(queue_name, 'q');
    IF current_setting(pgmq._queue_ops_kept_key(qtable, 'p'), true) = 'p' THEN
        RETURN QUERY SELECT * FROM pgmq._queue_ops_run_prepared(
            pgmq._queue_ops_kept_ready(qtable, 'p'), qty, NULL, NULL, NULL, pgmq._low_water_mark_for(qtable));
        GET DIAGNOSTICS n = ROW_COUNT;
        IF n > 0 OR pgmq._queue_ops_kept_missed(queue_name, qtable, 'p') THEN
            RETURN;
        END IF;
    END IF;
    RETURN QUERY SELECT * FROM pgmq._queue_ops_route(
        queue_name, 'p'::"char", qty, NULL::integer, NULL::timestamptz, NULL::bigint[], NULL::jsonb[],
        NULL::jsonb[], NULL::jsonb);
END
$function$
;
COMMENT ON FUNCTION pgmq.pop(text,integer) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.pop(text,integer) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.read(queue_name text, vt integer, qty integer, conditional jsonb DEFAULT '{}'::jsonb)
 RETURNS SETOF pgmq.message_record
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text;
    n bigint;
BEGIN
    IF qty IS NULL OR qty < 0 THEN
        RAISE EXCEPTION 'qty must be zero or more, got: %', coalesce(qty::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    qtable := pgmq._message_table_name(queue_name, 'q');
    IF current_setting(pgmq._queue_ops_kept_key(qtable, 'r'), true) = 'p' THEN
        RETURN QUERY SELECT * FROM pgmq._queue_ops_run_prepared(
            pgmq._queue_ops_kept_ready(qtable, 'r'), qty, coalesce(vt, 0), NULL,
            coalesce(conditional, '{}'::jsonb), pgmq._low_water_mark_for(qtable));
        GET DIAGNOSTICS n = ROW_COUNT;
        IF n > 0 OR pgmq._queue_ops_kept_missed(queue_name, qtable, 'r') THEN
            RETURN;
        END IF;
    END IF;
    RETURN QUERY SELECT * FROM pgmq._queue_ops_route(
        queue_name, 'r'::"char", qty, coalesce(vt, 0), NULL::timestamptz, NULL::bigint[], NULL::jsonb[],
        NULL::jsonb[], coalesce(conditional, '{}'::jsonb));
END
$function$
;
COMMENT ON FUNCTION pgmq.read(text,integer,integer,jsonb) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.read(text,integer,integer,jsonb) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.send(queue_name text, msg jsonb)
 RETURNS SETOF bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text := pgmq._message_table_name(queue_name, 'q');
BEGIN
    IF NOT EXISTS (SELECT FROM pgmq.queue_attributes a WHERE lower(a.queue_name) = lower($1)) THEN
        RETURN QUERY EXECUTE pgmq._queue_ops_ids_sql(qtable, '1')
            USING NULL::"char", NULL::integer, NULL::integer, NULL::timestamptz, NULL::bigint[],
                  ARRAY[msg], ARRAY[NULL::jsonb], NULL::jsonb, 0::bigint;
        RETURN;
    END IF;
    RETURN QUERY SELECT * FROM pgmq._queue_ops_route_ids(
        queue_name, 's'::"char", NULL::timestamptz, NULL::bigint[], ARRAY[msg], ARRAY[NULL::jsonb]);
END
$function$
;
COMMENT ON FUNCTION pgmq.send(text,jsonb) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.send(text,jsonb) TO PUBLIC;

