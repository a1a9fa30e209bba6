-- 0008_attributes_limits_schedules_tasks_workflows_and_roles: attributes limits schedules tasks workflows and roles
-- Frozen when written; never edit a released migration.
-- 0036_queue_figures_computed_once_read_by
-- 0034_queue_figures_computed_once_read_by: queue figures computed once, read by metrics and the dashboard
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._dashboard_all_stats(bigint,jsonb);
DROP FUNCTION IF EXISTS pgmq._dashboard_queue_stats(text,bigint,integer);
DROP FUNCTION IF EXISTS pgmq._dashboard_stats_of(text[],bigint,jsonb);
DROP FUNCTION IF EXISTS pgmq._metrics_counted(text[],text[],oid[],boolean[]);
DROP FUNCTION IF EXISTS pgmq._metrics_idle(text,oid);
-- The one row type of queue figures (sql/30_metrics.sql).
CREATE TYPE pgmq.queue_figures AS (
    queue_name text,
    queue_length bigint,
    newest_msg_age_sec integer,
    oldest_msg_age_sec integer,
    total_messages bigint,
    scrape_time timestamptz,
    queue_visible_length bigint,
    default_partition_length bigint,
    -- Figures pgmq.metrics() does not return: NULL unless exact_limit is given.
    in_flight_length bigint,
    delayed_length bigint,
    oldest_visible_age_sec integer,
    -- Messages read at least their queue's max_receive_count times (NULL without one).
    poison_length bigint,
    -- Names of the figures above that are estimates, not counts.
    estimated text[]
);

CREATE OR REPLACE FUNCTION pgmq._archive_idle(queue_name text)
 RETURNS boolean
 LANGUAGE sql
 STABLE
AS $function$
    SELECT coalesce(c.relkind = 'r' AND pg_relation_size(c.oid) = 0, false)
    FROM (SELECT to_regclass(format('pgmq.%I', pgmq.format_table_name(queue_name, 'a'))) AS a) t
    LEFT JOIN pg_class c ON c.oid = t.a
$function$
;
COMMENT ON FUNCTION pgmq._archive_idle(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._archive_idle(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._dashboard_all_stats(exact_limit bigint DEFAULT 50000, max_receive_count jsonb DEFAULT '{}'::jsonb)
 RETURNS SETOF pgmq._dashboard_stats
 LANGUAGE sql
AS $function$
    SELECT * FROM pgmq._dashboard_stats_of(
        ARRAY(SELECT m.queue_name::text FROM pgmq.meta m ORDER BY m.queue_name), exact_limit,
        max_receive_count
    )
$function$
;
COMMENT ON FUNCTION pgmq._dashboard_all_stats(bigint,jsonb) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._dashboard_all_stats(bigint,jsonb) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._dashboard_archive_figures(queue_name text, exact_limit bigint, at timestamp with time zone, OUT archive_size bigint, OUT archived_hour bigint, OUT archived_day bigint, OUT estimated text[])
 RETURNS record
 LANGUAGE plpgsql
AS $function$
DECLARE
    est boolean;
BEGIN
    archive_size := 0;
    archived_hour := 0;
    archived_day := 0;
    estimated := '{}';
    IF pgmq._archive_idle(queue_name) THEN
        RETURN;
    END IF;
    SELECT c.n, c.estimated INTO archive_size, est FROM pgmq._dashboard_count(queue_name, 'a', exact_limit) c;
    IF est THEN
        estimated := estimated || 'archive_size'::text;
    END IF;
    SELECT c.n, c.estimated INTO archived_hour, est
    FROM pgmq._dashboard_count(queue_name, 'a', exact_limit, at - interval '1 hour') c;
    IF est THEN
        estimated := estimated || 'archived_hour'::text;
    END IF;
    SELECT c.n, c.estimated INTO archived_day, est
    FROM pgmq._dashboard_count(queue_name, 'a', exact_limit, at - interval '1 day') c;
    IF est THEN
        estimated := estimated || 'archived_day'::text;
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._dashboard_archive_figures(text,bigint,timestamp with time zone) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._dashboard_archive_figures(text,bigint,timestamp with time zone) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._dashboard_idle_queues(names text[])
 RETURNS TABLE(queue_name text, idle boolean)
 LANGUAGE sql
 STABLE
AS $function$
    SELECT m.queue_name::text, f.idle AND pgmq._archive_idle(m.queue_name)
    FROM pgmq._metrics_facts(names) f
    JOIN pgmq.meta m ON m.queue_name = f.n
    ORDER BY f.o
$function$
;
COMMENT ON FUNCTION pgmq._dashboard_idle_queues(text[]) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._dashboard_idle_queues(text[]) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._dashboard_queue_stats(queue_name text, exact_limit bigint DEFAULT 50000, max_receive_count integer DEFAULT NULL::integer)
 RETURNS pgmq._dashboard_stats
 LANGUAGE sql
AS $function$
    SELECT * FROM pgmq._dashboard_stats_of(
        ARRAY[pgmq._require_queue(queue_name)], exact_limit,
        CASE WHEN max_receive_count IS NULL THEN '{}'::jsonb
             ELSE jsonb_build_object(pgmq._require_queue(queue_name), max_receive_count) END
    )
$function$
;
COMMENT ON FUNCTION pgmq._dashboard_queue_stats(text,bigint,integer) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._dashboard_queue_stats(text,bigint,integer) FROM PUBLIC;


CREATE OR REPLACE FUNCTION pgmq._queue_figures(names text[], exact_limit bigint DEFAULT NULL::bigint, max_receive_count jsonb DEFAULT NULL::jsonb, at timestamp with time zone DEFAULT now())
 RETURNS SETOF pgmq.queue_figures
 LANGUAGE plpgsql
AS $function$
DECLARE
    bounded constant boolean := exact_limit IS NOT NULL;
    limits constant jsonb := coalesce(max_receive_count, '{}');
    answered pgmq.queue_figures[];
    part pgmq.queue_figures[];
    busy text[];
    tables text[];
    seqs oid[];
    idle_seqs oid[];
    totals bigint[];
    spills boolean[];
    caps integer[];
    chunk constant integer := 200;
    first integer := 1;
    upto integer;
BEGIN
    at := coalesce(at, now());
    IF bounded AND exact_limit < 1 THEN
        RAISE EXCEPTION 'exact_limit must be a positive number of rows, got %', exact_limit
            USING ERRCODE = 'PQ004';
    END IF;
    IF bounded THEN
        names := ARRAY(SELECT m.queue_name::text FROM unnest(names) AS u(n)
                       JOIN pgmq.meta m ON m.queue_name = u.n);
    END IF;
    -- One pass over the catalogue: the idle queues' rows (the type's columns in order:
    -- zeros and the sequence), and what the others need.
    SELECT coalesce(array_agg(ROW(
               f.n, 0, NULL, NULL,
               CASE WHEN NOT bounded THEN coalesce(pg_sequence_last_value(f.seq), 0) END,
               at, 0, NULL,
               CASE WHEN bounded THEN 0 END, CASE WHEN bounded THEN 0 END, NULL,
               CASE WHEN bounded AND limits ? f.n THEN 0 END, '{}'
           )::pgmq.queue_figures ORDER BY f.o) FILTER (WHERE f.idle), '{}'),
           array_agg(f.seq ORDER BY f.o) FILTER (WHERE f.idle),
           array_agg(f.n ORDER BY f.o) FILTER (WHERE NOT f.idle),
           array_agg(f.qtable ORDER BY f.o) FILTER (WHERE NOT f.idle),
           array_agg(f.seq ORDER BY f.o) FILTER (WHERE NOT f.idle),
           array_agg(f.spill ORDER BY f.o) FILTER (WHERE NOT f.idle),
           array_agg((limits ->> f.n)::integer ORDER BY f.o) FILTER (WHERE NOT f.idle)
    INTO answered, idle_seqs, busy, tables, seqs, spills, caps
    FROM pgmq._metrics_facts(names) f
    WHERE NOT bounded OR f.qoid IS NOT NULL;
    IF bounded THEN  -- the idle queues' totals, by SELECT (see the top of this file)
        BEGIN
            totals := pgmq._queue_totals(idle_seqs);
        EXCEPTION WHEN undefined_table THEN
            -- An idle queue was dropped since its sequence was named: read them again
            -- (a dropped queue's total is NULL, its row left out below).
            totals := pgmq._queue_totals(idle_seqs);
        END;
        FOR i IN 1 .. coalesce(cardinality(answered), 0) LOOP
            answered[i].total_messages := totals[i];
        END LOOP;
        answered := ARRAY(SELECT a FROM unnest(answered) AS a WHERE a.total_messages IS NOT NULL);
    END IF;
    WHILE first <= coalesce(cardinality(busy), 0) LOOP
        upto := least(first + chunk - 1, cardinality(busy));
        IF NOT bounded THEN
            part := pgmq._queue_figures_chunk(busy[first:upto], tables[first:upto], seqs[first:upto],
                                              spills[first:upto], caps[first:upto], at, NULL);
        ELSE
            BEGIN
                part := pgmq._queue_figures_chunk(busy[first:upto], tables[first:upto],
                                                  seqs[first:upto], spills[first:upto],
                                                  caps[first:upto], at, exact_limit);
            EXCEPTION WHEN undefined_table THEN
                -- A queue of the chunk was dropped since the catalogue pass: the others
                -- one by one, the dropped one left out.
                part := '{}';
                FOR i IN first .. upto LOOP
                    BEGIN
                        part := part || pgmq._queue_figures_chunk(
                            ARRAY[busy[i]], ARRAY[tables[i]], ARRAY[seqs[i]], ARRAY[spills[i]],
                            ARRAY[caps[i]], at, exact_limit);
                    EXCEPTION WHEN undefined_table THEN
                        NULL;
                    END;
                END LOOP;
            END;
        END IF;
        answered := answered || part;
        first := first + chunk;
    END LOOP;
    RETURN QUERY SELECT * FROM unnest(answered);
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_figures(text[],bigint,jsonb,timestamp with time zone) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_figures(text[],bigint,jsonb,timestamp with time zone) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_figures_chunk(names text[], tables text[], seqs oid[], spills boolean[], caps integer[], at timestamp with time zone, exact_limit bigint)
 RETURNS pgmq.queue_figures[]
 LANGUAGE plpgsql
AS $function$
DECLARE
    sizes bigint[];
    small integer[];
    large integer[];
    answered pgmq.queue_figures[] := '{}';
BEGIN
    IF exact_limit IS NULL THEN
        RETURN ARRAY(SELECT c FROM pgmq._queue_figures_counted(names, tables, seqs, spills, caps,
                                                               at, false) c);
    END IF;
    EXECUTE 'SELECT array_agg(b.n ORDER BY b.i) FROM ('
        || (SELECT string_agg(format('SELECT %s, count(*) FROM (SELECT FROM pgmq.%I LIMIT $1) s',
                                     u.i, u.t), ' UNION ALL ')
            FROM unnest(tables) WITH ORDINALITY AS u(t, i))
        || ') AS b(i, n)'
    INTO sizes USING exact_limit + 1;
    small := ARRAY(SELECT i FROM generate_subscripts(names, 1) i WHERE sizes[i] <= exact_limit);
    large := ARRAY(SELECT i FROM generate_subscripts(names, 1) i WHERE sizes[i] > exact_limit);
    IF cardinality(small) > 0 THEN
        answered := ARRAY(
            SELECT c FROM pgmq._queue_figures_counted(
                ARRAY(SELECT names[i] FROM unnest(small) i),
                ARRAY(SELECT tables[i] FROM unnest(small) i),
                ARRAY(SELECT seqs[i] FROM unnest(small) i),
                ARRAY(SELECT spills[i] FROM unnest(small) i),
                ARRAY(SELECT caps[i] FROM unnest(small) i), at, true) c);
    END IF;
    RETURN answered || ARRAY(
        SELECT pgmq._queue_figures_estimated(names[i], seqs[i], spills[i], exact_limit, caps[i], at)
        FROM unnest(large) i);
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_figures_chunk(text[],text[],oid[],boolean[],integer[],timestamp with time zone,bigint) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_figures_chunk(text[],text[],oid[],boolean[],integer[],timestamp with time zone,bigint) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_figures_counted(names text[], tables text[], seqs oid[], spills boolean[], caps integer[], at timestamp with time zone, bounded boolean)
 RETURNS SETOF pgmq.queue_figures
 LANGUAGE plpgsql
AS $function$
BEGIN
    RETURN QUERY EXECUTE
        'SELECT $1[b.i] AS queue_name, b.len AS queue_length, '
        || 'extract(epoch FROM $5 - b.newest)::integer AS newest_msg_age_sec, '
        || 'extract(epoch FROM $5 - b.oldest)::integer AS oldest_msg_age_sec, '
        || CASE WHEN bounded THEN 'b.total' ELSE 'coalesce(pg_sequence_last_value($2[b.i]), 0)' END
        || ' AS total_messages, '
        || '$5 AS scrape_time, b.visible AS queue_visible_length, '
        || 'CASE WHEN $3[b.i] THEN pgmq._default_partition_length($1[b.i]) END '
        || 'AS default_partition_length, '
        || 'b.in_flight AS in_flight_length, b.len - b.visible - b.in_flight AS delayed_length, '
        || 'extract(epoch FROM $5 - b.oldest_vt)::integer AS oldest_visible_age_sec, '
        || 'CASE WHEN $4[b.i] IS NOT NULL THEN b.poison END AS poison_length, '
        || '''{}''::text[] AS estimated FROM ('
        || (SELECT string_agg(format('SELECT %s, count(*), max(enqueued_at), min(enqueued_at), '
                                     'count(*) FILTER (WHERE vt <= $5), %s FROM pgmq.%I',
                                     u.i,
                                     CASE WHEN bounded
                                          THEN format('count(*) FILTER (WHERE vt > $5 AND read_ct > 0), '
                                                      'min(vt) FILTER (WHERE vt <= $5), '
                                                      'count(*) FILTER (WHERE read_ct >= $4[%s]), %s',
                                                      u.i, pgmq._sequence_read_sql(seqs[u.i]))
                                          ELSE 'NULL::bigint, NULL::timestamptz, NULL::bigint, NULL::bigint' END,
                                     u.t), ' UNION ALL ')
            FROM unnest(tables) WITH ORDINALITY AS u(t, i))
        || ') AS b(i, len, newest, oldest, visible, in_flight, oldest_vt, poison, total)'
    USING names, seqs, spills, caps, at;
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_figures_counted(text[],text[],oid[],boolean[],integer[],timestamp with time zone,boolean) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_figures_counted(text[],text[],oid[],boolean[],integer[],timestamp with time zone,boolean) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_figures_estimated(queue_name text, seq oid, spill boolean, exact_limit bigint, cap integer, at timestamp with time zone)
 RETURNS pgmq.queue_figures
 LANGUAGE plpgsql
AS $function$
DECLARE
    r pgmq.queue_figures;
    qtable regclass := format('pgmq.%I', pgmq.format_table_name(queue_name, 'q'))::regclass;
    future bigint;
    future_read bigint;
    sampled bigint;
    s_in_flight bigint;
    s_delayed bigint;
    s_poison bigint;
    oldest timestamptz;
    newest timestamptz;
    oldest_vt timestamptz;
BEGIN
    r.queue_name := queue_name;
    r.scrape_time := at;
    r.queue_length := greatest(exact_limit + 1, pgmq._dashboard_estimate(queue_name, 'q'));
    r.estimated := ARRAY['queue_length', 'queue_visible_length'];
    EXECUTE format(
        $q$SELECT count(*), count(*) FILTER (WHERE read_ct > 0)
           FROM (SELECT read_ct FROM %s WHERE vt > $2 LIMIT $1) s$q$, qtable
    ) INTO future, future_read USING exact_limit + 1, at;
    EXECUTE format(
        $q$SELECT count(*),
                  count(*) FILTER (WHERE vt > $3 AND read_ct > 0),
                  count(*) FILTER (WHERE vt > $3 AND read_ct = 0),
                  count(*) FILTER (WHERE read_ct >= $2)
           FROM %s TABLESAMPLE SYSTEM ($1)$q$, qtable
    ) INTO sampled, s_in_flight, s_delayed, s_poison
      USING least(100.0, 1000000.0 / r.queue_length), cap, at;
    sampled := greatest(sampled, 1);
    IF future <= exact_limit THEN
        r.in_flight_length := future_read;
        r.delayed_length := future - future_read;
    ELSE
        r.in_flight_length := round(r.queue_length::numeric * s_in_flight / sampled);
        r.delayed_length := round(r.queue_length::numeric * s_delayed / sampled);
        r.estimated := r.estimated || ARRAY['in_flight_length', 'delayed_length'];
    END IF;
    r.queue_visible_length := greatest(r.queue_length - r.in_flight_length - r.delayed_length, 0);
    IF cap IS NOT NULL THEN
        r.poison_length := round(r.queue_length::numeric * s_poison / sampled);
        r.estimated := r.estimated || 'poison_length'::text;
    END IF;
    EXECUTE format('SELECT enqueued_at FROM %s ORDER BY msg_id LIMIT 1', qtable) INTO oldest;
    EXECUTE format('SELECT enqueued_at FROM %s ORDER BY msg_id DESC LIMIT 1', qtable) INTO newest;
    EXECUTE format('SELECT min(vt) FROM %s WHERE vt <= $1', qtable) INTO oldest_vt USING at;
    r.oldest_msg_age_sec := extract(epoch FROM at - oldest)::integer;
    r.newest_msg_age_sec := extract(epoch FROM at - newest)::integer;
    r.oldest_visible_age_sec := extract(epoch FROM at - oldest_vt)::integer;
    r.total_messages := (pgmq._queue_totals(ARRAY[seq]))[1];
    IF spill THEN
        r.default_partition_length := pgmq._default_partition_length(queue_name);
    END IF;
    RETURN r;
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_figures_estimated(text,oid,boolean,bigint,integer,timestamp with time zone) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_figures_estimated(text,oid,boolean,bigint,integer,timestamp with time zone) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_totals(seqs oid[])
 RETURNS bigint[]
 LANGUAGE plpgsql
AS $function$
DECLARE
    totals bigint[];
BEGIN
    IF coalesce(cardinality(seqs), 0) = 0 THEN
        RETURN '{}';
    END IF;
    EXECUTE 'SELECT array_agg(t.v ORDER BY t.i) FROM ('
        || (SELECT string_agg(format('SELECT %s, %s', u.i, pgmq._sequence_read_sql(u.s)), ' UNION ALL ')
            FROM unnest(seqs) WITH ORDINALITY AS u(s, i))
        || ') AS t(i, v)'
    INTO totals;
    RETURN totals;
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_totals(oid[]) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_totals(oid[]) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._sequence_read_sql(seq oid)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT coalesce(
        (SELECT format('(SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM %s)',
                       c.oid::regclass)
         FROM pg_class c WHERE c.oid = seq),
        'NULL::bigint')
$function$
;
COMMENT ON FUNCTION pgmq._sequence_read_sql(oid) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._sequence_read_sql(oid) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.metrics(queue_name text)
 RETURNS pgmq.metrics_result
 LANGUAGE sql
AS $function$
    SELECT f.queue_name, f.queue_length, f.newest_msg_age_sec, f.oldest_msg_age_sec,
           f.total_messages, f.scrape_time, f.queue_visible_length, f.default_partition_length
    FROM pgmq._queue_figures(ARRAY[pgmq._require_queue(queue_name)]) f;
$function$
;
COMMENT ON FUNCTION pgmq.metrics(text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.metrics(text) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.metrics_all()
 RETURNS SETOF pgmq.metrics_result
 LANGUAGE sql
AS $function$
    SELECT f.queue_name, f.queue_length, f.newest_msg_age_sec, f.oldest_msg_age_sec,
           f.total_messages, f.scrape_time, f.queue_visible_length, f.default_partition_length
    FROM pgmq._queue_figures(ARRAY(SELECT m.queue_name::text FROM pgmq.meta m)) f
    ORDER BY f.queue_name;
$function$
;
COMMENT ON FUNCTION pgmq.metrics_all() IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.metrics_all() TO PUBLIC;


-- 0037_dashboard_figures_take_pgmq_s_names
-- 0037_dashboard_figures_take_pgmq_s_names: dashboard figures take pgmq's names queue_length, queue_visible_length
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
-- By hand: the type's columns renamed in place (same order and types; no data
-- is stored in this type, functions returning it read it by name).
ALTER TYPE pgmq._dashboard_stats RENAME ATTRIBUTE depth TO queue_length;
ALTER TYPE pgmq._dashboard_stats RENAME ATTRIBUTE visible TO queue_visible_length;
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
           f.queue_length AS queue_length,
           f.queue_visible_length AS queue_visible_length,
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
           ARRAY(SELECT CASE e WHEN 'in_flight_length' THEN 'in_flight'
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

