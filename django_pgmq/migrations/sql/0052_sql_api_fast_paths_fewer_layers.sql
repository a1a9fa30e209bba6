-- 0052_sql_api_fast_paths_fewer_layers: SQL API fast paths, fewer layers
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
CREATE OR REPLACE FUNCTION pgmq._low_water_mark_for(qtable text)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    -- '-' may not appear in a setting's name, '$' may, and never appears in a queue name
    kept text := pg_catalog.current_setting('pgmq.low_' || pg_catalog.replace(qtable, '-', '$'), true);
    -- a value of another shape than this function writes (set by hand) counts as none:
    -- never an error (80 characters keep the times within float8; the msg_id is checked
    -- for bigint below; a regular expression with counted repeats costs 15 us a call)
    mark text[] := CASE
        WHEN pg_catalog.octet_length(kept) <= 80
             AND kept ~ '^[0-9]+ [0-9]+(\.[0-9]+)? [0-9]+ [0-9]+(\.[0-9]+)?$'
        THEN pg_catalog.string_to_array(kept, ' ') END;
    now_s float8 := pg_catalog.date_part('epoch', pg_catalog.clock_timestamp());
    key text;
    rel oid;
    full_look boolean;
    low bigint;
    given bigint;  -- the id sequence's last value
BEGIN
    -- the common case first, in one test (each PL/pgSQL expression is set up again in
    -- every transaction): a mark of this table whose next look is not due
    IF mark[2]::float8 >= now_s AND mark[2]::float8 <= now_s + 0.05
       AND mark[4]::float8 >= now_s AND mark[4]::float8 <= now_s + 1
       AND pg_catalog.octet_length(mark[3]) <= 18
       AND mark[1] = pg_catalog.to_regclass(pg_catalog.format('pgmq.%I', qtable))::oid::text THEN
        RETURN mark[3]::bigint;
    END IF;
    key := 'pgmq.low_' || pg_catalog.replace(qtable, '-', '$');
    rel := pg_catalog.to_regclass(pg_catalog.format('pgmq.%I', qtable));
    IF rel IS NULL THEN
        RETURN 0;
    END IF;
    IF pg_catalog.octet_length(mark[3]) > 18 THEN  -- past bigint
        mark := NULL;
    END IF;
    -- a full look when there is no mark, another table's, one past its full look's time,
    -- or one whose times lie further ahead than this function ever writes them
    full_look := mark IS NULL OR mark[1] <> rel::text OR mark[4]::float8 < now_s
        OR mark[4]::float8 > now_s + 1 OR mark[2]::float8 > now_s + 0.05;
    IF NOT full_look THEN
        EXECUTE pg_catalog.format('SELECT q.msg_id FROM pgmq.%I q WHERE q.msg_id >= $1 ORDER BY q.msg_id LIMIT 1', qtable)
            INTO low USING mark[3]::bigint;
        IF low IS NULL THEN
            given := pg_catalog.pg_sequence_last_value(
                pg_catalog.pg_get_serial_sequence(pg_catalog.format('pgmq.%I', qtable), 'msg_id')::regclass);
            -- a mark past every id the sequence gave was not written by this function (or
            -- the sequence was restarted): look from the start
            full_look := mark[3]::bigint > coalesce(given, 0);
        END IF;
    END IF;
    IF full_look THEN
        EXECUTE pg_catalog.format('SELECT q.msg_id FROM pgmq.%I q ORDER BY q.msg_id LIMIT 1', qtable) INTO low;
    END IF;
    IF low IS NULL AND given IS NULL THEN
        given := pg_catalog.pg_sequence_last_value(
            pg_catalog.pg_get_serial_sequence(pg_catalog.format('pgmq.%I', qtable), 'msg_id')::regclass);
    END IF;
    low := coalesce(low, given, 0);
    PERFORM pg_catalog.set_config(key, pg_catalog.concat_ws(' ', rel, now_s + 0.05, low,
                                      CASE WHEN full_look THEN (now_s + 1)::text ELSE mark[4] END), false);
    RETURN low;
END
$function$
;
COMMENT ON FUNCTION pgmq._low_water_mark_for(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._low_water_mark_for(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_kept_stmt(qtable text, op "char")
 RETURNS SETOF text
 LANGUAGE sql
 STABLE ROWS 1
AS $function$
    SELECT CASE WHEN (SELECT s.statement FROM pg_catalog.pg_prepared_statements s
                      WHERE s.name = pgmq._queue_ops_kept_name(qtable, op))
                     = pgmq._queue_ops_kept_prepare_sql(qtable, op)
                THEN pgmq._queue_ops_kept_name(qtable, op)
                ELSE pgmq._queue_ops_kept_ready(qtable, op) END;
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_kept_stmt(text,"char") IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_kept_stmt(text,"char") FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_route_ids(queue_name text, p_op "char", p_vt timestamp with time zone, p_ids bigint[], p_msgs jsonb[], p_headers jsonb[])
 RETURNS SETOF bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    -- checks the name first, as pgmq's per-message functions do (sql/05_names.sql)
    qtable text := pgmq._message_table_name(queue_name, 'q'::text);
    attrs jsonb;
    op "char" := CASE WHEN p_op = 's' AND pg_catalog.cardinality(p_msgs) = 1 THEN '1' ELSE p_op END;
    stmt text;
BEGIN
    -- archive and delete: one statement for every queue, attributes or not (see "Kept
    -- plans"); in a session that keeps it, the fast path (migration 0042)
    IF op = 'a' OR op = 'd' THEN
        IF pg_catalog.current_setting(pgmq._queue_ops_kept_key(qtable, op), true) = 'p' THEN
            stmt := (SELECT k FROM pgmq._queue_ops_kept_stmt(qtable, op) k);
        ELSE
            stmt := pgmq._queue_ops_prepared(qtable, op);
        END IF;
        IF stmt IS NOT NULL THEN
            RETURN QUERY SELECT * FROM pgmq._queue_ops_run_prepared_ids(stmt, p_ids);
        ELSE
            RETURN QUERY EXECUTE pgmq._queue_ops_kept_sql(qtable, op)
                USING p_op, NULL::integer, NULL::integer, p_vt, p_ids, p_msgs, p_headers,
                      NULL::jsonb, 0::bigint;
        END IF;
        RETURN;
    END IF;
    SELECT a.attributes INTO attrs
    FROM pgmq.queue_attributes a WHERE pg_catalog.lower(a.queue_name::text) = pg_catalog.lower($1);
    IF attrs IS NOT NULL THEN
        RETURN QUERY SELECT r.msg_id FROM pgmq._queue_ops_with_attributes(
            queue_name, attrs, p_op, NULL::integer, NULL::integer, p_vt, p_ids, p_msgs, p_headers,
            NULL::jsonb, 0::bigint) r;
        RETURN;
    END IF;
    RETURN QUERY EXECUTE pgmq._queue_ops_ids_sql(qtable, op)
        USING p_op, NULL::integer, NULL::integer, p_vt, p_ids, p_msgs, p_headers, NULL::jsonb, 0::bigint;
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_route_ids(text,"char",timestamp with time zone,bigint[],jsonb[],jsonb[]) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_route_ids(text,"char",timestamp with time zone,bigint[],jsonb[],jsonb[]) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.archive(queue_name text, msg_ids bigint[])
 RETURNS SETOF bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    -- checks the name first, as pgmq's per-message functions do (sql/05_names.sql)
    qtable text := pgmq._message_table_name(queue_name, 'q'::text);
BEGIN
    -- the fast path (see read): the router's, without its layer
    IF pg_catalog.current_setting(pgmq._queue_ops_kept_key(qtable, 'a'), true) = 'p' THEN
        RETURN QUERY SELECT * FROM pgmq._queue_ops_run_prepared_ids(
            (SELECT k FROM pgmq._queue_ops_kept_stmt(qtable, 'a') k), msg_ids);
        RETURN;
    END IF;
    RETURN QUERY SELECT * FROM pgmq._queue_ops_route_ids(
        queue_name, 'a'::"char", NULL::timestamptz, msg_ids, NULL::jsonb[], NULL::jsonb[]);
END
$function$
;
COMMENT ON FUNCTION pgmq.archive(text,bigint[]) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.archive(text,bigint[]) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.delete(queue_name text, msg_ids bigint[])
 RETURNS SETOF bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    -- checks the name first, as pgmq's per-message functions do (sql/05_names.sql)
    qtable text := pgmq._message_table_name(queue_name, 'q'::text);
BEGIN
    -- the fast path (see read): the router's, without its layer
    IF pg_catalog.current_setting(pgmq._queue_ops_kept_key(qtable, 'd'), true) = 'p' THEN
        RETURN QUERY SELECT * FROM pgmq._queue_ops_run_prepared_ids(
            (SELECT k FROM pgmq._queue_ops_kept_stmt(qtable, 'd') k), msg_ids);
        RETURN;
    END IF;
    RETURN QUERY SELECT * FROM pgmq._queue_ops_route_ids(
        queue_name, 'd'::"char", NULL::timestamptz, msg_ids, NULL::jsonb[], NULL::jsonb[]);
END
$function$
;
COMMENT ON FUNCTION pgmq.delete(text,bigint[]) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.delete(text,bigint[]) TO PUBLIC;

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
    qtable := pgmq._message_table_name(queue_name, 'q'::text);
    IF pg_catalog.current_setting(pgmq._queue_ops_kept_key(qtable, 'p'), true) = 'p' THEN
        RETURN QUERY SELECT * FROM pgmq._queue_ops_run_prepared(
            (SELECT k FROM pgmq._queue_ops_kept_stmt(qtable, 'p') k), qty, NULL, NULL, NULL,
            pgmq._low_water_mark_for(qtable));
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
    qtable := pgmq._message_table_name(queue_name, 'q'::text);
    IF pg_catalog.current_setting(pgmq._queue_ops_kept_key(qtable, 'r'), true) = 'p' THEN
        RETURN QUERY SELECT * FROM pgmq._queue_ops_run_prepared(
            (SELECT k FROM pgmq._queue_ops_kept_stmt(qtable, 'r') k), qty, coalesce(vt, 0), NULL,
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

CREATE OR REPLACE FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[])
 RETURNS SETOF bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text;
BEGIN
    IF msgs IS NULL OR pg_catalog.cardinality(msgs) = 0 THEN
        PERFORM pgmq._validate_batch_params(msgs, NULL::jsonb[]);
    END IF;
    qtable := pgmq._message_table_name(queue_name, 'q'::text);
    IF NOT EXISTS (SELECT FROM pgmq.queue_attributes a WHERE pg_catalog.lower(a.queue_name::text) = pg_catalog.lower($1)) THEN
        RETURN QUERY EXECUTE pgmq._queue_ops_ids_sql(
            qtable, CASE WHEN pg_catalog.cardinality(msgs) = 1 THEN '1' ELSE 's' END::"char")
            USING NULL::"char", NULL::integer, NULL::integer, NULL::timestamptz, NULL::bigint[],
                  msgs, NULL::jsonb[], NULL::jsonb, 0::bigint;
        RETURN;
    END IF;
    RETURN QUERY SELECT * FROM pgmq._queue_ops_route_ids(
        queue_name, 's'::"char", NULL::timestamptz, NULL::bigint[], msgs, NULL::jsonb[]);
END
$function$
;
COMMENT ON FUNCTION pgmq.send_batch(text,jsonb[]) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.send_batch(text,jsonb[]) TO PUBLIC;

