-- 0045_trusted_session_state: trusted session state
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
CREATE OR REPLACE FUNCTION pgmq._low_water_mark_for(qtable text)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    -- '-' may not appear in a setting's name, '$' may, and never appears in a queue name
    key text := 'pgmq.low_' || pg_catalog.replace(qtable, '-', '$');
    kept text := pg_catalog.current_setting(key, true);
    -- a value of another shape than this function writes (set by hand) counts as none:
    -- never an error (80 characters keep the times within float8; the msg_id is checked
    -- for bigint below; a regular expression with counted repeats costs 15 us a call)
    mark text[] := CASE
        WHEN pg_catalog.octet_length(kept) <= 80
             AND kept ~ '^[0-9]+ [0-9]+(\.[0-9]+)? [0-9]+ [0-9]+(\.[0-9]+)?$'
        THEN pg_catalog.string_to_array(kept, ' ') END;
    rel oid := pg_catalog.to_regclass(pg_catalog.format('pgmq.%I', qtable));
    now_s float8 := pg_catalog.date_part('epoch', pg_catalog.clock_timestamp());
    full_look boolean;
    low bigint;
    given bigint;  -- the id sequence's last value
BEGIN
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
    IF NOT full_look AND mark[2]::float8 >= now_s THEN
        RETURN mark[3]::bigint;
    END IF;
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

CREATE OR REPLACE FUNCTION pgmq._queue_ops_client_sql(queue_name text, op "char", qty integer DEFAULT 1)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT CASE WHEN op IN ('r', 'p', 'a', 'd', 's') AND qty BETWEEN 1 AND 100000 THEN
        pgmq._queue_ops_kept_sql(
            t.qtable, op, pg_catalog.format('(SELECT pgmq._low_water_mark_for(%L::text))', t.qtable),
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
    EXECUTE pgmq._queue_ops_kept_prepare_sql(qtable, op);
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_keep(text,"char") IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_keep(text,"char") FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_kept_held(qtable text, op "char")
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
DECLARE
    stmt text := pgmq._queue_ops_kept_name(qtable, op);
    held text;
BEGIN
    SELECT s.statement INTO held FROM pg_catalog.pg_prepared_statements s WHERE s.name = stmt;
    IF held IS NULL THEN
        RETURN false;
    ELSIF held = pgmq._queue_ops_kept_prepare_sql(qtable, op) THEN
        RETURN true;
    END IF;
    EXECUTE pg_catalog.format('DEALLOCATE %I', stmt);
    RETURN false;
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_kept_held(text,"char") IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_kept_held(text,"char") FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_kept_prepare_sql(qtable text, op "char")
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT pg_catalog.format(
        'PREPARE %I ("char", integer, integer, timestamptz, bigint[], jsonb[], jsonb[], jsonb, bigint) AS %s',
        pgmq._queue_ops_kept_name(qtable, op), pgmq._queue_ops_kept_sql(qtable, op));
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_kept_prepare_sql(text,"char") IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_kept_prepare_sql(text,"char") FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_kept_ready(qtable text, op "char")
 RETURNS text
 LANGUAGE plpgsql
AS $function$
DECLARE
    stmt text := pgmq._queue_ops_kept_name(qtable, op);
    held text;
BEGIN
    -- pgmq._queue_ops_kept_held, written out: this runs on every fast-path call
    SELECT s.statement INTO held FROM pg_catalog.pg_prepared_statements s WHERE s.name = stmt;
    IF held IS NULL OR held <> pgmq._queue_ops_kept_prepare_sql(qtable, op) THEN
        IF held IS NOT NULL THEN
            EXECUTE pg_catalog.format('DEALLOCATE %I', stmt);
        END IF;
        PERFORM pgmq._queue_ops_keep(qtable, op);
    END IF;
    RETURN stmt;
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
    FROM (SELECT pg_catalog.format(
              'NOT EXISTS (SELECT FROM pgmq.queue_attributes x WHERE pg_catalog.lower(x.queue_name::text) = %L)',
              pg_catalog.substr(qtable, 3)) AS guard) g;
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
        IF NOT pgmq._queue_ops_kept_held(qtable, op) THEN
            IF pg_catalog.octet_length(stmt) > 63
               OR (SELECT pg_catalog.count(*) FROM pg_catalog.pg_prepared_statements s
                   WHERE s.name LIKE 'pgmq\_%') >= 32 THEN
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

