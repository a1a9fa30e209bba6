-- 0046_rows_by_name_one_channel_spelling: rows by name, one channel spelling
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._claim_filter(text,jsonb,integer,boolean,boolean);
DROP FUNCTION IF EXISTS pgmq._dashboard_stats_row(text,bigint,bigint,bigint,bigint,integer,integer,integer,bigint,bigint,bigint,bigint,bigint,text[]);
DROP FUNCTION IF EXISTS pgmq._queue_channel(text,text);
DROP FUNCTION IF EXISTS pgmq._queue_figures_row(text,bigint,integer,integer,bigint,timestamp with time zone,bigint,bigint,bigint,bigint,integer,bigint,text[]);
DROP FUNCTION IF EXISTS pgmq._require_row_builder(regproc);
CREATE OR REPLACE FUNCTION pgmq._claim_filter(queue_name text, attrs jsonb, qty integer, pops boolean DEFAULT false, peek boolean DEFAULT false, OUT allowed integer, OUT max_receive_count integer, OUT dead_letter_queue text, OUT by_priority boolean, OUT held tid[], OUT stamps timestamp with time zone[], OUT counts tid[])
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
        -- held: the max_in_flight slots taken for the claim; counts: the rate_limit
        -- tokens (their rows' ctids); stamps: '{}' when the queue has a rate limit
        -- (sql/26_limits.sql).
        SELECT l.allowed, l.slots,
               CASE WHEN l.tokens IS NOT NULL THEN '{}'::timestamptz[] END, l.tokens
        INTO allowed, held, stamps, counts
        FROM pgmq._claim_limits(queue_name, allowed, pops, NOT peek) l;
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._claim_filter(text,jsonb,integer,boolean,boolean) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._claim_filter(text,jsonb,integer,boolean,boolean) FROM PUBLIC;

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
           f.in_flight_length AS in_flight_length,
           f.delayed_length AS delayed_length,
           f.oldest_msg_age_sec AS oldest_msg_age_sec,
           f.newest_msg_age_sec AS newest_msg_age_sec,
           f.oldest_visible_age_sec AS oldest_visible_age_sec,
           a.archive_size AS archive_size,
           a.archived_hour AS archived_hour,
           a.archived_day AS archived_day,
           f.poison_length AS poison_length,
           f.total_messages AS total_messages,
           f.estimated || a.estimated AS estimated
    FROM pg_catalog.unnest(names) WITH ORDINALITY AS u(n, o)
    -- The real time, not the transaction's start (see the top of 30_metrics.sql).
    JOIN pgmq._queue_figures(names, exact_limit, max_receive_count, pg_catalog.clock_timestamp()) f
        ON f.queue_name::text = u.n
    CROSS JOIN LATERAL pgmq._dashboard_archive_figures(f.queue_name::text, exact_limit, f.scrape_time) a
    ORDER BY u.o;
END
$function$
;
COMMENT ON FUNCTION pgmq._dashboard_stats_of(text[],bigint,jsonb) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._dashboard_stats_of(text[],bigint,jsonb) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._limit_channel(queue_name text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$ SELECT 'pgmq.q_' || queue_name || '.FREE' $function$
;
COMMENT ON FUNCTION pgmq._limit_channel(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._limit_channel(text) FROM PUBLIC;

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
    at := coalesce(at, pg_catalog.now());
    IF bounded AND exact_limit < 1 THEN
        RAISE EXCEPTION 'exact_limit must be a positive number of rows, got %', exact_limit
            USING ERRCODE = 'PQ004';
    END IF;
    IF bounded THEN
        names := ARRAY(SELECT m.queue_name::text FROM pg_catalog.unnest(names) AS u(n)
                       JOIN pgmq.meta m ON m.queue_name::text = u.n);
    END IF;
    -- One pass over the catalogue: the idle queues' rows (the type's columns in order:
    -- zeros and the sequence), and what the others need.
    SELECT coalesce(pg_catalog.array_agg(ROW(
               f.n, 0, NULL, NULL,
               CASE WHEN NOT bounded THEN coalesce(pg_catalog.pg_sequence_last_value(f.seq), 0) END,
               at, 0, NULL,
               CASE WHEN bounded THEN 0 END, CASE WHEN bounded THEN 0 END, NULL,
               CASE WHEN bounded AND limits ? f.n THEN 0 END, '{}'
           )::pgmq.queue_figures ORDER BY f.o) FILTER (WHERE f.idle), '{}'),
           pg_catalog.array_agg(f.seq ORDER BY f.o) FILTER (WHERE f.idle),
           pg_catalog.array_agg(f.n ORDER BY f.o) FILTER (WHERE NOT f.idle),
           pg_catalog.array_agg(f.qtable ORDER BY f.o) FILTER (WHERE NOT f.idle),
           pg_catalog.array_agg(f.seq ORDER BY f.o) FILTER (WHERE NOT f.idle),
           pg_catalog.array_agg(f.spill ORDER BY f.o) FILTER (WHERE NOT f.idle),
           pg_catalog.array_agg((limits ->> f.n)::integer ORDER BY f.o) FILTER (WHERE NOT f.idle)
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
        FOR i IN 1 .. coalesce(pg_catalog.cardinality(answered), 0) LOOP
            answered[i].total_messages := totals[i];
        END LOOP;
        answered := ARRAY(SELECT a FROM pg_catalog.unnest(answered) AS a WHERE a.total_messages IS NOT NULL);
    END IF;
    WHILE first <= coalesce(pg_catalog.cardinality(busy), 0) LOOP
        upto := least(first + chunk - 1, pg_catalog.cardinality(busy));
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
    RETURN QUERY SELECT * FROM pg_catalog.unnest(answered);
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_figures(text[],bigint,jsonb,timestamp with time zone) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_figures(text[],bigint,jsonb,timestamp with time zone) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_figures_counted(names text[], tables text[], seqs oid[], spills boolean[], caps integer[], at timestamp with time zone, bounded boolean)
 RETURNS SETOF pgmq.queue_figures
 LANGUAGE plpgsql
AS $function$
BEGIN
    RETURN QUERY EXECUTE
        'SELECT $1[b.i] AS queue_name, b.len AS queue_length, '
        || 'extract(epoch FROM $5 - b.newest)::integer AS newest_msg_age_sec, '
        || 'extract(epoch FROM $5 - b.oldest)::integer AS oldest_msg_age_sec, '
        || CASE WHEN bounded THEN 'b.total' ELSE 'coalesce(pg_catalog.pg_sequence_last_value($2[b.i]), 0)' END
        || ' AS total_messages, '
        || '$5 AS scrape_time, b.visible AS queue_visible_length, '
        || 'CASE WHEN $3[b.i] THEN pgmq._default_partition_length($1[b.i]) END '
        || 'AS default_partition_length, '
        || 'b.in_flight AS in_flight_length, b.len - b.visible - b.in_flight AS delayed_length, '
        || 'extract(epoch FROM $5 - b.oldest_vt)::integer AS oldest_visible_age_sec, '
        || 'CASE WHEN $4[b.i] IS NOT NULL THEN b.poison END AS poison_length, '
        || '''{}''::text[] AS estimated FROM ('
        || (SELECT pg_catalog.string_agg(pg_catalog.format('SELECT %s, pg_catalog.count(*), pg_catalog.max(enqueued_at), pg_catalog.min(enqueued_at), '
                                     'pg_catalog.count(*) FILTER (WHERE vt <= $5), %s FROM pgmq.%I',
                                     u.i,
                                     CASE WHEN bounded
                                          THEN pg_catalog.format('pg_catalog.count(*) FILTER (WHERE vt > $5 AND read_ct > 0), '
                                                      'pg_catalog.min(vt) FILTER (WHERE vt <= $5), '
                                                      'pg_catalog.count(*) FILTER (WHERE read_ct >= $4[%s]), %s',
                                                      u.i, pgmq._sequence_read_sql(seqs[u.i]))
                                          ELSE 'NULL::bigint, NULL::timestamptz, NULL::bigint, NULL::bigint' END,
                                     u.t), ' UNION ALL ')
            FROM pg_catalog.unnest(tables) WITH ORDINALITY AS u(t, i))
        || ') AS b(i, len, newest, oldest, visible, in_flight, oldest_vt, poison, total)'
    USING names, seqs, spills, caps, at;
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_figures_counted(text[],text[],oid[],boolean[],integer[],timestamp with time zone,boolean) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_figures_counted(text[],text[],oid[],boolean[],integer[],timestamp with time zone,boolean) FROM PUBLIC;

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
        CONTINUE WHEN NOT EXISTS (SELECT 1 FROM pgmq.meta m WHERE m.queue_name::text = queue);
        CONTINUE WHEN (pgmq._claim_filter(queue, coalesce(pgmq._queue_attributes(queue), '{}'::jsonb), 1,
                                          peek => true)).allowed = 0;
        BEGIN
            EXECUTE pg_catalog.format('SELECT pg_catalog.min(vt) FROM pgmq.%I', pgmq.format_table_name(queue, 'q'::text))
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

CREATE OR REPLACE FUNCTION pgmq.celery_release(queue text, msg_ids bigint[], notify boolean DEFAULT true)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
DECLARE
    released integer;
BEGIN
    SELECT pg_catalog.count(*) INTO released FROM pgmq.set_vt(queue, msg_ids, 0);
    IF released > 0 AND notify THEN
        PERFORM pg_catalog.pg_notify('pgmq.q_' || queue || '.INSERT', '');
    END IF;
    RETURN released;
END
$function$
;
COMMENT ON FUNCTION pgmq.celery_release(text,bigint[],boolean) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.celery_release(text,bigint[],boolean) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.celery_send(queue text, msg jsonb, headers jsonb DEFAULT NULL::jsonb, deliver_at timestamp with time zone DEFAULT NULL::timestamp with time zone, notify boolean DEFAULT true)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    sent bigint;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pgmq.meta m WHERE m.queue_name::text = queue) THEN
        RETURN NULL;
    END IF;
    SELECT pgmq.send(queue, msg, headers, deliver_at) INTO sent;
    IF notify THEN
        PERFORM pg_catalog.pg_notify('pgmq.q_' || queue || '.INSERT', '');
    END IF;
    RETURN sent;
END
$function$
;
COMMENT ON FUNCTION pgmq.celery_send(text,jsonb,jsonb,timestamp with time zone,boolean) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.celery_send(text,jsonb,jsonb,timestamp with time zone,boolean) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.notify_queue_listeners()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
DECLARE
    queue text := coalesce(TG_ARGV[0], substring(TG_TABLE_NAME FROM 3));
    -- Transaction-local marker: the first row of a commit decides, the others skip.
    decided text := 'pgmq_notify.t' || TG_RELID;
    throttle integer;
    last_at timestamptz;
BEGIN
    IF pg_catalog.current_setting(decided, true) = 'yes' THEN
        RETURN NULL;
    END IF;
    PERFORM pg_catalog.set_config(decided, 'yes', true);

    SELECT t.throttle_interval_ms, t.last_notified_at INTO throttle, last_at
    FROM pgmq.notify_insert_throttle t
    WHERE t.queue_name::text = queue;

    -- Throttle 0 (or no row) notifies every commit without touching the row, so
    -- concurrent producers never queue up on its lock.
    IF coalesce(throttle, 0) > 0 THEN
        IF pg_catalog.clock_timestamp() - last_at < throttle * interval '1 millisecond' THEN
            RETURN NULL;
        END IF;
        -- Re-checked under the row lock: of two commits racing past the window, one
        -- notifies. The owner's helper writes the row (the inserting role may not).
        IF NOT pgmq._notify_throttle_pass(queue) THEN
            RETURN NULL;
        END IF;
    END IF;

    PERFORM pg_catalog.pg_notify('pgmq.q_' || queue || '.INSERT', NULL);
    RETURN NULL;
END
$function$
;
COMMENT ON FUNCTION pgmq.notify_queue_listeners() IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.notify_queue_listeners() TO PUBLIC;

