-- 0008_attributes_limits_schedules_tasks_workflows_and_roles: attributes limits schedules tasks workflows and roles
-- Frozen when written; never edit a released migration.
-- 0015_overview_figures_for_the_shown_queues
-- 0015_overview_figures_for_the_shown_queues: overview figures for the shown queues only
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
CREATE OR REPLACE FUNCTION pgmq._dashboard_all_stats(exact_limit bigint DEFAULT 50000, max_reads jsonb DEFAULT '{}'::jsonb)
 RETURNS SETOF pgmq._dashboard_stats
 LANGUAGE sql
AS $function$
    SELECT * FROM pgmq._dashboard_stats_of(
        ARRAY(SELECT m.queue_name::text FROM pgmq.meta m ORDER BY m.queue_name), exact_limit, max_reads
    )
$function$
;
COMMENT ON FUNCTION pgmq._dashboard_all_stats(bigint,jsonb) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._dashboard_idle_queues(names text[])
 RETURNS TABLE(queue_name text, idle boolean)
 LANGUAGE sql
 STABLE
AS $function$
    -- to_regclass finds each table through the catalogue's name index (no scan of
    -- pg_class, whose size grows with the queues).
    SELECT m.queue_name::text,
           coalesce(lc.relkind = 'r' AND ac.relkind = 'r'
                    AND pg_relation_size(lc.oid) = 0 AND pg_relation_size(ac.oid) = 0, false)
    FROM unnest(names) WITH ORDINALITY AS u(n, o)
    JOIN pgmq.meta m ON m.queue_name = u.n
    CROSS JOIN LATERAL (
        SELECT to_regclass(format('pgmq.%I', pgmq.format_table_name(m.queue_name, 'q'))) AS q,
               to_regclass(format('pgmq.%I', pgmq.format_table_name(m.queue_name, 'a'))) AS a
    ) t
    LEFT JOIN pg_class lc ON lc.oid = t.q
    LEFT JOIN pg_class ac ON ac.oid = t.a
    ORDER BY u.o
$function$
;
COMMENT ON FUNCTION pgmq._dashboard_idle_queues(text[]) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._dashboard_queue_stats(queue_name text, exact_limit bigint DEFAULT 50000, max_reads integer DEFAULT NULL::integer)
 RETURNS pgmq._dashboard_stats
 LANGUAGE plpgsql
AS $function$
DECLARE
    r pgmq._dashboard_stats;
    qtable regclass;
    atable regclass;
    est boolean;
    est_names text[] := '{}';
    future bigint;
    future_read bigint;
    sampled bigint;
    s_in_flight bigint;
    s_delayed bigint;
    s_poison bigint;
    oldest timestamptz;
    newest timestamptz;
    oldest_vt timestamptz;
    -- The real time, not the transaction's start: a dashboard request may sit in a
    -- transaction, and the message functions compare vt with clock_timestamp() too.
    at timestamptz := clock_timestamp();
BEGIN
    IF exact_limit IS NULL OR exact_limit < 1 THEN
        RAISE EXCEPTION 'exact_limit must be a positive number of rows, got %', exact_limit
            USING ERRCODE = 'PQ004';
    END IF;
    r.queue_name := pgmq._require_queue(queue_name);
    qtable := format('pgmq.%I', pgmq.format_table_name(queue_name, 'q'))::regclass;
    atable := format('pgmq.%I', pgmq.format_table_name(queue_name, 'a'))::regclass;

    SELECT c.n, c.estimated INTO r.depth, est FROM pgmq._dashboard_count(qtable, exact_limit) c;
    IF NOT est THEN
        -- Small table: every figure exact, in one pass.
        EXECUTE format(
            $q$SELECT count(*) FILTER (WHERE vt <= $2),
                      count(*) FILTER (WHERE vt > $2 AND read_ct > 0),
                      count(*) FILTER (WHERE vt > $2 AND read_ct = 0),
                      count(*) FILTER (WHERE read_ct >= $1)
               FROM %s$q$, qtable
        ) INTO r.visible, r.in_flight, r.delayed, r.poison USING max_reads, at;
    ELSE
        est_names := est_names || ARRAY['depth', 'visible'];
        -- Messages not yet visible, counted up to a limit (one pass; live tables have no
        -- vt index, see 10_queues.sql: about 0.15 s for a million rows here).
        EXECUTE format(
            $q$SELECT count(*), count(*) FILTER (WHERE read_ct > 0)
               FROM (SELECT read_ct FROM %s WHERE vt > $2 LIMIT $1) s$q$, qtable
        ) INTO future, future_read USING exact_limit + 1, at;
        -- One block sample of about 10,000 rows for what an index cannot answer.
        EXECUTE format(
            $q$SELECT count(*),
                      count(*) FILTER (WHERE vt > $3 AND read_ct > 0),
                      count(*) FILTER (WHERE vt > $3 AND read_ct = 0),
                      count(*) FILTER (WHERE read_ct >= $2)
               FROM %s TABLESAMPLE SYSTEM ($1)$q$, qtable
        ) INTO sampled, s_in_flight, s_delayed, s_poison
          USING least(100.0, 1000000.0 / r.depth), max_reads, at;
        sampled := greatest(sampled, 1);
        IF future <= exact_limit THEN
            r.in_flight := future_read;
            r.delayed := future - future_read;
        ELSE
            r.in_flight := round(r.depth::numeric * s_in_flight / sampled);
            r.delayed := round(r.depth::numeric * s_delayed / sampled);
            est_names := est_names || ARRAY['in_flight', 'delayed'];
        END IF;
        r.visible := greatest(r.depth - r.in_flight - r.delayed, 0);
        IF max_reads IS NOT NULL THEN
            r.poison := round(r.depth::numeric * s_poison / sampled);
            est_names := est_names || 'poison'::text;
        END IF;
    END IF;
    IF max_reads IS NULL THEN
        r.poison := NULL;
    END IF;

    -- Ages: oldest and newest through the primary key; the oldest visible vt takes one pass.
    EXECUTE format('SELECT enqueued_at FROM %s ORDER BY msg_id LIMIT 1', qtable) INTO oldest;
    EXECUTE format('SELECT enqueued_at FROM %s ORDER BY msg_id DESC LIMIT 1', qtable) INTO newest;
    EXECUTE format('SELECT min(vt) FROM %s WHERE vt <= $1', qtable) INTO oldest_vt USING at;
    r.oldest_age_sec := extract(epoch FROM at - oldest)::integer;
    r.newest_age_sec := extract(epoch FROM at - newest)::integer;
    r.oldest_visible_age_sec := extract(epoch FROM at - oldest_vt)::integer;

    SELECT c.n, c.estimated INTO r.archive_size, est FROM pgmq._dashboard_count(atable, exact_limit) c;
    IF est THEN
        est_names := est_names || 'archive_size'::text;
    END IF;
    SELECT c.n, c.estimated INTO r.archived_hour, est
    FROM pgmq._dashboard_count(atable, exact_limit, at - interval '1 hour') c;
    IF est THEN
        est_names := est_names || 'archived_hour'::text;
    END IF;
    SELECT c.n, c.estimated INTO r.archived_day, est
    FROM pgmq._dashboard_count(atable, exact_limit, at - interval '1 day') c;
    IF est THEN
        est_names := est_names || 'archived_day'::text;
    END IF;

    -- A plain SELECT of the sequence: its lock belongs to the caller's (sub)transaction,
    -- where pg_sequence_last_value's is held to the end of the whole transaction.
    EXECUTE format(
        'SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM %s',
        pg_get_serial_sequence(qtable::text, 'msg_id')
    ) INTO r.total_messages;
    r.total_messages := coalesce(r.total_messages, 0);
    r.estimated := est_names;
    RETURN r;
END
$function$
;
COMMENT ON FUNCTION pgmq._dashboard_queue_stats(text,bigint,integer) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._dashboard_stats_of(names text[], exact_limit bigint DEFAULT 50000, max_reads jsonb DEFAULT '{}'::jsonb)
 RETURNS SETOF pgmq._dashboard_stats
 LANGUAGE plpgsql
AS $function$
DECLARE
    q record;
    limits jsonb := coalesce(max_reads, '{}');
    r pgmq._dashboard_stats;
    sent bigint;
BEGIN
    IF exact_limit IS NULL OR exact_limit < 1 THEN
        RAISE EXCEPTION 'exact_limit must be a positive number of rows, got %', exact_limit
            USING ERRCODE = 'PQ004';
    END IF;
    FOR q IN SELECT i.queue_name, i.idle FROM pgmq._dashboard_idle_queues(names) i LOOP
        BEGIN
            IF q.idle THEN
                EXECUTE format(
                    'SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM %s',
                    pg_get_serial_sequence(
                        format('pgmq.%I', pgmq.format_table_name(q.queue_name, 'q')), 'msg_id'
                    )
                ) INTO sent;
                r := ROW(
                    q.queue_name, 0, 0, 0, 0, NULL, NULL, NULL, 0, 0, 0,
                    CASE WHEN limits ? q.queue_name THEN 0 END, coalesce(sent, 0), '{}'::text[]
                );
                RETURN NEXT r;
            ELSE
                RETURN NEXT pgmq._dashboard_queue_stats(
                    q.queue_name, exact_limit, (limits ->> q.queue_name)::integer
                );
            END IF;
        EXCEPTION
            WHEN undefined_table OR SQLSTATE 'PQ002' THEN
                CONTINUE;
        END;
    END LOOP;
END
$function$
;
COMMENT ON FUNCTION pgmq._dashboard_stats_of(text[],bigint,jsonb) IS NULL;


-- 0016_cold_path_in_the_router
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

-- 0017_attributes_for_clients
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

CREATE OR REPLACE FUNCTION pgmq._spark_checked_send(queue_name text)
 RETURNS boolean
 LANGUAGE sql
 STABLE
AS $function$
    SELECT coalesce(
        coalesce((a ->> 'delivery_delay')::integer, 0) > 0
        OR coalesce((a ->> 'deduplication_window')::integer, 0) > 0
        OR a ? 'max_message_size'
        OR (a -> 'priorities') = 'true'::jsonb, false)
    FROM (SELECT pgmq._queue_attributes(queue_name) AS a) x;
$function$
;
COMMENT ON FUNCTION pgmq._spark_checked_send(text) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._spark_send_staged(queue_name text, stage regclass, attempts bigint[])
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    run record;
    sent bigint := 0;
BEGIN
    FOR run IN EXECUTE format(
        $q$
        WITH ordered AS (
            SELECT s.vt, s.message, s.headers,
                   row_number() OVER (ORDER BY s.part, s.seq) AS n,
                   row_number() OVER (PARTITION BY s.vt ORDER BY s.part, s.seq) AS k
            FROM %s s WHERE $1 IS NULL OR s.attempt = ANY ($1)
        )
        SELECT o.vt, array_agg(o.message ORDER BY o.n) AS msgs,
               array_agg(o.headers ORDER BY o.n) AS hdrs
        FROM ordered o
        GROUP BY o.vt, o.n - o.k, (o.k - 1) / 10000
        ORDER BY min(o.n)
        $q$, stage) USING attempts
    LOOP
        PERFORM count(*) FROM pgmq.send_batch(queue_name, run.msgs, run.hdrs, run.vt);
        sent := sent + cardinality(run.msgs);
    END LOOP;
    RETURN sent;
END
$function$
;
COMMENT ON FUNCTION pgmq._spark_send_staged(text,regclass,bigint[]) IS NULL;

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

CREATE OR REPLACE FUNCTION pgmq.spark_claim(queue_name text, consumer text, vt integer, qty integer, max_msg_id bigint, min_batch bigint)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q');
    stamp timestamptz := clock_timestamp();
    attrs jsonb;
    held bigint[];
    ids bigint[];
    dead bigint[];
    next_batch bigint;
BEGIN
    PERFORM pgmq._require_queue(queue_name);
    IF vt IS NULL OR vt < 1 THEN
        RAISE EXCEPTION 'vt must be at least 1 second, got %', vt USING ERRCODE = 'PQ004';
    END IF;
    attrs := coalesce(pgmq._queue_attributes(queue_name), '{}'::jsonb);
    IF (attrs -> 'paused') = 'true'::jsonb THEN
        RETURN NULL;
    END IF;
    PERFORM pgmq._spark_consumer_lock(queue_name, consumer);
    SELECT coalesce(array_agg(id), '{}') INTO held
    FROM pgmq.spark_stream_batch b, unnest(b.msg_ids) AS id
    WHERE b.queue_name = $1 AND b.consumer = $2 AND b.acked_at IS NULL;

    -- $6: max_receive_count when the queue has a dead-letter queue, else NULL (none dead).
    EXECUTE format(
        $q$
        WITH picked AS MATERIALIZED (
            SELECT msg_id, read_ct FROM pgmq.%I
            WHERE vt <= $1 AND ($2::bigint IS NULL OR msg_id <= $2) AND msg_id <> ALL ($3)
            ORDER BY msg_id
            LIMIT $4
            FOR UPDATE SKIP LOCKED
        ), claimed AS (
            UPDATE pgmq.%I q
            SET vt = $1 + make_interval(secs => $5), read_ct = q.read_ct + 1, last_read_at = $1
            FROM picked
            WHERE q.msg_id = picked.msg_id AND NOT coalesce(picked.read_ct >= $6, false)
            RETURNING q.msg_id
        )
        SELECT (SELECT array_agg(c.msg_id ORDER BY c.msg_id) FROM claimed c),
               (SELECT array_agg(p.msg_id ORDER BY p.msg_id) FROM picked p WHERE p.read_ct >= $6)
        $q$,
        qtable, qtable
    ) INTO ids, dead
    USING stamp, max_msg_id, held, qty, vt,
          CASE WHEN attrs ? 'dead_letter_queue' THEN (attrs ->> 'max_receive_count')::integer END;
    IF dead IS NOT NULL THEN
        PERFORM pgmq._dead_letter_ids(queue_name, dead, 0);
    END IF;

    IF ids IS NULL THEN
        RETURN NULL;
    END IF;
    SELECT greatest(coalesce(max(b.batch), 0), coalesce(min_batch, 0)) + 1 INTO next_batch
    FROM pgmq.spark_stream_batch b WHERE b.queue_name = $1 AND b.consumer = $2;
    INSERT INTO pgmq.spark_stream_batch (queue_name, consumer, batch, msg_ids, claimed_at)
    VALUES ($1, $2, next_batch, ids, stamp);
    RETURN next_batch;
END
$function$
;
COMMENT ON FUNCTION pgmq.spark_claim(text,text,integer,integer,bigint,bigint) IS NULL;

CREATE OR REPLACE FUNCTION pgmq.spark_stage_commit(stage text, attempts bigint[], batch_id bigint DEFAULT NULL::bigint)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    entry pgmq.spark_stage;
    moved bigint;
BEGIN
    SELECT * INTO entry FROM pgmq.spark_stage s WHERE s.stage_table = stage FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'staging table pgmq.% does not exist (already committed or dropped)', stage
            USING ERRCODE = 'PQ004';
    END IF;
    IF entry.writer_id IS NOT NULL AND batch_id IS NOT NULL AND EXISTS (
        SELECT 1 FROM pgmq.spark_sink_batch k
        WHERE k.queue_name = entry.queue_name AND k.writer_id = entry.writer_id
          AND k.batch_id >= $3
    ) THEN
        EXECUTE format('TRUNCATE pgmq.%I', stage);
        RETURN -1;
    END IF;
    IF pgmq._spark_checked_send(entry.queue_name) THEN
        moved := pgmq._spark_send_staged(entry.queue_name, format('pgmq.%I', stage)::regclass,
                                         coalesce(attempts, '{}'));
    ELSE
        EXECUTE format(
            'INSERT INTO pgmq.%I (vt, message, headers) '
            'SELECT coalesce(vt, clock_timestamp()), message, headers FROM pgmq.%I '
            'WHERE attempt = ANY ($1) ORDER BY part, seq',
            pgmq.format_table_name(entry.queue_name, 'q'), stage
        ) USING attempts;
        GET DIAGNOSTICS moved = ROW_COUNT;
    END IF;
    IF entry.writer_id IS NULL THEN
        EXECUTE format('DROP TABLE pgmq.%I', stage);
        DELETE FROM pgmq.spark_stage s WHERE s.stage_table = stage;
    ELSE
        EXECUTE format('TRUNCATE pgmq.%I', stage);
        IF batch_id IS NOT NULL THEN
            INSERT INTO pgmq.spark_sink_batch AS k (queue_name, writer_id, batch_id)
            VALUES (entry.queue_name, entry.writer_id, batch_id)
            ON CONFLICT (queue_name, writer_id)
            DO UPDATE SET batch_id = excluded.batch_id, committed_at = now();
        END IF;
    END IF;
    RETURN moved;
END
$function$
;
COMMENT ON FUNCTION pgmq.spark_stage_commit(text,bigint[],bigint) IS NULL;

CREATE OR REPLACE FUNCTION pgmq.spark_stage_create(queue_name text, writer_id text DEFAULT NULL::text)
 RETURNS text
 LANGUAGE plpgsql
AS $function$
DECLARE
    stored text := pgmq._require_queue(queue_name);
    stage text;
BEGIN
    IF writer_id IS NOT NULL THEN
        PERFORM pg_advisory_xact_lock(hashtext('pgmq.spark.stage.' || lower(stored) || '.' || writer_id));
        SELECT s.stage_table INTO stage FROM pgmq.spark_stage s
        WHERE s.queue_name = stored AND s.writer_id = $2;
        IF stage IS NOT NULL AND to_regclass(format('pgmq.%I', stage)) IS NOT NULL THEN
            RETURN stage;
        END IF;
        DELETE FROM pgmq.spark_stage s WHERE s.queue_name = stored AND s.writer_id = $2;
    END IF;
    stage := 'spark_stage_' || replace(gen_random_uuid()::text, '-', '');
    EXECUTE format(
        'CREATE UNLOGGED TABLE pgmq.%I (part integer NOT NULL, attempt bigint NOT NULL, '
        'seq bigint GENERATED ALWAYS AS IDENTITY, vt timestamptz, message jsonb, headers jsonb)',
        stage
    );
    INSERT INTO pgmq.spark_stage (stage_table, queue_name, writer_id) VALUES (stage, stored, $2);
    RETURN stage;
END
$function$
;
COMMENT ON FUNCTION pgmq.spark_stage_create(text,text) IS NULL;

-- BY HAND: staging tables (pgmq.spark_stage_create) now take a row without vt (no delay
-- given: the queue's delivery_delay applies when it is sent); existing ones follow.
DO $by_hand$
DECLARE
    stage text;
BEGIN
    FOR stage IN SELECT s.stage_table FROM pgmq.spark_stage s ORDER BY 1 LOOP
        IF to_regclass(format('pgmq.%I', stage)) IS NOT NULL THEN
            EXECUTE format('ALTER TABLE pgmq.%I ALTER COLUMN vt DROP NOT NULL', stage);
        END IF;
    END LOOP;
END
$by_hand$;

-- 0018_metrics_answers_idle_queues_from_the_catalogue
-- 0017_metrics_answers_idle_queues_from_the: metrics answers idle queues from the catalogue
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._metrics_query(text[]);
CREATE OR REPLACE FUNCTION pgmq._metrics_counted(names text[], tables text[], seqs oid[], spills boolean[])
 RETURNS SETOF pgmq.metrics_result
 LANGUAGE plpgsql
AS $function$
BEGIN
    RETURN QUERY EXECUTE
        'SELECT $1[b.i], b.len, extract(epoch FROM now() - b.newest)::integer, '
        || 'extract(epoch FROM now() - b.oldest)::integer, '
        || 'coalesce(pg_sequence_last_value($2[b.i]), 0), now(), b.visible, '
        || 'CASE WHEN $3[b.i] THEN pgmq._default_partition_length($1[b.i]) END FROM ('
        || (SELECT string_agg(format('SELECT %s, count(*), max(enqueued_at), min(enqueued_at), '
                                     'count(*) FILTER (WHERE vt <= now()) FROM pgmq.%I',
                                     u.i, u.t), ' UNION ALL ')
            FROM unnest(tables) WITH ORDINALITY AS u(t, i))
        || ') AS b(i, len, newest, oldest, visible)'
    USING names, seqs, spills;
END
$function$
;
COMMENT ON FUNCTION pgmq._metrics_counted(text[],text[],oid[],boolean[]) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._metrics_facts(names text[])
 RETURNS TABLE(n text, o bigint, qtable text, qoid oid, seq oid, spill boolean, idle boolean)
 LANGUAGE sql
 STABLE
AS $function$
    SELECT f.n, f.o, f.qtable, f.qoid, f.seq, f.spill,
           coalesce(f.relkind = 'r' AND NOT f.spill AND pg_relation_size(f.qoid) = 0, false)
    FROM (
        SELECT u.n, u.o, t.qtable, c.oid AS qoid, c.relkind,
               coalesce(c.oid = ANY (spilling.oids) OR a.oid = ANY (spilling.oids), false) AS spill,
               (SELECT d.objid FROM pg_depend d JOIN pg_sequence s ON s.seqrelid = d.objid
                WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass
                  AND d.refobjid = c.oid AND d.deptype IN ('a', 'i')
                LIMIT 1) AS seq
        FROM unnest(names) WITH ORDINALITY AS u(n, o)
        CROSS JOIN LATERAL (SELECT pgmq.format_table_name(u.n, 'q') AS qtable) t
        CROSS JOIN (SELECT array_agg(p.partrelid) AS oids FROM pg_partitioned_table p
                    WHERE p.partdefid <> 0) spilling
        LEFT JOIN pg_class c ON c.relnamespace = 'pgmq'::regnamespace AND c.relname = t.qtable
        LEFT JOIN pg_class a
            ON a.relnamespace = 'pgmq'::regnamespace AND a.relname = 'a' || substr(t.qtable, 2)
    ) f;
$function$
;
COMMENT ON FUNCTION pgmq._metrics_facts(text[]) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._metrics_idle(n text, seq oid)
 RETURNS pgmq.metrics_result
 LANGUAGE sql
 STABLE
AS $function$
    SELECT ROW(n, 0, NULL, NULL, coalesce(pg_sequence_last_value(seq), 0), now(), 0,
               NULL)::pgmq.metrics_result;
$function$
;
COMMENT ON FUNCTION pgmq._metrics_idle(text,oid) IS NULL;

CREATE OR REPLACE FUNCTION pgmq.metrics(queue_name text)
 RETURNS pgmq.metrics_result
 LANGUAGE plpgsql
AS $function$
DECLARE
    f record;
    result pgmq.metrics_result;
BEGIN
    SELECT * INTO f FROM pgmq._metrics_facts(ARRAY[pgmq._require_queue(queue_name)]);
    IF f.idle THEN
        RETURN pgmq._metrics_idle(f.n, f.seq);
    END IF;
    SELECT * INTO result
    FROM pgmq._metrics_counted(ARRAY[f.n], ARRAY[f.qtable], ARRAY[f.seq], ARRAY[f.spill]);
    RETURN result;
END
$function$
;
COMMENT ON FUNCTION pgmq.metrics(text) IS NULL;

CREATE OR REPLACE FUNCTION pgmq.metrics_all()
 RETURNS SETOF pgmq.metrics_result
 LANGUAGE plpgsql
AS $function$
DECLARE
    answered pgmq.metrics_result[];
    names text[];
    tables text[];
    seqs oid[];
    spills boolean[];
    chunk constant integer := 200;
    first integer := 1;
BEGIN
    SELECT coalesce(array_agg(pgmq._metrics_idle(f.n, f.seq)) FILTER (WHERE f.idle), '{}'),
           array_agg(f.n ORDER BY f.o) FILTER (WHERE NOT f.idle),
           array_agg(f.qtable ORDER BY f.o) FILTER (WHERE NOT f.idle),
           array_agg(f.seq ORDER BY f.o) FILTER (WHERE NOT f.idle),
           array_agg(f.spill ORDER BY f.o) FILTER (WHERE NOT f.idle)
    INTO answered, names, tables, seqs, spills
    FROM pgmq._metrics_facts(ARRAY(SELECT m.queue_name FROM pgmq.meta m)) f;
    WHILE first <= coalesce(cardinality(names), 0) LOOP
        answered := answered || ARRAY(
            SELECT c FROM pgmq._metrics_counted(names[first:first + chunk - 1],
                                                tables[first:first + chunk - 1],
                                                seqs[first:first + chunk - 1],
                                                spills[first:first + chunk - 1]) c);
        first := first + chunk;
    END LOOP;
    RETURN QUERY SELECT * FROM unnest(answered) r ORDER BY r.queue_name;
END
$function$
;
COMMENT ON FUNCTION pgmq.metrics_all() IS NULL;


-- 0019_fast_dedup_sends_topic_delays
-- 0017_fast_dedup_sends_topic_delays: fast dedup sends, topic delays
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
CREATE OR REPLACE FUNCTION pgmq._install_queue_ops(queue_name text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
    EXECUTE format(
        $ddl$
CREATE OR REPLACE FUNCTION pgmq.%1$I(
    p_op "char", p_qty integer, p_secs integer, p_vt timestamptz, p_ids bigint[],
    p_msgs jsonb[], p_headers jsonb[], p_cond jsonb
)
RETURNS SETOF pgmq.message_record
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
SET enable_bitmapscan = off
AS $body$
-- Generated by pgmq._install_queue_ops for the tables pgmq.%2$I and its archive.
DECLARE
    mark text;
    low bigint;
BEGIN
    %12$s
    IF p_op = 'r' OR p_op = 'p' THEN
        -- The low-water mark (see sql/15_queue_ops.sql): "<table oid> <next look> <msg_id>";
        -- the table's oid tells a mark of a dropped queue from one of its namesake.
        mark := current_setting(%3$L, true);
        IF coalesce(split_part(mark, ' ', 1), '') <> %5$L
           OR split_part(mark, ' ', 2)::float8 < extract(epoch FROM clock_timestamp()) THEN
            low := coalesce(
                (SELECT q.msg_id FROM pgmq.%2$I q ORDER BY q.msg_id LIMIT 1),
                pg_sequence_last_value(%4$L::regclass),
                0);
            PERFORM set_config(%3$L, concat_ws(' ', %5$L,
                extract(epoch FROM clock_timestamp()) + 1, low), false);
        ELSE
            low := split_part(mark, ' ', 3)::bigint;
        END IF;
    END IF;
    IF p_op = 'r' THEN
        RETURN QUERY %6$s;
    ELSIF p_op = 's' THEN
        %7$s
    ELSIF p_op = 'a' THEN
        RETURN QUERY %8$s;
    ELSIF p_op = 'd' THEN
        RETURN QUERY %9$s;
    ELSIF p_op = 'p' THEN
        RETURN QUERY %10$s;
    ELSIF p_op = 'v' THEN
        RETURN QUERY %11$s;
    ELSE
        RAISE EXCEPTION 'unknown queue operation: %%', p_op USING ERRCODE = 'PQ004';
    END IF;
END
$body$
        $ddl$,
        pgmq.format_table_name(queue_name, '_ops'),
        pgmq.format_table_name(queue_name, 'q'),
        'pgmq.low_' || replace(pgmq.format_table_name(queue_name, 'q'), '-', '$'),
        pg_get_serial_sequence(format('pgmq.%I', pgmq.format_table_name(queue_name, 'q')), 'msg_id'),
        to_regclass(format('pgmq.%I', pgmq.format_table_name(queue_name, 'q')))::oid::text,
        pgmq._queue_ops_text(queue_name, 'r', 'low'),
        pgmq._queue_ops_send_block(queue_name),
        pgmq._queue_ops_text(queue_name, 'a'),
        pgmq._queue_ops_text(queue_name, 'd'),
        pgmq._queue_ops_text(queue_name, 'p', 'low'),
        pgmq._queue_ops_text(queue_name, 'v'),
        pgmq._queue_ops_prologue(queue_name)
    );
    PERFORM pgmq._install_queue_route();
END
$function$
;
COMMENT ON FUNCTION pgmq._install_queue_ops(text) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_attr_sql(queue_name text, op "char", low text, attrs jsonb)
 RETURNS text
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q');
    checks boolean := attrs ? 'max_message_size' OR (attrs -> 'priorities') = 'true'::jsonb
                      OR coalesce((attrs ->> 'deduplication_window')::integer, 0) > 0;
    msg text := 'u.msg';
    vt text := 'coalesce($4, clock_timestamp())';
    prio boolean := (attrs -> 'priorities') = 'true'::jsonb;
    dlq text := attrs ->> 'dead_letter_queue';
    order_by text;
    pick text;
    deliver text;
BEGIN
    IF op = 's' OR op = 'S' THEN
        IF checks THEN
            -- Valid messages pass an inline test; pgmq._checked_message raises the error
            -- that names what is wrong with the others.
            msg := format('CASE WHEN %s THEN u.msg ELSE pgmq._checked_message(%L, u.msg, u.hdr, %s, %L, %L) END',
                          pgmq._send_checks_sql(attrs),
                          queue_name, coalesce(attrs ->> 'max_message_size', 'NULL'), prio,
                          coalesce((attrs ->> 'deduplication_window')::integer, 0) > 0);
        END IF;
        IF coalesce((attrs ->> 'delivery_delay')::integer, 0) > 0 THEN
            vt := format('coalesce($4, clock_timestamp() + interval %L)',
                         (attrs ->> 'delivery_delay') || ' seconds');
        END IF;
        IF coalesce((attrs ->> 'deduplication_window')::integer, 0) = 0 THEN
            RETURN format(
                $sql$
        INSERT INTO pgmq.%1$I AS q (vt, message, headers)
        SELECT %2$s, %3$s, u.hdr FROM unnest($6, $7) AS u(msg, hdr)
        RETURNING q.msg_id, NULL::integer, NULL::timestamptz, NULL::timestamptz,
                  NULL::timestamptz, NULL::jsonb, NULL::jsonb
                $sql$, qtable, vt, msg);
        END IF;
        IF op = 'S' THEN
            -- The fast send: two plain inserts, the ids claimed in the order the statement
            -- below claims them (so no two batches, fast or not, wait on each other's ids
            -- crosswise). Any id already claimed, by an earlier send, a concurrent one
            -- (after its commit) or this batch itself, raises unique_violation, and the
            -- caller runs the statement below instead.
            RETURN format(
                $sql$
        WITH m AS (
            INSERT INTO pgmq.%1$I AS q (vt, message, headers)
            SELECT %2$s, %3$s, u.hdr FROM unnest($6, $7) AS u(msg, hdr)
            RETURNING q.msg_id, q.headers ->> 'deduplication_id' AS dedup
        ), claimed AS (
            INSERT INTO pgmq.queue_deduplication (queue_name, deduplication_id, msg_id, sent_at)
            SELECT %4$L, m.dedup, m.msg_id, clock_timestamp() FROM m
            WHERE m.dedup IS NOT NULL
            ORDER BY m.dedup
        )
        SELECT array_agg(m.msg_id ORDER BY m.msg_id) FROM m
                $sql$, qtable, vt, msg, lower(queue_name));
        END IF;
        -- Deduplication: every message takes a new msg_id (a duplicate's is never used);
        -- each id's first message in the batch claims the id in pgmq.queue_deduplication; a conflict (a concurrent sender
        -- waits there for the first one's commit) keeps the row of a send within the
        -- window, so only a claim that kept our new msg_id enqueues its message. Every
        -- message of the batch returns its id's msg_id.
        RETURN format(
            $sql$
        WITH input AS MATERIALIZED (
            SELECT u.ord, %3$s AS msg, u.hdr, u.hdr ->> 'deduplication_id' AS dedup,
                   nextval(%4$L::regclass) AS new_id
            FROM unnest($6, $7) WITH ORDINALITY AS u(msg, hdr, ord)
        ),
        claimed AS (
            INSERT INTO pgmq.queue_deduplication AS d (queue_name, deduplication_id, msg_id, sent_at)
            SELECT DISTINCT ON (i.dedup) %5$L, i.dedup, i.new_id, clock_timestamp()
            FROM input i WHERE i.dedup IS NOT NULL
            ORDER BY i.dedup, i.ord
            ON CONFLICT (queue_name, deduplication_id) DO UPDATE
            SET msg_id = CASE WHEN d.sent_at > clock_timestamp() - interval %6$L
                              THEN d.msg_id ELSE excluded.msg_id END,
                sent_at = CASE WHEN d.sent_at > clock_timestamp() - interval %6$L
                               THEN d.sent_at ELSE excluded.sent_at END
            RETURNING d.deduplication_id, d.msg_id
        ),
        inserted AS (
            INSERT INTO pgmq.%1$I AS q (msg_id, vt, message, headers) OVERRIDING SYSTEM VALUE
            SELECT i.new_id, %2$s, i.msg, i.hdr
            FROM input i
            WHERE i.dedup IS NULL OR i.new_id IN (SELECT c.msg_id FROM claimed c)
            ORDER BY i.ord
            RETURNING q.msg_id
        )
        SELECT coalesce(c.msg_id, i.new_id), NULL::integer, NULL::timestamptz, NULL::timestamptz,
               NULL::timestamptz, NULL::jsonb, NULL::jsonb
        FROM input i
        LEFT JOIN claimed c ON c.deduplication_id = i.dedup
        ORDER BY i.ord
            $sql$,
            qtable, vt, msg,
            pg_get_serial_sequence(format('pgmq.%I', qtable), 'msg_id'),
            lower(queue_name), (attrs ->> 'deduplication_window') || ' seconds');
    END IF;

    IF op <> 'r' AND op <> 'p' THEN
        RETURN pgmq._queue_ops_sql(queue_name, op, low);
    END IF;
    IF (attrs -> 'paused') = 'true'::jsonb THEN
        RETURN $sql$
        SELECT NULL::bigint, NULL::integer, NULL::timestamptz, NULL::timestamptz,
               NULL::timestamptz, NULL::jsonb, NULL::jsonb
        WHERE false
        $sql$;
    END IF;
    IF NOT prio AND dlq IS NULL THEN
        RETURN pgmq._queue_ops_sql(queue_name, op, low);
    END IF;

    order_by := CASE WHEN prio THEN 'pgmq._task_priority(%1$s.headers) DESC, %1$s.msg_id'
                     ELSE '%1$s.msg_id' END;
    pick := format(
        $pick$
            SELECT q.msg_id, q.read_ct FROM pgmq.%I q
            WHERE q.msg_id >= %s AND q.vt <= clock_timestamp()
              AND ($8 IS NULL OR $8 = '{}'::jsonb OR q.message @> $8)
            ORDER BY %s
            LIMIT $2
            FOR UPDATE SKIP LOCKED
        $pick$,
        qtable, low, format(order_by, 'q'));
    deliver := CASE WHEN dlq IS NULL THEN 'TRUE' ELSE 'p.read_ct < ' || (attrs ->> 'max_receive_count') END;
    RETURN format(
        $sql$
        WITH picked AS MATERIALIZED (%2$s),
        %3$s
        done AS (
            %4$s
            WHERE m.msg_id = ANY(ARRAY(SELECT p.msg_id FROM picked p WHERE %5$s))
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message, m.headers
        )
        SELECT * FROM done d ORDER BY %6$s
        $sql$,
        qtable, pick,
        CASE WHEN dlq IS NULL THEN '' ELSE format(
            $dead$
        dead AS (
            DELETE FROM pgmq.%1$I m
            WHERE m.msg_id = ANY(ARRAY(SELECT p.msg_id FROM picked p WHERE NOT (%3$s)))
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.message, m.headers
        ),
        moved AS (
            INSERT INTO pgmq.%2$I (vt, message, headers)
            SELECT clock_timestamp(), x.message,
                   pgmq._dead_letter_headers(x.headers, %4$L, x.msg_id, x.read_ct, x.enqueued_at, NULL)
            FROM dead x ORDER BY x.msg_id
        ),
            $dead$,
            qtable, pgmq.format_table_name(dlq, 'q'), deliver, queue_name) END,
        CASE WHEN op = 'r' THEN format(
            $upd$
            UPDATE pgmq.%I m
            SET vt = clock_timestamp() + make_interval(secs => $3),
                read_ct = m.read_ct + 1,
                last_read_at = clock_timestamp()
            $upd$, qtable)
        ELSE format('DELETE FROM pgmq.%I m', qtable) END,
        deliver,
        format(order_by, 'd'));
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_attr_sql(text,"char",text,jsonb) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_send_block(queue_name text)
 RETURNS text
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
    attrs jsonb := pgmq._queue_attributes(queue_name);
BEGIN
    IF coalesce((attrs ->> 'deduplication_window')::integer, 0) = 0 THEN
        RETURN format('RETURN QUERY %s;', pgmq._queue_ops_text(queue_name, 's'));
    END IF;
    RETURN format(
        $blk$
        DECLARE
            ids bigint[];
            tries text := coalesce(current_setting('pgmq.dedup_tries', true), '');
            tried integer := CASE WHEN split_part(tries, ' ', 1)
                                       = pg_current_xact_id_if_assigned()::text
                                  THEN split_part(tries, ' ', 2)::integer ELSE 0 END;
        BEGIN
            IF tried < 16 THEN
                BEGIN
                    %1$s INTO ids;
                EXCEPTION WHEN unique_violation THEN
                    ids := NULL;
                END;
                PERFORM set_config('pgmq.dedup_tries',
                                   coalesce(pg_current_xact_id_if_assigned()::text, '') || ' ' || (tried + 1),
                                   false);
                IF ids IS NOT NULL THEN
                    RETURN QUERY SELECT i, NULL::integer, NULL::timestamptz, NULL::timestamptz,
                                        NULL::timestamptz, NULL::jsonb, NULL::jsonb
                                 FROM unnest(ids) AS i;
                    RETURN;
                END IF;
            END IF;
            RETURN QUERY %2$s;
        END;
        $blk$,
        pgmq._queue_ops_attr_sql(queue_name, 'S', '0', attrs),
        pgmq._queue_ops_attr_sql(queue_name, 's', '0', attrs));
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_send_block(text) IS NULL;

CREATE OR REPLACE FUNCTION pgmq.send_batch_topic(routing_key text, msgs jsonb[])
 RETURNS TABLE(queue_name text, msg_id bigint)
 LANGUAGE sql
AS $function$ SELECT * FROM pgmq.send_batch_topic(routing_key, msgs, NULL::jsonb[], NULL::timestamptz); $function$
;
COMMENT ON FUNCTION pgmq.send_batch_topic(text,jsonb[]) IS NULL;

CREATE OR REPLACE FUNCTION pgmq.send_batch_topic(routing_key text, msgs jsonb[], headers jsonb[])
 RETURNS TABLE(queue_name text, msg_id bigint)
 LANGUAGE sql
AS $function$ SELECT * FROM pgmq.send_batch_topic(routing_key, msgs, headers, NULL::timestamptz); $function$
;
COMMENT ON FUNCTION pgmq.send_batch_topic(text,jsonb[],jsonb[]) IS NULL;


-- Written by hand: the access function of a hot queue with a deduplication window is
-- written again, so that its send branch tries the fast send (pgmq._queue_ops_send_block).
SELECT pgmq._install_queue_ops(a.queue_name)
FROM pgmq.queue_attributes a
WHERE coalesce((a.attributes ->> 'deduplication_window')::integer, 0) > 0
  AND to_regproc('pgmq.' || quote_ident(pgmq.format_table_name(a.queue_name, '_ops'))) IS NOT NULL
ORDER BY a.queue_name;

-- 0020_static_sql_core
-- 0020_static_sql_core: static SQL core
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._drop_queue_ops(text);
DROP FUNCTION IF EXISTS pgmq._install_queue_ops(text);
DROP FUNCTION IF EXISTS pgmq._install_queue_route();
DROP FUNCTION IF EXISTS pgmq._queue_ops_branches(text[]);
DROP FUNCTION IF EXISTS pgmq._queue_ops_hot(text,"char",integer,integer,timestamp with time zone,bigint[],jsonb[],jsonb[],jsonb);
DROP FUNCTION IF EXISTS pgmq._queue_ops_hot_set();
DROP FUNCTION IF EXISTS pgmq._queue_ops_prologue(text);
DROP FUNCTION IF EXISTS pgmq._queue_ops_promote(text);
DROP FUNCTION IF EXISTS pgmq._queue_ops_send_block(text);
DROP FUNCTION IF EXISTS pgmq._queue_ops_text(text,"char",text);
DROP FUNCTION IF EXISTS pgmq._queue_ops_warmup();
CREATE OR REPLACE FUNCTION pgmq._claim_filter(queue_name text, attrs jsonb, qty integer, OUT allowed integer, OUT max_receive_count integer, OUT dead_letter_queue text, OUT by_priority boolean)
 RETURNS record
 LANGUAGE sql
 STABLE
AS $function$
    SELECT CASE WHEN (attrs -> 'paused') = 'true'::jsonb THEN 0 ELSE qty END,
           CASE WHEN attrs ? 'dead_letter_queue' THEN (attrs ->> 'max_receive_count')::integer END,
           attrs ->> 'dead_letter_queue',
           coalesce((attrs -> 'priorities') = 'true'::jsonb, false);
$function$
;
COMMENT ON FUNCTION pgmq._claim_filter(text,jsonb,integer) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._low_water_mark(queue_name text)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q');
    -- '-' may not appear in a setting's name, '$' may, and never appears in a queue name
    key text := 'pgmq.low_' || replace(qtable, '-', '$');
    mark text := current_setting(key, true);
    rel oid := to_regclass(format('pgmq.%I', qtable));
    now_s float8 := extract(epoch FROM clock_timestamp());
    low bigint;
BEGIN
    IF rel IS NULL THEN
        RETURN 0;
    END IF;
    IF coalesce(split_part(mark, ' ', 1), '') = rel::text
       AND split_part(mark, ' ', 2)::float8 >= now_s THEN
        RETURN split_part(mark, ' ', 3)::bigint;
    END IF;
    EXECUTE format('SELECT q.msg_id FROM pgmq.%I q ORDER BY q.msg_id LIMIT 1', qtable) INTO low;
    low := coalesce(low, pg_sequence_last_value(pg_get_serial_sequence(format('pgmq.%I', qtable), 'msg_id')::regclass), 0);
    PERFORM set_config(key, concat_ws(' ', rel, now_s + 1, low), false);
    RETURN low;
END
$function$
;
COMMENT ON FUNCTION pgmq._low_water_mark(text) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_attr_sql(queue_name text, op "char", low text, attrs jsonb)
 RETURNS text
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q');
    checks text := nullif(pgmq._send_checks_sql(attrs), '');
    gate text := 'TRUE';
    msg text := 'u.msg';
    vt text := 'coalesce($4, clock_timestamp())';
    f record := pgmq._claim_filter(queue_name, attrs, NULL);
    window_ text := (attrs ->> 'deduplication_window') || ' seconds';
    order_by text;
    pick text;
BEGIN
    IF op = 's' OR op = 'S' THEN
        IF checks IS NOT NULL THEN
            -- Valid messages pass an inline test; pgmq._checked_message raises the error
            -- that names what is wrong with the first of the others.
            gate := format(
                '(SELECT count(pgmq._checked_message(%L, u.msg, u.hdr, %s, %L, %L)) '
                'FROM unnest($6, $7) AS u(msg, hdr) WHERE (%s) IS NOT TRUE) >= 0',
                queue_name, coalesce(attrs ->> 'max_message_size', 'NULL'), f.by_priority,
                window_ IS NOT NULL AND (attrs ->> 'deduplication_window')::integer > 0, checks);
        END IF;
        IF coalesce((attrs ->> 'delivery_delay')::integer, 0) > 0 THEN
            vt := format('coalesce($4, clock_timestamp() + interval %L)',
                         (attrs ->> 'delivery_delay') || ' seconds');
        END IF;
        IF coalesce((attrs ->> 'deduplication_window')::integer, 0) = 0 THEN
            RETURN format(
                $sql$
        INSERT INTO pgmq.%1$I AS q (vt, message, headers)
        SELECT %2$s, %3$s, u.hdr FROM unnest($6, $7) AS u(msg, hdr)
        WHERE %4$s
        RETURNING q.msg_id, NULL::integer, NULL::timestamptz, NULL::timestamptz,
                  NULL::timestamptz, NULL::jsonb, NULL::jsonb
                $sql$, qtable, vt, msg, gate);
        END IF;
        IF op = 'S' THEN
            -- The fast send: two plain inserts, the ids claimed in the order the statement
            -- below claims them (so no two batches, fast or not, wait on each other's ids
            -- crosswise). Any id already claimed, by an earlier send, a concurrent one
            -- (after its commit) or this batch itself, raises unique_violation, and the
            -- caller runs the statement below instead.
            RETURN format(
                $sql$
        WITH m AS (
            INSERT INTO pgmq.%1$I AS q (vt, message, headers)
            SELECT %2$s, %3$s, u.hdr FROM unnest($6, $7) AS u(msg, hdr)
            WHERE %5$s
            RETURNING q.msg_id, q.headers ->> 'deduplication_id' AS dedup
        ), claimed AS (
            INSERT INTO pgmq.queue_deduplication (queue_name, deduplication_id, msg_id, sent_at)
            SELECT %4$L, m.dedup, m.msg_id, clock_timestamp() FROM m
            WHERE m.dedup IS NOT NULL
            ORDER BY m.dedup
        )
        SELECT array_agg(m.msg_id ORDER BY m.msg_id) FROM m
                $sql$, qtable, vt, msg, lower(queue_name), gate);
        END IF;
        -- Deduplication: a message takes a new msg_id only when it may be enqueued: it
        -- has no deduplication id, or it is its id's first in the batch and no send within
        -- the window holds that id (as this statement's snapshot sees it). Each such id is
        -- claimed in pgmq.queue_deduplication; a conflict (a concurrent sender waits there
        -- for the first one's commit) keeps the row of a send within the window, so only
        -- a claim that kept our new msg_id enqueues its message (the loser of that race
        -- is the one case where an id is used up without a message). Every message of the
        -- batch returns its id's msg_id.
        RETURN format(
            $sql$
        WITH input AS MATERIALIZED (
            SELECT u.ord, %3$s AS msg, u.hdr, u.hdr ->> 'deduplication_id' AS dedup
            FROM unnest($6, $7) WITH ORDINALITY AS u(msg, hdr, ord)
            WHERE %7$s
        ),
        numbered AS MATERIALIZED (
            SELECT i.ord, i.msg, i.hdr, i.dedup,
                   CASE WHEN i.dedup IS NULL
                          OR (i.first AND NOT EXISTS (
                                SELECT 1 FROM pgmq.queue_deduplication d
                                WHERE d.queue_name = %5$L AND d.deduplication_id = i.dedup
                                  AND d.sent_at > clock_timestamp() - interval %6$L))
                        THEN nextval(%4$L::regclass) END AS new_id
            FROM (SELECT x.*, row_number() OVER (PARTITION BY x.dedup ORDER BY x.ord) = 1 AS first
                  FROM input x) i
            ORDER BY i.ord
        ),
        claimed AS (
            INSERT INTO pgmq.queue_deduplication AS d (queue_name, deduplication_id, msg_id, sent_at)
            SELECT %5$L, n.dedup, n.new_id, clock_timestamp()
            FROM numbered n WHERE n.dedup IS NOT NULL AND n.new_id IS NOT NULL
            ORDER BY n.dedup
            ON CONFLICT (queue_name, deduplication_id) DO UPDATE
            SET msg_id = CASE WHEN d.sent_at > clock_timestamp() - interval %6$L
                              THEN d.msg_id ELSE excluded.msg_id END,
                sent_at = CASE WHEN d.sent_at > clock_timestamp() - interval %6$L
                               THEN d.sent_at ELSE excluded.sent_at END
            RETURNING d.deduplication_id, d.msg_id
        ),
        inserted AS (
            INSERT INTO pgmq.%1$I AS q (msg_id, vt, message, headers) OVERRIDING SYSTEM VALUE
            SELECT n.new_id, %2$s, n.msg, n.hdr
            FROM numbered n
            WHERE n.dedup IS NULL OR n.new_id IN (SELECT c.msg_id FROM claimed c)
            ORDER BY n.ord
            RETURNING q.msg_id
        )
        SELECT coalesce(c.msg_id,
                        (SELECT d.msg_id FROM pgmq.queue_deduplication d
                         WHERE d.queue_name = %5$L AND d.deduplication_id = n.dedup),
                        n.new_id),
               NULL::integer, NULL::timestamptz, NULL::timestamptz,
               NULL::timestamptz, NULL::jsonb, NULL::jsonb
        FROM numbered n
        LEFT JOIN claimed c ON c.deduplication_id = n.dedup
        ORDER BY n.ord
            $sql$,
            qtable, vt, msg,
            pg_get_serial_sequence(format('pgmq.%I', qtable), 'msg_id'),
            lower(queue_name), window_, gate);
    END IF;

    IF op <> 'r' AND op <> 'p' THEN
        RETURN pgmq._queue_ops_sql(queue_name, op, low);
    END IF;
    IF NOT f.by_priority AND f.dead_letter_queue IS NULL THEN
        RETURN pgmq._queue_ops_sql(queue_name, op, low);
    END IF;

    order_by := CASE WHEN f.by_priority THEN 'pgmq._task_priority(%1$s.headers) DESC, %1$s.msg_id'
                     ELSE '%1$s.msg_id' END;
    -- Only messages that may still be delivered are picked, so redrive never uses up
    -- the qty (issue 22 #11); the over-read ones among those the pick walked past (all
    -- of them when it found fewer than qty) move to the dead-letter queue, at most
    -- max(qty, 100) per call.
    pick := format(
        $pick$
            SELECT q.msg_id FROM pgmq.%I q
            WHERE q.msg_id >= %s AND q.vt <= clock_timestamp()
              AND ($8 IS NULL OR $8 = '{}'::jsonb OR q.message @> $8)
              %s
            ORDER BY %s
            LIMIT $2
            FOR UPDATE SKIP LOCKED
        $pick$,
        qtable, low,
        CASE WHEN f.dead_letter_queue IS NULL THEN ''
             ELSE format('AND q.read_ct < %s', f.max_receive_count) END,
        format(order_by, 'q'));
    RETURN format(
        $sql$
        WITH picked AS MATERIALIZED (%2$s),
        %3$s
        done AS (
            %4$s
            WHERE m.msg_id = ANY(ARRAY(SELECT p.msg_id FROM picked p))
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message, m.headers
        )
        SELECT * FROM done d ORDER BY %5$s
        $sql$,
        qtable, pick,
        CASE WHEN f.dead_letter_queue IS NULL THEN '' ELSE format(
            $dead$
        dead AS (
            DELETE FROM pgmq.%1$I m
            WHERE m.msg_id = ANY(ARRAY(
                SELECT q.msg_id FROM pgmq.%1$I q
                WHERE q.msg_id >= %5$s AND q.vt <= clock_timestamp()
                  AND ($8 IS NULL OR $8 = '{}'::jsonb OR q.message @> $8)
                  AND q.read_ct >= %3$s
                  AND ((SELECT count(*) FROM picked) < $2
                       OR q.msg_id < (SELECT max(p.msg_id) FROM picked p))
                ORDER BY q.msg_id
                LIMIT greatest($2, 100)
                FOR UPDATE SKIP LOCKED))
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.message, m.headers
        ),
        moved AS (
            INSERT INTO pgmq.%2$I (vt, message, headers)
            SELECT clock_timestamp(), x.message,
                   pgmq._dead_letter_headers(x.headers, %4$L, x.msg_id, x.read_ct, x.enqueued_at, NULL)
            FROM dead x ORDER BY x.msg_id
        ),
            $dead$,
            qtable, pgmq.format_table_name(f.dead_letter_queue, 'q'), f.max_receive_count,
            queue_name, low) END,
        CASE WHEN op = 'r' THEN format(
            $upd$
            UPDATE pgmq.%I m
            SET vt = clock_timestamp() + make_interval(secs => $3),
                read_ct = m.read_ct + 1,
                last_read_at = clock_timestamp()
            $upd$, qtable)
        ELSE format('DELETE FROM pgmq.%I m', qtable) END,
        format(order_by, 'd'));
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_attr_sql(text,"char",text,jsonb) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_route(queue_name text, p_op "char", p_qty integer, p_secs integer, p_vt timestamp with time zone, p_ids bigint[], p_msgs jsonb[], p_headers jsonb[], p_cond jsonb)
 RETURNS SETOF pgmq.message_record
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q');  -- checks the name first
    attrs jsonb;
    low bigint := 0;
BEGIN
    IF p_op = 'r' OR p_op = 'p' THEN
        low := pgmq._low_water_mark(queue_name);
    END IF;
    SELECT a.attributes INTO attrs
    FROM pgmq.queue_attributes a WHERE lower(a.queue_name) = lower($1);
    IF attrs IS NULL THEN
        RETURN QUERY EXECUTE pgmq._queue_ops_sql_for(
                qtable, CASE WHEN p_op = 's' AND cardinality(p_msgs) = 1 THEN '1' ELSE p_op END, '$9')
            USING p_op, p_qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond, low;
        RETURN;
    END IF;
    RETURN QUERY SELECT * FROM pgmq._queue_ops_with_attributes(
        queue_name, attrs, p_op, p_qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond, low);
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_route(text,"char",integer,integer,timestamp with time zone,bigint[],jsonb[],jsonb[],jsonb) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_sql(queue_name text, op "char", low text DEFAULT '0'::text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
    SELECT pgmq._queue_ops_sql_for(pgmq.format_table_name(queue_name, 'q'), op, low);
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_sql(text,"char",text) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_sql_for(qtable text, op "char", low text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
    SELECT format(
        CASE op
        WHEN 'r' THEN $sql$
        WITH claimed AS (
            UPDATE pgmq.%1$I m
            SET vt = clock_timestamp() + make_interval(secs => $3),
                read_ct = m.read_ct + 1,
                last_read_at = clock_timestamp()
            WHERE m.msg_id = ANY(ARRAY(%3$s))
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message, m.headers
        )
        SELECT * FROM claimed c ORDER BY c.msg_id
        $sql$
        WHEN 'p' THEN $sql$
        WITH removed AS (
            DELETE FROM pgmq.%1$I m
            WHERE m.msg_id = ANY(ARRAY(%3$s))
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message, m.headers
        )
        SELECT * FROM removed r ORDER BY r.msg_id
        $sql$
        -- A function scan yields the arrays in order and the insert numbers rows as they
        -- come, so ids follow the array order; unnest pads a NULL headers array with NULLs.
        WHEN 's' THEN $sql$
        INSERT INTO pgmq.%1$I AS q (vt, message, headers)
        SELECT coalesce($4, clock_timestamp()), u.msg, u.hdr FROM unnest($6, $7) AS u(msg, hdr)
        RETURNING q.msg_id, NULL::integer, NULL::timestamptz, NULL::timestamptz,
                  NULL::timestamptz, NULL::jsonb, NULL::jsonb
        $sql$
        -- one message: a VALUES row plans in less time than a function scan
        WHEN '1' THEN $sql$
        INSERT INTO pgmq.%1$I AS q (vt, message, headers)
        VALUES (coalesce($4, clock_timestamp()), $6[1], $7[1])
        RETURNING q.msg_id, NULL::integer, NULL::timestamptz, NULL::timestamptz,
                  NULL::timestamptz, NULL::jsonb, NULL::jsonb
        $sql$
        WHEN 'a' THEN $sql$
        WITH moved AS (
            DELETE FROM pgmq.%1$I q WHERE q.msg_id = ANY($5)
            RETURNING q.msg_id, q.read_ct, q.enqueued_at, q.last_read_at, q.vt, q.message, q.headers
        )
        INSERT INTO pgmq.%2$I AS a (msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers)
        SELECT * FROM moved
        RETURNING a.msg_id, NULL::integer, NULL::timestamptz, NULL::timestamptz,
                  NULL::timestamptz, NULL::jsonb, NULL::jsonb
        $sql$
        WHEN 'd' THEN $sql$
        DELETE FROM pgmq.%1$I q WHERE q.msg_id = ANY($5)
        RETURNING q.msg_id, NULL::integer, NULL::timestamptz, NULL::timestamptz,
                  NULL::timestamptz, NULL::jsonb, NULL::jsonb
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
        'a' || substr(qtable, 2),
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
            qtable, low));
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_sql_for(text,"char",text) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_with_attributes(queue_name text, attrs jsonb, p_op "char", p_qty integer, p_secs integer, p_vt timestamp with time zone, p_ids bigint[], p_msgs jsonb[], p_headers jsonb[], p_cond jsonb, low bigint)
 RETURNS SETOF pgmq.message_record
 LANGUAGE plpgsql
AS $function$
DECLARE
    f record;
    qty integer := p_qty;
BEGIN
    IF p_op = 's' AND coalesce((attrs ->> 'deduplication_window')::integer, 0) > 0 THEN
        RETURN QUERY SELECT * FROM pgmq._send_deduplicated(queue_name, attrs, p_vt, p_msgs, p_headers);
        RETURN;
    END IF;
    IF p_op = 'r' OR p_op = 'p' THEN
        f := pgmq._claim_filter(queue_name, attrs, p_qty);
        qty := f.allowed;
        IF qty = 0 THEN
            RETURN;
        END IF;
        IF f.dead_letter_queue IS NOT NULL THEN
            PERFORM pgmq._ensure_dead_letter_queue(f.dead_letter_queue);
        END IF;
    END IF;
    RETURN QUERY EXECUTE pgmq._queue_ops_attr_sql(queue_name, p_op, '$9', attrs)
        USING p_op, qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond, low;
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_with_attributes(text,jsonb,"char",integer,integer,timestamp with time zone,bigint[],jsonb[],jsonb[],jsonb,bigint) IS NULL;

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
    RETURN QUERY SELECT * FROM pgmq._queue_ops_with_attributes(
        stored, attrs || '{"priorities": true}'::jsonb, 'r', qty, vt, NULL::timestamptz,
        NULL::bigint[], NULL::jsonb[], NULL::jsonb[], '{}'::jsonb, pgmq._low_water_mark(stored));
END
$function$
;
COMMENT ON FUNCTION pgmq._read_by_priority(text,integer,integer) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._read_grouped(queue_name text, vt integer, qty integer, mode text)
 RETURNS SETOF pgmq.message_record
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q');
    lock_space integer := hashtext(qtable);
    grp text;
    groups text[] := '{}';
    ready bigint;
    budget integer;
    f record;
    wanted integer;
    claim text;
    rec pgmq.message_record;
    dead bigint[];
    given bigint[] := '{}';
BEGIN
    IF qty IS NULL OR qty < 0 THEN
        RAISE EXCEPTION 'qty must be zero or more, got: %', coalesce(qty::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    f := pgmq._claim_filter(queue_name, coalesce(pgmq._queue_attributes(queue_name), '{}'::jsonb), qty);
    wanted := f.allowed;
    IF wanted = 0 THEN
        RETURN;
    END IF;
    -- Over-read messages moved to the dead-letter queue do not count: read again for
    -- the rest (each round moves at least one, so this ends).
    LOOP
        groups := '{}';
        budget := wanted;
        dead := '{}';

        -- Groups whose first message looks visible, oldest first. Only a hint: each
        -- is checked again below, after its lock is held.
        FOR grp IN EXECUTE format(
            $q$
            SELECT h.grp
            FROM (
                SELECT DISTINCT ON (pgmq._fifo_group(headers))
                       pgmq._fifo_group(headers) AS grp, msg_id, vt
                FROM pgmq.%I
                ORDER BY pgmq._fifo_group(headers), msg_id
            ) h
            WHERE h.vt <= clock_timestamp()
            ORDER BY h.msg_id
            $q$,
            qtable
        )
        LOOP
            -- Another reader holds this group until it commits: leave it alone.
            CONTINUE WHEN NOT pg_try_advisory_xact_lock(lock_space, hashtext(grp));
            -- A new statement, so a new snapshot: it sees what the last holder committed.
            EXECUTE format(
                $q$
                SELECT count(*) FILTER (WHERE ok)
                FROM (
                    SELECT bool_and(vt <= clock_timestamp()) OVER (ORDER BY msg_id) AS ok
                    FROM (
                        SELECT msg_id, vt FROM pgmq.%I
                        WHERE pgmq._fifo_group(headers) = $1
                        ORDER BY msg_id
                        LIMIT $2
                    ) front
                ) run
                $q$,
                qtable
            ) INTO ready USING grp, CASE WHEN mode = 'fill' THEN budget ELSE 1 END;
            CONTINUE WHEN ready = 0;
            groups := groups || grp;
            budget := budget - CASE WHEN mode = 'fill' THEN ready::integer ELSE 1 END;
            EXIT WHEN budget <= 0;
        END LOOP;

        IF cardinality(groups) = 0 THEN
            RETURN;
        END IF;

        claim := format(
            $q$
            WITH wanted AS MATERIALIZED (
                -- The readable front of each locked group, ranked, then chosen by mode.
                SELECT g.prio, r.msg_id, r.rnk
                FROM unnest($1::text[]) WITH ORDINALITY AS g(grp, prio)
                CROSS JOIN LATERAL (
                    SELECT f.msg_id,
                           row_number() OVER w AS rnk,
                           bool_and(f.vt <= clock_timestamp()) OVER w AS ok
                    FROM (
                        SELECT msg_id, vt FROM pgmq.%1$I
                        WHERE pgmq._fifo_group(headers) = g.grp
                        ORDER BY msg_id
                        LIMIT $5
                    ) f
                    WINDOW w AS (ORDER BY f.msg_id)
                ) r
                WHERE r.ok AND ($4 <> 'head' OR r.rnk = 1)
                ORDER BY CASE WHEN $4 = 'rr' THEN r.rnk ELSE g.prio END,
                         CASE WHEN $4 = 'rr' THEN g.prio ELSE r.rnk END
                LIMIT $2
            ),
            locked AS MATERIALIZED (
                SELECT m.msg_id FROM pgmq.%1$I m
                WHERE m.msg_id IN (SELECT msg_id FROM wanted) AND m.vt <= clock_timestamp()
                  AND m.msg_id <> ALL ($6)  -- handed out by an earlier round of this call
                FOR UPDATE SKIP LOCKED
            ),
            usable AS (
                -- A row someone else holds (a plain read, a delete) ends its group's share.
                SELECT w.msg_id, w.prio, w.rnk
                FROM wanted w
                WHERE NOT EXISTS (
                    SELECT 1 FROM wanted e
                    WHERE e.prio = w.prio AND e.rnk <= w.rnk
                      AND NOT EXISTS (SELECT 1 FROM locked l WHERE l.msg_id = e.msg_id)
                )
            ),
            claimed AS (
                UPDATE pgmq.%1$I m
                SET vt = clock_timestamp() + $3,
                    read_ct = m.read_ct + 1,
                    last_read_at = clock_timestamp()
                FROM usable u
                WHERE m.msg_id = u.msg_id
                RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message,
                          m.headers, u.prio, u.rnk
            )
            SELECT msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers
            FROM claimed
            -- Round-robin keeps its rounds (as pgmq does); the others come in msg_id order.
            ORDER BY CASE WHEN $4 = 'rr' THEN rnk ELSE 0 END,
                     CASE WHEN $4 = 'rr' THEN prio ELSE 0 END,
                     msg_id
            $q$,
            qtable
        );
        IF f.max_receive_count IS NULL THEN
            RETURN QUERY EXECUTE claim
                USING groups, wanted, make_interval(secs => coalesce(vt, 0)), mode,
                -- The most one group can contribute: every other group gives at least one.
                CASE WHEN mode = 'head' THEN 1 ELSE wanted - cardinality(groups) + 1 END, given;
            RETURN;
        END IF;
        FOR rec IN EXECUTE claim
            USING groups, wanted, make_interval(secs => coalesce(vt, 0)), mode,
            CASE WHEN mode = 'head' THEN 1 ELSE wanted - cardinality(groups) + 1 END, given
        LOOP
            IF rec.read_ct > f.max_receive_count THEN
                dead := dead || rec.msg_id;
            ELSE
                RETURN NEXT rec;
                given := given || rec.msg_id;
                wanted := wanted - 1;
            END IF;
        END LOOP;
        PERFORM pgmq._dead_letter_ids(queue_name, dead, 1);
        EXIT WHEN cardinality(dead) = 0 OR wanted <= 0;
    END LOOP;
END
$function$
;
COMMENT ON FUNCTION pgmq._read_grouped(text,integer,integer,text) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._send_deduplicated(queue_name text, attrs jsonb, p_vt timestamp with time zone, p_msgs jsonb[], p_headers jsonb[])
 RETURNS SETOF pgmq.message_record
 LANGUAGE plpgsql
AS $function$
DECLARE
    ids bigint[];
    tries text := coalesce(current_setting('pgmq.dedup_tries', true), '');
    tried integer := CASE WHEN split_part(tries, ' ', 1) = pg_current_xact_id_if_assigned()::text
                          THEN split_part(tries, ' ', 2)::integer ELSE 0 END;
BEGIN
    IF tried < 16 AND NOT EXISTS (
        SELECT 1
        FROM (SELECT h ->> 'deduplication_id' AS dedup FROM unnest(p_headers) AS h) x
        WHERE x.dedup IS NOT NULL
        GROUP BY x.dedup
        HAVING count(*) > 1 OR EXISTS (
            SELECT 1 FROM pgmq.queue_deduplication d
            WHERE d.queue_name = lower($1) AND d.deduplication_id = x.dedup))
    THEN
        BEGIN
            EXECUTE pgmq._queue_ops_attr_sql(queue_name, 'S', '0', attrs) INTO ids
                USING NULL::"char", NULL::integer, NULL::integer, p_vt, NULL::bigint[],
                      p_msgs, p_headers, NULL::jsonb;
        EXCEPTION WHEN unique_violation THEN
            ids := NULL;
        END;
        PERFORM set_config('pgmq.dedup_tries',
                           coalesce(pg_current_xact_id_if_assigned()::text, '') || ' ' || (tried + 1),
                           false);
        IF ids IS NOT NULL THEN
            RETURN QUERY SELECT i, NULL::integer, NULL::timestamptz, NULL::timestamptz,
                                NULL::timestamptz, NULL::jsonb, NULL::jsonb
                         FROM unnest(ids) AS i;
            RETURN;
        END IF;
    END IF;
    RETURN QUERY EXECUTE pgmq._queue_ops_attr_sql(queue_name, 's', '0', attrs)
        USING NULL::"char", NULL::integer, NULL::integer, p_vt, NULL::bigint[],
              p_msgs, p_headers, NULL::jsonb;
END
$function$
;
COMMENT ON FUNCTION pgmq._send_deduplicated(text,jsonb,timestamp with time zone,jsonb[],jsonb[]) IS NULL;

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
        CONTINUE WHEN (pgmq._claim_filter(queue, coalesce(pgmq._queue_attributes(queue), '{}'::jsonb), 1)).allowed = 0;
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

CREATE OR REPLACE FUNCTION pgmq.drop_queue(queue_name text)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q');
    atable text := pgmq.format_table_name(queue_name, 'a');
BEGIN
    PERFORM pgmq.acquire_queue_lock(queue_name);
    IF to_regclass(format('pgmq.%I', qtable)) IS NULL
       AND NOT EXISTS (SELECT 1 FROM pgmq.meta m WHERE lower(m.queue_name) = lower($1)) THEN
        RAISE NOTICE 'pgmq queue `%` does not exist', queue_name;
        RETURN false;
    END IF;
    EXECUTE format('DROP TABLE IF EXISTS pgmq.%I', qtable);
    EXECUTE format('DROP TABLE IF EXISTS pgmq.%I', atable);
    DELETE FROM pgmq.meta m WHERE lower(m.queue_name) = lower($1);
    RETURN true;
END
$function$
;
COMMENT ON FUNCTION pgmq.drop_queue(text) IS NULL;

CREATE OR REPLACE FUNCTION pgmq.set_queue_attributes(queue_name text, attributes jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
DECLARE
    stored text := pgmq._require_queue(queue_name);
    old jsonb;
    merged jsonb;
    k text;
    qtable text;
BEGIN
    IF attributes IS NULL OR jsonb_typeof(attributes) <> 'object' THEN
        RAISE EXCEPTION 'queue "%": attributes must be a JSON object, got %', stored,
            coalesce(attributes::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    FOR k IN SELECT jsonb_object_keys(attributes) LOOP
        IF NOT EXISTS (SELECT 1 FROM pgmq._queue_attribute_rules() r WHERE r.key = k) THEN
            PERFORM pgmq._bad_queue_attribute(stored, k, attributes -> k);
        END IF;
    END LOOP;
    PERFORM pgmq.acquire_queue_lock(stored);
    old := coalesce(pgmq._queue_attributes(stored), '{}'::jsonb);
    merged := jsonb_strip_nulls(old || attributes);
    PERFORM pgmq._check_queue_attributes(stored, merged);
    IF merged = old THEN
        RETURN merged;
    END IF;

    IF merged ? 'dead_letter_queue'
       AND NOT EXISTS (SELECT 1 FROM pgmq.meta m
                       WHERE lower(m.queue_name) = lower(merged ->> 'dead_letter_queue')) THEN
        PERFORM pgmq."create"(merged ->> 'dead_letter_queue');
    END IF;
    qtable := pgmq.format_table_name(stored, 'q');
    IF (merged -> 'priorities') = 'true'::jsonb
       AND to_regclass(format('pgmq.%I', qtable || '_priority')) IS NULL THEN
        -- The tasks backend's index (sql/75_tasks.sql): priority descending, then msg_id.
        EXECUTE format('CREATE INDEX %I ON pgmq.%I (pgmq._task_priority(headers) DESC, msg_id)',
                       qtable || '_priority', qtable);
    END IF;
    IF coalesce((merged ->> 'deduplication_window')::integer, 0) = 0 THEN
        DELETE FROM pgmq.queue_deduplication d WHERE d.queue_name = lower(stored);
    END IF;

    IF merged = '{}'::jsonb THEN
        DELETE FROM pgmq.queue_attributes a WHERE a.queue_name = stored;
    ELSE
        INSERT INTO pgmq.queue_attributes AS a (queue_name, attributes)
        VALUES (stored, merged)
        ON CONFLICT ON CONSTRAINT queue_attributes_pkey
        DO UPDATE SET attributes = excluded.attributes, updated_at = now();
    END IF;
    RETURN merged;
END
$function$
;
COMMENT ON FUNCTION pgmq.set_queue_attributes(text,jsonb) IS NULL;

CREATE OR REPLACE FUNCTION pgmq.spark_claim(queue_name text, consumer text, vt integer, qty integer, max_msg_id bigint, min_batch bigint)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q');
    stamp timestamptz := clock_timestamp();
    f record;
    held bigint[];
    ids bigint[];
    dead bigint[];
    next_batch bigint;
BEGIN
    PERFORM pgmq._require_queue(queue_name);
    IF vt IS NULL OR vt < 1 THEN
        RAISE EXCEPTION 'vt must be at least 1 second, got %', vt USING ERRCODE = 'PQ004';
    END IF;
    f := pgmq._claim_filter(queue_name, coalesce(pgmq._queue_attributes(queue_name), '{}'::jsonb), qty);
    IF f.allowed = 0 THEN
        RETURN NULL;
    END IF;
    PERFORM pgmq._spark_consumer_lock(queue_name, consumer);
    SELECT coalesce(array_agg(id), '{}') INTO held
    FROM pgmq.spark_stream_batch b, unnest(b.msg_ids) AS id
    WHERE b.queue_name = $1 AND b.consumer = $2 AND b.acked_at IS NULL;

    -- $6: max_receive_count when the queue has a dead-letter queue, else NULL (none dead).
    -- Only deliverable messages are picked; the over-read ones the pick walked past (all
    -- of them when it found fewer than qty) are locked to be dead-lettered.
    EXECUTE format(
        $q$
        WITH picked AS MATERIALIZED (
            SELECT msg_id FROM pgmq.%1$I
            WHERE vt <= $1 AND ($2::bigint IS NULL OR msg_id <= $2) AND msg_id <> ALL ($3)
              AND NOT coalesce(read_ct >= $6, false)
            ORDER BY %2$s
            LIMIT $4
            FOR UPDATE SKIP LOCKED
        ), over_read AS MATERIALIZED (
            SELECT msg_id FROM pgmq.%1$I
            WHERE $6 IS NOT NULL AND read_ct >= $6
              AND vt <= $1 AND ($2::bigint IS NULL OR msg_id <= $2) AND msg_id <> ALL ($3)
              AND ($4 IS NULL OR (SELECT count(*) FROM picked) < $4
                   OR msg_id < (SELECT max(p.msg_id) FROM picked p))
            ORDER BY msg_id
            LIMIT greatest($4, 100)
            FOR UPDATE SKIP LOCKED
        ), claimed AS (
            UPDATE pgmq.%1$I q
            SET vt = $1 + make_interval(secs => $5), read_ct = q.read_ct + 1, last_read_at = $1
            WHERE q.msg_id = ANY(ARRAY(SELECT p.msg_id FROM picked p))
            RETURNING q.msg_id
        )
        SELECT (SELECT array_agg(c.msg_id ORDER BY c.msg_id) FROM claimed c),
               (SELECT array_agg(o.msg_id ORDER BY o.msg_id) FROM over_read o)
        $q$,
        qtable,
        CASE WHEN f.by_priority THEN 'pgmq._task_priority(headers) DESC, msg_id' ELSE 'msg_id' END
    ) INTO ids, dead
    USING stamp, max_msg_id, held, f.allowed, vt, f.max_receive_count;
    IF dead IS NOT NULL THEN
        PERFORM pgmq._dead_letter_ids(queue_name, dead, 0);
    END IF;

    IF ids IS NULL THEN
        RETURN NULL;
    END IF;
    SELECT greatest(coalesce(max(b.batch), 0), coalesce(min_batch, 0)) + 1 INTO next_batch
    FROM pgmq.spark_stream_batch b WHERE b.queue_name = $1 AND b.consumer = $2;
    INSERT INTO pgmq.spark_stream_batch (queue_name, consumer, batch, msg_ids, claimed_at)
    VALUES ($1, $2, next_batch, ids, stamp);
    RETURN next_batch;
END
$function$
;
COMMENT ON FUNCTION pgmq.spark_claim(text,text,integer,integer,bigint,bigint) IS NULL;


-- BY HAND: drop what the hot path generated in this database: every per-queue access
-- function pgmq._ops_<name>. Only functions that look like what pgmq._install_queue_ops
-- wrote are dropped (schema pgmq, a name starting with _ops_, the access-function
-- signature, owned by the schema's owner); one owned by any other role is left alone,
-- with a warning, and nothing found is called. The router above is static, so no
-- function is wired in any more; queues keep their tables and messages.
DO $by_hand$
DECLARE
    fn record;
BEGIN
    FOR fn IN
        SELECT p.oid::regprocedure AS signature, p.proowner = n.nspowner AS ours
        FROM pg_proc p
        JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = 'pgmq'
          AND p.proname LIKE '\_ops\_%'
          AND p.prorettype = 'pgmq.message_record'::regtype
          AND pg_get_function_identity_arguments(p.oid) = 'p_op "char", p_qty integer, '
              'p_secs integer, p_vt timestamp with time zone, p_ids bigint[], p_msgs jsonb[], '
              'p_headers jsonb[], p_cond jsonb'
        ORDER BY p.proname
    LOOP
        IF fn.ours THEN
            EXECUTE format('DROP FUNCTION %s', fn.signature);
        ELSE
            RAISE WARNING 'pgmq: % is not owned by the owner of schema pgmq; left in place, never called',
                fn.signature;
        END IF;
    END LOOP;
END
$by_hand$;

-- 0021_issue_22_periphery_and_two_roles
-- 0021_issue_22_periphery_and_two_roles: issue 22 periphery and two roles
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
-- BY HAND: the indexes queues want, built CONCURRENTLY outside transactions
-- (sql/22_index_builds.sql); its constraints are added below.
CREATE TABLE pgmq.queue_index_wanted (
    index_name text NOT NULL,
    queue_name text NOT NULL,
    kind text NOT NULL,
    wanted_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE pgmq.queue_index_wanted IS
    'Per-queue indexes wanted and not yet built CONCURRENTLY (see pgmq.pending_indexes())';
DROP FUNCTION IF EXISTS pgmq._dashboard_count(regclass,bigint,timestamp with time zone);
DROP FUNCTION IF EXISTS pgmq._dashboard_estimate(regclass,timestamp with time zone);
DROP FUNCTION IF EXISTS pgmq.redrive(text,jsonb,integer);

ALTER TABLE pgmq.queue_index_wanted ADD CONSTRAINT queue_index_wanted_kind_check CHECK ((kind = ANY (ARRAY['priority'::text, 'fifo'::text])));


ALTER TABLE pgmq.queue_index_wanted ADD CONSTRAINT queue_index_wanted_pkey PRIMARY KEY (index_name);



REVOKE EXECUTE ON FUNCTION pgmq._bad_queue_attribute(text,text,jsonb) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._celery_drop_if_unused(text) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._celery_lock_space() FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._celery_session_alive(integer) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._celery_topic_regex(text) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._check_partition_args(text,text,integer,text) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._check_queue_attributes(text,jsonb) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._check_throttle(integer) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._check_topic_queue_arg(text) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._check_topic_text(text,text,text,text) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._checked_message(text,jsonb,jsonb,integer,boolean,boolean) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._claim_filter(text,jsonb,integer) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._create_partition(pgmq.partition_config,numeric,numeric) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._create_queue(text,boolean) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._create_queue_tables(queue_name text, unlogged boolean, q_key text, a_key text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q');
    atable text := pgmq.format_table_name(queue_name, 'a');
BEGIN
    EXECUTE format(
        $ddl$
        CREATE %s TABLE IF NOT EXISTS pgmq.%I (
            msg_id bigint GENERATED ALWAYS AS IDENTITY,
            read_ct integer NOT NULL DEFAULT 0,
            enqueued_at timestamptz NOT NULL DEFAULT now(),
            last_read_at timestamptz,
            vt timestamptz NOT NULL,
            message jsonb,
            headers jsonb,
            PRIMARY KEY (%s)
        ) %s
        $ddl$,
        CASE WHEN unlogged THEN 'UNLOGGED' ELSE '' END, qtable,
        CASE WHEN coalesce(q_key, 'msg_id') = 'msg_id' THEN 'msg_id' ELSE format('msg_id, %I', q_key) END,
        CASE WHEN q_key IS NULL THEN '' ELSE format('PARTITION BY RANGE (%I)', q_key) END
    );
    IF q_key IS NULL THEN
        PERFORM pgmq._tune_live_table(qtable);
    END IF;
    IF unlogged THEN
        -- The ids go on into the (logged) archive: an id sequence reset by a crash would
        -- hand out ids the archive holds already. Only the messages are unlogged.
        EXECUTE format('ALTER SEQUENCE %s SET LOGGED',
                       pg_get_serial_sequence(format('pgmq.%I', qtable), 'msg_id'));
    END IF;

    EXECUTE format(
        $ddl$
        CREATE TABLE IF NOT EXISTS pgmq.%I (
            msg_id bigint NOT NULL,
            read_ct integer NOT NULL DEFAULT 0,
            enqueued_at timestamptz NOT NULL DEFAULT now(),
            last_read_at timestamptz,
            archived_at timestamptz NOT NULL DEFAULT now(),
            vt timestamptz NOT NULL,
            message jsonb,
            headers jsonb,
            PRIMARY KEY (%s)
        ) %s
        $ddl$,
        atable,
        CASE WHEN coalesce(a_key, 'msg_id') = 'msg_id' THEN 'msg_id' ELSE format('msg_id, %I', a_key) END,
        CASE WHEN a_key IS NULL THEN '' ELSE format('PARTITION BY RANGE (%I)', a_key) END
    );
    -- pgmq's index name; '<atable>_archived_at_idx' would pass 63 bytes for a 47-char name.
    EXECUTE format(
        'CREATE INDEX IF NOT EXISTS %I ON pgmq.%I (archived_at)',
        'archived_at_idx_' || lower(queue_name), atable
    );
    PERFORM pgmq._share_queue_with_owner(queue_name);
END
$function$
;
COMMENT ON FUNCTION pgmq._create_queue_tables(text,boolean,text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._create_queue_tables(text,boolean,text,text) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._dashboard_all_stats(bigint,jsonb) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._dashboard_count(queue_name text, kind "char", exact_limit bigint, since timestamp with time zone DEFAULT NULL::timestamp with time zone, OUT n bigint, OUT estimated boolean)
 RETURNS record
 LANGUAGE plpgsql
AS $function$
DECLARE
    tbl regclass := pgmq._dashboard_table(queue_name, kind);
BEGIN
    IF since IS NULL THEN
        EXECUTE format('SELECT count(*) FROM (SELECT 1 FROM %s LIMIT $1) s', tbl)
            INTO n USING exact_limit + 1;
    ELSE
        EXECUTE format(
            'SELECT count(*) FROM (SELECT 1 FROM %s WHERE archived_at > $2 LIMIT $1) s', tbl
        ) INTO n USING exact_limit + 1, since;
    END IF;
    estimated := n > exact_limit;
    IF estimated THEN
        n := greatest(n, pgmq._dashboard_estimate(queue_name, kind, since));
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._dashboard_count(text,"char",bigint,timestamp with time zone) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._dashboard_count(text,"char",bigint,timestamp with time zone) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._dashboard_estimate(queue_name text, kind "char", since timestamp with time zone DEFAULT NULL::timestamp with time zone)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    tbl regclass := pgmq._dashboard_table(queue_name, kind);
    plan json;
BEGIN
    IF since IS NULL THEN
        EXECUTE format('EXPLAIN (FORMAT JSON) SELECT 1 FROM %s', tbl) INTO plan;
    ELSE
        EXECUTE format('EXPLAIN (FORMAT JSON) SELECT 1 FROM %s WHERE archived_at > %L', tbl, since)
            INTO plan;
    END IF;
    RETURN (plan -> 0 -> 'Plan' ->> 'Plan Rows')::numeric::bigint;
END
$function$
;
COMMENT ON FUNCTION pgmq._dashboard_estimate(text,"char",timestamp with time zone) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._dashboard_estimate(text,"char",timestamp with time zone) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._dashboard_idle_queues(text[]) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._dashboard_match_batch(text,boolean,integer,text,text,jsonb,bigint,bigint,integer) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._dashboard_match_count(text,boolean,integer,text,text,jsonb) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._dashboard_messages(text,boolean,boolean,integer,text,text,jsonb,bigint,bigint,integer) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._dashboard_queue_stats(queue_name text, exact_limit bigint DEFAULT 50000, max_reads integer DEFAULT NULL::integer)
 RETURNS pgmq._dashboard_stats
 LANGUAGE plpgsql
AS $function$
DECLARE
    r pgmq._dashboard_stats;
    qtable regclass;
    atable regclass;
    est boolean;
    est_names text[] := '{}';
    future bigint;
    future_read bigint;
    sampled bigint;
    s_in_flight bigint;
    s_delayed bigint;
    s_poison bigint;
    oldest timestamptz;
    newest timestamptz;
    oldest_vt timestamptz;
    -- The real time, not the transaction's start: a dashboard request may sit in a
    -- transaction, and the message functions compare vt with clock_timestamp() too.
    at timestamptz := clock_timestamp();
BEGIN
    IF exact_limit IS NULL OR exact_limit < 1 THEN
        RAISE EXCEPTION 'exact_limit must be a positive number of rows, got %', exact_limit
            USING ERRCODE = 'PQ004';
    END IF;
    r.queue_name := pgmq._require_queue(queue_name);
    qtable := format('pgmq.%I', pgmq.format_table_name(queue_name, 'q'))::regclass;
    atable := format('pgmq.%I', pgmq.format_table_name(queue_name, 'a'))::regclass;

    SELECT c.n, c.estimated INTO r.depth, est FROM pgmq._dashboard_count(r.queue_name, 'q', exact_limit) c;
    IF NOT est THEN
        -- Small table: every figure exact, in one pass.
        EXECUTE format(
            $q$SELECT count(*) FILTER (WHERE vt <= $2),
                      count(*) FILTER (WHERE vt > $2 AND read_ct > 0),
                      count(*) FILTER (WHERE vt > $2 AND read_ct = 0),
                      count(*) FILTER (WHERE read_ct >= $1)
               FROM %s$q$, qtable
        ) INTO r.visible, r.in_flight, r.delayed, r.poison USING max_reads, at;
    ELSE
        est_names := est_names || ARRAY['depth', 'visible'];
        -- Messages not yet visible, counted up to a limit (one pass; live tables have no
        -- vt index, see 10_queues.sql: about 0.15 s for a million rows here).
        EXECUTE format(
            $q$SELECT count(*), count(*) FILTER (WHERE read_ct > 0)
               FROM (SELECT read_ct FROM %s WHERE vt > $2 LIMIT $1) s$q$, qtable
        ) INTO future, future_read USING exact_limit + 1, at;
        -- One block sample of about 10,000 rows for what an index cannot answer.
        EXECUTE format(
            $q$SELECT count(*),
                      count(*) FILTER (WHERE vt > $3 AND read_ct > 0),
                      count(*) FILTER (WHERE vt > $3 AND read_ct = 0),
                      count(*) FILTER (WHERE read_ct >= $2)
               FROM %s TABLESAMPLE SYSTEM ($1)$q$, qtable
        ) INTO sampled, s_in_flight, s_delayed, s_poison
          USING least(100.0, 1000000.0 / r.depth), max_reads, at;
        sampled := greatest(sampled, 1);
        IF future <= exact_limit THEN
            r.in_flight := future_read;
            r.delayed := future - future_read;
        ELSE
            r.in_flight := round(r.depth::numeric * s_in_flight / sampled);
            r.delayed := round(r.depth::numeric * s_delayed / sampled);
            est_names := est_names || ARRAY['in_flight', 'delayed'];
        END IF;
        r.visible := greatest(r.depth - r.in_flight - r.delayed, 0);
        IF max_reads IS NOT NULL THEN
            r.poison := round(r.depth::numeric * s_poison / sampled);
            est_names := est_names || 'poison'::text;
        END IF;
    END IF;
    IF max_reads IS NULL THEN
        r.poison := NULL;
    END IF;

    -- Ages: oldest and newest through the primary key; the oldest visible vt takes one pass.
    EXECUTE format('SELECT enqueued_at FROM %s ORDER BY msg_id LIMIT 1', qtable) INTO oldest;
    EXECUTE format('SELECT enqueued_at FROM %s ORDER BY msg_id DESC LIMIT 1', qtable) INTO newest;
    EXECUTE format('SELECT min(vt) FROM %s WHERE vt <= $1', qtable) INTO oldest_vt USING at;
    r.oldest_age_sec := extract(epoch FROM at - oldest)::integer;
    r.newest_age_sec := extract(epoch FROM at - newest)::integer;
    r.oldest_visible_age_sec := extract(epoch FROM at - oldest_vt)::integer;

    SELECT c.n, c.estimated INTO r.archive_size, est FROM pgmq._dashboard_count(r.queue_name, 'a', exact_limit) c;
    IF est THEN
        est_names := est_names || 'archive_size'::text;
    END IF;
    SELECT c.n, c.estimated INTO r.archived_hour, est
    FROM pgmq._dashboard_count(r.queue_name, 'a', exact_limit, at - interval '1 hour') c;
    IF est THEN
        est_names := est_names || 'archived_hour'::text;
    END IF;
    SELECT c.n, c.estimated INTO r.archived_day, est
    FROM pgmq._dashboard_count(r.queue_name, 'a', exact_limit, at - interval '1 day') c;
    IF est THEN
        est_names := est_names || 'archived_day'::text;
    END IF;

    -- A plain SELECT of the sequence: its lock belongs to the caller's (sub)transaction,
    -- where pg_sequence_last_value's is held to the end of the whole transaction.
    EXECUTE format(
        'SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM %s',
        pg_get_serial_sequence(qtable::text, 'msg_id')
    ) INTO r.total_messages;
    r.total_messages := coalesce(r.total_messages, 0);
    r.estimated := est_names;
    RETURN r;
END
$function$
;
COMMENT ON FUNCTION pgmq._dashboard_queue_stats(text,bigint,integer) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._dashboard_queue_stats(text,bigint,integer) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._dashboard_requeue(text,text,bigint[],boolean) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._dashboard_spark_stats(text,interval,interval) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._dashboard_stats_of(text[],bigint,jsonb) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._dashboard_table(queue_name text, kind "char")
 RETURNS regclass
 LANGUAGE plpgsql
 STABLE
AS $function$
BEGIN
    IF kind IS NULL OR kind NOT IN ('q', 'a') THEN
        RAISE EXCEPTION 'table kind must be q (live) or a (archive), got %', coalesce(kind::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    RETURN format('pgmq.%I', pgmq.format_table_name(pgmq._require_queue(queue_name), kind::text))::regclass;
END
$function$
;
COMMENT ON FUNCTION pgmq._dashboard_table(text,"char") IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._dashboard_table(text,"char") FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._dashboard_throughput(text,interval,interval,bigint,bigint) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._dead_letter(text,bigint,text,text) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._dead_letter_headers(jsonb,text,bigint,integer,timestamp with time zone,text) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._dead_letter_ids(text,bigint[],integer) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._default_partition(text) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._default_partition_length(text) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._delay_to_vt(integer) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._enable_task_queue(queue_name text)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
DECLARE
    built boolean;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pgmq.meta m WHERE lower(m.queue_name) = lower($1)) THEN
        PERFORM pgmq."create"(queue_name);
    END IF;
    built := pgmq._want_queue_index(queue_name, 'priority');
    -- age(xmin) is 0 for a row this transaction wrote.
    RETURN (SELECT age(m.xmin) > 0 FROM pgmq.meta m WHERE lower(m.queue_name) = lower($1))
       AND (built OR (SELECT age(w.xmin) > 0 FROM pgmq.queue_index_wanted w
                      WHERE w.index_name = pgmq._queue_index_name($1, 'priority')));
END
$function$
;
COMMENT ON FUNCTION pgmq._enable_task_queue(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._enable_task_queue(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._enforce_retention(only_queue text)
 RETURNS TABLE(queue text, expired bigint, archive_deleted bigint)
 LANGUAGE plpgsql
AS $function$
DECLARE
    batch_size constant integer := 5000;
    q record;
    b record;
BEGIN
    IF only_queue IS NOT NULL THEN
        PERFORM pgmq._require_queue(only_queue);
    END IF;
    FOR q IN SELECT * FROM pgmq._retention_queues(only_queue) LOOP
        queue := q.queue_name;
        expired := 0;
        archive_deleted := 0;
        LOOP
            SELECT * INTO b FROM pgmq._retention_batch(q.queue_name, batch_size);
            expired := expired + b.expired;
            archive_deleted := archive_deleted + b.archive_deleted;
            EXIT WHEN b.expired < batch_size AND b.archive_deleted < batch_size;
        END LOOP;
        IF q.reported THEN
            RETURN NEXT;
        END IF;
    END LOOP;
END
$function$
;
COMMENT ON FUNCTION pgmq._enforce_retention(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._enforce_retention(text) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._ensure_dead_letter_queue(text) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._existing_queue(text,text) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._fifo_group(jsonb) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._fit_name(text,text) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._forget_deduplication() FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._install_notify_trigger(text) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._invalid_queue_name(text,text) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._json_int_at_least(jsonb,integer) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._low_water_mark(text) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._maintain_table(pgmq.partition_config) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._metrics_counted(text[],text[],oid[],boolean[]) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._metrics_facts(text[]) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._metrics_idle(text,oid) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._notify_trigger_hash() FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._notify_trigger_name(text) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._partition_arg_error(text,text,text) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._partition_bound(boolean,numeric) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._partition_by_id(text) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._partition_floor(boolean,text,numeric) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._partition_literal(boolean,numeric) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._partition_name(text,boolean,text,numeric) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._partition_next(boolean,text,numeric) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._partition_now(text,boolean) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._partition_position(boolean,text) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._partitions(text,boolean) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._poll(reader text, queue_name text, vt integer, qty integer, extra text, max_poll_seconds integer, poll_interval_ms integer)
 RETURNS SETOF pgmq.message_record
 LANGUAGE plpgsql
AS $function$
DECLARE
    deadline timestamptz := clock_timestamp() + make_interval(secs => coalesce(max_poll_seconds, 0));
    rec pgmq.message_record;
    got boolean;
BEGIN
    IF reader IS NULL OR reader NOT IN ('read', 'read_grouped') THEN
        RAISE EXCEPTION 'reader must be read or read_grouped, got: %', coalesce(reader, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    IF poll_interval_ms IS NULL OR poll_interval_ms <= 0 THEN
        RAISE EXCEPTION 'poll_interval_ms must be positive, got: %', coalesce(poll_interval_ms::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    LOOP
        got := false;
        IF reader = 'read' THEN
            FOR rec IN SELECT * FROM pgmq.read(queue_name, vt, qty, extra::jsonb) LOOP
                got := true;
                RETURN NEXT rec;
            END LOOP;
        ELSE
            FOR rec IN SELECT * FROM pgmq._read_grouped(queue_name, vt, qty, extra) LOOP
                got := true;
                RETURN NEXT rec;
            END LOOP;
        END IF;
        EXIT WHEN got OR clock_timestamp() >= deadline;
        PERFORM pg_sleep(least(poll_interval_ms / 1000.0,
                               extract(epoch FROM deadline - clock_timestamp())));
    END LOOP;
END
$function$
;
COMMENT ON FUNCTION pgmq._poll(text,text,integer,integer,text,integer,integer) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._poll(text,text,integer,integer,text,integer,integer) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._queue_attribute_rules() FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._queue_attributes(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_index_name(queue_name text, kind text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
    SELECT pgmq.format_table_name(queue_name, 'q')
           || CASE kind WHEN 'priority' THEN '_priority' WHEN 'fifo' THEN '_fifo_idx' END;
$function$
;
COMMENT ON FUNCTION pgmq._queue_index_name(text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_index_name(text,text) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_attr_sql(text,"char",text,jsonb) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_one(text,"char",bigint) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_route(text,"char",integer,integer,timestamp with time zone,bigint[],jsonb[],jsonb[],jsonb) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_sql(text,"char",text) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_sql_for(text,"char",text) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_with_attributes(text,jsonb,"char",integer,integer,timestamp with time zone,bigint[],jsonb[],jsonb[],jsonb,bigint) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._read_by_priority(text,integer,integer) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._read_grouped(text,integer,integer,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._read_grouped_poll(queue_name text, vt integer, qty integer, max_poll_seconds integer, poll_interval_ms integer, mode text)
 RETURNS SETOF pgmq.message_record
 LANGUAGE sql
AS $function$
    SELECT * FROM pgmq._poll(
        'read_grouped',
        queue_name, vt, qty, mode, max_poll_seconds, poll_interval_ms);
$function$
;
COMMENT ON FUNCTION pgmq._read_grouped_poll(text,integer,integer,integer,integer,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._read_grouped_poll(text,integer,integer,integer,integer,text) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._remove_notify_trigger(text) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._require_queue(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._retention_batch(queue_name text, batch_size integer DEFAULT 5000)
 RETURNS TABLE(expired bigint, archive_deleted bigint)
 LANGUAGE plpgsql
AS $function$
DECLARE
    stored text := pgmq._require_queue(queue_name);
    attrs jsonb := coalesce(pgmq._queue_attributes(stored), '{}'::jsonb);
BEGIN
    IF batch_size IS NULL OR batch_size < 1 THEN
        RAISE EXCEPTION 'batch_size must be at least 1, got %', batch_size USING ERRCODE = 'PQ004';
    END IF;
    expired := 0;
    archive_deleted := 0;
    IF attrs ? 'message_retention' THEN
        EXECUTE format(
            $d$
            DELETE FROM pgmq.%1$I m WHERE m.msg_id = ANY(ARRAY(
                SELECT x.msg_id FROM pgmq.%1$I x
                WHERE x.enqueued_at < clock_timestamp() - make_interval(secs => $1)
                ORDER BY x.msg_id LIMIT $2 FOR UPDATE SKIP LOCKED))
            $d$, pgmq.format_table_name(stored, 'q'))
        USING (attrs ->> 'message_retention')::integer, batch_size;
        GET DIAGNOSTICS expired = ROW_COUNT;
    END IF;
    IF attrs ? 'archive_retention' THEN
        EXECUTE format(
            $d$
            DELETE FROM pgmq.%1$I a WHERE (a.msg_id, a.archived_at) IN (
                SELECT x.msg_id, x.archived_at FROM pgmq.%1$I x
                WHERE x.archived_at < clock_timestamp() - make_interval(secs => $1)
                ORDER BY x.archived_at LIMIT $2 FOR UPDATE SKIP LOCKED)
            $d$, pgmq.format_table_name(stored, 'a'))
        USING (attrs ->> 'archive_retention')::integer, batch_size;
        GET DIAGNOSTICS archive_deleted = ROW_COUNT;
    END IF;
    IF coalesce((attrs ->> 'deduplication_window')::integer, 0) > 0 THEN
        DELETE FROM pgmq.queue_deduplication d
        WHERE d.queue_name = lower(stored)
          AND d.sent_at < clock_timestamp()
                          - make_interval(secs => (attrs ->> 'deduplication_window')::integer);
    END IF;
    RETURN NEXT;
END
$function$
;
COMMENT ON FUNCTION pgmq._retention_batch(text,integer) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._retention_batch(text,integer) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._retention_queues(only_queue text DEFAULT NULL::text)
 RETURNS TABLE(queue_name text, reported boolean)
 LANGUAGE sql
 STABLE
AS $function$
    SELECT a.queue_name::text, a.attributes ? 'message_retention' OR a.attributes ? 'archive_retention'
    FROM pgmq.queue_attributes a
    WHERE (only_queue IS NULL OR lower(a.queue_name) = lower(only_queue))
      AND (a.attributes ? 'message_retention' OR a.attributes ? 'archive_retention'
           OR coalesce((a.attributes ->> 'deduplication_window')::integer, 0) > 0)
    ORDER BY a.queue_name;
$function$
;
COMMENT ON FUNCTION pgmq._retention_queues(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._retention_queues(text) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._retry_later(text,bigint,double precision,text,integer) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._same_name_queue(text) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._send_checks_sql(jsonb) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._send_deduplicated(text,jsonb,timestamp with time zone,jsonb[],jsonb[]) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._set_vt_seconds(text,bigint[],double precision,boolean) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._share_queue_with_owner(queue_name text)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q');
    atable text := pgmq.format_table_name(queue_name, 'a');
    owner oid := (SELECT n.nspowner FROM pg_namespace n WHERE n.nspname = 'pgmq');
BEGIN
    IF pg_has_role(owner, 'USAGE') OR NOT pg_has_role(
        (SELECT c.relowner FROM pg_class c WHERE c.oid = format('pgmq.%I', qtable)::regclass),
        'USAGE') THEN
        RETURN;  -- the owner made it, or it is not ours to share
    END IF;
    EXECUTE format('GRANT ALL ON pgmq.%I, pgmq.%I TO %s', qtable, atable, owner::regrole);
    EXECUTE format('GRANT ALL ON SEQUENCE %s TO %s',
                   pg_get_serial_sequence(format('pgmq.%I', qtable), 'msg_id'), owner::regrole);
END
$function$
;
COMMENT ON FUNCTION pgmq._share_queue_with_owner(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._share_queue_with_owner(text) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._spark_checked_send(text) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._spark_consumer_lock(text,text) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._spark_send_staged(text,regclass,bigint[]) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._spark_stage_table(stage text, missing_ok boolean DEFAULT false)
 RETURNS regclass
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    rel regclass;
BEGIN
    IF stage IS NULL OR stage !~ '^spark_stage_[0-9a-f]{32}$' THEN
        RAISE EXCEPTION 'pgmq.% is not a Spark staging table: their names are spark_stage_ '
            'and 32 hexadecimal digits', coalesce(stage, 'NULL') USING ERRCODE = 'PQ004';
    END IF;
    rel := to_regclass(format('pgmq.%I', stage));
    IF rel IS NULL THEN
        IF missing_ok THEN
            RETURN NULL;
        END IF;
        RAISE EXCEPTION 'staging table pgmq.% does not exist (already committed or dropped)', stage
            USING ERRCODE = 'PQ004';
    END IF;
    IF (SELECT c.relkind FROM pg_class c WHERE c.oid = rel) <> 'r'
       OR (SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod), ', '
                             ORDER BY a.attnum)
           FROM pg_attribute a WHERE a.attrelid = rel AND a.attnum > 0 AND NOT a.attisdropped)
          IS DISTINCT FROM 'part integer, attempt bigint, seq bigint, '
                           'vt timestamp with time zone, message jsonb, headers jsonb' THEN
        RAISE EXCEPTION 'pgmq.% is not a Spark staging table: not the table '
            'pgmq.spark_stage_create makes', stage USING ERRCODE = 'PQ004';
    END IF;
    RETURN rel;
END
$function$
;
COMMENT ON FUNCTION pgmq._spark_stage_table(text,boolean) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._spark_stage_table(text,boolean) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._stored_queue_name(text) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._task_priority(jsonb) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._time_step(text,text) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._topic_queues(text) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._topic_regex(text) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._tune_live_table(text) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION pgmq._validate_batch_params(jsonb[],jsonb[]) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._want_queue_index(queue_name text, kind text)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
DECLARE
    stored text := pgmq._require_queue(queue_name);
    wanted text := pgmq._queue_index_name(stored, kind);
BEGIN
    IF kind IS NULL OR kind NOT IN ('priority', 'fifo') THEN
        RAISE EXCEPTION 'index kind must be priority or fifo, got %', coalesce(kind, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    IF EXISTS (SELECT 1 FROM pg_index i WHERE i.indexrelid = to_regclass(format('pgmq.%I', wanted))
               AND i.indisvalid) THEN
        RETURN true;
    END IF;
    INSERT INTO pgmq.queue_index_wanted (index_name, queue_name, kind)
    VALUES (wanted, stored, kind)
    ON CONFLICT (index_name) DO NOTHING;
    RETURN false;
END
$function$
;
COMMENT ON FUNCTION pgmq._want_queue_index(text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._want_queue_index(text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.create_fifo_index(queue_name text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
    PERFORM pgmq._want_queue_index(queue_name, 'fifo');
END
$function$
;
COMMENT ON FUNCTION pgmq.create_fifo_index(text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.create_fifo_index(text) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.grant_app_role(role name, create_queues boolean DEFAULT false, tables regclass[] DEFAULT '{}'::regclass[])
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    IF role IS NULL OR to_regrole(quote_ident(role)) IS NULL THEN
        RAISE EXCEPTION 'role "%" does not exist', role
            USING ERRCODE = 'PQ004', HINT = 'Create it first: CREATE ROLE ... LOGIN.';
    END IF;
    EXECUTE format('GRANT USAGE ON SCHEMA pgmq TO %I', role);
    EXECUTE format('GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA pgmq TO %I', role);
    EXECUTE format(
        'GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON ALL TABLES IN SCHEMA pgmq TO %I', role);
    EXECUTE format('GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA pgmq TO %I', role);
    EXECUTE format('ALTER DEFAULT PRIVILEGES IN SCHEMA pgmq GRANT EXECUTE ON FUNCTIONS TO %I', role);
    EXECUTE format(
        'ALTER DEFAULT PRIVILEGES IN SCHEMA pgmq '
        'GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON TABLES TO %I', role);
    EXECUTE format(
        'ALTER DEFAULT PRIVILEGES IN SCHEMA pgmq GRANT USAGE, SELECT ON SEQUENCES TO %I', role);
    IF create_queues THEN
        EXECUTE format('GRANT CREATE ON SCHEMA pgmq TO %I', role);
    ELSE
        EXECUTE format('REVOKE CREATE ON SCHEMA pgmq FROM %I', role);
        EXECUTE format('REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON pgmq.meta FROM %I', role);
    END IF;
    FOR i IN 1 .. coalesce(cardinality(tables), 0) LOOP
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %s TO %I', tables[i], role);
    END LOOP;
END
$function$
;
COMMENT ON FUNCTION pgmq.grant_app_role(name,boolean,regclass[]) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.grant_app_role(name,boolean,regclass[]) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.pending_indexes()
 RETURNS TABLE(queue_name text, index_name text, kind text, invalid boolean, drop_statement text, statement text)
 LANGUAGE plpgsql
AS $function$
BEGIN
    DELETE FROM pgmq.queue_index_wanted w
    WHERE NOT EXISTS (SELECT 1 FROM pgmq.meta m WHERE m.queue_name = w.queue_name)
       OR EXISTS (SELECT 1 FROM pg_index i
                  WHERE i.indexrelid = to_regclass(format('pgmq.%I', w.index_name))
                    AND i.indisvalid);
    RETURN QUERY
    SELECT w.queue_name, w.index_name, w.kind,
           to_regclass(format('pgmq.%I', w.index_name)) IS NOT NULL,
           format('DROP INDEX CONCURRENTLY IF EXISTS pgmq.%I', w.index_name),
           format('CREATE INDEX CONCURRENTLY IF NOT EXISTS %I ON pgmq.%I (%s)',
                  w.index_name, pgmq.format_table_name(w.queue_name, 'q'),
                  CASE w.kind WHEN 'priority' THEN 'pgmq._task_priority(headers) DESC, msg_id'
                              WHEN 'fifo' THEN 'pgmq._fifo_group(headers), msg_id' END)
    FROM pgmq.queue_index_wanted w
    ORDER BY w.wanted_at, w.index_name;
END
$function$
;
COMMENT ON FUNCTION pgmq.pending_indexes() IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.pending_indexes() TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.read_with_poll(queue_name text, vt integer, qty integer, max_poll_seconds integer DEFAULT 5, poll_interval_ms integer DEFAULT 100, conditional jsonb DEFAULT '{}'::jsonb)
 RETURNS SETOF pgmq.message_record
 LANGUAGE sql
AS $function$
    SELECT * FROM pgmq._poll(
        'read',
        queue_name, vt, qty, conditional::text, max_poll_seconds, poll_interval_ms);
$function$
;
COMMENT ON FUNCTION pgmq.read_with_poll(text,integer,integer,integer,integer,jsonb) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.read_with_poll(text,integer,integer,integer,integer,jsonb) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.redrive(dead_letter_queue text, conditional jsonb DEFAULT '{}'::jsonb, max_messages integer DEFAULT NULL::integer)
 RETURNS TABLE(source_queue text, moved bigint, skipped bigint)
 LANGUAGE plpgsql
AS $function$
DECLARE
    dlq_table text := pgmq.format_table_name(pgmq._require_queue(dead_letter_queue), 'q');
    source text;
    waiting bigint;
    target text;
    budget integer := max_messages;
BEGIN
    IF max_messages IS NOT NULL AND max_messages < 0 THEN
        RAISE EXCEPTION 'max_messages must be zero or more, got: %', max_messages
            USING ERRCODE = 'PQ004';
    END IF;
    FOR source, waiting IN EXECUTE format(
        $q$
        SELECT m.headers -> 'dead_letter' ->> 'queue', count(*) FROM pgmq.%I m
        WHERE jsonb_typeof(m.headers -> 'dead_letter') = 'object'
          AND m.message @> coalesce($1, '{}'::jsonb)
        GROUP BY 1 ORDER BY 1
        $q$, dlq_table) USING conditional
    LOOP
        target := NULL;
        BEGIN
            target := pgmq._stored_queue_name(source);
        EXCEPTION WHEN SQLSTATE 'PQ001' THEN
            target := NULL;  -- not a valid queue name: reported below
        END;
        IF target IS NULL THEN
            RAISE NOTICE 'pgmq.redrive: % message(s) in "%" name queue % in their dead_letter '
                'header, which is not a valid queue name or does not exist; they stay',
                waiting, dead_letter_queue, coalesce(format('"%s"', source), 'NULL');
            source_queue := source;
            moved := 0;
            skipped := waiting;
            RETURN NEXT;
            CONTINUE;
        END IF;
        CONTINUE WHEN budget IS NOT NULL AND budget <= 0;
        skipped := 0;
        source_queue := target;
        EXECUTE format(
            $q$
            WITH picked AS (
                SELECT m.msg_id FROM pgmq.%1$I m
                WHERE m.headers -> 'dead_letter' ->> 'queue' = $1
                  AND m.message @> coalesce($2, '{}'::jsonb)
                ORDER BY m.msg_id
                LIMIT $3
                FOR UPDATE SKIP LOCKED
            ), gone AS (
                DELETE FROM pgmq.%1$I m WHERE m.msg_id IN (SELECT p.msg_id FROM picked p)
                RETURNING m.msg_id, m.message, m.headers
            ), back AS (
                INSERT INTO pgmq.%2$I (vt, message, headers)
                SELECT clock_timestamp(), g.message, g.headers - 'dead_letter'
                FROM gone g ORDER BY g.msg_id
                RETURNING 1
            )
            SELECT count(*) FROM back
            $q$,
            dlq_table, pgmq.format_table_name(source_queue, 'q'))
        INTO moved USING source, conditional, budget;
        budget := budget - moved;
        RETURN NEXT;
    END LOOP;
END
$function$
;
COMMENT ON FUNCTION pgmq.redrive(text,jsonb,integer) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.redrive(text,jsonb,integer) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.revoke_app_role(role name, tables regclass[] DEFAULT '{}'::regclass[])
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    IF role IS NULL OR to_regrole(quote_ident(role)) IS NULL THEN
        RAISE EXCEPTION 'role "%" does not exist', role USING ERRCODE = 'PQ004';
    END IF;
    EXECUTE format('ALTER DEFAULT PRIVILEGES IN SCHEMA pgmq REVOKE ALL ON FUNCTIONS FROM %I', role);
    EXECUTE format('ALTER DEFAULT PRIVILEGES IN SCHEMA pgmq REVOKE ALL ON TABLES FROM %I', role);
    EXECUTE format('ALTER DEFAULT PRIVILEGES IN SCHEMA pgmq REVOKE ALL ON SEQUENCES FROM %I', role);
    EXECUTE format('REVOKE ALL ON ALL FUNCTIONS IN SCHEMA pgmq FROM %I', role);
    EXECUTE format('REVOKE ALL ON ALL TABLES IN SCHEMA pgmq FROM %I', role);
    EXECUTE format('REVOKE ALL ON ALL SEQUENCES IN SCHEMA pgmq FROM %I', role);
    EXECUTE format('REVOKE ALL ON SCHEMA pgmq FROM %I', role);
    FOR i IN 1 .. coalesce(cardinality(tables), 0) LOOP
        EXECUTE format('REVOKE ALL ON %s FROM %I', tables[i], role);
    END LOOP;
END
$function$
;
COMMENT ON FUNCTION pgmq.revoke_app_role(name,regclass[]) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.revoke_app_role(name,regclass[]) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.set_queue_attributes(queue_name text, attributes jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
DECLARE
    stored text := pgmq._require_queue(queue_name);
    old jsonb;
    merged jsonb;
    k text;
    qtable text;
BEGIN
    IF attributes IS NULL OR jsonb_typeof(attributes) <> 'object' THEN
        RAISE EXCEPTION 'queue "%": attributes must be a JSON object, got %', stored,
            coalesce(attributes::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    FOR k IN SELECT jsonb_object_keys(attributes) LOOP
        IF NOT EXISTS (SELECT 1 FROM pgmq._queue_attribute_rules() r WHERE r.key = k) THEN
            PERFORM pgmq._bad_queue_attribute(stored, k, attributes -> k);
        END IF;
    END LOOP;
    PERFORM pgmq.acquire_queue_lock(stored);
    old := coalesce(pgmq._queue_attributes(stored), '{}'::jsonb);
    merged := jsonb_strip_nulls(old || attributes);
    PERFORM pgmq._check_queue_attributes(stored, merged);
    IF merged = old THEN
        RETURN merged;
    END IF;

    IF merged ? 'dead_letter_queue'
       AND NOT EXISTS (SELECT 1 FROM pgmq.meta m
                       WHERE lower(m.queue_name) = lower(merged ->> 'dead_letter_queue')) THEN
        PERFORM pgmq."create"(merged ->> 'dead_letter_queue');
    END IF;
    qtable := pgmq.format_table_name(stored, 'q');
    IF (merged -> 'priorities') = 'true'::jsonb THEN
        -- The tasks backend's index (sql/75_tasks.sql): priority descending, then msg_id,
        -- built CONCURRENTLY after the commit (sql/22_index_builds.sql).
        PERFORM pgmq._want_queue_index(stored, 'priority');
    END IF;
    IF coalesce((merged ->> 'deduplication_window')::integer, 0) = 0 THEN
        DELETE FROM pgmq.queue_deduplication d WHERE d.queue_name = lower(stored);
    END IF;

    IF merged = '{}'::jsonb THEN
        DELETE FROM pgmq.queue_attributes a WHERE a.queue_name = stored;
    ELSE
        INSERT INTO pgmq.queue_attributes AS a (queue_name, attributes)
        VALUES (stored, merged)
        ON CONFLICT ON CONSTRAINT queue_attributes_pkey
        DO UPDATE SET attributes = excluded.attributes, updated_at = now();
    END IF;
    RETURN merged;
END
$function$
;
COMMENT ON FUNCTION pgmq.set_queue_attributes(text,jsonb) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.set_queue_attributes(text,jsonb) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.spark_stage_abort(stage text)
 RETURNS boolean
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    entry pgmq.spark_stage;
BEGIN
    SELECT * INTO entry FROM pgmq.spark_stage s WHERE s.stage_table = stage FOR UPDATE;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    IF pgmq._spark_stage_table(stage, true) IS NULL THEN
        DELETE FROM pgmq.spark_stage s WHERE s.stage_table = stage;  -- its table is gone
        RETURN true;
    END IF;
    IF entry.writer_id IS NULL THEN
        EXECUTE format('DROP TABLE IF EXISTS pgmq.%I', stage);
        DELETE FROM pgmq.spark_stage s WHERE s.stage_table = stage;
    ELSE
        EXECUTE format('TRUNCATE pgmq.%I', stage);
    END IF;
    RETURN true;
END
$function$
;
COMMENT ON FUNCTION pgmq.spark_stage_abort(text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.spark_stage_abort(text) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.spark_stage_commit(stage text, attempts bigint[], batch_id bigint DEFAULT NULL::bigint)
 RETURNS bigint
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    entry pgmq.spark_stage;
    moved bigint;
BEGIN
    SELECT * INTO entry FROM pgmq.spark_stage s WHERE s.stage_table = stage FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'staging table pgmq.% does not exist (already committed or dropped)', stage
            USING ERRCODE = 'PQ004';
    END IF;
    PERFORM pgmq._spark_stage_table(stage);
    IF entry.writer_id IS NOT NULL AND batch_id IS NOT NULL AND EXISTS (
        SELECT 1 FROM pgmq.spark_sink_batch k
        WHERE k.queue_name = entry.queue_name AND k.writer_id = entry.writer_id
          AND k.batch_id >= $3
    ) THEN
        EXECUTE format('TRUNCATE pgmq.%I', stage);
        RETURN -1;
    END IF;
    IF pgmq._spark_checked_send(entry.queue_name) THEN
        moved := pgmq._spark_send_staged(entry.queue_name, format('pgmq.%I', stage)::regclass,
                                         coalesce(attempts, '{}'));
    ELSE
        EXECUTE format(
            'INSERT INTO pgmq.%I (vt, message, headers) '
            'SELECT coalesce(vt, clock_timestamp()), message, headers FROM pgmq.%I '
            'WHERE attempt = ANY ($1) ORDER BY part, seq',
            pgmq.format_table_name(entry.queue_name, 'q'), stage
        ) USING attempts;
        GET DIAGNOSTICS moved = ROW_COUNT;
    END IF;
    IF entry.writer_id IS NULL THEN
        EXECUTE format('DROP TABLE pgmq.%I', stage);
        DELETE FROM pgmq.spark_stage s WHERE s.stage_table = stage;
    ELSE
        EXECUTE format('TRUNCATE pgmq.%I', stage);
        IF batch_id IS NOT NULL THEN
            INSERT INTO pgmq.spark_sink_batch AS k (queue_name, writer_id, batch_id)
            VALUES (entry.queue_name, entry.writer_id, batch_id)
            ON CONFLICT (queue_name, writer_id)
            DO UPDATE SET batch_id = excluded.batch_id, committed_at = now();
        END IF;
    END IF;
    RETURN moved;
END
$function$
;
COMMENT ON FUNCTION pgmq.spark_stage_commit(text,bigint[],bigint) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.spark_stage_commit(text,bigint[],bigint) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.spark_stage_create(queue_name text, writer_id text DEFAULT NULL::text)
 RETURNS text
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    stored text := pgmq._require_queue(queue_name);
    stage text;
BEGIN
    IF writer_id IS NOT NULL THEN
        PERFORM pg_advisory_xact_lock(hashtext('pgmq.spark.stage.' || lower(stored) || '.' || writer_id));
        SELECT s.stage_table INTO stage FROM pgmq.spark_stage s
        WHERE s.queue_name = stored AND s.writer_id = $2;
        IF stage IS NOT NULL AND pgmq._spark_stage_table(stage, true) IS NOT NULL THEN
            RETURN stage;
        END IF;
        DELETE FROM pgmq.spark_stage s WHERE s.queue_name = stored AND s.writer_id = $2;
    END IF;
    stage := 'spark_stage_' || replace(gen_random_uuid()::text, '-', '');
    EXECUTE format(
        'CREATE UNLOGGED TABLE pgmq.%I (part integer NOT NULL, attempt bigint NOT NULL, '
        'seq bigint GENERATED ALWAYS AS IDENTITY, vt timestamptz, message jsonb, headers jsonb)',
        stage
    );
    INSERT INTO pgmq.spark_stage (stage_table, queue_name, writer_id) VALUES (stage, stored, $2);
    RETURN stage;
END
$function$
;
COMMENT ON FUNCTION pgmq.spark_stage_create(text,text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.spark_stage_create(text,text) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.spark_stage_drop_stale(older_than interval)
 RETURNS integer
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    stale text;
    dropped integer := 0;
BEGIN
    FOR stale IN
        SELECT s.stage_table FROM pgmq.spark_stage s
        WHERE s.writer_id IS NULL AND s.created_at < now() - older_than
        FOR UPDATE SKIP LOCKED
    LOOP
        BEGIN
            IF pgmq._spark_stage_table(stale, true) IS NOT NULL THEN
                EXECUTE format('DROP TABLE pgmq.%I', stale);
                dropped := dropped + 1;
            END IF;
        EXCEPTION WHEN SQLSTATE 'PQ004' THEN
            -- Not a staging table: only the catalogue row goes, the table stays.
            RAISE WARNING 'pgmq.spark_stage_drop_stale: %; its row of pgmq.spark_stage is removed, '
                'the table is left alone', SQLERRM;
        END;
        DELETE FROM pgmq.spark_stage s WHERE s.stage_table = stale;
    END LOOP;
    RETURN dropped;
END
$function$
;
COMMENT ON FUNCTION pgmq.spark_stage_drop_stale(interval) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.spark_stage_drop_stale(interval) TO PUBLIC;

-- BY HAND: index pgmq.queue_index_wanted_pkey
-- BY HAND: sequence pgmq.q_k_unlogged_msg_id_seq
-- BY HAND: table pgmq.queue_index_wanted

-- BY HAND: the `_`-prefixed helpers are not executable by PUBLIC, by rule (whatever
-- helpers exist when this runs; a list of names would break when another migration of
-- the same release adds or removes one).
DO $by_hand$
DECLARE
    fn regprocedure;
BEGIN
    FOR fn IN
        SELECT p.oid::regprocedure FROM pg_proc p
        WHERE p.pronamespace = 'pgmq'::regnamespace AND p.proname LIKE '\_%'
    LOOP
        EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', fn);
    END LOOP;
END
$by_hand$;
-- BY HAND: an unlogged queue's id sequence is logged (its ids go on into the logged
-- archive; a crash must not restart them). Existing unlogged queues follow.
DO $by_hand_sequences$
DECLARE
    seq text;
BEGIN
    FOR seq IN
        SELECT pg_get_serial_sequence(format('pgmq.%I', pgmq.format_table_name(m.queue_name, 'q')),
                                      'msg_id')
        FROM pgmq.meta m
        WHERE m.is_unlogged
          AND to_regclass(format('pgmq.%I', pgmq.format_table_name(m.queue_name, 'q'))) IS NOT NULL
    LOOP
        EXECUTE format('ALTER SEQUENCE %s SET LOGGED', seq);
    END LOOP;
END
$by_hand_sequences$;

-- 0022_concurrency_and_rate_limits
-- 0022_concurrency_and_rate_limits: concurrency and rate limits
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._claim_filter(text,jsonb,integer);
-- BY HAND: the limit state table (new; no existing rows).
CREATE TABLE pgmq.queue_limit_state (
    queue_name text PRIMARY KEY,
    max_in_flight integer,
    rate_count integer,
    rate_seconds double precision,
    in_flight bigint[] NOT NULL DEFAULT '{}',
    handed_out_at timestamptz[] NOT NULL DEFAULT '{}',
    handed_out_n integer[] NOT NULL DEFAULT '{}'
);





CREATE OR REPLACE FUNCTION pgmq._check_queue_attributes(queue_name text, attrs jsonb)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    k text;
    v jsonb;
    ok boolean;
BEGIN
    FOR k, v IN SELECT e.key, e.value FROM jsonb_each(attrs) e ORDER BY e.key LOOP
        ok := CASE k
            WHEN 'delivery_delay' THEN pgmq._json_int_at_least(v, 0)
            WHEN 'deduplication_window' THEN pgmq._json_int_at_least(v, 0)
            WHEN 'max_receive_count' THEN pgmq._json_int_at_least(v, 1)
            WHEN 'message_retention' THEN pgmq._json_int_at_least(v, 1)
            WHEN 'archive_retention' THEN pgmq._json_int_at_least(v, 1)
            WHEN 'max_message_size' THEN pgmq._json_int_at_least(v, 1)
            WHEN 'priorities' THEN jsonb_typeof(v) = 'boolean'
            WHEN 'paused' THEN jsonb_typeof(v) = 'boolean'
            WHEN 'dead_letter_queue' THEN jsonb_typeof(v) = 'string'
            WHEN 'max_in_flight' THEN pgmq._json_int_at_least(v, 1)
            -- CASE, not AND: each test may only run once the one before it held.
            WHEN 'rate_limit' THEN CASE
                WHEN jsonb_typeof(v) <> 'object' THEN false
                WHEN (SELECT array_agg(x ORDER BY x) FROM jsonb_object_keys(v) x)
                     <> '{count,seconds}' THEN false
                WHEN jsonb_typeof(v -> 'seconds') <> 'number' THEN false
                ELSE pgmq._json_int_at_least(v -> 'count', 1)
                     AND (v ->> 'seconds')::numeric > 0 AND (v ->> 'seconds')::numeric <= 31536000
                END
            ELSE false
        END;
        IF NOT ok THEN
            PERFORM pgmq._bad_queue_attribute(queue_name, k, v);
        END IF;
    END LOOP;
    IF attrs ? 'dead_letter_queue' THEN
        BEGIN
            PERFORM pgmq.validate_queue_name(attrs ->> 'dead_letter_queue');
        EXCEPTION WHEN SQLSTATE 'PQ001' THEN
            PERFORM pgmq._bad_queue_attribute(queue_name, 'dead_letter_queue', attrs -> 'dead_letter_queue');
        END;
        IF lower(attrs ->> 'dead_letter_queue') = lower(queue_name) THEN
            RAISE EXCEPTION 'queue "%": queue attribute "dead_letter_queue" must be another queue, '
                'not the queue itself', queue_name
                USING ERRCODE = 'PQ004';
        END IF;
    END IF;
    IF (attrs ? 'max_receive_count') <> (attrs ? 'dead_letter_queue') THEN
        RAISE EXCEPTION 'queue "%": queue attributes "max_receive_count" and "dead_letter_queue" '
            'go together: set both, or remove both', queue_name
            USING ERRCODE = 'PQ004';
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._check_queue_attributes(text,jsonb) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._check_queue_attributes(text,jsonb) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._claim_filter(queue_name text, attrs jsonb, qty integer, pops boolean DEFAULT false, peek boolean DEFAULT false, OUT allowed integer, OUT max_receive_count integer, OUT dead_letter_queue text, OUT by_priority boolean, OUT held bigint[], OUT stamps timestamp with time zone[], OUT counts integer[])
 RETURNS record
 LANGUAGE plpgsql
AS $function$
BEGIN
    allowed := CASE WHEN (attrs -> 'paused') = 'true'::jsonb THEN 0 ELSE qty END;
    max_receive_count := CASE WHEN attrs ? 'dead_letter_queue'
                              THEN (attrs ->> 'max_receive_count')::integer END;
    dead_letter_queue := attrs ->> 'dead_letter_queue';
    by_priority := coalesce((attrs -> 'priorities') = 'true'::jsonb, false);
    IF allowed IS DISTINCT FROM 0 AND (attrs ? 'max_in_flight' OR attrs ? 'rate_limit') THEN
        SELECT l.allowed, l.held, l.stamps, l.counts INTO allowed, held, stamps, counts
        FROM pgmq._claim_limits(queue_name, allowed, pops, NOT peek) l;
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._claim_filter(text,jsonb,integer,boolean,boolean) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._claim_filter(text,jsonb,integer,boolean,boolean) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._claim_limits(queue_name text, qty integer, pops boolean, take_lock boolean, OUT allowed integer, OUT held bigint[], OUT stamps timestamp with time zone[], OUT counts integer[], OUT max_in_flight integer, OUT rate_count integer, OUT rate_seconds double precision, OUT next_free_at timestamp with time zone)
 RETURNS record
 LANGUAGE plpgsql
AS $function$
DECLARE
    s pgmq.queue_limit_state;
    oldest_vt timestamptz;
    now_ timestamptz;
BEGIN
    allowed := qty;
    IF take_lock THEN
        SELECT * INTO s FROM pgmq.queue_limit_state l WHERE l.queue_name = lower($1)
        FOR NO KEY UPDATE;
    ELSE
        SELECT * INTO s FROM pgmq.queue_limit_state l WHERE l.queue_name = lower($1);
    END IF;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    max_in_flight := s.max_in_flight;
    rate_count := s.rate_count;
    rate_seconds := s.rate_seconds;
    IF s.max_in_flight IS NOT NULL THEN
        IF take_lock AND current_setting('transaction_isolation') <> 'read committed' THEN
            -- A snapshot older than a change to one of these rows would count it wrong:
            -- locking it raises a serialization error instead.
            EXECUTE format(
                'SELECT coalesce(array_agg(x.msg_id ORDER BY x.msg_id) '
                '                FILTER (WHERE x.vt > clock_timestamp()), ''{}''), '
                '       min(x.vt) FILTER (WHERE x.vt > clock_timestamp()) '
                'FROM (SELECT q.msg_id, q.vt FROM pgmq.%I q WHERE q.msg_id = ANY($1) FOR SHARE) x',
                pgmq.format_table_name(queue_name, 'q')) INTO held, oldest_vt USING s.in_flight;
        ELSE
            EXECUTE format(
                'SELECT coalesce(array_agg(q.msg_id ORDER BY q.msg_id), ''{}''), min(q.vt) '
                'FROM pgmq.%I q WHERE q.msg_id = ANY($1) AND q.vt > clock_timestamp()',
                pgmq.format_table_name(queue_name, 'q')) INTO held, oldest_vt USING s.in_flight;
        END IF;
        IF NOT pops THEN
            -- least() ignores a NULL qty ("all"): the limit caps it.
            allowed := least(allowed, greatest(s.max_in_flight - cardinality(held), 0));
            IF allowed = 0 THEN
                next_free_at := oldest_vt;
            END IF;
        END IF;
    END IF;
    IF s.rate_count IS NOT NULL THEN
        now_ := clock_timestamp();
        SELECT coalesce(array_agg(h.t ORDER BY h.t), '{}'), coalesce(array_agg(h.n ORDER BY h.t), '{}')
        INTO stamps, counts
        FROM unnest(s.handed_out_at, s.handed_out_n) AS h(t, n)
        WHERE h.t > now_ - make_interval(secs => s.rate_seconds);
        allowed := least(allowed, greatest(s.rate_count - (SELECT coalesce(sum(n), 0) FROM unnest(counts) n)::integer, 0));
        IF allowed = 0 AND cardinality(stamps) > 0 THEN
            next_free_at := greatest(next_free_at, stamps[1] + make_interval(secs => s.rate_seconds));
        END IF;
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._claim_limits(text,integer,boolean,boolean) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._claim_limits(text,integer,boolean,boolean) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._claim_record(queue_name text, held bigint[], stamps timestamp with time zone[], counts integer[], claimed bigint[], pops boolean DEFAULT false)
 RETURNS void
 LANGUAGE sql
AS $function$
    UPDATE pgmq.queue_limit_state s
    SET in_flight = CASE WHEN $2 IS NULL THEN s.in_flight
                         WHEN $6 THEN $2
                         ELSE $2 || coalesce($5, '{}') END,
        handed_out_at = CASE WHEN $3 IS NULL THEN s.handed_out_at
                             WHEN coalesce(cardinality($5), 0) = 0 THEN $3
                             ELSE $3 || clock_timestamp() END,
        handed_out_n = CASE WHEN $3 IS NULL THEN s.handed_out_n
                            WHEN coalesce(cardinality($5), 0) = 0 THEN $4
                            ELSE $4 || cardinality($5) END
    WHERE s.queue_name = lower($1) AND ($2 IS NOT NULL OR $3 IS NOT NULL);
$function$
;
COMMENT ON FUNCTION pgmq._claim_record(text,bigint[],timestamp with time zone[],integer[],bigint[],boolean) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._claim_record(text,bigint[],timestamp with time zone[],integer[],bigint[],boolean) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._forget_queue_limits()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
    DELETE FROM pgmq.queue_limit_state s WHERE s.queue_name = lower(OLD.queue_name);
    RETURN OLD;
END
$function$
;
COMMENT ON FUNCTION pgmq._forget_queue_limits() IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._forget_queue_limits() FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._limit_channel(queue_name text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$ SELECT 'pgmq.q_' || queue_name || '.FREE' $function$
;
COMMENT ON FUNCTION pgmq._limit_channel(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._limit_channel(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_attribute_rules()
 RETURNS TABLE(key text, allowed text)
 LANGUAGE sql
 IMMUTABLE
AS $function$
    VALUES
        ('delivery_delay', 'an integer number of seconds, 0 or more'),
        ('deduplication_window', 'an integer number of seconds, 0 (off) or more'),
        ('max_receive_count', 'an integer, 1 or more, set together with dead_letter_queue'),
        ('dead_letter_queue', 'the name of another queue, set together with max_receive_count'),
        ('message_retention', 'an integer number of seconds, 1 or more'),
        ('archive_retention', 'an integer number of seconds, 1 or more'),
        ('max_message_size', 'an integer number of bytes, 1 or more'),
        ('priorities', 'true or false'),
        ('paused', 'true or false'),
        ('max_in_flight', 'an integer, 1 or more'),
        ('rate_limit', 'an object {"count": N, "seconds": S}, N an integer 1 or more, S a number of seconds more than 0')
$function$
;
COMMENT ON FUNCTION pgmq._queue_attribute_rules() IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_attribute_rules() FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_attr_sql(queue_name text, op "char", low text, attrs jsonb)
 RETURNS text
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q');
    checks text := nullif(pgmq._send_checks_sql(attrs), '');
    gate text := 'TRUE';
    msg text := 'u.msg';
    vt text := 'coalesce($4, clock_timestamp())';
    -- Only the ordering and redrive matter here: the limits are the caller's (no lock).
    f record := pgmq._claim_filter(queue_name, attrs - 'max_in_flight' - 'rate_limit', NULL);
    window_ text := (attrs ->> 'deduplication_window') || ' seconds';
    order_by text;
    pick text;
BEGIN
    IF op = 's' OR op = 'S' THEN
        IF checks IS NOT NULL THEN
            -- Valid messages pass an inline test; pgmq._checked_message raises the error
            -- that names what is wrong with the first of the others.
            gate := format(
                '(SELECT count(pgmq._checked_message(%L, u.msg, u.hdr, %s, %L, %L)) '
                'FROM unnest($6, $7) AS u(msg, hdr) WHERE (%s) IS NOT TRUE) >= 0',
                queue_name, coalesce(attrs ->> 'max_message_size', 'NULL'), f.by_priority,
                window_ IS NOT NULL AND (attrs ->> 'deduplication_window')::integer > 0, checks);
        END IF;
        IF coalesce((attrs ->> 'delivery_delay')::integer, 0) > 0 THEN
            vt := format('coalesce($4, clock_timestamp() + interval %L)',
                         (attrs ->> 'delivery_delay') || ' seconds');
        END IF;
        IF coalesce((attrs ->> 'deduplication_window')::integer, 0) = 0 THEN
            RETURN format(
                $sql$
        INSERT INTO pgmq.%1$I AS q (vt, message, headers)
        SELECT %2$s, %3$s, u.hdr FROM unnest($6, $7) AS u(msg, hdr)
        WHERE %4$s
        RETURNING q.msg_id, NULL::integer, NULL::timestamptz, NULL::timestamptz,
                  NULL::timestamptz, NULL::jsonb, NULL::jsonb
                $sql$, qtable, vt, msg, gate);
        END IF;
        IF op = 'S' THEN
            -- The fast send: two plain inserts, the ids claimed in the order the statement
            -- below claims them (so no two batches, fast or not, wait on each other's ids
            -- crosswise). Any id already claimed, by an earlier send, a concurrent one
            -- (after its commit) or this batch itself, raises unique_violation, and the
            -- caller runs the statement below instead.
            RETURN format(
                $sql$
        WITH m AS (
            INSERT INTO pgmq.%1$I AS q (vt, message, headers)
            SELECT %2$s, %3$s, u.hdr FROM unnest($6, $7) AS u(msg, hdr)
            WHERE %5$s
            RETURNING q.msg_id, q.headers ->> 'deduplication_id' AS dedup
        ), claimed AS (
            INSERT INTO pgmq.queue_deduplication (queue_name, deduplication_id, msg_id, sent_at)
            SELECT %4$L, m.dedup, m.msg_id, clock_timestamp() FROM m
            WHERE m.dedup IS NOT NULL
            ORDER BY m.dedup
        )
        SELECT array_agg(m.msg_id ORDER BY m.msg_id) FROM m
                $sql$, qtable, vt, msg, lower(queue_name), gate);
        END IF;
        -- Deduplication: a message takes a new msg_id only when it may be enqueued: it
        -- has no deduplication id, or it is its id's first in the batch and no send within
        -- the window holds that id (as this statement's snapshot sees it). Each such id is
        -- claimed in pgmq.queue_deduplication; a conflict (a concurrent sender waits there
        -- for the first one's commit) keeps the row of a send within the window, so only
        -- a claim that kept our new msg_id enqueues its message (the loser of that race
        -- is the one case where an id is used up without a message). Every message of the
        -- batch returns its id's msg_id.
        RETURN format(
            $sql$
        WITH input AS MATERIALIZED (
            SELECT u.ord, %3$s AS msg, u.hdr, u.hdr ->> 'deduplication_id' AS dedup
            FROM unnest($6, $7) WITH ORDINALITY AS u(msg, hdr, ord)
            WHERE %7$s
        ),
        numbered AS MATERIALIZED (
            SELECT i.ord, i.msg, i.hdr, i.dedup,
                   CASE WHEN i.dedup IS NULL
                          OR (i.first AND NOT EXISTS (
                                SELECT 1 FROM pgmq.queue_deduplication d
                                WHERE d.queue_name = %5$L AND d.deduplication_id = i.dedup
                                  AND d.sent_at > clock_timestamp() - interval %6$L))
                        THEN nextval(%4$L::regclass) END AS new_id
            FROM (SELECT x.*, row_number() OVER (PARTITION BY x.dedup ORDER BY x.ord) = 1 AS first
                  FROM input x) i
            ORDER BY i.ord
        ),
        claimed AS (
            INSERT INTO pgmq.queue_deduplication AS d (queue_name, deduplication_id, msg_id, sent_at)
            SELECT %5$L, n.dedup, n.new_id, clock_timestamp()
            FROM numbered n WHERE n.dedup IS NOT NULL AND n.new_id IS NOT NULL
            ORDER BY n.dedup
            ON CONFLICT (queue_name, deduplication_id) DO UPDATE
            SET msg_id = CASE WHEN d.sent_at > clock_timestamp() - interval %6$L
                              THEN d.msg_id ELSE excluded.msg_id END,
                sent_at = CASE WHEN d.sent_at > clock_timestamp() - interval %6$L
                               THEN d.sent_at ELSE excluded.sent_at END
            RETURNING d.deduplication_id, d.msg_id
        ),
        inserted AS (
            INSERT INTO pgmq.%1$I AS q (msg_id, vt, message, headers) OVERRIDING SYSTEM VALUE
            SELECT n.new_id, %2$s, n.msg, n.hdr
            FROM numbered n
            WHERE n.dedup IS NULL OR n.new_id IN (SELECT c.msg_id FROM claimed c)
            ORDER BY n.ord
            RETURNING q.msg_id
        )
        SELECT coalesce(c.msg_id,
                        (SELECT d.msg_id FROM pgmq.queue_deduplication d
                         WHERE d.queue_name = %5$L AND d.deduplication_id = n.dedup),
                        n.new_id),
               NULL::integer, NULL::timestamptz, NULL::timestamptz,
               NULL::timestamptz, NULL::jsonb, NULL::jsonb
        FROM numbered n
        LEFT JOIN claimed c ON c.deduplication_id = n.dedup
        ORDER BY n.ord
            $sql$,
            qtable, vt, msg,
            pg_get_serial_sequence(format('pgmq.%I', qtable), 'msg_id'),
            lower(queue_name), window_, gate);
    END IF;

    IF op <> 'r' AND op <> 'p' THEN
        RETURN pgmq._queue_ops_sql(queue_name, op, low);
    END IF;
    IF NOT f.by_priority AND f.dead_letter_queue IS NULL THEN
        RETURN pgmq._queue_ops_sql(queue_name, op, low);
    END IF;

    order_by := CASE WHEN f.by_priority THEN 'pgmq._task_priority(%1$s.headers) DESC, %1$s.msg_id'
                     ELSE '%1$s.msg_id' END;
    -- Only messages that may still be delivered are picked, so redrive never uses up
    -- the qty (issue 22 #11); the over-read ones among those the pick walked past (all
    -- of them when it found fewer than qty) move to the dead-letter queue, at most
    -- max(qty, 100) per call.
    pick := format(
        $pick$
            SELECT q.msg_id FROM pgmq.%I q
            WHERE q.msg_id >= %s AND q.vt <= clock_timestamp()
              AND ($8 IS NULL OR $8 = '{}'::jsonb OR q.message @> $8)
              %s
            ORDER BY %s
            LIMIT $2
            FOR UPDATE SKIP LOCKED
        $pick$,
        qtable, low,
        CASE WHEN f.dead_letter_queue IS NULL THEN ''
             ELSE format('AND q.read_ct < %s', f.max_receive_count) END,
        format(order_by, 'q'));
    RETURN format(
        $sql$
        WITH picked AS MATERIALIZED (%2$s),
        %3$s
        done AS (
            %4$s
            WHERE m.msg_id = ANY(ARRAY(SELECT p.msg_id FROM picked p))
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message, m.headers
        )
        SELECT * FROM done d ORDER BY %5$s
        $sql$,
        qtable, pick,
        CASE WHEN f.dead_letter_queue IS NULL THEN '' ELSE format(
            $dead$
        dead AS (
            DELETE FROM pgmq.%1$I m
            WHERE m.msg_id = ANY(ARRAY(
                SELECT q.msg_id FROM pgmq.%1$I q
                WHERE q.msg_id >= %5$s AND q.vt <= clock_timestamp()
                  AND ($8 IS NULL OR $8 = '{}'::jsonb OR q.message @> $8)
                  AND q.read_ct >= %3$s
                  AND ((SELECT count(*) FROM picked) < $2
                       OR q.msg_id < (SELECT max(p.msg_id) FROM picked p))
                ORDER BY q.msg_id
                LIMIT greatest($2, 100)
                FOR UPDATE SKIP LOCKED))
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.message, m.headers
        ),
        moved AS (
            INSERT INTO pgmq.%2$I (vt, message, headers)
            SELECT clock_timestamp(), x.message,
                   pgmq._dead_letter_headers(x.headers, %4$L, x.msg_id, x.read_ct, x.enqueued_at, NULL)
            FROM dead x ORDER BY x.msg_id
        ),
            $dead$,
            qtable, pgmq.format_table_name(f.dead_letter_queue, 'q'), f.max_receive_count,
            queue_name, low) END,
        CASE WHEN op = 'r' THEN format(
            $upd$
            UPDATE pgmq.%I m
            SET vt = clock_timestamp() + make_interval(secs => $3),
                read_ct = m.read_ct + 1,
                last_read_at = clock_timestamp()
            $upd$, qtable)
        ELSE format('DELETE FROM pgmq.%I m', qtable) END,
        format(order_by, 'd'));
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_attr_sql(text,"char",text,jsonb) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_attr_sql(text,"char",text,jsonb) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_with_attributes(queue_name text, attrs jsonb, p_op "char", p_qty integer, p_secs integer, p_vt timestamp with time zone, p_ids bigint[], p_msgs jsonb[], p_headers jsonb[], p_cond jsonb, low bigint)
 RETURNS SETOF pgmq.message_record
 LANGUAGE plpgsql
AS $function$
DECLARE
    f record;
    qty integer := p_qty;
    rec pgmq.message_record;
    claimed bigint[] := '{}';
    n bigint;
BEGIN
    IF p_op = 's' AND coalesce((attrs ->> 'deduplication_window')::integer, 0) > 0 THEN
        RETURN QUERY SELECT * FROM pgmq._send_deduplicated(queue_name, attrs, p_vt, p_msgs, p_headers);
        RETURN;
    END IF;
    IF p_op = 'r' OR p_op = 'p' THEN
        f := pgmq._claim_filter(queue_name, attrs, p_qty, p_op = 'p');
        qty := f.allowed;
        IF qty = 0 THEN
            RETURN;
        END IF;
        IF f.dead_letter_queue IS NOT NULL THEN
            PERFORM pgmq._ensure_dead_letter_queue(f.dead_letter_queue);
        END IF;
        IF f.held IS NOT NULL OR f.stamps IS NOT NULL THEN
            -- A limited queue: note what was claimed, for pgmq._claim_record.
            FOR rec IN EXECUTE pgmq._queue_ops_attr_sql(queue_name, p_op, '$9', attrs)
                USING p_op, qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond, low
            LOOP
                claimed := claimed || rec.msg_id;
                RETURN NEXT rec;
            END LOOP;
            PERFORM pgmq._claim_record(queue_name, f.held, f.stamps, f.counts, claimed, p_op = 'p');
            RETURN;
        END IF;
    END IF;
    RETURN QUERY EXECUTE pgmq._queue_ops_attr_sql(queue_name, p_op, '$9', attrs)
        USING p_op, qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond, low;
    IF (p_op = 'a' OR p_op = 'd' OR (p_op = 'v' AND p_vt <= clock_timestamp()))
       AND attrs ? 'max_in_flight' THEN
        -- A slot may have freed (not by a heartbeat's set_vt into the future): wake a
        -- worker waiting at the limit (at commit).
        GET DIAGNOSTICS n = ROW_COUNT;
        IF n > 0 THEN
            PERFORM pg_notify(pgmq._limit_channel(pgmq._stored_queue_name(queue_name)), '');
        END IF;
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_with_attributes(text,jsonb,"char",integer,integer,timestamp with time zone,bigint[],jsonb[],jsonb[],jsonb,bigint) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_with_attributes(text,jsonb,"char",integer,integer,timestamp with time zone,bigint[],jsonb[],jsonb[],jsonb,bigint) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._read_grouped(queue_name text, vt integer, qty integer, mode text)
 RETURNS SETOF pgmq.message_record
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q');
    lock_space integer := hashtext(qtable);
    grp text;
    groups text[] := '{}';
    ready bigint;
    budget integer;
    f record;
    wanted integer;
    claim text;
    rec pgmq.message_record;
    dead bigint[];
    given bigint[] := '{}';
    limited boolean;
BEGIN
    IF qty IS NULL OR qty < 0 THEN
        RAISE EXCEPTION 'qty must be zero or more, got: %', coalesce(qty::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    f := pgmq._claim_filter(queue_name, coalesce(pgmq._queue_attributes(queue_name), '{}'::jsonb), qty);
    wanted := f.allowed;
    IF wanted = 0 THEN
        RETURN;
    END IF;
    limited := f.held IS NOT NULL OR f.stamps IS NOT NULL;
    -- Over-read messages moved to the dead-letter queue do not count: read again for
    -- the rest (each round moves at least one, so this ends).
    LOOP
    groups := '{}';
    budget := wanted;
    dead := '{}';

    -- Groups whose first message looks visible, oldest first. Only a hint: each
    -- is checked again below, after its lock is held.
    FOR grp IN EXECUTE format(
        $q$
        SELECT h.grp
        FROM (
            SELECT DISTINCT ON (pgmq._fifo_group(headers))
                   pgmq._fifo_group(headers) AS grp, msg_id, vt
            FROM pgmq.%I
            ORDER BY pgmq._fifo_group(headers), msg_id
        ) h
        WHERE h.vt <= clock_timestamp()
        ORDER BY h.msg_id
        $q$,
        qtable
    )
    LOOP
        -- Another reader holds this group until it commits: leave it alone.
        CONTINUE WHEN NOT pg_try_advisory_xact_lock(lock_space, hashtext(grp));
        -- A new statement, so a new snapshot: it sees what the last holder committed.
        EXECUTE format(
            $q$
            SELECT count(*) FILTER (WHERE ok)
            FROM (
                SELECT bool_and(vt <= clock_timestamp()) OVER (ORDER BY msg_id) AS ok
                FROM (
                    SELECT msg_id, vt FROM pgmq.%I
                    WHERE pgmq._fifo_group(headers) = $1
                    ORDER BY msg_id
                    LIMIT $2
                ) front
            ) run
            $q$,
            qtable
        ) INTO ready USING grp, CASE WHEN mode = 'fill' THEN budget ELSE 1 END;
        CONTINUE WHEN ready = 0;
        groups := groups || grp;
        budget := budget - CASE WHEN mode = 'fill' THEN ready::integer ELSE 1 END;
        EXIT WHEN budget <= 0;
    END LOOP;

    EXIT WHEN cardinality(groups) = 0;

    claim := format(
        $q$
        WITH wanted AS MATERIALIZED (
            -- The readable front of each locked group, ranked, then chosen by mode.
            SELECT g.prio, r.msg_id, r.rnk
            FROM unnest($1::text[]) WITH ORDINALITY AS g(grp, prio)
            CROSS JOIN LATERAL (
                SELECT f.msg_id,
                       row_number() OVER w AS rnk,
                       bool_and(f.vt <= clock_timestamp()) OVER w AS ok
                FROM (
                    SELECT msg_id, vt FROM pgmq.%1$I
                    WHERE pgmq._fifo_group(headers) = g.grp
                    ORDER BY msg_id
                    LIMIT $5
                ) f
                WINDOW w AS (ORDER BY f.msg_id)
            ) r
            WHERE r.ok AND ($4 <> 'head' OR r.rnk = 1)
            ORDER BY CASE WHEN $4 = 'rr' THEN r.rnk ELSE g.prio END,
                     CASE WHEN $4 = 'rr' THEN g.prio ELSE r.rnk END
            LIMIT $2
        ),
        locked AS MATERIALIZED (
            SELECT m.msg_id FROM pgmq.%1$I m
            WHERE m.msg_id IN (SELECT msg_id FROM wanted) AND m.vt <= clock_timestamp()
              AND m.msg_id <> ALL ($6)  -- handed out by an earlier round of this call
            FOR UPDATE SKIP LOCKED
        ),
        usable AS (
            -- A row someone else holds (a plain read, a delete) ends its group's share.
            SELECT w.msg_id, w.prio, w.rnk
            FROM wanted w
            WHERE NOT EXISTS (
                SELECT 1 FROM wanted e
                WHERE e.prio = w.prio AND e.rnk <= w.rnk
                  AND NOT EXISTS (SELECT 1 FROM locked l WHERE l.msg_id = e.msg_id)
            )
        ),
        claimed AS (
            UPDATE pgmq.%1$I m
            SET vt = clock_timestamp() + $3,
                read_ct = m.read_ct + 1,
                last_read_at = clock_timestamp()
            FROM usable u
            WHERE m.msg_id = u.msg_id
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message,
                      m.headers, u.prio, u.rnk
        )
        SELECT msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers
        FROM claimed
        -- Round-robin keeps its rounds (as pgmq does); the others come in msg_id order.
        ORDER BY CASE WHEN $4 = 'rr' THEN rnk ELSE 0 END,
                 CASE WHEN $4 = 'rr' THEN prio ELSE 0 END,
                 msg_id
        $q$,
        qtable
    );
    IF f.max_receive_count IS NULL AND NOT limited THEN
        RETURN QUERY EXECUTE claim
            USING groups, wanted, make_interval(secs => coalesce(vt, 0)), mode,
            -- The most one group can contribute: every other group gives at least one.
            CASE WHEN mode = 'head' THEN 1 ELSE wanted - cardinality(groups) + 1 END, given;
        RETURN;
    END IF;
    FOR rec IN EXECUTE claim
        USING groups, wanted, make_interval(secs => coalesce(vt, 0)), mode,
        CASE WHEN mode = 'head' THEN 1 ELSE wanted - cardinality(groups) + 1 END, given
    LOOP
        IF rec.read_ct > f.max_receive_count THEN  -- NULL (no redrive): never
            dead := dead || rec.msg_id;
        ELSE
            RETURN NEXT rec;
            given := given || rec.msg_id;
            wanted := wanted - 1;
        END IF;
    END LOOP;
    PERFORM pgmq._dead_letter_ids(queue_name, dead, 1);
    EXIT WHEN cardinality(dead) = 0 OR wanted <= 0;
    END LOOP;
    IF limited THEN
        PERFORM pgmq._claim_record(queue_name, f.held, f.stamps, f.counts, given);
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._read_grouped(text,integer,integer,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._read_grouped(text,integer,integer,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._sync_queue_limits(queue_name text, attrs jsonb)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    seeded bigint[];
BEGIN
    IF NOT (attrs ? 'max_in_flight' OR attrs ? 'rate_limit') THEN
        DELETE FROM pgmq.queue_limit_state s WHERE s.queue_name = lower($1);
        RETURN;
    END IF;
    IF attrs ? 'max_in_flight' THEN
        EXECUTE format(
            'SELECT coalesce(array_agg(q.msg_id ORDER BY q.msg_id), ''{}'') FROM pgmq.%I q '
            'WHERE q.read_ct > 0 AND q.vt > clock_timestamp()',
            pgmq.format_table_name(queue_name, 'q')) INTO seeded;
    END IF;
    INSERT INTO pgmq.queue_limit_state AS s (queue_name, max_in_flight, rate_count, rate_seconds, in_flight)
    VALUES (lower($1), (attrs ->> 'max_in_flight')::integer,
            (attrs -> 'rate_limit' ->> 'count')::integer,
            (attrs -> 'rate_limit' ->> 'seconds')::double precision, coalesce(seeded, '{}'))
    ON CONFLICT ON CONSTRAINT queue_limit_state_pkey DO UPDATE
    SET max_in_flight = excluded.max_in_flight,
        rate_count = excluded.rate_count,
        rate_seconds = excluded.rate_seconds,
        in_flight = CASE WHEN s.max_in_flight IS NULL THEN excluded.in_flight ELSE s.in_flight END,
        handed_out_at = CASE WHEN excluded.rate_count IS NULL THEN '{}' ELSE s.handed_out_at END,
        handed_out_n = CASE WHEN excluded.rate_count IS NULL THEN '{}' ELSE s.handed_out_n END;
END
$function$
;
COMMENT ON FUNCTION pgmq._sync_queue_limits(text,jsonb) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._sync_queue_limits(text,jsonb) FROM PUBLIC;

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
        CONTINUE WHEN (pgmq._claim_filter(queue, coalesce(pgmq._queue_attributes(queue), '{}'::jsonb), 1,
                                          peek => true)).allowed = 0;
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
GRANT EXECUTE ON FUNCTION pgmq.celery_next_visible(text[]) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.queue_limits(queue_name text DEFAULT NULL::text)
 RETURNS TABLE(queue_name text, max_in_flight integer, in_flight integer, rate_count integer, rate_seconds double precision, handed_out integer, next_free_at timestamp with time zone)
 LANGUAGE sql
AS $function$
    SELECT m.queue_name::text, l.max_in_flight, cardinality(l.held),
           l.rate_count, l.rate_seconds,
           (SELECT coalesce(sum(n), 0) FROM unnest(l.counts) n)::integer,
           l.next_free_at
    FROM pgmq.meta m
    JOIN pgmq.queue_limit_state s ON s.queue_name = lower(m.queue_name)
    CROSS JOIN LATERAL pgmq._claim_limits(m.queue_name, NULL, false, false) l
    WHERE $1 IS NULL OR lower(m.queue_name) = lower($1)
    ORDER BY m.queue_name;
$function$
;
COMMENT ON FUNCTION pgmq.queue_limits(text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.queue_limits(text) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.set_queue_attributes(queue_name text, attributes jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
DECLARE
    stored text := pgmq._require_queue(queue_name);
    old jsonb;
    merged jsonb;
    k text;
    qtable text;
BEGIN
    IF attributes IS NULL OR jsonb_typeof(attributes) <> 'object' THEN
        RAISE EXCEPTION 'queue "%": attributes must be a JSON object, got %', stored,
            coalesce(attributes::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    FOR k IN SELECT jsonb_object_keys(attributes) LOOP
        IF NOT EXISTS (SELECT 1 FROM pgmq._queue_attribute_rules() r WHERE r.key = k) THEN
            PERFORM pgmq._bad_queue_attribute(stored, k, attributes -> k);
        END IF;
    END LOOP;
    PERFORM pgmq.acquire_queue_lock(stored);
    old := coalesce(pgmq._queue_attributes(stored), '{}'::jsonb);
    merged := jsonb_strip_nulls(old || attributes);
    PERFORM pgmq._check_queue_attributes(stored, merged);
    IF merged = old THEN
        RETURN merged;
    END IF;

    IF merged ? 'dead_letter_queue'
       AND NOT EXISTS (SELECT 1 FROM pgmq.meta m
                       WHERE lower(m.queue_name) = lower(merged ->> 'dead_letter_queue')) THEN
        PERFORM pgmq."create"(merged ->> 'dead_letter_queue');
    END IF;
    qtable := pgmq.format_table_name(stored, 'q');
    IF (merged -> 'priorities') = 'true'::jsonb THEN
        -- The tasks backend's index (sql/75_tasks.sql): priority descending, then msg_id,
        -- built CONCURRENTLY after the commit (sql/22_index_builds.sql).
        PERFORM pgmq._want_queue_index(stored, 'priority');
    END IF;
    IF coalesce((merged ->> 'deduplication_window')::integer, 0) = 0 THEN
        DELETE FROM pgmq.queue_deduplication d WHERE d.queue_name = lower(stored);
    END IF;

    IF (old -> 'max_in_flight', old -> 'rate_limit')
       IS DISTINCT FROM (merged -> 'max_in_flight', merged -> 'rate_limit') THEN
        PERFORM pgmq._sync_queue_limits(stored, merged);
    END IF;

    IF merged = '{}'::jsonb THEN
        DELETE FROM pgmq.queue_attributes a WHERE a.queue_name = stored;
    ELSE
        INSERT INTO pgmq.queue_attributes AS a (queue_name, attributes)
        VALUES (stored, merged)
        ON CONFLICT ON CONSTRAINT queue_attributes_pkey
        DO UPDATE SET attributes = excluded.attributes, updated_at = now();
    END IF;
    RETURN merged;
END
$function$
;
COMMENT ON FUNCTION pgmq.set_queue_attributes(text,jsonb) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.set_queue_attributes(text,jsonb) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.spark_claim(queue_name text, consumer text, vt integer, qty integer, max_msg_id bigint, min_batch bigint)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q');
    stamp timestamptz := clock_timestamp();
    f record;
    held bigint[];
    ids bigint[];
    dead bigint[];
    next_batch bigint;
BEGIN
    PERFORM pgmq._require_queue(queue_name);
    IF vt IS NULL OR vt < 1 THEN
        RAISE EXCEPTION 'vt must be at least 1 second, got %', vt USING ERRCODE = 'PQ004';
    END IF;
    f := pgmq._claim_filter(queue_name, coalesce(pgmq._queue_attributes(queue_name), '{}'::jsonb), qty);
    IF f.allowed = 0 THEN
        RETURN NULL;
    END IF;
    -- Taken after the filter, which may have waited for a limited queue's state row: the
    -- claim's last_read_at then follows every earlier claim's (rate_limit's windows).
    stamp := clock_timestamp();
    PERFORM pgmq._spark_consumer_lock(queue_name, consumer);
    SELECT coalesce(array_agg(id), '{}') INTO held
    FROM pgmq.spark_stream_batch b, unnest(b.msg_ids) AS id
    WHERE b.queue_name = $1 AND b.consumer = $2 AND b.acked_at IS NULL;

    -- $6: max_receive_count when the queue has a dead-letter queue, else NULL (none dead).
    -- Only deliverable messages are picked; the over-read ones the pick walked past (all
    -- of them when it found fewer than qty) are locked to be dead-lettered.
    EXECUTE format(
        $q$
        WITH picked AS MATERIALIZED (
            SELECT msg_id FROM pgmq.%1$I
            WHERE vt <= $1 AND ($2::bigint IS NULL OR msg_id <= $2) AND msg_id <> ALL ($3)
              AND NOT coalesce(read_ct >= $6, false)
            ORDER BY %2$s
            LIMIT $4
            FOR UPDATE SKIP LOCKED
        ), over_read AS MATERIALIZED (
            SELECT msg_id FROM pgmq.%1$I
            WHERE $6 IS NOT NULL AND read_ct >= $6
              AND vt <= $1 AND ($2::bigint IS NULL OR msg_id <= $2) AND msg_id <> ALL ($3)
              AND ($4 IS NULL OR (SELECT count(*) FROM picked) < $4
                   OR msg_id < (SELECT max(p.msg_id) FROM picked p))
            ORDER BY msg_id
            LIMIT greatest($4, 100)
            FOR UPDATE SKIP LOCKED
        ), claimed AS (
            UPDATE pgmq.%1$I q
            SET vt = $1 + make_interval(secs => $5), read_ct = q.read_ct + 1, last_read_at = $1
            WHERE q.msg_id = ANY(ARRAY(SELECT p.msg_id FROM picked p))
            RETURNING q.msg_id
        )
        SELECT (SELECT array_agg(c.msg_id ORDER BY c.msg_id) FROM claimed c),
               (SELECT array_agg(o.msg_id ORDER BY o.msg_id) FROM over_read o)
        $q$,
        qtable,
        CASE WHEN f.by_priority THEN 'pgmq._task_priority(headers) DESC, msg_id' ELSE 'msg_id' END
    ) INTO ids, dead
    USING stamp, max_msg_id, held, f.allowed, vt, f.max_receive_count;
    IF dead IS NOT NULL THEN
        PERFORM pgmq._dead_letter_ids(queue_name, dead, 0);
    END IF;
    PERFORM pgmq._claim_record(queue_name, f.held, f.stamps, f.counts, ids);

    IF ids IS NULL THEN
        RETURN NULL;
    END IF;
    SELECT greatest(coalesce(max(b.batch), 0), coalesce(min_batch, 0)) + 1 INTO next_batch
    FROM pgmq.spark_stream_batch b WHERE b.queue_name = $1 AND b.consumer = $2;
    INSERT INTO pgmq.spark_stream_batch (queue_name, consumer, batch, msg_ids, claimed_at)
    VALUES ($1, $2, next_batch, ids, stamp);
    RETURN next_batch;
END
$function$
;
COMMENT ON FUNCTION pgmq.spark_claim(text,text,integer,integer,bigint,bigint) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.spark_claim(text,text,integer,integer,bigint,bigint) TO PUBLIC;

CREATE TRIGGER queue_attributes_forget_limits AFTER DELETE ON pgmq.queue_attributes FOR EACH ROW EXECUTE FUNCTION pgmq._forget_queue_limits();

-- BY HAND (done above): table pgmq.queue_limit_state and its primary key
-- BY HAND: a queue whose attributes already carry max_in_flight or rate_limit (the
-- reverse of this migration keeps the attributes and drops their state) gets its state
-- row again, its in-flight messages counted, so its limits hold from this commit on.
SELECT pgmq._sync_queue_limits(a.queue_name::text, a.attributes)
FROM pgmq.queue_attributes a
WHERE a.attributes ? 'max_in_flight' OR a.attributes ? 'rate_limit';

-- 0023_periodic_schedules
-- 0023_periodic_schedules: periodic schedules
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
-- BY HAND: the tables pgmq.schedules and pgmq.schedule_ticks (with their primary keys,
-- checks and foreign keys) and the type pgmq._cron_spec are new: created here, before
-- the functions that use them.
CREATE TABLE pgmq.schedules (
    schedule_name text PRIMARY KEY
        CHECK (length(schedule_name) BETWEEN 1 AND 200),
    cron text NOT NULL,
    queue_name varchar NOT NULL
        REFERENCES pgmq.meta (queue_name) ON DELETE CASCADE ON UPDATE CASCADE,
    message jsonb NOT NULL DEFAULT '{}',
    headers jsonb CHECK (headers IS NULL OR jsonb_typeof(headers) = 'object'),
    time_zone text NOT NULL DEFAULT 'UTC',
    catch_up interval NOT NULL DEFAULT '10 minutes' CHECK (catch_up >= interval '0'),
    enabled boolean NOT NULL DEFAULT true,
    next_tick timestamptz NOT NULL,
    skipped bigint NOT NULL DEFAULT 0,
    -- 'settings' for a schedule PGMQ["SCHEDULES"] declares (Django keeps those in step)
    origin text,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- The ticks sent (or tried: error holds why pgmq.send refused), the last 100 of each
-- schedule. Its primary key is what makes a tick go out once. Older rows are deleted
-- as new ones come: they lie before the schedule's next_tick and can never be due again.
CREATE TABLE pgmq.schedule_ticks (
    schedule_name text NOT NULL
        REFERENCES pgmq.schedules (schedule_name) ON DELETE CASCADE ON UPDATE CASCADE,
    tick timestamptz NOT NULL,
    queue_name text NOT NULL,
    msg_id bigint,
    error text,
    sent_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (schedule_name, tick)
);

-- A parsed cron expression. every_seconds is set for "@every"; the arrays hold the
-- values each field allows (weekdays 0-6, Sunday 0).
CREATE TYPE pgmq._cron_spec AS (
    every_seconds bigint,
    minutes integer[],
    hours integer[],
    days integer[],
    months integer[],
    weekdays integer[],
    days_or boolean,
    wall_clock boolean
);

CREATE OR REPLACE FUNCTION pgmq._check_time_zone(time_zone text)
 RETURNS text
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
    known boolean;
BEGIN
    -- PostgreSQL also takes POSIX specs ("UTC+3") and abbreviations ("PST") after AT
    -- TIME ZONE; a schedule takes only names of the tz database. An Area/Location name
    -- PostgreSQL can load is one; a name without "/" is looked up in the (slow) list.
    BEGIN
        known := time_zone ~ '^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$'
                 AND (now() AT TIME ZONE time_zone) IS NOT NULL
                 AND (time_zone IN ('UTC', 'GMT') OR position('/' IN time_zone) > 0
                      OR EXISTS (SELECT 1 FROM pg_timezone_names z WHERE z.name = time_zone));
    EXCEPTION WHEN invalid_parameter_value THEN
        known := false;
    END;
    IF NOT coalesce(known, false) THEN
        RAISE EXCEPTION 'unknown time zone "%" (want an IANA name such as Europe/Berlin or UTC)',
            coalesce(time_zone, 'NULL') USING ERRCODE = 'PQ004';
    END IF;
    RETURN time_zone;
END
$function$
;
COMMENT ON FUNCTION pgmq._check_time_zone(text) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._cron_count(spec pgmq._cron_spec, time_zone text, from_tick timestamp with time zone, before timestamp with time zone)
 RETURNS bigint
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
    n bigint := 0;
    t timestamptz := from_tick;
BEGIN
    IF from_tick IS NULL OR from_tick >= before THEN
        RETURN 0;
    END IF;
    IF spec.every_seconds IS NOT NULL THEN
        RETURN ceil(extract(epoch FROM before - from_tick) / spec.every_seconds)::bigint;
    END IF;
    WHILE t IS NOT NULL AND t < before AND n < 10000 LOOP
        n := n + 1;
        t := pgmq._cron_next(spec, time_zone, t);
    END LOOP;
    RETURN n;
END
$function$
;
COMMENT ON FUNCTION pgmq._cron_count(pgmq._cron_spec,text,timestamp with time zone,timestamp with time zone) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._cron_day_matches(spec pgmq._cron_spec, day date)
 RETURNS boolean
 LANGUAGE sql
 IMMUTABLE
AS $function$
    SELECT CASE WHEN spec.days_or
        THEN extract(day FROM day)::integer = ANY (spec.days)
             OR extract(dow FROM day)::integer = ANY (spec.weekdays)
        ELSE extract(day FROM day)::integer = ANY (spec.days)
             AND extract(dow FROM day)::integer = ANY (spec.weekdays)
    END
$function$
;
COMMENT ON FUNCTION pgmq._cron_day_matches(pgmq._cron_spec,date) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._cron_field(field text, spec text, lo integer, hi integer, names text[] DEFAULT NULL::text[])
 RETURNS integer[]
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
DECLARE
    item text;
    span text;
    step integer;
    first_v integer;
    last_v integer;
    vals integer[] := '{}';
BEGIN
    FOREACH item IN ARRAY string_to_array(spec, ',') LOOP
        IF item = '' THEN
            RAISE EXCEPTION 'cron field "%": empty item in "%"', field, spec USING ERRCODE = 'PQ004';
        END IF;
        span := item;
        step := NULL;
        IF position('/' IN item) > 0 THEN
            IF item !~ '^[^/]+/[0-9]{1,9}$' THEN
                RAISE EXCEPTION 'cron field "%": "%" has a bad step (want <range>/<number>)', field, item
                    USING ERRCODE = 'PQ004';
            END IF;
            span := split_part(item, '/', 1);
            step := split_part(item, '/', 2)::integer;
            IF step < 1 THEN
                RAISE EXCEPTION 'cron field "%": step % in "%" must be 1 or more', field, step, item
                    USING ERRCODE = 'PQ004';
            END IF;
        END IF;
        IF span = '*' THEN
            first_v := lo;
            last_v := hi;
        ELSIF position('-' IN span) > 0 THEN
            IF span !~ '^[^-]+-[^-]+$' THEN
                RAISE EXCEPTION 'cron field "%": "%" is not a range (want <from>-<to>)', field, span
                    USING ERRCODE = 'PQ004';
            END IF;
            first_v := pgmq._cron_value(field, split_part(span, '-', 1), lo, hi, names);
            last_v := pgmq._cron_value(field, split_part(span, '-', 2), lo, hi, names);
            IF last_v < first_v THEN
                RAISE EXCEPTION 'cron field "%": range "%" ends before it starts', field, span
                    USING ERRCODE = 'PQ004';
            END IF;
        ELSE
            first_v := pgmq._cron_value(field, span, lo, hi, names);
            last_v := CASE WHEN step IS NULL THEN first_v ELSE hi END;  -- "5/15": 5 to hi
        END IF;
        vals := vals || ARRAY(SELECT generate_series(first_v, last_v, coalesce(step, 1)));
    END LOOP;
    RETURN ARRAY(SELECT DISTINCT v FROM unnest(vals) v ORDER BY v);
END
$function$
;
COMMENT ON FUNCTION pgmq._cron_field(text,text,integer,integer,text[]) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._cron_next(spec pgmq._cron_spec, time_zone text, after timestamp with time zone)
 RETURNS timestamp with time zone
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
    lt timestamp;
    t timestamptz;
BEGIN
    IF spec.every_seconds IS NOT NULL THEN
        RETURN to_timestamp(
            ((floor(extract(epoch FROM after) / spec.every_seconds) + 1) * spec.every_seconds)::double precision);
    END IF;
    IF NOT spec.wall_clock THEN
        RETURN pgmq._cron_next_elapsed(spec, time_zone, after);
    END IF;
    lt := after AT TIME ZONE time_zone;
    LOOP
        lt := pgmq._cron_next_local(spec, lt);
        IF lt IS NULL THEN
            RETURN NULL;
        END IF;
        t := pgmq._local_to_instant(lt, time_zone);
        -- a tick in a gap moves to its end, where others may land too: once
        IF t > after THEN
            RETURN t;
        END IF;
    END LOOP;
END
$function$
;
COMMENT ON FUNCTION pgmq._cron_next(pgmq._cron_spec,text,timestamp with time zone) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._cron_next_elapsed(spec pgmq._cron_spec, time_zone text, after timestamp with time zone)
 RETURNS timestamp with time zone
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
    t timestamptz := date_trunc('minute', after, 'UTC') + interval '1 minute';
    give_up CONSTANT timestamptz := after + interval '30 years';
    lt timestamp;
    v integer;
    nxt integer;
BEGIN
    WHILE t < give_up LOOP
        lt := t AT TIME ZONE time_zone;
        IF NOT extract(month FROM lt)::integer = ANY (spec.months) THEN
            t := pgmq._local_to_instant(date_trunc('month', lt) + interval '1 month', time_zone);
            CONTINUE;
        END IF;
        IF NOT pgmq._cron_day_matches(spec, lt::date) THEN
            t := pgmq._local_to_instant(date_trunc('day', lt) + interval '1 day', time_zone);
            CONTINUE;
        END IF;
        v := extract(minute FROM lt)::integer;
        IF NOT extract(hour FROM lt)::integer = ANY (spec.hours) THEN
            t := t + make_interval(mins => 60 - v);  -- the next hour, in elapsed time
            CONTINUE;
        END IF;
        IF NOT v = ANY (spec.minutes) THEN
            SELECT min(m) INTO nxt FROM unnest(spec.minutes) m WHERE m > v;
            t := t + make_interval(mins => coalesce(nxt, 60) - v);
            CONTINUE;
        END IF;
        RETURN t;
    END LOOP;
    RETURN NULL;
END
$function$
;
COMMENT ON FUNCTION pgmq._cron_next_elapsed(pgmq._cron_spec,text,timestamp with time zone) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._cron_next_local(spec pgmq._cron_spec, local_time timestamp without time zone)
 RETURNS timestamp without time zone
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
DECLARE
    t timestamp := date_trunc('minute', local_time) + interval '1 minute';
    give_up CONSTANT timestamp := local_time + interval '30 years';
    v integer;
    nxt integer;
BEGIN
    WHILE t < give_up LOOP
        IF NOT extract(month FROM t)::integer = ANY (spec.months) THEN
            t := date_trunc('month', t) + interval '1 month';
            CONTINUE;
        END IF;
        IF NOT pgmq._cron_day_matches(spec, t::date) THEN
            t := date_trunc('day', t) + interval '1 day';
            CONTINUE;
        END IF;
        v := extract(hour FROM t)::integer;
        IF NOT v = ANY (spec.hours) THEN
            SELECT min(h) INTO nxt FROM unnest(spec.hours) h WHERE h > v;
            t := date_trunc('day', t) + CASE WHEN nxt IS NULL THEN interval '1 day'
                                            ELSE make_interval(hours => nxt) END;
            CONTINUE;
        END IF;
        v := extract(minute FROM t)::integer;
        IF NOT v = ANY (spec.minutes) THEN
            SELECT min(m) INTO nxt FROM unnest(spec.minutes) m WHERE m > v;
            t := date_trunc('hour', t) + CASE WHEN nxt IS NULL THEN interval '1 hour'
                                             ELSE make_interval(mins => nxt) END;
            CONTINUE;
        END IF;
        RETURN t;
    END LOOP;
    RETURN NULL;
END
$function$
;
COMMENT ON FUNCTION pgmq._cron_next_local(pgmq._cron_spec,timestamp without time zone) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._cron_parse(cron text)
 RETURNS pgmq._cron_spec
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
DECLARE
    expr text := lower(btrim(regexp_replace(coalesce(cron, ''), '\s+', ' ', 'g')));
    f text[];
    every text[];
    spec pgmq._cron_spec;
    month_days CONSTANT integer[] := '{31,29,31,30,31,30,31,31,30,31,30,31}';
BEGIN
    IF cron IS NULL THEN
        RAISE EXCEPTION 'cron must not be NULL' USING ERRCODE = 'PQ004';
    END IF;
    expr := CASE expr
        WHEN '@yearly' THEN '0 0 1 1 *'
        WHEN '@annually' THEN '0 0 1 1 *'
        WHEN '@monthly' THEN '0 0 1 * *'
        WHEN '@weekly' THEN '0 0 * * 0'
        WHEN '@daily' THEN '0 0 * * *'
        WHEN '@midnight' THEN '0 0 * * *'
        WHEN '@hourly' THEN '0 * * * *'
        ELSE expr
    END;
    IF left(expr, 1) = '@' THEN
        every := regexp_match(expr,
            '^@every ([0-9]{1,9}) ?(s|sec|secs|second|seconds|m|min|mins|minute|minutes|h|hour|hours)$');
        IF every IS NULL THEN
            RAISE EXCEPTION 'cron "%": unknown form (use five fields, @yearly, @monthly, @weekly, '
                '@daily, @hourly, or @every <n> seconds|minutes|hours)', cron
                USING ERRCODE = 'PQ004';
        END IF;
        spec.every_seconds := every[1]::bigint
            * CASE left(every[2], 1) WHEN 's' THEN 1 WHEN 'm' THEN 60 ELSE 3600 END;
        IF spec.every_seconds < 1 THEN
            RAISE EXCEPTION 'cron "%": the interval must be 1 or more', cron USING ERRCODE = 'PQ004';
        END IF;
        RETURN spec;
    END IF;
    f := string_to_array(expr, ' ');
    IF coalesce(array_length(f, 1), 0) <> 5 THEN
        RAISE EXCEPTION 'cron "%": want 5 fields (minute hour day-of-month month day-of-week), got %',
            cron, coalesce(array_length(f, 1), 0) USING ERRCODE = 'PQ004';
    END IF;
    spec.minutes := pgmq._cron_field('minute', f[1], 0, 59);
    spec.hours := pgmq._cron_field('hour', f[2], 0, 23);
    spec.days := pgmq._cron_field('day-of-month', f[3], 1, 31);
    spec.months := pgmq._cron_field('month', f[4], 1, 12,
        '{JAN,FEB,MAR,APR,MAY,JUN,JUL,AUG,SEP,OCT,NOV,DEC}');
    spec.weekdays := ARRAY(SELECT DISTINCT v % 7 FROM unnest(
        pgmq._cron_field('day-of-week', f[5], 0, 7, '{SUN,MON,TUE,WED,THU,FRI,SAT}')) v ORDER BY 1);
    -- cron's rule: when both day fields are restricted, a day matching either one fires.
    spec.days_or := left(f[3], 1) <> '*' AND left(f[5], 1) <> '*';
    spec.wall_clock := left(f[1], 1) <> '*' AND left(f[2], 1) <> '*';
    IF NOT spec.days_or AND spec.days[1] > (SELECT max(month_days[m]) FROM unnest(spec.months) m) THEN
        RAISE EXCEPTION 'cron field "day-of-month": % never occurs in the months of "%"',
            spec.days[1], f[4] USING ERRCODE = 'PQ004';
    END IF;
    RETURN spec;
END
$function$
;
COMMENT ON FUNCTION pgmq._cron_parse(text) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._cron_value(field text, token text, lo integer, hi integer, names text[])
 RETURNS integer
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
DECLARE
    pos integer := array_position(names, upper(token));
    v integer;
BEGIN
    IF pos IS NOT NULL THEN
        RETURN lo + pos - 1;
    END IF;
    IF token !~ '^[0-9]{1,9}$' THEN
        RAISE EXCEPTION 'cron field "%": "%" is not a number%', field, token,
            CASE WHEN names IS NULL THEN '' ELSE ' or a name (' || array_to_string(names, ' ') || ')' END
            USING ERRCODE = 'PQ004';
    END IF;
    v := token::integer;
    IF v < lo OR v > hi THEN
        RAISE EXCEPTION 'cron field "%": % is out of range %-%', field, v, lo, hi
            USING ERRCODE = 'PQ004';
    END IF;
    RETURN v;
END
$function$
;
COMMENT ON FUNCTION pgmq._cron_value(text,text,integer,integer,text[]) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._iso_time(at_instant timestamp with time zone, time_zone text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT to_char(at_instant AT TIME ZONE time_zone,
                   CASE WHEN date_trunc('second', at_instant) = at_instant
                        THEN 'YYYY-MM-DD"T"HH24:MI:SS' ELSE 'YYYY-MM-DD"T"HH24:MI:SS.US' END)
        || CASE WHEN o < interval '0' THEN '-' ELSE '+' END
        || to_char(CASE WHEN o < interval '0' THEN -o ELSE o END, 'HH24:MI')
    FROM (SELECT pgmq._utc_offset(at_instant, time_zone) AS o) x
$function$
;
COMMENT ON FUNCTION pgmq._iso_time(timestamp with time zone,text) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._local_to_instant(local_time timestamp without time zone, time_zone text)
 RETURNS timestamp with time zone
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
    guess timestamptz;
    candidate timestamptz;
    best timestamptz;
    offs interval;
BEGIN
    FOR i IN 0..1440 LOOP
        guess := local_time AT TIME ZONE time_zone;
        -- the offsets in force a day either side: a repeated hour has two instants
        FOREACH offs IN ARRAY ARRAY[pgmq._utc_offset(guess - interval '1 day', time_zone),
                                    pgmq._utc_offset(guess + interval '1 day', time_zone),
                                    pgmq._utc_offset(guess, time_zone)] LOOP
            candidate := (local_time - offs) AT TIME ZONE 'UTC';
            IF candidate AT TIME ZONE time_zone = local_time
               AND (best IS NULL OR candidate < best) THEN
                best := candidate;
            END IF;
        END LOOP;
        IF best IS NOT NULL THEN
            RETURN best;
        END IF;
        local_time := local_time + interval '1 minute';  -- in a gap: walk to its end
    END LOOP;
    RETURN guess;
END
$function$
;
COMMENT ON FUNCTION pgmq._local_to_instant(timestamp without time zone,text) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._require_schedule(schedule_name text)
 RETURNS pgmq.schedules
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
    found_row pgmq.schedules;
BEGIN
    SELECT * INTO found_row FROM pgmq.schedules s WHERE s.schedule_name = _require_schedule.schedule_name;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'schedule "%" does not exist', coalesce(schedule_name, 'NULL')
            USING ERRCODE = 'PQ005';
    END IF;
    RETURN found_row;
END
$function$
;
COMMENT ON FUNCTION pgmq._require_schedule(text) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._schedule_due_tick(spec pgmq._cron_spec, time_zone text, next_tick timestamp with time zone, catch_up interval, at_instant timestamp with time zone, OUT tick timestamp with time zone, OUT skipped bigint)
 RETURNS record
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
    window_start timestamptz := at_instant - catch_up;
    -- the first tick not handled yet (next_tick is one, unless someone wrote another)
    first_tick timestamptz := pgmq._cron_next(spec, time_zone, next_tick - interval '1 microsecond');
    t timestamptz;
    later timestamptz;
BEGIN
    IF spec.every_seconds IS NOT NULL THEN
        t := to_timestamp((floor(extract(epoch FROM at_instant) / spec.every_seconds) * spec.every_seconds)::double precision);
    ELSE
        t := CASE WHEN first_tick >= window_start THEN first_tick
                  ELSE pgmq._cron_next(spec, time_zone, window_start - interval '1 microsecond') END;
        LOOP
            later := pgmq._cron_next(spec, time_zone, t);
            EXIT WHEN later IS NULL OR later > at_instant;
            t := later;
        END LOOP;
    END IF;
    IF t IS NULL OR t > at_instant OR t < window_start OR t < first_tick THEN
        tick := NULL;
        skipped := pgmq._cron_count(spec, time_zone, first_tick, at_instant + interval '1 microsecond');
    ELSE
        tick := t;
        skipped := pgmq._cron_count(spec, time_zone, first_tick, t);
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._schedule_due_tick(pgmq._cron_spec,text,timestamp with time zone,interval,timestamp with time zone) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._utc_offset(at_instant timestamp with time zone, time_zone text)
 RETURNS interval
 LANGUAGE sql
 STABLE
AS $function$
    SELECT (at_instant AT TIME ZONE time_zone) - (at_instant AT TIME ZONE 'UTC')
$function$
;
COMMENT ON FUNCTION pgmq._utc_offset(timestamp with time zone,text) IS NULL;

CREATE OR REPLACE FUNCTION pgmq.create_schedule(schedule_name text, cron text, queue_name text, message jsonb DEFAULT '{}'::jsonb, headers jsonb DEFAULT NULL::jsonb, time_zone text DEFAULT 'UTC'::text, catch_up interval DEFAULT '00:10:00'::interval, enabled boolean DEFAULT true)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
#variable_conflict use_variable
DECLARE
    spec pgmq._cron_spec;
    stored text;
    first_tick timestamptz;
    last_sent timestamptz;
BEGIN
    IF schedule_name IS NULL OR length(schedule_name) NOT BETWEEN 1 AND 200 THEN
        RAISE EXCEPTION 'schedule name must be 1 to 200 characters, got %',
            coalesce(quote_literal(schedule_name), 'NULL') USING ERRCODE = 'PQ004';
    END IF;
    BEGIN
        spec := pgmq._cron_parse(cron);
    EXCEPTION WHEN SQLSTATE 'PQ004' THEN
        RAISE EXCEPTION 'schedule "%": %', schedule_name, SQLERRM USING ERRCODE = 'PQ004';
    END;
    PERFORM pgmq._check_time_zone(time_zone);
    SELECT m.queue_name INTO stored FROM pgmq.meta m WHERE lower(m.queue_name) = lower(queue_name);
    IF stored IS NULL THEN
        RAISE EXCEPTION 'schedule "%": queue "%" does not exist', schedule_name, queue_name
            USING ERRCODE = 'PQ002', HINT = 'Create it first with pgmq.create().';
    END IF;
    IF message IS NULL THEN
        RAISE EXCEPTION 'schedule "%": message must not be NULL', schedule_name USING ERRCODE = 'PQ004';
    END IF;
    IF headers IS NOT NULL AND jsonb_typeof(headers) <> 'object' THEN
        RAISE EXCEPTION 'schedule "%": headers must be a JSON object or NULL, got %',
            schedule_name, jsonb_typeof(headers) USING ERRCODE = 'PQ004';
    END IF;
    IF catch_up IS NULL OR catch_up < interval '0' THEN
        RAISE EXCEPTION 'schedule "%": catch_up must be an interval of 0 or more, got %',
            schedule_name, coalesce(catch_up::text, 'NULL') USING ERRCODE = 'PQ004';
    END IF;
    IF enabled IS NULL THEN
        RAISE EXCEPTION 'schedule "%": enabled must be true or false', schedule_name
            USING ERRCODE = 'PQ004';
    END IF;
    SELECT max(k.tick) INTO last_sent FROM pgmq.schedule_ticks k WHERE k.schedule_name = schedule_name;
    first_tick := pgmq._cron_next(spec, time_zone, greatest(now(), last_sent));
    IF first_tick IS NULL THEN
        RAISE EXCEPTION 'schedule "%": cron "%" never fires', schedule_name, cron USING ERRCODE = 'PQ004';
    END IF;
    INSERT INTO pgmq.schedules AS s (schedule_name, cron, queue_name, message, headers,
                                     time_zone, catch_up, enabled, next_tick)
    VALUES (schedule_name, cron, stored, message, headers, time_zone, catch_up, enabled, first_tick)
    ON CONFLICT ON CONSTRAINT schedules_pkey DO UPDATE SET
        cron = EXCLUDED.cron,
        queue_name = EXCLUDED.queue_name,
        message = EXCLUDED.message,
        headers = EXCLUDED.headers,
        time_zone = EXCLUDED.time_zone,
        catch_up = EXCLUDED.catch_up,
        enabled = EXCLUDED.enabled,
        next_tick = CASE
            WHEN s.cron = EXCLUDED.cron AND s.time_zone = EXCLUDED.time_zone
                 AND s.enabled AND EXCLUDED.enabled THEN s.next_tick
            ELSE EXCLUDED.next_tick END,
        updated_at = now();
END
$function$
;
COMMENT ON FUNCTION pgmq.create_schedule(text,text,text,jsonb,jsonb,text,interval,boolean) IS NULL;

CREATE OR REPLACE FUNCTION pgmq.drop_schedule(schedule_name text)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
BEGIN
    DELETE FROM pgmq.schedules s WHERE s.schedule_name = drop_schedule.schedule_name;
    RETURN FOUND;
END
$function$
;
COMMENT ON FUNCTION pgmq.drop_schedule(text) IS NULL;

CREATE OR REPLACE FUNCTION pgmq.enable_schedule(schedule_name text, enabled boolean)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    s pgmq.schedules := pgmq._require_schedule(schedule_name);
BEGIN
    IF enabled IS NULL THEN
        RAISE EXCEPTION 'schedule "%": enabled must be true or false', schedule_name
            USING ERRCODE = 'PQ004';
    END IF;
    IF s.enabled = enabled THEN
        RETURN;
    END IF;
    UPDATE pgmq.schedules x
    SET enabled = enable_schedule.enabled,
        next_tick = CASE WHEN enable_schedule.enabled
            THEN coalesce(pgmq._cron_next(pgmq._cron_parse(x.cron), x.time_zone,
                                          greatest(now(), (SELECT max(k.tick) FROM pgmq.schedule_ticks k
                                                           WHERE k.schedule_name = x.schedule_name))),
                          x.next_tick)
            ELSE x.next_tick END,
        updated_at = now()
    WHERE x.schedule_name = s.schedule_name;
END
$function$
;
COMMENT ON FUNCTION pgmq.enable_schedule(text,boolean) IS NULL;

CREATE OR REPLACE FUNCTION pgmq.enqueue_due_schedules(at timestamp with time zone DEFAULT now())
 RETURNS TABLE(schedule_name text, queue_name text, tick timestamp with time zone, msg_id bigint)
 LANGUAGE plpgsql
AS $function$
#variable_conflict use_column
DECLARE
    s pgmq.schedules;
    spec pgmq._cron_spec;
    due record;
    sent bigint;
    failure text;
BEGIN
    IF enqueue_due_schedules.at IS NULL THEN
        RAISE EXCEPTION 'at must not be NULL' USING ERRCODE = 'PQ004';
    END IF;
    FOR s IN
        SELECT * FROM pgmq.schedules x
        WHERE x.enabled AND x.next_tick <= enqueue_due_schedules.at
        ORDER BY x.next_tick
        FOR UPDATE SKIP LOCKED
    LOOP
        spec := pgmq._cron_parse(s.cron);
        SELECT * INTO due FROM pgmq._schedule_due_tick(spec, s.time_zone, s.next_tick, s.catch_up,
                                                       enqueue_due_schedules.at);
        UPDATE pgmq.schedules x
        SET next_tick = coalesce(pgmq._cron_next(spec, s.time_zone, enqueue_due_schedules.at),
                                 'infinity'),
            skipped = x.skipped + due.skipped
        WHERE x.schedule_name = s.schedule_name;
        CONTINUE WHEN due.tick IS NULL;
        INSERT INTO pgmq.schedule_ticks AS k (schedule_name, tick, queue_name)
        VALUES (s.schedule_name, due.tick, s.queue_name)
        ON CONFLICT ON CONSTRAINT schedule_ticks_pkey DO NOTHING;
        CONTINUE WHEN NOT FOUND;  -- sent by another call
        sent := NULL;
        failure := NULL;
        BEGIN
            SELECT * INTO sent FROM pgmq.send(
                queue_name => s.queue_name,
                msg => s.message,
                headers => coalesce(s.headers, '{}'::jsonb) || jsonb_build_object('schedule',
                    jsonb_build_object('name', s.schedule_name,
                                       'tick', pgmq._iso_time(due.tick, s.time_zone))));
        EXCEPTION WHEN OTHERS THEN
            failure := SQLERRM;
        END;
        UPDATE pgmq.schedule_ticks k SET msg_id = sent, error = failure
        WHERE k.schedule_name = s.schedule_name AND k.tick = due.tick;
        DELETE FROM pgmq.schedule_ticks k
        WHERE k.schedule_name = s.schedule_name
          AND k.tick < (SELECT o.tick FROM pgmq.schedule_ticks o
                        WHERE o.schedule_name = s.schedule_name
                        ORDER BY o.tick DESC OFFSET 99 LIMIT 1);
        CONTINUE WHEN sent IS NULL;
        schedule_name := s.schedule_name;
        queue_name := s.queue_name;
        tick := due.tick;
        msg_id := sent;
        RETURN NEXT;
    END LOOP;
END
$function$
;
COMMENT ON FUNCTION pgmq.enqueue_due_schedules(timestamp with time zone) IS NULL;

CREATE OR REPLACE FUNCTION pgmq.list_schedules()
 RETURNS TABLE(schedule_name text, cron text, time_zone text, queue_name text, message jsonb, headers jsonb, catch_up interval, enabled boolean, last_tick timestamp with time zone, next_tick timestamp with time zone)
 LANGUAGE sql
 STABLE
AS $function$
    SELECT s.schedule_name, s.cron, s.time_zone, s.queue_name::text, s.message, s.headers,
           s.catch_up, s.enabled,
           (SELECT max(k.tick) FROM pgmq.schedule_ticks k WHERE k.schedule_name = s.schedule_name),
           CASE WHEN s.enabled THEN s.next_tick END
    FROM pgmq.schedules s
    ORDER BY s.schedule_name
$function$
;
COMMENT ON FUNCTION pgmq.list_schedules() IS NULL;

CREATE OR REPLACE FUNCTION pgmq.next_ticks(cron text, time_zone text, after timestamp with time zone, n integer)
 RETURNS SETOF timestamp with time zone
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
    spec pgmq._cron_spec := pgmq._cron_parse(cron);
    t timestamptz := after;
BEGIN
    PERFORM pgmq._check_time_zone(time_zone);
    IF after IS NULL THEN
        RAISE EXCEPTION 'after must not be NULL' USING ERRCODE = 'PQ004';
    END IF;
    IF n IS NULL OR n < 0 OR n > 10000 THEN
        RAISE EXCEPTION 'n must be from 0 to 10000, got %', coalesce(n::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    FOR i IN 1..n LOOP
        t := pgmq._cron_next(spec, time_zone, t);
        EXIT WHEN t IS NULL;
        RETURN NEXT t;
    END LOOP;
END
$function$
;
COMMENT ON FUNCTION pgmq.next_ticks(text,text,timestamp with time zone,integer) IS NULL;

CREATE OR REPLACE FUNCTION pgmq.run_schedule_now(schedule_name text)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    s pgmq.schedules := pgmq._require_schedule(schedule_name);
    sent bigint;
BEGIN
    SELECT * INTO sent FROM pgmq.send(
        queue_name => s.queue_name,
        msg => s.message,
        headers => coalesce(s.headers, '{}'::jsonb) || jsonb_build_object('schedule', jsonb_build_object(
            'name', s.schedule_name,
            'tick', pgmq._iso_time(clock_timestamp(), s.time_zone),
            'manual', true)));
    RETURN sent;
END
$function$
;
COMMENT ON FUNCTION pgmq.run_schedule_now(text) IS NULL;

CREATE INDEX schedules_due ON pgmq.schedules USING btree (next_tick) WHERE enabled;

CREATE INDEX schedules_queue ON pgmq.schedules USING btree (queue_name);

-- BY HAND: the schedule helpers, like every `_`-prefixed helper, are not executable by
-- PUBLIC (0021's rule; pgmq.grant_app_role gives an application role what it needs).
DO $by_hand$
DECLARE
    fn regprocedure;
BEGIN
    FOR fn IN
        SELECT p.oid::regprocedure FROM pg_proc p
        WHERE p.pronamespace = 'pgmq'::regnamespace AND p.proname LIKE '\_%'
    LOOP
        EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', fn);
    END LOOP;
END
$by_hand$;

-- 0024_pgmq_create_and_name_checks
-- 0024_pgmq_create_and_name_checks: pgmq create and name checks
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
CREATE OR REPLACE FUNCTION pgmq._create_queue(queue_name text, unlogged boolean)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
    PERFORM pgmq.validate_queue_name(queue_name);
    PERFORM pgmq.acquire_queue_lock(queue_name);
    IF (pgmq._same_name_queue(queue_name)).queue_name IS NOT NULL
       AND to_regclass(format('pgmq.%I', pgmq.format_table_name(queue_name, 'q'))) IS NOT NULL THEN
        RETURN;
    END IF;
    PERFORM pgmq._create_queue_tables(queue_name, unlogged, NULL, NULL);
    INSERT INTO pgmq.meta (queue_name, is_partitioned, is_unlogged)
    VALUES (queue_name, false, unlogged)
    ON CONFLICT DO NOTHING;
END
$function$
;
COMMENT ON FUNCTION pgmq._create_queue(text,boolean) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._create_queue(text,boolean) FROM PUBLIC;


CREATE OR REPLACE FUNCTION pgmq._message_name_error(queue_name text, prefix text)
 RETURNS text
 LANGUAGE plpgsql
 IMMUTABLE PARALLEL SAFE
AS $function$
BEGIN
    IF queue_name IS NULL THEN
        PERFORM pgmq.validate_queue_name(queue_name);  -- "must not be empty"
    END IF;
    IF queue_name ~ '[$;'']|--' THEN
        RAISE EXCEPTION 'queue name contains invalid characters: $, ;, --, or \'': "%"', queue_name
            USING ERRCODE = 'PQ001';
    END IF;
    -- PostgreSQL's own text for a missing table (identifiers cut at 63 bytes, as it does).
    RAISE EXCEPTION 'relation "pgmq.%" does not exist', left(lower(prefix || '_' || queue_name), 63)
        USING ERRCODE = '42P01';
END
$function$
;
COMMENT ON FUNCTION pgmq._message_name_error(text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._message_name_error(text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._message_table_name(queue_name text, prefix text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$
    SELECT CASE
        WHEN queue_name ~ '^[A-Za-z0-9_][A-Za-z0-9_-]{0,46}$' AND strpos(queue_name, '--') = 0
        THEN lower(prefix || '_' || queue_name)
        ELSE pgmq._message_name_error(queue_name, prefix)
    END;
$function$
;
COMMENT ON FUNCTION pgmq._message_table_name(text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._message_table_name(text,text) FROM PUBLIC;


CREATE OR REPLACE FUNCTION pgmq._read_grouped(queue_name text, vt integer, qty integer, mode text)
 RETURNS SETOF pgmq.message_record
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text := pgmq._message_table_name(queue_name, 'q');  -- pgmq's per-message check
    lock_space integer := hashtext(qtable);
    grp text;
    groups text[] := '{}';
    ready bigint;
    budget integer;
    f record;
    wanted integer;
    claim text;
    rec pgmq.message_record;
    dead bigint[];
    given bigint[] := '{}';
    limited boolean;
BEGIN
    IF qty IS NULL OR qty < 0 THEN
        RAISE EXCEPTION 'qty must be zero or more, got: %', coalesce(qty::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    f := pgmq._claim_filter(queue_name, coalesce(pgmq._queue_attributes(queue_name), '{}'::jsonb), qty);
    wanted := f.allowed;
    IF wanted = 0 THEN
        RETURN;
    END IF;
    limited := f.held IS NOT NULL OR f.stamps IS NOT NULL;
    -- Over-read messages moved to the dead-letter queue do not count: read again for
    -- the rest (each round moves at least one, so this ends).
    LOOP
    groups := '{}';
    budget := wanted;
    dead := '{}';

    -- Groups whose first message looks visible, oldest first. Only a hint: each
    -- is checked again below, after its lock is held.
    FOR grp IN EXECUTE format(
        $q$
        SELECT h.grp
        FROM (
            SELECT DISTINCT ON (pgmq._fifo_group(headers))
                   pgmq._fifo_group(headers) AS grp, msg_id, vt
            FROM pgmq.%I
            ORDER BY pgmq._fifo_group(headers), msg_id
        ) h
        WHERE h.vt <= clock_timestamp()
        ORDER BY h.msg_id
        $q$,
        qtable
    )
    LOOP
        -- Another reader holds this group until it commits: leave it alone.
        CONTINUE WHEN NOT pg_try_advisory_xact_lock(lock_space, hashtext(grp));
        -- A new statement, so a new snapshot: it sees what the last holder committed.
        EXECUTE format(
            $q$
            SELECT count(*) FILTER (WHERE ok)
            FROM (
                SELECT bool_and(vt <= clock_timestamp()) OVER (ORDER BY msg_id) AS ok
                FROM (
                    SELECT msg_id, vt FROM pgmq.%I
                    WHERE pgmq._fifo_group(headers) = $1
                    ORDER BY msg_id
                    LIMIT $2
                ) front
            ) run
            $q$,
            qtable
        ) INTO ready USING grp, CASE WHEN mode = 'fill' THEN budget ELSE 1 END;
        CONTINUE WHEN ready = 0;
        groups := groups || grp;
        budget := budget - CASE WHEN mode = 'fill' THEN ready::integer ELSE 1 END;
        EXIT WHEN budget <= 0;
    END LOOP;

    EXIT WHEN cardinality(groups) = 0;

    claim := format(
        $q$
        WITH wanted AS MATERIALIZED (
            -- The readable front of each locked group, ranked, then chosen by mode.
            SELECT g.prio, r.msg_id, r.rnk
            FROM unnest($1::text[]) WITH ORDINALITY AS g(grp, prio)
            CROSS JOIN LATERAL (
                SELECT f.msg_id,
                       row_number() OVER w AS rnk,
                       bool_and(f.vt <= clock_timestamp()) OVER w AS ok
                FROM (
                    SELECT msg_id, vt FROM pgmq.%1$I
                    WHERE pgmq._fifo_group(headers) = g.grp
                    ORDER BY msg_id
                    LIMIT $5
                ) f
                WINDOW w AS (ORDER BY f.msg_id)
            ) r
            WHERE r.ok AND ($4 <> 'head' OR r.rnk = 1)
            ORDER BY CASE WHEN $4 = 'rr' THEN r.rnk ELSE g.prio END,
                     CASE WHEN $4 = 'rr' THEN g.prio ELSE r.rnk END
            LIMIT $2
        ),
        locked AS MATERIALIZED (
            SELECT m.msg_id FROM pgmq.%1$I m
            WHERE m.msg_id IN (SELECT msg_id FROM wanted) AND m.vt <= clock_timestamp()
              AND m.msg_id <> ALL ($6)  -- handed out by an earlier round of this call
            FOR UPDATE SKIP LOCKED
        ),
        usable AS (
            -- A row someone else holds (a plain read, a delete) ends its group's share.
            SELECT w.msg_id, w.prio, w.rnk
            FROM wanted w
            WHERE NOT EXISTS (
                SELECT 1 FROM wanted e
                WHERE e.prio = w.prio AND e.rnk <= w.rnk
                  AND NOT EXISTS (SELECT 1 FROM locked l WHERE l.msg_id = e.msg_id)
            )
        ),
        claimed AS (
            UPDATE pgmq.%1$I m
            SET vt = clock_timestamp() + $3,
                read_ct = m.read_ct + 1,
                last_read_at = clock_timestamp()
            FROM usable u
            WHERE m.msg_id = u.msg_id
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message,
                      m.headers, u.prio, u.rnk
        )
        SELECT msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers
        FROM claimed
        -- Round-robin keeps its rounds (as pgmq does); the others come in msg_id order.
        ORDER BY CASE WHEN $4 = 'rr' THEN rnk ELSE 0 END,
                 CASE WHEN $4 = 'rr' THEN prio ELSE 0 END,
                 msg_id
        $q$,
        qtable
    );
    IF f.max_receive_count IS NULL AND NOT limited THEN
        RETURN QUERY EXECUTE claim
            USING groups, wanted, make_interval(secs => coalesce(vt, 0)), mode,
            -- The most one group can contribute: every other group gives at least one.
            CASE WHEN mode = 'head' THEN 1 ELSE wanted - cardinality(groups) + 1 END, given;
        RETURN;
    END IF;
    FOR rec IN EXECUTE claim
        USING groups, wanted, make_interval(secs => coalesce(vt, 0)), mode,
        CASE WHEN mode = 'head' THEN 1 ELSE wanted - cardinality(groups) + 1 END, given
    LOOP
        IF rec.read_ct > f.max_receive_count THEN  -- NULL (no redrive): never
            dead := dead || rec.msg_id;
        ELSE
            RETURN NEXT rec;
            given := given || rec.msg_id;
            wanted := wanted - 1;
        END IF;
    END LOOP;
    PERFORM pgmq._dead_letter_ids(queue_name, dead, 1);
    EXIT WHEN cardinality(dead) = 0 OR wanted <= 0;
    END LOOP;
    IF limited THEN
        PERFORM pgmq._claim_record(queue_name, f.held, f.stamps, f.counts, given);
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._read_grouped(text,integer,integer,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._read_grouped(text,integer,integer,text) FROM PUBLIC;


CREATE OR REPLACE FUNCTION pgmq.validate_queue_name(queue_name text)
 RETURNS void
 LANGUAGE plpgsql
 IMMUTABLE PARALLEL SAFE
AS $function$
BEGIN
    IF queue_name IS NULL OR queue_name = '' THEN
        RAISE EXCEPTION 'queue name must not be empty' USING ERRCODE = 'PQ001';
    END IF;
    IF length(queue_name) > 47 THEN
        RAISE EXCEPTION 'queue name is too long, maximum length is 47 characters: "%" has %',
            left(queue_name, 57), length(queue_name)
            USING ERRCODE = 'PQ001';
    END IF;
    IF queue_name ~ '[$;'']|--' THEN
        RAISE EXCEPTION 'queue name contains invalid characters: $, ;, --, or \'': "%"', queue_name
            USING ERRCODE = 'PQ001';
    END IF;
    IF queue_name !~ '^[A-Za-z0-9_][A-Za-z0-9_-]*$' THEN
        RAISE EXCEPTION 'queue name "%" is invalid: use ASCII letters, digits, ''_'' and ''-'' (not first)',
            queue_name
            USING ERRCODE = 'PQ001';
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq.validate_queue_name(text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.validate_queue_name(text) TO PUBLIC;


-- 0025_prepared_plans_per_session
-- 0025_prepared_plans_per_session: prepared plans per session
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_run_prepared(stmt text, p_qty integer, p_secs integer, p_ids bigint[], p_cond jsonb, low bigint)
 RETURNS SETOF pgmq.message_record
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
 SET enable_bitmapscan TO 'off'
AS $function$
BEGIN
    RETURN QUERY EXECUTE format(
        'EXECUTE %I(NULL, %L, %L, NULL, %L, NULL, NULL, %L, %L)', stmt, p_qty, p_secs, p_ids, p_cond, low);
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_run_prepared(text,integer,integer,bigint[],jsonb,bigint) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_run_prepared(text,integer,integer,bigint[],jsonb,bigint) FROM PUBLIC;


-- 0026_lean_id_statements_and_fresher_marks
-- 0026_lean_id_statements_and_fresher_marks: lean_id_statements_and_fresher_marks
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
CREATE OR REPLACE FUNCTION pgmq._low_water_mark(queue_name text)
 RETURNS bigint
 LANGUAGE sql
AS $function$
    SELECT pgmq._low_water_mark_for(pgmq._message_table_name(queue_name, 'q'));
$function$
;
COMMENT ON FUNCTION pgmq._low_water_mark(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._low_water_mark(text) FROM PUBLIC;

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

CREATE OR REPLACE FUNCTION pgmq._queue_ops_one(queue_name text, op "char", msg_id bigint)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
BEGIN
    RETURN EXISTS (SELECT 1 FROM pgmq._queue_ops_route_ids(
        queue_name, op, NULL::timestamptz, ARRAY[$3], NULL::jsonb[], NULL::jsonb[]));
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_one(text,"char",bigint) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_one(text,"char",bigint) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_prepared(qtable text, op "char")
 RETURNS text
 LANGUAGE plpgsql
AS $function$
DECLARE
    stmt text := 'pgmq_' || op::text || CASE WHEN op IN ('a', 'd') THEN 'i_' ELSE '_' END || qtable;
    -- '-' may not appear in a setting's name (as for the low-water mark)
    key text := 'pgmq.prep_' || replace(substr(stmt, 6), '-', '$');
    state text := coalesce(current_setting(key, true), '');
BEGIN
    IF state = 'p' OR state = '3' THEN
        IF NOT EXISTS (SELECT FROM pg_prepared_statements s WHERE s.name = stmt) THEN
            IF octet_length(stmt) > 63
               OR (SELECT count(*) FROM pg_prepared_statements s WHERE s.name LIKE 'pgmq\_%') >= 32 THEN
                state := 'c';
            ELSE
                EXECUTE format(
                    'PREPARE %I ("char", integer, integer, timestamptz, bigint[], jsonb[], jsonb[], jsonb, bigint) AS %s',
                    stmt, CASE WHEN op IN ('a', 'd') THEN pgmq._queue_ops_ids_sql(qtable, op)
                               ELSE pgmq._queue_ops_sql_for(qtable, op, '$9') END);
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
BEGIN
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

CREATE OR REPLACE FUNCTION pgmq._queue_ops_run_prepared_ids(stmt text, p_ids bigint[])
 RETURNS SETOF bigint
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
 SET enable_bitmapscan TO 'off'
AS $function$
BEGIN
    RETURN QUERY EXECUTE format('EXECUTE %I(NULL, NULL, NULL, NULL, %L, NULL, NULL, NULL, NULL)', stmt, p_ids);
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_run_prepared_ids(text,bigint[]) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_run_prepared_ids(text,bigint[]) FROM PUBLIC;

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

CREATE OR REPLACE FUNCTION pgmq.archive(queue_name text, msg_ids bigint[])
 RETURNS SETOF bigint
 LANGUAGE plpgsql
AS $function$
BEGIN
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
BEGIN
    RETURN QUERY SELECT * FROM pgmq._queue_ops_route_ids(
        queue_name, 'd'::"char", NULL::timestamptz, msg_ids, NULL::jsonb[], NULL::jsonb[]);
END
$function$
;
COMMENT ON FUNCTION pgmq.delete(text,bigint[]) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.delete(text,bigint[]) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.send(queue_name text, msg jsonb)
 RETURNS SETOF bigint
 LANGUAGE plpgsql
AS $function$
BEGIN
    RETURN QUERY SELECT * FROM pgmq._queue_ops_route_ids(
        queue_name, 's'::"char", NULL::timestamptz, NULL::bigint[], ARRAY[msg], ARRAY[NULL::jsonb]);
END
$function$
;
COMMENT ON FUNCTION pgmq.send(text,jsonb) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.send(text,jsonb) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.send(queue_name text, msg jsonb, headers jsonb, delay timestamp with time zone)
 RETURNS SETOF bigint
 LANGUAGE plpgsql
AS $function$
BEGIN
    RETURN QUERY SELECT * FROM pgmq._queue_ops_route_ids(
        queue_name, 's'::"char", delay, NULL::bigint[], ARRAY[msg], ARRAY[headers]);
END
$function$
;
COMMENT ON FUNCTION pgmq.send(text,jsonb,jsonb,timestamp with time zone) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.send(text,jsonb,jsonb,timestamp with time zone) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay timestamp with time zone)
 RETURNS SETOF bigint
 LANGUAGE plpgsql
AS $function$
BEGIN
    PERFORM pgmq._validate_batch_params(msgs, headers);
    RETURN QUERY SELECT * FROM pgmq._queue_ops_route_ids(
        queue_name, 's'::"char", delay, NULL::bigint[], msgs, headers);
END
$function$
;
COMMENT ON FUNCTION pgmq.send_batch(text,jsonb[],jsonb[],timestamp with time zone) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.send_batch(text,jsonb[],jsonb[],timestamp with time zone) TO PUBLIC;


-- 0027_task_statements_planned_once
-- 0027_task_statements_planned_once: task statements planned once
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
    PERFORM set_config('synchronous_commit', 'off', true);
    RETURN QUERY SELECT * FROM pgmq._queue_ops_with_attributes(
        stored, attrs || '{"priorities": true}'::jsonb, 'r', qty, vt, NULL::timestamptz,
        NULL::bigint[], NULL::jsonb[], NULL::jsonb[], '{}'::jsonb, pgmq._low_water_mark(stored));
END
$function$
;
COMMENT ON FUNCTION pgmq._read_by_priority(text,integer,integer) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._read_by_priority(text,integer,integer) FROM PUBLIC;


CREATE OR REPLACE FUNCTION pgmq._task_finish_and_start(task_queue text, done_id uuid, done_msg_id bigint, done_status text, done_finished_at timestamp with time zone, done_return_value jsonb, done_errors jsonb, next_id uuid, started timestamp with time zone, worker text)
 RETURNS TABLE(id uuid, backend text, queue_name text, task_path text, priority integer, status text, args jsonb, kwargs jsonb, run_after timestamp with time zone, enqueued_at timestamp with time zone, started_at timestamp with time zone, finished_at timestamp with time zone, last_attempted_at timestamp with time zone, return_value jsonb, errors jsonb, worker_ids jsonb, max_attempts integer, msg_id bigint)
 LANGUAGE plpgsql
AS $function$
#variable_conflict use_variable
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    IF done_id IS NOT NULL THEN
        UPDATE django_pgmq_taskresultrecord AS t
        SET status = done_status, finished_at = done_finished_at,
            return_value = done_return_value, errors = done_errors
        WHERE t.id = done_id;
        IF FOUND THEN
            PERFORM pgmq.delete(task_queue, ARRAY[done_msg_id]);
        END IF;
    END IF;
    IF next_id IS NULL THEN
        RETURN;
    END IF;
    RETURN QUERY
    UPDATE django_pgmq_taskresultrecord AS t
    SET status = 'RUNNING',
        started_at = coalesce(t.started_at, started),
        last_attempted_at = started,
        worker_ids = t.worker_ids || jsonb_build_array(worker)
    WHERE t.id = next_id AND t.status = 'READY'
    RETURNING t.id, t.backend::text, t.queue_name::text, t.task_path::text,
              t.priority::integer, t.status::text, t.args, t.kwargs, t.run_after,
              t.enqueued_at, t.started_at, t.finished_at, t.last_attempted_at,
              t.return_value, t.errors, t.worker_ids, t.max_attempts::integer, t.msg_id;
END
$function$
;
COMMENT ON FUNCTION pgmq._task_finish_and_start(text,uuid,bigint,text,timestamp with time zone,jsonb,jsonb,uuid,timestamp with time zone,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._task_finish_and_start(text,uuid,bigint,text,timestamp with time zone,jsonb,jsonb,uuid,timestamp with time zone,text) FROM PUBLIC;


-- 0028_one_dead_letter_rule
-- 0028_one_dead_letter_rule: one_dead_letter_rule
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
CREATE OR REPLACE FUNCTION pgmq._dead_letter(queue_name text, msg_id bigint, dead_letter_queue text, error text DEFAULT NULL::text)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    source text := pgmq._require_queue(queue_name);
    qtable text := pgmq.format_table_name(source, 'q');
    there bigint;
    new_id bigint;
BEGIN
    PERFORM pgmq.validate_queue_name(dead_letter_queue);
    IF lower(dead_letter_queue) = lower(source) THEN
        RAISE EXCEPTION 'queue "%" cannot be its own dead-letter queue', source
            USING ERRCODE = 'PQ004';
    END IF;
    -- Locked first, so that a message already gone creates no dead-letter queue.
    EXECUTE format('SELECT msg_id FROM pgmq.%I WHERE msg_id = $1 FOR UPDATE', qtable)
        INTO there USING msg_id;
    IF there IS NULL THEN
        RETURN NULL;
    END IF;
    PERFORM pgmq._ensure_dead_letter_queue(dead_letter_queue);
    EXECUTE format(
        $q$
        WITH dead AS (
            DELETE FROM pgmq.%1$I m WHERE m.msg_id = $1
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.message, m.headers,
                      $2::text AS error
        ), %2$s
        SELECT msg_id FROM moved
        $q$,
        qtable, pgmq._dead_letter_move_sql(source, dead_letter_queue)
    ) INTO new_id USING msg_id, error;
    RETURN new_id;
END
$function$
;
COMMENT ON FUNCTION pgmq._dead_letter(text,bigint,text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._dead_letter(text,bigint,text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._dead_letter_ids(queue_name text, msg_ids bigint[], delivered integer DEFAULT 0)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    dlq text := pgmq._queue_attributes(queue_name) ->> 'dead_letter_queue';
    moved bigint;
BEGIN
    IF dlq IS NULL OR coalesce(cardinality(msg_ids), 0) = 0 THEN
        RETURN 0;
    END IF;
    PERFORM pgmq._ensure_dead_letter_queue(dlq);
    EXECUTE format(
        $q$
        WITH dead AS (
            DELETE FROM pgmq.%1$I m WHERE m.msg_id = ANY($1)
            RETURNING m.msg_id, m.read_ct - $2 AS read_ct, m.enqueued_at, m.message, m.headers,
                      NULL::text AS error
        ), %2$s
        SELECT count(*) FROM moved
        $q$,
        pgmq.format_table_name(queue_name, 'q'),
        pgmq._dead_letter_move_sql(pgmq._stored_queue_name(queue_name), dlq)
    ) INTO moved USING msg_ids, coalesce(delivered, 0);
    RETURN moved;
END
$function$
;
COMMENT ON FUNCTION pgmq._dead_letter_ids(text,bigint[],integer) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._dead_letter_ids(text,bigint[],integer) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._dead_letter_move_sql(queue_name text, dead_letter_queue text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT format(
        $sql$
        moved AS (
            INSERT INTO pgmq.%I (vt, message, headers)
            SELECT clock_timestamp(), x.message,
                   pgmq._dead_letter_headers(x.headers, %L, x.msg_id, x.read_ct,
                                             x.enqueued_at, x.error)
            FROM dead x ORDER BY x.msg_id
            RETURNING msg_id
        )
        $sql$,
        pgmq.format_table_name(dead_letter_queue, 'q'), queue_name);
$function$
;
COMMENT ON FUNCTION pgmq._dead_letter_move_sql(text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._dead_letter_move_sql(text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_attr_sql(queue_name text, op "char", low text, attrs jsonb)
 RETURNS text
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q');
    checks text := nullif(pgmq._send_checks_sql(attrs), '');
    gate text := 'TRUE';
    msg text := 'u.msg';
    vt text := 'coalesce($4, clock_timestamp())';
    -- Only the ordering and redrive matter here: the limits are the caller's (no lock).
    f record := pgmq._claim_filter(queue_name, attrs - 'max_in_flight' - 'rate_limit', NULL);
    window_ text := (attrs ->> 'deduplication_window') || ' seconds';
    order_by text;
    pick text;
BEGIN
    IF op = 's' OR op = 'S' THEN
        IF checks IS NOT NULL THEN
            -- Valid messages pass an inline test; pgmq._checked_message raises the error
            -- that names what is wrong with the first of the others.
            gate := format(
                '(SELECT count(pgmq._checked_message(%L, u.msg, u.hdr, %s, %L, %L)) '
                'FROM unnest($6, $7) AS u(msg, hdr) WHERE (%s) IS NOT TRUE) >= 0',
                queue_name, coalesce(attrs ->> 'max_message_size', 'NULL'), f.by_priority,
                window_ IS NOT NULL AND (attrs ->> 'deduplication_window')::integer > 0, checks);
        END IF;
        IF coalesce((attrs ->> 'delivery_delay')::integer, 0) > 0 THEN
            vt := format('coalesce($4, clock_timestamp() + interval %L)',
                         (attrs ->> 'delivery_delay') || ' seconds');
        END IF;
        IF coalesce((attrs ->> 'deduplication_window')::integer, 0) = 0 THEN
            RETURN format(
                $sql$
        INSERT INTO pgmq.%1$I AS q (vt, message, headers)
        SELECT %2$s, %3$s, u.hdr FROM unnest($6, $7) AS u(msg, hdr)
        WHERE %4$s
        RETURNING q.msg_id, NULL::integer, NULL::timestamptz, NULL::timestamptz,
                  NULL::timestamptz, NULL::jsonb, NULL::jsonb
                $sql$, qtable, vt, msg, gate);
        END IF;
        IF op = 'S' THEN
            -- The fast send: two plain inserts, the ids claimed in the order the statement
            -- below claims them (so no two batches, fast or not, wait on each other's ids
            -- crosswise). Any id already claimed, by an earlier send, a concurrent one
            -- (after its commit) or this batch itself, raises unique_violation, and the
            -- caller runs the statement below instead.
            RETURN format(
                $sql$
        WITH m AS (
            INSERT INTO pgmq.%1$I AS q (vt, message, headers)
            SELECT %2$s, %3$s, u.hdr FROM unnest($6, $7) AS u(msg, hdr)
            WHERE %5$s
            RETURNING q.msg_id, q.headers ->> 'deduplication_id' AS dedup
        ), claimed AS (
            INSERT INTO pgmq.queue_deduplication (queue_name, deduplication_id, msg_id, sent_at)
            SELECT %4$L, m.dedup, m.msg_id, clock_timestamp() FROM m
            WHERE m.dedup IS NOT NULL
            ORDER BY m.dedup
        )
        SELECT array_agg(m.msg_id ORDER BY m.msg_id) FROM m
                $sql$, qtable, vt, msg, lower(queue_name), gate);
        END IF;
        -- Deduplication: a message takes a new msg_id only when it may be enqueued: it
        -- has no deduplication id, or it is its id's first in the batch and no send within
        -- the window holds that id (as this statement's snapshot sees it). Each such id is
        -- claimed in pgmq.queue_deduplication; a conflict (a concurrent sender waits there
        -- for the first one's commit) keeps the row of a send within the window, so only
        -- a claim that kept our new msg_id enqueues its message (the loser of that race
        -- is the one case where an id is used up without a message). Every message of the
        -- batch returns its id's msg_id.
        RETURN format(
            $sql$
        WITH input AS MATERIALIZED (
            SELECT u.ord, %3$s AS msg, u.hdr, u.hdr ->> 'deduplication_id' AS dedup
            FROM unnest($6, $7) WITH ORDINALITY AS u(msg, hdr, ord)
            WHERE %7$s
        ),
        numbered AS MATERIALIZED (
            SELECT i.ord, i.msg, i.hdr, i.dedup,
                   CASE WHEN i.dedup IS NULL
                          OR (i.first AND NOT EXISTS (
                                SELECT 1 FROM pgmq.queue_deduplication d
                                WHERE d.queue_name = %5$L AND d.deduplication_id = i.dedup
                                  AND d.sent_at > clock_timestamp() - interval %6$L))
                        THEN nextval(%4$L::regclass) END AS new_id
            FROM (SELECT x.*, row_number() OVER (PARTITION BY x.dedup ORDER BY x.ord) = 1 AS first
                  FROM input x) i
            ORDER BY i.ord
        ),
        claimed AS (
            INSERT INTO pgmq.queue_deduplication AS d (queue_name, deduplication_id, msg_id, sent_at)
            SELECT %5$L, n.dedup, n.new_id, clock_timestamp()
            FROM numbered n WHERE n.dedup IS NOT NULL AND n.new_id IS NOT NULL
            ORDER BY n.dedup
            ON CONFLICT (queue_name, deduplication_id) DO UPDATE
            SET msg_id = CASE WHEN d.sent_at > clock_timestamp() - interval %6$L
                              THEN d.msg_id ELSE excluded.msg_id END,
                sent_at = CASE WHEN d.sent_at > clock_timestamp() - interval %6$L
                               THEN d.sent_at ELSE excluded.sent_at END
            RETURNING d.deduplication_id, d.msg_id
        ),
        inserted AS (
            INSERT INTO pgmq.%1$I AS q (msg_id, vt, message, headers) OVERRIDING SYSTEM VALUE
            SELECT n.new_id, %2$s, n.msg, n.hdr
            FROM numbered n
            WHERE n.dedup IS NULL OR n.new_id IN (SELECT c.msg_id FROM claimed c)
            ORDER BY n.ord
            RETURNING q.msg_id
        )
        SELECT coalesce(c.msg_id,
                        (SELECT d.msg_id FROM pgmq.queue_deduplication d
                         WHERE d.queue_name = %5$L AND d.deduplication_id = n.dedup),
                        n.new_id),
               NULL::integer, NULL::timestamptz, NULL::timestamptz,
               NULL::timestamptz, NULL::jsonb, NULL::jsonb
        FROM numbered n
        LEFT JOIN claimed c ON c.deduplication_id = n.dedup
        ORDER BY n.ord
            $sql$,
            qtable, vt, msg,
            pg_get_serial_sequence(format('pgmq.%I', qtable), 'msg_id'),
            lower(queue_name), window_, gate);
    END IF;

    IF op <> 'r' AND op <> 'p' THEN
        RETURN pgmq._queue_ops_sql(queue_name, op, low);
    END IF;
    IF NOT f.by_priority AND f.dead_letter_queue IS NULL THEN
        RETURN pgmq._queue_ops_sql(queue_name, op, low);
    END IF;

    order_by := CASE WHEN f.by_priority THEN 'pgmq._task_priority(%1$s.headers) DESC, %1$s.msg_id'
                     ELSE '%1$s.msg_id' END;
    -- Only messages that may still be delivered are picked, so redrive never uses up
    -- the qty (issue 22 #11); the over-read ones among those the pick walked past (all
    -- of them when it found fewer than qty) move to the dead-letter queue, at most
    -- max(qty, 100) per call.
    pick := format(
        $pick$
            SELECT q.msg_id FROM pgmq.%I q
            WHERE q.msg_id >= %s AND q.vt <= clock_timestamp()
              AND ($8 IS NULL OR $8 = '{}'::jsonb OR q.message @> $8)
              %s
            ORDER BY %s
            LIMIT $2
            FOR UPDATE SKIP LOCKED
        $pick$,
        qtable, low,
        CASE WHEN f.dead_letter_queue IS NULL THEN ''
             ELSE format('AND q.read_ct < %s', f.max_receive_count) END,
        format(order_by, 'q'));
    RETURN format(
        $sql$
        WITH picked AS MATERIALIZED (%2$s),
        %3$s
        done AS (
            %4$s
            WHERE m.msg_id = ANY(ARRAY(SELECT p.msg_id FROM picked p))
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message, m.headers
        )
        SELECT * FROM done d ORDER BY %5$s
        $sql$,
        qtable, pick,
        CASE WHEN f.dead_letter_queue IS NULL THEN '' ELSE format(
            $dead$
        dead AS (
            DELETE FROM pgmq.%1$I m
            WHERE m.msg_id = ANY(ARRAY(
                SELECT q.msg_id FROM pgmq.%1$I q
                WHERE q.msg_id >= %3$s AND q.vt <= clock_timestamp()
                  AND ($8 IS NULL OR $8 = '{}'::jsonb OR q.message @> $8)
                  AND q.read_ct >= %2$s
                  AND ((SELECT count(*) FROM picked) < $2
                       OR q.msg_id < (SELECT max(p.msg_id) FROM picked p))
                ORDER BY q.msg_id
                LIMIT greatest($2, 100)
                FOR UPDATE SKIP LOCKED))
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.message, m.headers,
                      NULL::text AS error
        ),
            $dead$,
            qtable, f.max_receive_count, low)
            -- the name as stored, as the worker's dead letters write it, whatever the
            -- caller's spelling
            || pgmq._dead_letter_move_sql(pgmq._stored_queue_name(queue_name),
                                          f.dead_letter_queue) || ',' END,
        CASE WHEN op = 'r' THEN format(
            $upd$
            UPDATE pgmq.%I m
            SET vt = clock_timestamp() + make_interval(secs => $3),
                read_ct = m.read_ct + 1,
                last_read_at = clock_timestamp()
            $upd$, qtable)
        ELSE format('DELETE FROM pgmq.%I m', qtable) END,
        format(order_by, 'd'));
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_attr_sql(text,"char",text,jsonb) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_attr_sql(text,"char",text,jsonb) FROM PUBLIC;


-- 0029_queue_attributes_declared_once
-- 0029_queue_attributes_declared_once: queue attributes declared once
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
CREATE OR REPLACE FUNCTION pgmq._check_queue_attributes(queue_name text, attrs jsonb)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    k text;
    v jsonb;
    ok boolean;
    kind text;
    minimum integer;
BEGIN
    FOR k, v IN SELECT e.key, e.value FROM jsonb_each(attrs) e ORDER BY e.key LOOP
        SELECT d.kind, d.minimum INTO kind, minimum
        FROM pgmq._queue_attribute_declaration() d WHERE d.key = k;
        ok := CASE kind
            WHEN 'seconds' THEN pgmq._json_int_at_least(v, minimum)
            WHEN 'bytes' THEN pgmq._json_int_at_least(v, minimum)
            WHEN 'count' THEN pgmq._json_int_at_least(v, minimum)
            WHEN 'switch' THEN jsonb_typeof(v) = 'boolean'
            WHEN 'queue' THEN jsonb_typeof(v) = 'string'
            -- CASE, not AND: each test may only run once the one before it held.
            WHEN 'rate' THEN CASE
                WHEN jsonb_typeof(v) <> 'object' THEN false
                WHEN (SELECT array_agg(x ORDER BY x) FROM jsonb_object_keys(v) x)
                     <> '{count,seconds}' THEN false
                WHEN jsonb_typeof(v -> 'seconds') <> 'number' THEN false
                ELSE pgmq._json_int_at_least(v -> 'count', 1)
                     AND (v ->> 'seconds')::numeric > 0 AND (v ->> 'seconds')::numeric <= 31536000
                END
            ELSE false  -- unknown key (no row): the error says so
        END;
        IF NOT ok THEN
            PERFORM pgmq._bad_queue_attribute(queue_name, k, v);
        END IF;
    END LOOP;
    IF attrs ? 'dead_letter_queue' THEN
        BEGIN
            PERFORM pgmq.validate_queue_name(attrs ->> 'dead_letter_queue');
        EXCEPTION WHEN SQLSTATE 'PQ001' THEN
            PERFORM pgmq._bad_queue_attribute(queue_name, 'dead_letter_queue', attrs -> 'dead_letter_queue');
        END;
        IF lower(attrs ->> 'dead_letter_queue') = lower(queue_name) THEN
            RAISE EXCEPTION 'queue "%": queue attribute "dead_letter_queue" must be another queue, '
                'not the queue itself', queue_name
                USING ERRCODE = 'PQ004';
        END IF;
    END IF;
    IF (attrs ? 'max_receive_count') <> (attrs ? 'dead_letter_queue') THEN
        RAISE EXCEPTION 'queue "%": queue attributes "max_receive_count" and "dead_letter_queue" '
            'go together: set both, or remove both', queue_name
            USING ERRCODE = 'PQ004';
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._check_queue_attributes(text,jsonb) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._check_queue_attributes(text,jsonb) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_attribute_declaration()
 RETURNS TABLE(key text, kind text, minimum integer, side text, option text, allowed text, help text)
 LANGUAGE sql
 IMMUTABLE
AS $function$
    VALUES
        ('delivery_delay', 'seconds', 0, 'send', '--delay',
         'an integer number of seconds, 0 or more',
         'Delay every send that gives no delay of its own.'),
        ('deduplication_window', 'seconds', 0, 'send', '--dedup-window',
         'an integer number of seconds, 0 (off) or more',
         'Drop a send whose deduplication_id was sent within this duration.'),
        ('max_receive_count', 'count', 1, 'read', '--max-receives',
         'an integer, 1 or more, set together with dead_letter_queue',
         'Move a message to the dead-letter queue instead of delivering it more often than this.'),
        ('dead_letter_queue', 'queue', NULL, 'read', '--dead-letter',
         'the name of another queue, set together with max_receive_count',
         'The dead-letter queue (with max_receive_count).'),
        ('message_retention', 'seconds', 1, 'retention', '--retention',
         'an integer number of seconds, 1 or more',
         'Delete live messages enqueued longer ago (by pgmq_maintain and the workers).'),
        ('archive_retention', 'seconds', 1, 'retention', '--archive-retention',
         'an integer number of seconds, 1 or more',
         'Delete archived messages archived longer ago (by pgmq_maintain and the workers).'),
        ('max_message_size', 'bytes', 1, 'send', '--max-size',
         'an integer number of bytes, 1 or more',
         'Refuse messages whose JSON text is larger.'),
        ('priorities', 'switch', NULL, 'both', '--priorities',
         'true or false',
         'Read messages with a higher "priority" header (-100..100) first.'),
        ('paused', 'switch', NULL, 'read', NULL,
         'true or false',
         'Readers return no messages; sends go on.'),
        ('max_in_flight', 'count', 1, 'read', '--max-in-flight',
         'an integer, 1 or more',
         'Hand out at most N messages at once (read, not yet deleted, archived or visible again).'),
        ('rate_limit', 'rate', NULL, 'read', '--rate-limit',
         'an object {"count": N, "seconds": S}, N an integer 1 or more, S a number of seconds more than 0',
         'Hand out at most COUNT messages in any window of DURATION.')
$function$
;
COMMENT ON FUNCTION pgmq._queue_attribute_declaration() IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_attribute_declaration() FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_attribute_rules()
 RETURNS TABLE(key text, allowed text)
 LANGUAGE sql
 IMMUTABLE
AS $function$
    SELECT d.key, d.allowed FROM pgmq._queue_attribute_declaration() d;
$function$
;
COMMENT ON FUNCTION pgmq._queue_attribute_rules() IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_attribute_rules() FROM PUBLIC;


-- 0030_index_builds_give_way_to_queue_ddl
-- 0030_index_builds_give_way_to_queue_ddl: index_builds_give_way_to_queue_ddl
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
CREATE OR REPLACE FUNCTION pgmq._install_notify_trigger(queue_name text)
 RETURNS void
 LANGUAGE plpgsql
 SET client_min_messages TO 'warning'
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q');
    trigger_name text := pgmq._notify_trigger_name(queue_name);
BEGIN
    PERFORM pgmq._lock_queue_table(queue_name);  -- not while an index build runs on it
    EXECUTE format('DROP TRIGGER IF EXISTS %I ON pgmq.%I', trigger_name, qtable);
    EXECUTE format(
        $ddl$
        CREATE CONSTRAINT TRIGGER %I
        AFTER INSERT ON pgmq.%I
        DEFERRABLE INITIALLY DEFERRED
        FOR EACH ROW
        EXECUTE FUNCTION pgmq.notify_queue_listeners(%L)
        $ddl$,
        trigger_name, qtable, queue_name
    );
    EXECUTE format('COMMENT ON TRIGGER %I ON pgmq.%I IS %L',
                   trigger_name, qtable, pgmq._notify_trigger_hash());
END
$function$
;
COMMENT ON FUNCTION pgmq._install_notify_trigger(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._install_notify_trigger(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._lock_queue_table(queue_name text)
 RETURNS void
 LANGUAGE sql
AS $function$
    SELECT pg_advisory_xact_lock(k.class_id, k.object_id)
    FROM pgmq._queue_table_lock_key(queue_name) k;
$function$
;
COMMENT ON FUNCTION pgmq._lock_queue_table(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._lock_queue_table(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_table_lock_key(queue_name text, OUT class_id integer, OUT object_id integer)
 RETURNS record
 LANGUAGE sql
 IMMUTABLE
AS $function$
    SELECT 1885826417, hashtext(lower(queue_name));
$function$
;
COMMENT ON FUNCTION pgmq._queue_table_lock_key(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_table_lock_key(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._remove_notify_trigger(queue_name text)
 RETURNS void
 LANGUAGE plpgsql
 SET client_min_messages TO 'warning'
AS $function$
BEGIN
    PERFORM pgmq._lock_queue_table(queue_name);
    EXECUTE format(
        'DROP TRIGGER IF EXISTS %I ON pgmq.%I',
        pgmq._notify_trigger_name(queue_name), pgmq.format_table_name(queue_name, 'q')
    );
END
$function$
;
COMMENT ON FUNCTION pgmq._remove_notify_trigger(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._remove_notify_trigger(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.convert_archive_partitioned(table_name text, partition_interval text DEFAULT '10000'::text, retention_interval text DEFAULT '100000'::text, leading_partition integer DEFAULT 10)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    stored text;
    atable text := pgmq.format_table_name(table_name, 'a');
    history text := pgmq._fit_name(atable, '_history');
    index_name text := 'archived_at_idx_' || lower(table_name);
    by_id boolean;
    acol text;
    pkey text;
    quiet text;
    newest numeric;
    cfg pgmq.partition_config;
BEGIN
    stored := pgmq._require_queue(table_name);
    PERFORM pgmq.acquire_queue_lock(stored);
    PERFORM pgmq._lock_queue_table(stored);  -- it alters the live table too (fillfactor)
    IF (SELECT c.relkind FROM pg_class c WHERE c.oid = to_regclass(format('pgmq.%I', atable))) = 'p' THEN
        -- pgmq's own notice, its stray 's' included ("Table a_orderss is already partitioned").
        RAISE NOTICE 'Table %s is already partitioned', atable;
        RETURN;
    END IF;
    PERFORM pgmq._check_partition_args(
        partition_interval, retention_interval, leading_partition, 'leading_partition');

    by_id := pgmq._partition_by_id(partition_interval);
    acol := CASE WHEN by_id THEN 'msg_id' ELSE 'archived_at' END;
    -- Free the names the new table takes: the table, its primary key and its index.
    EXECUTE format('ALTER TABLE pgmq.%I RENAME TO %I', atable, history);
    SELECT k.conname INTO pkey FROM pg_constraint k
    WHERE k.conrelid = format('pgmq.%I', history)::regclass AND k.contype = 'p';
    IF pkey IS NOT NULL AND by_id THEN
        EXECUTE format('ALTER TABLE pgmq.%I RENAME CONSTRAINT %I TO %I',
                       history, pkey, pgmq._fit_name(history, '_pkey'));
    ELSIF pkey IS NOT NULL THEN
        -- The new key is (msg_id, archived_at); attaching builds it on the old rows.
        EXECUTE format('ALTER TABLE pgmq.%I DROP CONSTRAINT %I', history, pkey);
    END IF;
    EXECUTE format('ALTER INDEX IF EXISTS pgmq.%I RENAME TO %I',
                   index_name, pgmq._fit_name(history, '_archived_at_idx'));
    quiet := current_setting('client_min_messages');
    PERFORM set_config('client_min_messages', 'warning', true);  -- "q_<name> already exists"
    PERFORM pgmq._create_queue_tables(stored, false, NULL, acol);
    PERFORM set_config('client_min_messages', quiet, true);
    EXECUTE format('CREATE TABLE pgmq.%I PARTITION OF pgmq.%I DEFAULT', atable || '_default', atable);

    EXECUTE format(
        'SELECT max(%s) FROM pgmq.%I',
        CASE WHEN by_id THEN format('%I::numeric', acol) ELSE format('extract(epoch FROM %I)', acol) END,
        history
    ) INTO newest;
    IF newest IS NULL THEN
        EXECUTE format('DROP TABLE pgmq.%I', history);
    ELSE
        EXECUTE format(
            'ALTER TABLE pgmq.%I ATTACH PARTITION pgmq.%I FOR VALUES FROM (MINVALUE) TO (%s)',
            atable, history,
            pgmq._partition_literal(by_id, pgmq._partition_next(
                by_id, partition_interval, pgmq._partition_floor(by_id, partition_interval, newest)))
        );
    END IF;

    INSERT INTO pgmq.partition_config AS c
        (table_name, queue_name, partition_column, partition_interval, retention_interval, premake)
    VALUES (atable, stored, acol, btrim(partition_interval), btrim(retention_interval), leading_partition)
    RETURNING c.* INTO cfg;
    PERFORM pgmq._maintain_table(cfg);
END
$function$
;
COMMENT ON FUNCTION pgmq.convert_archive_partitioned(text,text,text,integer) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.convert_archive_partitioned(text,text,text,integer) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.drop_queue(queue_name text)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q');
    atable text := pgmq.format_table_name(queue_name, 'a');
BEGIN
    PERFORM pgmq.acquire_queue_lock(queue_name);
    PERFORM pgmq._lock_queue_table(queue_name);  -- waits for an index build to give way
    IF to_regclass(format('pgmq.%I', qtable)) IS NULL
       AND NOT EXISTS (SELECT 1 FROM pgmq.meta m WHERE lower(m.queue_name) = lower($1)) THEN
        RAISE NOTICE 'pgmq queue `%` does not exist', queue_name;
        RETURN false;
    END IF;
    EXECUTE format('DROP TABLE IF EXISTS pgmq.%I', qtable);
    EXECUTE format('DROP TABLE IF EXISTS pgmq.%I', atable);
    DELETE FROM pgmq.meta m WHERE lower(m.queue_name) = lower($1);
    RETURN true;
END
$function$
;
COMMENT ON FUNCTION pgmq.drop_queue(text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.drop_queue(text) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.purge_queue(queue_name text)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q');
    removed bigint;
BEGIN
    PERFORM pgmq._require_queue(queue_name);
    PERFORM pgmq._lock_queue_table(queue_name);  -- waits for an index build to give way
    -- Lock first so the count and the truncate see the same rows.
    EXECUTE format('LOCK TABLE pgmq.%I IN ACCESS EXCLUSIVE MODE', qtable);
    EXECUTE format('SELECT count(*) FROM pgmq.%I', qtable) INTO removed;
    EXECUTE format('TRUNCATE TABLE pgmq.%I', qtable);
    RETURN removed;
END
$function$
;
COMMENT ON FUNCTION pgmq.purge_queue(text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.purge_queue(text) TO PUBLIC;


-- 0031_worker_hide_failed_named_once
-- 0031_worker_hide_failed_named_once: worker_hide_failed_named_once
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._retry_later(text,bigint,double precision,text,integer);
CREATE OR REPLACE FUNCTION pgmq._hide_failed(queue_name text, msg_id bigint, seconds double precision, error text, keep integer DEFAULT 20)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    done bigint;
BEGIN
    IF seconds IS NULL OR seconds < 0 OR seconds = 'Infinity' THEN
        RAISE EXCEPTION 'seconds must be zero or more, got: %', coalesce(seconds::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    EXECUTE format(
        $q$
        WITH free AS (
            SELECT msg_id FROM pgmq.%1$I WHERE msg_id = $1 FOR UPDATE SKIP LOCKED
        )
        UPDATE pgmq.%1$I m
        SET vt = clock_timestamp() + make_interval(secs => $2),
            headers = CASE
                WHEN m.headers IS NOT NULL AND jsonb_typeof(m.headers) <> 'object' THEN m.headers
                WHEN jsonb_typeof(coalesce(m.headers -> 'attempt_errors', '[]')) <> 'array'
                    THEN m.headers
                ELSE coalesce(m.headers, '{}') || jsonb_build_object('attempt_errors', (
                    SELECT coalesce(jsonb_agg(e.value ORDER BY e.n), '[]')
                    FROM jsonb_array_elements(
                        coalesce(m.headers -> 'attempt_errors', '[]') || jsonb_build_array(
                            jsonb_build_object(
                                'attempt', m.read_ct, 'at', clock_timestamp(), 'error', $3
                            )
                        )
                    ) WITH ORDINALITY AS e(value, n)
                    WHERE e.n > jsonb_array_length(coalesce(m.headers -> 'attempt_errors', '[]'))
                                + 1 - greatest($4, 1)
                ))
            END
        FROM free
        WHERE m.msg_id = free.msg_id
        RETURNING m.msg_id
        $q$,
        pgmq.format_table_name(pgmq._require_queue(queue_name), 'q')
    ) INTO done USING msg_id, seconds, error, keep;
    RETURN done;
END
$function$
;
COMMENT ON FUNCTION pgmq._hide_failed(text,bigint,double precision,text,integer) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._hide_failed(text,bigint,double precision,text,integer) FROM PUBLIC;


-- 0032_queue_figures_read_by_column_name_oldest
-- 0032_queue_figures_read_by_column_name_oldest: queue figures read by column name; oldest_msg_age_sec, one name per fact
-- Frozen when written; never edit a released migration.

-- One name per fact: pgmq's name for the oldest message's age.
ALTER TYPE pgmq._dashboard_stats RENAME ATTRIBUTE oldest_age_sec TO oldest_msg_age_sec;
SET LOCAL check_function_bodies = off;
CREATE OR REPLACE FUNCTION pgmq._dashboard_queue_stats(queue_name text, exact_limit bigint DEFAULT 50000, max_reads integer DEFAULT NULL::integer)
 RETURNS pgmq._dashboard_stats
 LANGUAGE plpgsql
AS $function$
DECLARE
    r pgmq._dashboard_stats;
    qtable regclass;
    atable regclass;
    est boolean;
    est_names text[] := '{}';
    future bigint;
    future_read bigint;
    sampled bigint;
    s_in_flight bigint;
    s_delayed bigint;
    s_poison bigint;
    oldest timestamptz;
    newest timestamptz;
    oldest_vt timestamptz;
    -- The real time, not the transaction's start: a dashboard request may sit in a
    -- transaction, and the message functions compare vt with clock_timestamp() too.
    at timestamptz := clock_timestamp();
BEGIN
    IF exact_limit IS NULL OR exact_limit < 1 THEN
        RAISE EXCEPTION 'exact_limit must be a positive number of rows, got %', exact_limit
            USING ERRCODE = 'PQ004';
    END IF;
    r.queue_name := pgmq._require_queue(queue_name);
    qtable := format('pgmq.%I', pgmq.format_table_name(queue_name, 'q'))::regclass;
    atable := format('pgmq.%I', pgmq.format_table_name(queue_name, 'a'))::regclass;

    SELECT c.n, c.estimated INTO r.depth, est FROM pgmq._dashboard_count(r.queue_name, 'q', exact_limit) c;
    IF NOT est THEN
        -- Small table: every figure exact, in one pass.
        EXECUTE format(
            $q$SELECT count(*) FILTER (WHERE vt <= $2),
                      count(*) FILTER (WHERE vt > $2 AND read_ct > 0),
                      count(*) FILTER (WHERE vt > $2 AND read_ct = 0),
                      count(*) FILTER (WHERE read_ct >= $1)
               FROM %s$q$, qtable
        ) INTO r.visible, r.in_flight, r.delayed, r.poison USING max_reads, at;
    ELSE
        est_names := est_names || ARRAY['depth', 'visible'];
        -- Messages not yet visible, counted up to a limit (one pass; live tables have no
        -- vt index, see 10_queues.sql: about 0.15 s for a million rows here).
        EXECUTE format(
            $q$SELECT count(*), count(*) FILTER (WHERE read_ct > 0)
               FROM (SELECT read_ct FROM %s WHERE vt > $2 LIMIT $1) s$q$, qtable
        ) INTO future, future_read USING exact_limit + 1, at;
        -- One block sample of about 10,000 rows for what an index cannot answer.
        EXECUTE format(
            $q$SELECT count(*),
                      count(*) FILTER (WHERE vt > $3 AND read_ct > 0),
                      count(*) FILTER (WHERE vt > $3 AND read_ct = 0),
                      count(*) FILTER (WHERE read_ct >= $2)
               FROM %s TABLESAMPLE SYSTEM ($1)$q$, qtable
        ) INTO sampled, s_in_flight, s_delayed, s_poison
          USING least(100.0, 1000000.0 / r.depth), max_reads, at;
        sampled := greatest(sampled, 1);
        IF future <= exact_limit THEN
            r.in_flight := future_read;
            r.delayed := future - future_read;
        ELSE
            r.in_flight := round(r.depth::numeric * s_in_flight / sampled);
            r.delayed := round(r.depth::numeric * s_delayed / sampled);
            est_names := est_names || ARRAY['in_flight', 'delayed'];
        END IF;
        r.visible := greatest(r.depth - r.in_flight - r.delayed, 0);
        IF max_reads IS NOT NULL THEN
            r.poison := round(r.depth::numeric * s_poison / sampled);
            est_names := est_names || 'poison'::text;
        END IF;
    END IF;
    IF max_reads IS NULL THEN
        r.poison := NULL;
    END IF;

    -- Ages: oldest and newest through the primary key; the oldest visible vt takes one pass.
    EXECUTE format('SELECT enqueued_at FROM %s ORDER BY msg_id LIMIT 1', qtable) INTO oldest;
    EXECUTE format('SELECT enqueued_at FROM %s ORDER BY msg_id DESC LIMIT 1', qtable) INTO newest;
    EXECUTE format('SELECT min(vt) FROM %s WHERE vt <= $1', qtable) INTO oldest_vt USING at;
    r.oldest_msg_age_sec := extract(epoch FROM at - oldest)::integer;
    r.newest_age_sec := extract(epoch FROM at - newest)::integer;
    r.oldest_visible_age_sec := extract(epoch FROM at - oldest_vt)::integer;

    SELECT c.n, c.estimated INTO r.archive_size, est FROM pgmq._dashboard_count(r.queue_name, 'a', exact_limit) c;
    IF est THEN
        est_names := est_names || 'archive_size'::text;
    END IF;
    SELECT c.n, c.estimated INTO r.archived_hour, est
    FROM pgmq._dashboard_count(r.queue_name, 'a', exact_limit, at - interval '1 hour') c;
    IF est THEN
        est_names := est_names || 'archived_hour'::text;
    END IF;
    SELECT c.n, c.estimated INTO r.archived_day, est
    FROM pgmq._dashboard_count(r.queue_name, 'a', exact_limit, at - interval '1 day') c;
    IF est THEN
        est_names := est_names || 'archived_day'::text;
    END IF;

    -- A plain SELECT of the sequence: its lock belongs to the caller's (sub)transaction,
    -- where pg_sequence_last_value's is held to the end of the whole transaction.
    EXECUTE format(
        'SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM %s',
        pg_get_serial_sequence(qtable::text, 'msg_id')
    ) INTO r.total_messages;
    r.total_messages := coalesce(r.total_messages, 0);
    r.estimated := est_names;
    RETURN r;
END
$function$
;
COMMENT ON FUNCTION pgmq._dashboard_queue_stats(text,bigint,integer) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._dashboard_queue_stats(text,bigint,integer) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._dashboard_stats_of(names text[], exact_limit bigint DEFAULT 50000, max_reads jsonb DEFAULT '{}'::jsonb)
 RETURNS SETOF pgmq._dashboard_stats
 LANGUAGE plpgsql
AS $function$
DECLARE
    q record;
    limits jsonb := coalesce(max_reads, '{}');
    r pgmq._dashboard_stats;
    sent bigint;
BEGIN
    IF exact_limit IS NULL OR exact_limit < 1 THEN
        RAISE EXCEPTION 'exact_limit must be a positive number of rows, got %', exact_limit
            USING ERRCODE = 'PQ004';
    END IF;
    FOR q IN SELECT i.queue_name, i.idle FROM pgmq._dashboard_idle_queues(names) i LOOP
        BEGIN
            IF q.idle THEN
                EXECUTE format(
                    'SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM %s',
                    pg_get_serial_sequence(
                        format('pgmq.%I', pgmq.format_table_name(q.queue_name, 'q')), 'msg_id'
                    )
                ) INTO sent;
                -- Field by field, by name: a column added to the type stays NULL here
                -- rather than shifting the others.
                r := NULL;
                r.queue_name := q.queue_name;
                r.depth := 0;
                r.visible := 0;
                r.in_flight := 0;
                r.delayed := 0;
                r.archive_size := 0;
                r.archived_hour := 0;
                r.archived_day := 0;
                r.poison := CASE WHEN limits ? q.queue_name THEN 0 END;
                r.total_messages := coalesce(sent, 0);
                r.estimated := '{}'::text[];
                RETURN NEXT r;
            ELSE
                RETURN NEXT pgmq._dashboard_queue_stats(
                    q.queue_name, exact_limit, (limits ->> q.queue_name)::integer
                );
            END IF;
        EXCEPTION
            WHEN undefined_table OR SQLSTATE 'PQ002' THEN
                CONTINUE;
        END;
    END LOOP;
END
$function$
;
COMMENT ON FUNCTION pgmq._dashboard_stats_of(text[],bigint,jsonb) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._dashboard_stats_of(text[],bigint,jsonb) FROM PUBLIC;

-- 0033_task_enqueue_through_the_id_router
-- 0033_task_enqueue_through_the_id_router: task_enqueue_through_the_id_router
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
CREATE OR REPLACE FUNCTION pgmq._queue_ops_route(queue_name text, p_op "char", p_qty integer, p_secs integer, p_vt timestamp with time zone, p_ids bigint[], p_msgs jsonb[], p_headers jsonb[], p_cond jsonb)
 RETURNS SETOF pgmq.message_record
 LANGUAGE plpgsql
AS $function$
DECLARE
    -- checks the name first, as pgmq's per-message functions do (sql/05_names.sql)
    qtable text := pgmq._message_table_name(queue_name, 'q');
    attrs jsonb;
    low bigint := 0;
    stmt text;
BEGIN
    IF p_op = 'r' OR p_op = 'p' THEN
        low := pgmq._low_water_mark_for(qtable);
    END IF;
    SELECT a.attributes INTO attrs
    FROM pgmq.queue_attributes a WHERE lower(a.queue_name) = lower($1);
    IF attrs IS NOT NULL THEN
        RETURN QUERY SELECT * FROM pgmq._queue_ops_with_attributes(
            queue_name, attrs, p_op, p_qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond, low);
        RETURN;
    END IF;
    IF p_op = 'r' OR p_op = 'p' THEN
        stmt := pgmq._queue_ops_prepared(qtable, p_op);
        IF stmt IS NOT NULL THEN
            RETURN QUERY SELECT * FROM pgmq._queue_ops_run_prepared(stmt, p_qty, p_secs, p_ids, p_cond, low);
            RETURN;
        END IF;
    END IF;
    RETURN QUERY EXECUTE pgmq._queue_ops_sql_for(qtable, p_op, '$9')
        USING p_op, p_qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond, low;
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_route(text,"char",integer,integer,timestamp with time zone,bigint[],jsonb[],jsonb[],jsonb) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_route(text,"char",integer,integer,timestamp with time zone,bigint[],jsonb[],jsonb[],jsonb) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._task_enqueue(queue_name text, msg jsonb, headers jsonb, delay timestamp with time zone, result_id uuid, backend text, task_path text, priority integer, args jsonb, kwargs jsonb, run_after timestamp with time zone, enqueued_at timestamp with time zone, max_attempts integer)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    sent bigint;
BEGIN
    SELECT r.id INTO sent FROM pgmq._queue_ops_route_ids(
        queue_name, 's'::"char", delay, NULL::bigint[], ARRAY[msg], ARRAY[headers]) AS r(id);
    INSERT INTO django_pgmq_taskresultrecord AS t (
        id, backend, queue_name, task_path, priority, status, args, kwargs, run_after,
        enqueued_at, errors, worker_ids, max_attempts, msg_id)
    VALUES ($5, $6, $1, $7, $8, 'READY', $9, $10, $11, $12, '[]', '[]', $13, sent);
    RETURN sent;
END
$function$
;
COMMENT ON FUNCTION pgmq._task_enqueue(text,jsonb,jsonb,timestamp with time zone,uuid,text,text,integer,jsonb,jsonb,timestamp with time zone,timestamp with time zone,integer) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._task_enqueue(text,jsonb,jsonb,timestamp with time zone,uuid,text,text,integer,jsonb,jsonb,timestamp with time zone,timestamp with time zone,integer) FROM PUBLIC;


-- 0034_browse_messages_is_the_one_name_for
-- 0034_browse_messages_is_the_one_name_for: browse_messages is the one name for message browsing
-- Frozen when written; never edit a released migration.
-- Renamed in place: the body, its grants and its comment stay as they were.
ALTER FUNCTION pgmq._dashboard_messages(text,boolean,boolean,integer,text,text,jsonb,bigint,bigint,integer) RENAME TO _browse_messages;
