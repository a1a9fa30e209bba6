-- 0021_issue_22_periphery_and_two_roles: issue 22 periphery and two roles
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._dashboard_count(text,"char",bigint,timestamp with time zone);
DROP FUNCTION IF EXISTS pgmq._dashboard_estimate(text,"char",timestamp with time zone);
DROP FUNCTION IF EXISTS pgmq._dashboard_table(text,"char");
DROP FUNCTION IF EXISTS pgmq._queue_index_name(text,text);
DROP FUNCTION IF EXISTS pgmq._retention_batch(text,integer);
DROP FUNCTION IF EXISTS pgmq._retention_queues(text);
DROP FUNCTION IF EXISTS pgmq._share_queue_with_owner(text);
DROP FUNCTION IF EXISTS pgmq._spark_stage_table(text,boolean);
DROP FUNCTION IF EXISTS pgmq._want_queue_index(text,text);
DROP FUNCTION IF EXISTS pgmq.grant_app_role(name,boolean,regclass[]);
DROP FUNCTION IF EXISTS pgmq.pending_indexes();
DROP FUNCTION IF EXISTS pgmq.redrive(text,jsonb,integer);
DROP FUNCTION IF EXISTS pgmq.revoke_app_role(name,regclass[]);
GRANT EXECUTE ON FUNCTION pgmq._bad_queue_attribute(text,text,jsonb) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._celery_drop_if_unused(text) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._celery_lock_space() TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._celery_session_alive(integer) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._celery_topic_regex(text) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._check_partition_args(text,text,integer,text) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._check_queue_attributes(text,jsonb) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._check_throttle(integer) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._check_topic_queue_arg(text) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._check_topic_text(text,text,text,text) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._checked_message(text,jsonb,jsonb,integer,boolean,boolean) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._claim_filter(text,jsonb,integer) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._create_partition(pgmq.partition_config,numeric,numeric) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._create_queue(text,boolean) TO PUBLIC;

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
END
$function$
;
COMMENT ON FUNCTION pgmq._create_queue_tables(text,boolean,text,text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq._create_queue_tables(text,boolean,text,text) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._dashboard_all_stats(bigint,jsonb) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._dashboard_count(tbl regclass, exact_limit bigint, since timestamp with time zone DEFAULT NULL::timestamp with time zone, OUT n bigint, OUT estimated boolean)
 RETURNS record
 LANGUAGE plpgsql
AS $function$
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
        n := greatest(n, pgmq._dashboard_estimate(tbl, since));
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._dashboard_count(regclass,bigint,timestamp with time zone) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq._dashboard_count(regclass,bigint,timestamp with time zone) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._dashboard_estimate(tbl regclass, since timestamp with time zone DEFAULT NULL::timestamp with time zone)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
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
COMMENT ON FUNCTION pgmq._dashboard_estimate(regclass,timestamp with time zone) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq._dashboard_estimate(regclass,timestamp with time zone) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._dashboard_idle_queues(text[]) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._dashboard_match_batch(text,boolean,integer,text,text,jsonb,bigint,bigint,integer) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._dashboard_match_count(text,boolean,integer,text,text,jsonb) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._dashboard_messages(text,boolean,boolean,integer,text,text,jsonb,bigint,bigint,integer) TO PUBLIC;

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
GRANT EXECUTE ON FUNCTION pgmq._dashboard_queue_stats(text,bigint,integer) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._dashboard_requeue(text,text,bigint[],boolean) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._dashboard_spark_stats(text,interval,interval) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._dashboard_stats_of(text[],bigint,jsonb) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._dashboard_throughput(text,interval,interval,bigint,bigint) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._dead_letter(text,bigint,text,text) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._dead_letter_headers(jsonb,text,bigint,integer,timestamp with time zone,text) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._dead_letter_ids(text,bigint[],integer) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._default_partition(text) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._default_partition_length(text) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._delay_to_vt(integer) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._enable_task_queue(queue_name text)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
DECLARE
    stored text;
    qtable text;
    made_by_xid xid;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pgmq.meta m WHERE lower(m.queue_name) = lower($1)) THEN
        PERFORM pgmq."create"(queue_name);
    END IF;
    stored := pgmq._require_queue(queue_name);
    qtable := pgmq.format_table_name(stored, 'q');
    SELECT c.xmin INTO made_by_xid
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'pgmq' AND c.relname = qtable || '_priority';
    IF made_by_xid IS NOT NULL THEN
        RETURN age(made_by_xid) > 0;  -- 0: made by this transaction
    END IF;
    EXECUTE format(
        'CREATE INDEX %I ON pgmq.%I (pgmq._task_priority(headers) DESC, msg_id)',
        qtable || '_priority',
        qtable
    );
    RETURN false;
END
$function$
;
COMMENT ON FUNCTION pgmq._enable_task_queue(text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq._enable_task_queue(text) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._enforce_retention(only_queue text)
 RETURNS TABLE(queue text, expired bigint, archive_deleted bigint)
 LANGUAGE plpgsql
AS $function$
DECLARE
    batch_size constant integer := 5000;
    q record;
    n bigint;
BEGIN
    IF only_queue IS NOT NULL THEN
        PERFORM pgmq._require_queue(only_queue);
    END IF;
    FOR q IN
        SELECT a.queue_name::text AS name, a.attributes AS attrs
        FROM pgmq.queue_attributes a
        WHERE only_queue IS NULL OR lower(a.queue_name) = lower(only_queue)
        ORDER BY a.queue_name
    LOOP
        queue := q.name;
        expired := 0;
        archive_deleted := 0;
        IF q.attrs ? 'message_retention' THEN
            LOOP
                EXECUTE format(
                    $d$
                    DELETE FROM pgmq.%1$I m WHERE m.msg_id = ANY(ARRAY(
                        SELECT x.msg_id FROM pgmq.%1$I x
                        WHERE x.enqueued_at < clock_timestamp() - make_interval(secs => $1)
                        ORDER BY x.msg_id LIMIT $2 FOR UPDATE SKIP LOCKED))
                    $d$, pgmq.format_table_name(q.name, 'q'))
                USING (q.attrs ->> 'message_retention')::integer, batch_size;
                GET DIAGNOSTICS n = ROW_COUNT;
                expired := expired + n;
                EXIT WHEN n < batch_size;
            END LOOP;
        END IF;
        IF q.attrs ? 'archive_retention' THEN
            LOOP
                EXECUTE format(
                    $d$
                    DELETE FROM pgmq.%1$I a WHERE (a.msg_id, a.archived_at) IN (
                        SELECT x.msg_id, x.archived_at FROM pgmq.%1$I x
                        WHERE x.archived_at < clock_timestamp() - make_interval(secs => $1)
                        ORDER BY x.archived_at LIMIT $2 FOR UPDATE SKIP LOCKED)
                    $d$, pgmq.format_table_name(q.name, 'a'))
                USING (q.attrs ->> 'archive_retention')::integer, batch_size;
                GET DIAGNOSTICS n = ROW_COUNT;
                archive_deleted := archive_deleted + n;
                EXIT WHEN n < batch_size;
            END LOOP;
        END IF;
        IF coalesce((q.attrs ->> 'deduplication_window')::integer, 0) > 0 THEN
            DELETE FROM pgmq.queue_deduplication d
            WHERE d.queue_name = lower(q.name)
              AND d.sent_at < clock_timestamp()
                              - make_interval(secs => (q.attrs ->> 'deduplication_window')::integer);
        END IF;
        IF q.attrs ? 'message_retention' OR q.attrs ? 'archive_retention' THEN
            RETURN NEXT;
        END IF;
    END LOOP;
END
$function$
;
COMMENT ON FUNCTION pgmq._enforce_retention(text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq._enforce_retention(text) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._ensure_dead_letter_queue(text) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._existing_queue(text,text) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._fifo_group(jsonb) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._fit_name(text,text) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._forget_deduplication() TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._install_notify_trigger(text) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._invalid_queue_name(text,text) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._json_int_at_least(jsonb,integer) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._low_water_mark(text) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._maintain_table(pgmq.partition_config) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._metrics_counted(text[],text[],oid[],boolean[]) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._metrics_facts(text[]) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._metrics_idle(text,oid) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._notify_trigger_hash() TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._notify_trigger_name(text) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._partition_arg_error(text,text,text) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._partition_bound(boolean,numeric) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._partition_by_id(text) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._partition_floor(boolean,text,numeric) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._partition_literal(boolean,numeric) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._partition_name(text,boolean,text,numeric) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._partition_next(boolean,text,numeric) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._partition_now(text,boolean) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._partition_position(boolean,text) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._partitions(text,boolean) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._poll(reader text, queue_name text, vt integer, qty integer, extra text, max_poll_seconds integer, poll_interval_ms integer)
 RETURNS SETOF pgmq.message_record
 LANGUAGE plpgsql
AS $function$
DECLARE
    deadline timestamptz := clock_timestamp() + make_interval(secs => coalesce(max_poll_seconds, 0));
    rec pgmq.message_record;
    got boolean;
BEGIN
    IF poll_interval_ms IS NULL OR poll_interval_ms <= 0 THEN
        RAISE EXCEPTION 'poll_interval_ms must be positive, got: %', coalesce(poll_interval_ms::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    LOOP
        got := false;
        FOR rec IN EXECUTE reader USING queue_name, vt, qty, extra LOOP
            got := true;
            RETURN NEXT rec;
        END LOOP;
        EXIT WHEN got OR clock_timestamp() >= deadline;
        PERFORM pg_sleep(least(poll_interval_ms / 1000.0,
                               extract(epoch FROM deadline - clock_timestamp())));
    END LOOP;
END
$function$
;
COMMENT ON FUNCTION pgmq._poll(text,text,integer,integer,text,integer,integer) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq._poll(text,text,integer,integer,text,integer,integer) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._queue_attribute_rules() TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._queue_attributes(text) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._queue_ops_attr_sql(text,"char",text,jsonb) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._queue_ops_one(text,"char",bigint) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._queue_ops_route(text,"char",integer,integer,timestamp with time zone,bigint[],jsonb[],jsonb[],jsonb) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._queue_ops_sql(text,"char",text) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._queue_ops_sql_for(text,"char",text) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._queue_ops_with_attributes(text,jsonb,"char",integer,integer,timestamp with time zone,bigint[],jsonb[],jsonb[],jsonb,bigint) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._read_by_priority(text,integer,integer) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._read_grouped(text,integer,integer,text) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._read_grouped_poll(queue_name text, vt integer, qty integer, max_poll_seconds integer, poll_interval_ms integer, mode text)
 RETURNS SETOF pgmq.message_record
 LANGUAGE sql
AS $function$
    SELECT * FROM pgmq._poll(
        'SELECT * FROM pgmq._read_grouped($1, $2, $3, $4)',
        queue_name, vt, qty, mode, max_poll_seconds, poll_interval_ms);
$function$
;
COMMENT ON FUNCTION pgmq._read_grouped_poll(text,integer,integer,integer,integer,text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq._read_grouped_poll(text,integer,integer,integer,integer,text) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._remove_notify_trigger(text) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._require_queue(text) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._retry_later(text,bigint,double precision,text,integer) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._same_name_queue(text) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._send_checks_sql(jsonb) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._send_deduplicated(text,jsonb,timestamp with time zone,jsonb[],jsonb[]) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._set_vt_seconds(text,bigint[],double precision,boolean) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._spark_checked_send(text) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._spark_consumer_lock(text,text) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._spark_send_staged(text,regclass,bigint[]) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._stored_queue_name(text) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._task_priority(jsonb) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._time_step(text,text) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._topic_queues(text) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._topic_regex(text) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._tune_live_table(text) TO PUBLIC;

GRANT EXECUTE ON FUNCTION pgmq._validate_batch_params(jsonb[],jsonb[]) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.create_fifo_index(queue_name text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q');
BEGIN
    PERFORM pgmq._require_queue(queue_name);
    EXECUTE format(
        'CREATE INDEX IF NOT EXISTS %I ON pgmq.%I (pgmq._fifo_group(headers), msg_id)',
        qtable || '_fifo_idx', qtable
    );
END
$function$
;
COMMENT ON FUNCTION pgmq.create_fifo_index(text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.create_fifo_index(text) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.read_with_poll(queue_name text, vt integer, qty integer, max_poll_seconds integer DEFAULT 5, poll_interval_ms integer DEFAULT 100, conditional jsonb DEFAULT '{}'::jsonb)
 RETURNS SETOF pgmq.message_record
 LANGUAGE sql
AS $function$
    SELECT * FROM pgmq._poll(
        'SELECT * FROM pgmq.read($1, $2, $3, $4::jsonb)',
        queue_name, vt, qty, conditional::text, max_poll_seconds, poll_interval_ms);
$function$
;
COMMENT ON FUNCTION pgmq.read_with_poll(text,integer,integer,integer,integer,jsonb) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.read_with_poll(text,integer,integer,integer,integer,jsonb) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.redrive(dead_letter_queue text, conditional jsonb DEFAULT '{}'::jsonb, max_messages integer DEFAULT NULL::integer)
 RETURNS TABLE(source_queue text, moved bigint)
 LANGUAGE plpgsql
AS $function$
DECLARE
    dlq_table text := pgmq.format_table_name(pgmq._require_queue(dead_letter_queue), 'q');
    source text;
    budget integer := max_messages;
BEGIN
    IF max_messages IS NOT NULL AND max_messages < 0 THEN
        RAISE EXCEPTION 'max_messages must be zero or more, got: %', max_messages
            USING ERRCODE = 'PQ004';
    END IF;
    FOR source IN EXECUTE format(
        $q$
        SELECT DISTINCT m.headers -> 'dead_letter' ->> 'queue' FROM pgmq.%I m
        WHERE jsonb_typeof(m.headers -> 'dead_letter') = 'object'
          AND m.message @> coalesce($1, '{}'::jsonb)
        $q$, dlq_table) USING conditional
    LOOP
        CONTINUE WHEN source IS NULL OR pgmq._stored_queue_name(source) IS NULL;
        EXIT WHEN budget IS NOT NULL AND budget <= 0;
        source_queue := pgmq._stored_queue_name(source);
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
GRANT EXECUTE ON FUNCTION pgmq.set_queue_attributes(text,jsonb) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.spark_stage_abort(stage text)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
DECLARE
    entry pgmq.spark_stage;
BEGIN
    SELECT * INTO entry FROM pgmq.spark_stage s WHERE s.stage_table = stage FOR UPDATE;
    IF NOT FOUND THEN
        RETURN false;
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
GRANT EXECUTE ON FUNCTION pgmq.spark_stage_commit(text,bigint[],bigint) TO PUBLIC;

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
GRANT EXECUTE ON FUNCTION pgmq.spark_stage_create(text,text) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.spark_stage_drop_stale(older_than interval)
 RETURNS integer
 LANGUAGE plpgsql
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
        EXECUTE format('DROP TABLE IF EXISTS pgmq.%I', stale);
        DELETE FROM pgmq.spark_stage s WHERE s.stage_table = stale;
        dropped := dropped + 1;
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

-- BY HAND: the `_`-prefixed helpers are executable by PUBLIC again, as before, by rule.
DO $by_hand$
DECLARE
    fn regprocedure;
BEGIN
    FOR fn IN
        SELECT p.oid::regprocedure FROM pg_proc p
        WHERE p.pronamespace = 'pgmq'::regnamespace AND p.proname LIKE '\_%'
    LOOP
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO PUBLIC', fn);
    END LOOP;
END
$by_hand$;
-- BY HAND: unlogged queues' id sequences are unlogged again, as before.
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
        EXECUTE format('ALTER SEQUENCE %s SET UNLOGGED', seq);
    END LOOP;
END
$by_hand_sequences$;
-- BY HAND: the table of wanted indexes goes.
DROP TABLE pgmq.queue_index_wanted;
