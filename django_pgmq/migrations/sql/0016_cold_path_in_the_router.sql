-- 0016_cold_path_in_the_router: Cold path in the router: a new session compiles fewer functions
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._queue_ops_cold(text,"char");
DROP FUNCTION IF EXISTS pgmq._queue_ops_uses_key(text);
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
    -- this session's calls to the queue ('-' may not appear in a setting's name, '$'
    -- may, and never appears in a queue name)
    uses_key text := 'pgmq.uses_q_' || replace(lname, '-', '$');
    uses integer;
    statement text;
BEGIN
    IF lname = ANY (%1$L::text[])
       AND current_setting(uses_key, true) = pgmq._queue_ops_warmup()::text THEN
        RETURN QUERY SELECT * FROM pgmq._queue_ops_hot(
            lname, p_op, p_qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond);
        RETURN;
    END IF;
    -- The cold path, here rather than in a function of its own: a new session's first
    -- call compiles one function less. The statement comes first (it validates the name).
    IF EXISTS (SELECT 1 FROM pgmq.queue_attributes a WHERE lower(a.queue_name) = lname) THEN
        statement := pgmq._queue_ops_text(queue_name, p_op);
    ELSE
        statement := pgmq._queue_ops_sql(queue_name, p_op);
    END IF;
    uses := coalesce(nullif(current_setting(uses_key, true), ''), '0')::integer;
    IF uses < pgmq._queue_ops_warmup() THEN
        PERFORM set_config(uses_key, (uses + 1)::text, false);
        IF uses + 1 = pgmq._queue_ops_warmup() THEN
            PERFORM pgmq._queue_ops_promote(queue_name);
        END IF;
    END IF;
    RETURN QUERY EXECUTE statement
        USING p_op, p_qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond;
END
$body$
        $ddl$,
        names);
END
$function$
;
COMMENT ON FUNCTION pgmq._install_queue_route() IS NULL;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_route(queue_name text, p_op "char", p_qty integer, p_secs integer, p_vt timestamp with time zone, p_ids bigint[], p_msgs jsonb[], p_headers jsonb[], p_cond jsonb)
 RETURNS SETOF pgmq.message_record
 LANGUAGE plpgsql
AS $function$
-- Written by pgmq._install_queue_route: the hot set is {}.
DECLARE
    lname text := lower(queue_name);
    -- this session's calls to the queue ('-' may not appear in a setting's name, '$'
    -- may, and never appears in a queue name)
    uses_key text := 'pgmq.uses_q_' || replace(lname, '-', '$');
    uses integer;
    statement text;
BEGIN
    IF lname = ANY ('{}'::text[])
       AND current_setting(uses_key, true) = pgmq._queue_ops_warmup()::text THEN
        RETURN QUERY SELECT * FROM pgmq._queue_ops_hot(
            lname, p_op, p_qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond);
        RETURN;
    END IF;
    -- The cold path, here rather than in a function of its own: a new session's first
    -- call compiles one function less. The statement comes first (it validates the name).
    IF EXISTS (SELECT 1 FROM pgmq.queue_attributes a WHERE lower(a.queue_name) = lname) THEN
        statement := pgmq._queue_ops_text(queue_name, p_op);
    ELSE
        statement := pgmq._queue_ops_sql(queue_name, p_op);
    END IF;
    uses := coalesce(nullif(current_setting(uses_key, true), ''), '0')::integer;
    IF uses < pgmq._queue_ops_warmup() THEN
        PERFORM set_config(uses_key, (uses + 1)::text, false);
        IF uses + 1 = pgmq._queue_ops_warmup() THEN
            PERFORM pgmq._queue_ops_promote(queue_name);
        END IF;
    END IF;
    RETURN QUERY EXECUTE statement
        USING p_op, p_qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond;
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_route(text,"char",integer,integer,timestamp with time zone,bigint[],jsonb[],jsonb[],jsonb) IS NULL;

CREATE OR REPLACE FUNCTION pgmq.send(queue_name text, msg jsonb)
 RETURNS SETOF bigint
 LANGUAGE plpgsql
AS $function$
BEGIN
    RETURN QUERY SELECT r.msg_id FROM pgmq._queue_ops_route(
        queue_name, 's'::"char", NULL::integer, NULL::integer, NULL::timestamptz,
        NULL::bigint[], ARRAY[msg], ARRAY[NULL::jsonb], NULL::jsonb) r;
END
$function$
;
COMMENT ON FUNCTION pgmq.send(text,jsonb) IS NULL;

-- Written by hand: the router just written above has the hot set of the scratch database
-- it was made in (none); write it again for this database's hot queues.
SELECT pgmq._install_queue_route();
