-- 0008_attributes_limits_schedules_tasks_workflows_and_roles: attributes limits schedules tasks workflows and roles
-- Frozen when written; never edit a released migration.
-- 0037_dashboard_figures_take_pgmq_s_names (reverse)
-- 0037_dashboard_figures_take_pgmq_s_names: dashboard figures take pgmq's names queue_length, queue_visible_length
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
-- By hand: the type's columns renamed in place (same order and types; no data
-- is stored in this type, functions returning it read it by name).
ALTER TYPE pgmq._dashboard_stats RENAME ATTRIBUTE queue_length TO depth;
ALTER TYPE pgmq._dashboard_stats RENAME ATTRIBUTE queue_visible_length TO visible;
CREATE OR REPLACE FUNCTION pgmq._dashboard_stats_of(names text[], exact_limit bigint DEFAULT 50000, max_receive_count jsonb DEFAULT '{}'::jsonb)
 RETURNS SETOF pgmq._dashboard_stats
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF exact_limit IS NULL OR exact_limit < 1 THEN
        RAISE EXCEPTION 'exact_limit must be a positive number of rows, got %', exact_limit
            USING ERRCODE = 'PQ004';
    END IF;
    RETURN QUERY
    SELECT f.queue_name AS queue_name,
           f.queue_length AS depth,
           f.queue_visible_length AS visible,
           f.in_flight_length AS in_flight,
           f.delayed_length AS delayed,
           f.oldest_msg_age_sec AS oldest_msg_age_sec,
           f.newest_msg_age_sec AS newest_age_sec,
           f.oldest_visible_age_sec AS oldest_visible_age_sec,
           a.archive_size AS archive_size,
           a.archived_hour AS archived_hour,
           a.archived_day AS archived_day,
           f.poison_length AS poison,
           f.total_messages AS total_messages,
           -- The figures' names as the dashboard calls them (its columns above).
           ARRAY(SELECT CASE e WHEN 'queue_length' THEN 'depth'
                               WHEN 'queue_visible_length' THEN 'visible'
                               WHEN 'in_flight_length' THEN 'in_flight'
                               WHEN 'delayed_length' THEN 'delayed'
                               WHEN 'poison_length' THEN 'poison'
                               ELSE e END
                 FROM unnest(f.estimated) AS e) || a.estimated AS estimated
    FROM unnest(names) WITH ORDINALITY AS u(n, o)
    -- The real time, not the transaction's start (see the top of 30_metrics.sql).
    JOIN pgmq._queue_figures(names, exact_limit, max_receive_count, clock_timestamp()) f
        ON f.queue_name = u.n
    CROSS JOIN LATERAL pgmq._dashboard_archive_figures(f.queue_name, exact_limit, f.scrape_time) a
    ORDER BY u.o;
END
$function$
;
COMMENT ON FUNCTION pgmq._dashboard_stats_of(text[],bigint,jsonb) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._dashboard_stats_of(text[],bigint,jsonb) FROM PUBLIC;


-- 0036_queue_figures_computed_once_read_by (reverse)
-- 0034_queue_figures_computed_once_read_by: queue figures computed once, read by metrics and the dashboard
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._archive_idle(text);
DROP FUNCTION IF EXISTS pgmq._dashboard_all_stats(bigint,jsonb);
DROP FUNCTION IF EXISTS pgmq._dashboard_archive_figures(text,bigint,timestamp with time zone);
DROP FUNCTION IF EXISTS pgmq._dashboard_queue_stats(text,bigint,integer);
DROP FUNCTION IF EXISTS pgmq._dashboard_stats_of(text[],bigint,jsonb);
DROP FUNCTION IF EXISTS pgmq._queue_figures(text[],bigint,jsonb,timestamp with time zone);
DROP FUNCTION IF EXISTS pgmq._queue_figures_chunk(text[],text[],oid[],boolean[],integer[],timestamp with time zone,bigint);
DROP FUNCTION IF EXISTS pgmq._queue_figures_counted(text[],text[],oid[],boolean[],integer[],timestamp with time zone,boolean);
DROP FUNCTION IF EXISTS pgmq._queue_figures_estimated(text,oid,boolean,bigint,integer,timestamp with time zone);
DROP FUNCTION IF EXISTS pgmq._queue_totals(oid[]);
DROP FUNCTION IF EXISTS pgmq._sequence_read_sql(oid);
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
REVOKE EXECUTE ON FUNCTION pgmq._dashboard_all_stats(bigint,jsonb) FROM PUBLIC;

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
REVOKE EXECUTE ON FUNCTION pgmq._dashboard_idle_queues(text[]) FROM PUBLIC;

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
REVOKE EXECUTE ON FUNCTION pgmq._metrics_counted(text[],text[],oid[],boolean[]) FROM PUBLIC;

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
REVOKE EXECUTE ON FUNCTION pgmq._metrics_idle(text,oid) FROM PUBLIC;

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
GRANT EXECUTE ON FUNCTION pgmq.metrics(text) TO PUBLIC;

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
GRANT EXECUTE ON FUNCTION pgmq.metrics_all() TO PUBLIC;

DROP TYPE pgmq.queue_figures;
