-- 0045_trusted_session_state: trusted session state
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._queue_ops_kept_held(text,"char");
DROP FUNCTION IF EXISTS pgmq._queue_ops_kept_prepare_sql(text,"char");
CREATE OR REPLACE FUNCTION pgmq._low_water_mark_for(qtable text)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    -- '-' may not appear in a setting's name, '$' may, and never appears in a queue name
    key text := 'pgmq.low_' || replace(qtable, '-', '$');
    kept text := current_setting(key, true);
    -- a value this function did not write (set by hand) counts as none: never an error
    mark text[] := CASE WHEN kept ~ '^[0-9]+ [0-9.]+ [0-9]+ [0-9.]+$' THEN string_to_array(kept, ' ') END;
    rel oid := to_regclass(format('pgmq.%I', qtable));
    now_s float8 := extract(epoch FROM clock_timestamp());
    full_look boolean;
    low bigint;
BEGIN
    IF rel IS NULL THEN
        RETURN 0;
    END IF;
    full_look := mark IS NULL OR mark[1] <> rel::text OR mark[4]::float8 < now_s;
    IF NOT full_look AND mark[2]::float8 >= now_s THEN
        RETURN mark[3]::bigint;
    END IF;
    IF full_look THEN
        EXECUTE format('SELECT q.msg_id FROM pgmq.%I q ORDER BY q.msg_id LIMIT 1', qtable) INTO low;
    ELSE
        EXECUTE format('SELECT q.msg_id FROM pgmq.%I q WHERE q.msg_id >= $1 ORDER BY q.msg_id LIMIT 1', qtable)
            INTO low USING mark[3]::bigint;
    END IF;
    low := coalesce(low, pg_sequence_last_value(pg_get_serial_sequence(format('pgmq.%I', qtable), 'msg_id')::regclass), 0);
    PERFORM set_config(key, concat_ws(' ', rel, now_s + 0.05, low,
                                      CASE WHEN full_look THEN (now_s + 1)::text ELSE mark[4] END), false);
    RETURN low;
END
$function$
;
COMMENT ON FUNCTION pgmq._low_water_mark_for(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._low_water_mark_for(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_client_sql(queue_name text, op "char", qty integer DEFAULT 1)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT CASE WHEN op IN ('r', 'p', 'a', 'd', 's') AND qty BETWEEN 1 AND 100000 THEN
        pgmq._queue_ops_kept_sql(
            t.qtable, op, format('(SELECT pgmq._low_water_mark_for(%L))', t.qtable),
            qty::text, '$1', 'NULL::jsonb', '$1', 'NULL::timestamptz', '$1::jsonb[]', '$2::jsonb[]')
    END
    FROM (SELECT pgmq._message_table_name(queue_name, 'q') AS qtable) t;
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_client_sql(text,"char",integer) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_client_sql(text,"char",integer) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_keep(qtable text, op "char")
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
    EXECUTE format(
        'PREPARE %I ("char", integer, integer, timestamptz, bigint[], jsonb[], jsonb[], jsonb, bigint) AS %s',
        pgmq._queue_ops_kept_name(qtable, op), pgmq._queue_ops_kept_sql(qtable, op));
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_keep(text,"char") IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_keep(text,"char") FROM PUBLIC;

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

CREATE OR REPLACE FUNCTION pgmq._queue_ops_kept_sql(qtable text, op "char", low text DEFAULT '$9'::text, qty text DEFAULT '$2'::text, secs text DEFAULT '$3'::text, cond text DEFAULT '$8'::text, ids text DEFAULT '$5'::text, vt text DEFAULT '$4'::text, msgs text DEFAULT '$6'::text, hdrs text DEFAULT '$7'::text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT CASE WHEN op IN ('a', 'd')
                THEN pgmq._queue_ops_ids_sql(qtable, op, ' AND ' || g.guard, ids)
                WHEN op = 's'
                THEN pgmq._queue_ops_ids_sql(qtable, op, ' WHERE ' || g.guard, ids, vt, msgs, hdrs)
                ELSE pgmq._queue_ops_sql_for(qtable, op, low || ' AND ' || g.guard, qty, secs, cond)
           END
    FROM (SELECT format(
              'NOT EXISTS (SELECT FROM pgmq.queue_attributes x WHERE lower(x.queue_name) = %L)',
              substr(qtable, 3)) AS guard) g;
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_kept_sql(text,"char",text,text,text,text,text,text,text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_kept_sql(text,"char",text,text,text,text,text,text,text,text) FROM PUBLIC;

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

