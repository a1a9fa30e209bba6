-- 0032_queue_figures_read_by_column_name_oldest: queue figures read by column name; oldest_msg_age_sec, one name per fact
-- Frozen when written; never edit a released migration.

-- One name per fact: pgmq's name for the oldest message's age.
ALTER TYPE pgmq._dashboard_stats RENAME ATTRIBUTE oldest_msg_age_sec TO oldest_age_sec;
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
REVOKE EXECUTE ON FUNCTION pgmq._dashboard_stats_of(text[],bigint,jsonb) FROM PUBLIC;
