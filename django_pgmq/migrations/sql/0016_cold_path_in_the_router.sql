-- 0016_cold_path_in_the_router: Cold path in the router, and metrics_all without name lookups
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

CREATE OR REPLACE FUNCTION pgmq._metrics_query(names text[])
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    WITH queue AS (
        SELECT u.n, u.o, pgmq.format_table_name(u.n, 'q') AS qtable, c.oid AS qoid,
               c.relkind = 'r' AND pg_relation_size(c.oid) = 0 AS empty,
               -- partitioned with a default partition (45_partitions.sql)
               EXISTS (SELECT 1 FROM pg_partitioned_table p
                       WHERE p.partdefid <> 0 AND p.partrelid IN (c.oid, a.oid)) AS spill,
               -- the sequence by oid: the statement names it as a number, no name lookup
               owned.seq
        FROM unnest(names) WITH ORDINALITY AS u(n, o)
        LEFT JOIN pg_class c
            ON c.relnamespace = 'pgmq'::regnamespace AND c.relname = pgmq.format_table_name(u.n, 'q')
        LEFT JOIN pg_class a
            ON a.relnamespace = 'pgmq'::regnamespace AND a.relname = pgmq.format_table_name(u.n, 'a')
        LEFT JOIN (
            SELECT d.refobjid AS qoid, d.objid AS seq
            FROM pg_depend d JOIN pg_sequence s ON s.seqrelid = d.objid
            WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass
              AND d.deptype IN ('a', 'i')
        ) owned ON owned.qoid = c.oid
    )
    SELECT 'SELECT m.queue_name, m.queue_length, m.newest_msg_age_sec, m.oldest_msg_age_sec, '
      || 'm.total_messages, m.scrape_time, m.queue_visible_length, m.default_partition_length '
      || 'FROM (' || concat_ws(' UNION ALL ',
        (SELECT format(
             $q$
             SELECT u.n, 0::bigint, NULL::integer, NULL::integer,
                    coalesce(pg_sequence_last_value(u.seq::regclass), 0), now(), 0::bigint, NULL::bigint,
                    u.o
             FROM unnest(%L::text[], %L::oid[], %L::integer[]) AS u(n, seq, o)
             $q$,
             array_agg(q.n), array_agg(q.seq), array_agg(q.o))
         FROM queue q WHERE q.empty AND NOT q.spill
         HAVING count(*) > 0),
        (SELECT string_agg(format(
             $q$
             SELECT
                 %1$L::text,
                 count(*),
                 extract(epoch FROM now() - max(enqueued_at))::integer,
                 extract(epoch FROM now() - min(enqueued_at))::integer,
                 coalesce(pg_sequence_last_value(%2$L::regclass), 0),
                 now(),
                 count(*) FILTER (WHERE vt <= now()),
                 %4$s,
                 %5$s
             FROM pgmq.%3$I
             $q$,
             q.n, q.seq, q.qtable,
             CASE WHEN q.spill THEN format('pgmq._default_partition_length(%L)', q.n)
                  ELSE 'NULL::bigint' END,
             q.o), ' UNION ALL ')
         FROM queue q WHERE q.qoid IS NULL OR NOT q.empty OR q.spill)
    ) || ') AS m(queue_name, queue_length, newest_msg_age_sec, oldest_msg_age_sec, '
      || 'total_messages, scrape_time, queue_visible_length, default_partition_length, o) '
      || 'ORDER BY m.o'
    FROM (SELECT 1) one;
$function$
;
COMMENT ON FUNCTION pgmq._metrics_query(text[]) IS NULL;

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
