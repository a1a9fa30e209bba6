-- 0016_cold_path_in_the_router: Cold path in the router: a new session compiles fewer functions
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
CREATE OR REPLACE FUNCTION pgmq._install_queue_route()
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    names text[] := ARRAY(SELECT pgmq._queue_ops_hot_set());
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('pgmq.queue_ops_route'));
    EXECUTE format(
        $ddl$
CREATE OR REPLACE FUNCTION pgmq._queue_ops_hot(
    lname text, p_op "char", p_qty integer, p_secs integer, p_vt timestamptz,
    p_ids bigint[], p_msgs jsonb[], p_headers jsonb[], p_cond jsonb
)
RETURNS SETOF pgmq.message_record
LANGUAGE plpgsql
AS $body$
-- Written by pgmq._install_queue_route: %s hot queue(s).
BEGIN
%s
    RAISE EXCEPTION 'pgmq: %% is not a hot queue', lname USING ERRCODE = 'PQ004';
END
$body$
        $ddl$,
        cardinality(names), pgmq._queue_ops_branches(names));
    EXECUTE format(
        $ddl$
CREATE OR REPLACE FUNCTION pgmq._queue_ops_route(
    queue_name text, p_op "char", p_qty integer, p_secs integer, p_vt timestamptz,
    p_ids bigint[], p_msgs jsonb[], p_headers jsonb[], p_cond jsonb
)
RETURNS SETOF pgmq.message_record
LANGUAGE plpgsql
AS $body$
-- Written by pgmq._install_queue_route: the hot set is %1$s.
DECLARE
    lname text := lower(queue_name);
BEGIN
    IF lname = ANY (%1$L::text[])
       AND current_setting('pgmq.uses_q_' || replace(lname, '-', '$'), true)
           = pgmq._queue_ops_warmup()::text THEN
        RETURN QUERY SELECT * FROM pgmq._queue_ops_hot(
            lname, p_op, p_qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond);
        RETURN;
    END IF;
    RETURN QUERY EXECUTE pgmq._queue_ops_cold(queue_name, p_op)
        USING p_op, p_qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond;
END
$body$
        $ddl$,
        names);
END
$function$
;
COMMENT ON FUNCTION pgmq._install_queue_route() IS NULL;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_cold(queue_name text, op "char")
 RETURNS text
 LANGUAGE plpgsql
AS $function$
DECLARE
    key text := pgmq._queue_ops_uses_key(queue_name);
    uses integer := coalesce(nullif(current_setting(key, true), ''), '0')::integer;
BEGIN
    IF uses < pgmq._queue_ops_warmup() THEN
        uses := uses + 1;
        PERFORM set_config(key, uses::text, false);
        IF uses = pgmq._queue_ops_warmup() THEN
            PERFORM pgmq._queue_ops_promote(queue_name);
        END IF;
    END IF;
    RETURN pgmq._queue_ops_text(queue_name, op);
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_cold(text,"char") IS NULL;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_route(queue_name text, p_op "char", p_qty integer, p_secs integer, p_vt timestamp with time zone, p_ids bigint[], p_msgs jsonb[], p_headers jsonb[], p_cond jsonb)
 RETURNS SETOF pgmq.message_record
 LANGUAGE plpgsql
AS $function$
-- Written by pgmq._install_queue_route: the hot set is {}.
DECLARE
    lname text := lower(queue_name);
BEGIN
    IF lname = ANY ('{}'::text[])
       AND current_setting('pgmq.uses_q_' || replace(lname, '-', '$'), true)
           = pgmq._queue_ops_warmup()::text THEN
        RETURN QUERY SELECT * FROM pgmq._queue_ops_hot(
            lname, p_op, p_qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond);
        RETURN;
    END IF;
    RETURN QUERY EXECUTE pgmq._queue_ops_cold(queue_name, p_op)
        USING p_op, p_qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond;
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_route(text,"char",integer,integer,timestamp with time zone,bigint[],jsonb[],jsonb[],jsonb) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_uses_key(queue_name text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$
    SELECT 'pgmq.uses_' || replace(pgmq.format_table_name(queue_name, 'q'), '-', '$');
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_uses_key(text) IS NULL;

CREATE OR REPLACE FUNCTION pgmq.send(queue_name text, msg jsonb)
 RETURNS SETOF bigint
 LANGUAGE plpgsql
AS $function$ BEGIN RETURN QUERY SELECT * FROM pgmq.send(queue_name, msg, NULL::jsonb, NULL::timestamptz); END $function$
;
COMMENT ON FUNCTION pgmq.send(text,jsonb) IS NULL;

-- Written by hand: the router just written above has the hot set of the scratch database
-- it was made in (none); write it again for this database's hot queues.
SELECT pgmq._install_queue_route();
