-- 0008_attributes_limits_schedules_tasks_workflows_and_roles: attributes limits schedules tasks workflows and roles
-- Frozen when written; never edit a released migration.
-- 0034_browse_messages_is_the_one_name_for (reverse)
-- 0034_browse_messages_is_the_one_name_for: browse_messages is the one name for message browsing
-- Frozen when written; never edit a released migration.
ALTER FUNCTION pgmq._browse_messages(text,boolean,boolean,integer,text,text,jsonb,bigint,bigint,integer) RENAME TO _dashboard_messages;

-- 0033_task_enqueue_through_the_id_router (reverse)
-- 0033_task_enqueue_through_the_id_router: task_enqueue_through_the_id_router
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;

CREATE OR REPLACE FUNCTION pgmq._task_enqueue(queue_name text, msg jsonb, headers jsonb, delay timestamp with time zone, result_id uuid, backend text, task_path text, priority integer, args jsonb, kwargs jsonb, run_after timestamp with time zone, enqueued_at timestamp with time zone, max_attempts integer)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    sent bigint;
BEGIN
    SELECT r.msg_id INTO sent FROM pgmq._queue_ops_route(
        queue_name, 's'::"char", NULL::integer, NULL::integer, delay,
        NULL::bigint[], ARRAY[msg], ARRAY[headers], NULL::jsonb) r;
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


-- 0032_queue_figures_read_by_column_name_oldest (reverse)
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

-- 0031_worker_hide_failed_named_once (reverse)
-- 0031_worker_hide_failed_named_once: worker_hide_failed_named_once
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._hide_failed(text,bigint,double precision,text,integer);
CREATE OR REPLACE FUNCTION pgmq._retry_later(queue_name text, msg_id bigint, seconds double precision, error text, keep integer DEFAULT 20)
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
COMMENT ON FUNCTION pgmq._retry_later(text,bigint,double precision,text,integer) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._retry_later(text,bigint,double precision,text,integer) FROM PUBLIC;


-- 0030_index_builds_give_way_to_queue_ddl (reverse)
-- 0030_index_builds_give_way_to_queue_ddl: index_builds_give_way_to_queue_ddl
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._lock_queue_table(text);
DROP FUNCTION IF EXISTS pgmq._queue_table_lock_key(text);
CREATE OR REPLACE FUNCTION pgmq._install_notify_trigger(queue_name text)
 RETURNS void
 LANGUAGE plpgsql
 SET client_min_messages TO 'warning'
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q');
    trigger_name text := pgmq._notify_trigger_name(queue_name);
BEGIN
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

CREATE OR REPLACE FUNCTION pgmq._remove_notify_trigger(queue_name text)
 RETURNS void
 LANGUAGE plpgsql
 SET client_min_messages TO 'warning'
AS $function$
BEGIN
    EXECUTE format(
        'DROP TRIGGER IF EXISTS %I ON pgmq.%I',
        pgmq._notify_trigger_name(queue_name), pgmq.format_table_name(queue_name, 'q')
    );
END
$function$
;
COMMENT ON FUNCTION pgmq._remove_notify_trigger(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._remove_notify_trigger(text) FROM PUBLIC;


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


-- 0029_queue_attributes_declared_once (reverse)
-- 0029_queue_attributes_declared_once: queue attributes declared once
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._queue_attribute_declaration();
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


-- 0028_one_dead_letter_rule (reverse)
-- 0028_one_dead_letter_rule: one_dead_letter_rule
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._dead_letter_move_sql(text,text);
CREATE OR REPLACE FUNCTION pgmq._dead_letter(queue_name text, msg_id bigint, dead_letter_queue text, error text DEFAULT NULL::text)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    source text := pgmq._require_queue(queue_name);
    v_read_ct integer;
    v_enqueued_at timestamptz;
    v_message jsonb;
    v_headers jsonb;
    new_id bigint;
BEGIN
    PERFORM pgmq.validate_queue_name(dead_letter_queue);
    IF lower(dead_letter_queue) = lower(source) THEN
        RAISE EXCEPTION 'queue "%" cannot be its own dead-letter queue', source
            USING ERRCODE = 'PQ004';
    END IF;
    EXECUTE format(
        'DELETE FROM pgmq.%I WHERE msg_id = $1 RETURNING read_ct, enqueued_at, message, headers',
        pgmq.format_table_name(source, 'q')
    ) INTO v_read_ct, v_enqueued_at, v_message, v_headers USING msg_id;
    IF v_enqueued_at IS NULL THEN
        RETURN NULL;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pgmq.meta m WHERE lower(m.queue_name) = lower(dead_letter_queue)) THEN
        PERFORM pgmq."create"(dead_letter_queue);
    END IF;
    -- The header a read past the queue's max_receive_count writes (sql/25_attributes.sql).
    SELECT s.id INTO new_id
    FROM pgmq.send(
        queue_name => dead_letter_queue,
        msg => v_message,
        headers => pgmq._dead_letter_headers(v_headers, source, msg_id, v_read_ct, v_enqueued_at, error),
        delay => 0
    ) AS s(id);
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
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.message, m.headers
        ), moved AS (
            INSERT INTO pgmq.%2$I (vt, message, headers)
            SELECT clock_timestamp(), x.message,
                   pgmq._dead_letter_headers(x.headers, %3$L, x.msg_id, x.read_ct - $2, x.enqueued_at, NULL)
            FROM dead x ORDER BY x.msg_id
            RETURNING 1
        )
        SELECT count(*) FROM moved
        $q$,
        pgmq.format_table_name(queue_name, 'q'), pgmq.format_table_name(dlq, 'q'),
        pgmq._stored_queue_name(queue_name)
    ) INTO moved USING msg_ids, coalesce(delivered, 0);
    RETURN moved;
END
$function$
;
COMMENT ON FUNCTION pgmq._dead_letter_ids(text,bigint[],integer) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._dead_letter_ids(text,bigint[],integer) FROM PUBLIC;

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


-- 0027_task_statements_planned_once (reverse)
-- 0027_task_statements_planned_once: task statements planned once
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._task_enqueue(text,jsonb,jsonb,timestamp with time zone,uuid,text,text,integer,jsonb,jsonb,timestamp with time zone,timestamp with time zone,integer);
DROP FUNCTION IF EXISTS pgmq._task_finish_and_start(text,uuid,bigint,text,timestamp with time zone,jsonb,jsonb,uuid,timestamp with time zone,text);
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
REVOKE EXECUTE ON FUNCTION pgmq._read_by_priority(text,integer,integer) FROM PUBLIC;


-- 0026_lean_id_statements_and_fresher_marks (reverse)
-- 0026_lean_id_statements_and_fresher_marks: lean_id_statements_and_fresher_marks
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._low_water_mark_for(text);
DROP FUNCTION IF EXISTS pgmq._queue_ops_ids_sql(text,"char");
DROP FUNCTION IF EXISTS pgmq._queue_ops_prepared(text,"char");
DROP FUNCTION IF EXISTS pgmq._queue_ops_route_ids(text,"char",timestamp with time zone,bigint[],jsonb[],jsonb[]);
DROP FUNCTION IF EXISTS pgmq._queue_ops_run_prepared_ids(text,bigint[]);

CREATE OR REPLACE FUNCTION pgmq._queue_ops_one(queue_name text, op "char", msg_id bigint)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
BEGIN
    RETURN EXISTS (SELECT 1 FROM pgmq._queue_ops_route(
        queue_name, op, NULL::integer, NULL::integer, NULL::timestamptz, ARRAY[$3],
        NULL::jsonb[], NULL::jsonb[], NULL::jsonb));
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_one(text,"char",bigint) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_one(text,"char",bigint) FROM PUBLIC;


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
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_sql_for(text,"char",text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.archive(queue_name text, msg_ids bigint[])
 RETURNS SETOF bigint
 LANGUAGE plpgsql
AS $function$
BEGIN
    RETURN QUERY SELECT r.msg_id FROM pgmq._queue_ops_route(
        queue_name, 'a'::"char", NULL::integer, NULL::integer, NULL::timestamptz, msg_ids, NULL::jsonb[],
        NULL::jsonb[], NULL::jsonb) r;
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
    RETURN QUERY SELECT r.msg_id FROM pgmq._queue_ops_route(
        queue_name, 'd'::"char", NULL::integer, NULL::integer, NULL::timestamptz, msg_ids, NULL::jsonb[],
        NULL::jsonb[], NULL::jsonb) r;
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
    RETURN QUERY SELECT r.msg_id FROM pgmq._queue_ops_route(
        queue_name, 's'::"char", NULL::integer, NULL::integer, NULL::timestamptz,
        NULL::bigint[], ARRAY[msg], ARRAY[NULL::jsonb], NULL::jsonb) r;
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
    RETURN QUERY SELECT r.msg_id FROM pgmq._queue_ops_route(
        queue_name, 's'::"char", NULL::integer, NULL::integer, delay,
        NULL::bigint[], ARRAY[msg], ARRAY[headers], NULL::jsonb) r;
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
    RETURN QUERY SELECT r.msg_id FROM pgmq._queue_ops_route(
        queue_name, 's'::"char", NULL::integer, NULL::integer, delay,
        NULL::bigint[], msgs, headers, NULL::jsonb) r;
END
$function$
;
COMMENT ON FUNCTION pgmq.send_batch(text,jsonb[],jsonb[],timestamp with time zone) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.send_batch(text,jsonb[],jsonb[],timestamp with time zone) TO PUBLIC;


-- 0025_prepared_plans_per_session (reverse)
-- 0025_prepared_plans_per_session: prepared plans per session
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._queue_ops_run_prepared(text,integer,integer,bigint[],jsonb,bigint);


-- 0024_pgmq_create_and_name_checks (reverse)
-- 0024_pgmq_create_and_name_checks: pgmq create and name checks
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._message_name_error(text,text);
DROP FUNCTION IF EXISTS pgmq._message_table_name(text,text);
CREATE OR REPLACE FUNCTION pgmq._create_queue(queue_name text, unlogged boolean)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
    PERFORM pgmq.validate_queue_name(queue_name);
    PERFORM pgmq.acquire_queue_lock(queue_name);
    PERFORM pgmq._same_name_queue(queue_name);
    PERFORM pgmq._create_queue_tables(queue_name, unlogged, NULL, NULL);
    INSERT INTO pgmq.meta (queue_name, is_partitioned, is_unlogged)
    VALUES (queue_name, false, unlogged)
    ON CONFLICT DO NOTHING;
END
$function$
;
COMMENT ON FUNCTION pgmq._create_queue(text,boolean) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._create_queue(text,boolean) FROM PUBLIC;

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
REVOKE EXECUTE ON FUNCTION pgmq._low_water_mark(text) FROM PUBLIC;

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
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_route(text,"char",integer,integer,timestamp with time zone,bigint[],jsonb[],jsonb[],jsonb) FROM PUBLIC;

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
    IF (SELECT c.relkind FROM pg_class c WHERE c.oid = to_regclass(format('pgmq.%I', atable))) = 'p' THEN
        RAISE NOTICE 'Table % is already partitioned', atable;
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
        RAISE EXCEPTION 'queue name contains invalid characters: $, ;, --, or '': "%"', queue_name
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


-- 0023_periodic_schedules (reverse)
-- 0023_periodic_schedules: periodic schedules
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._check_time_zone(text);
DROP FUNCTION IF EXISTS pgmq._cron_count(pgmq._cron_spec,text,timestamp with time zone,timestamp with time zone);
DROP FUNCTION IF EXISTS pgmq._cron_day_matches(pgmq._cron_spec,date);
DROP FUNCTION IF EXISTS pgmq._cron_field(text,text,integer,integer,text[]);
DROP FUNCTION IF EXISTS pgmq._cron_next(pgmq._cron_spec,text,timestamp with time zone);
DROP FUNCTION IF EXISTS pgmq._cron_next_elapsed(pgmq._cron_spec,text,timestamp with time zone);
DROP FUNCTION IF EXISTS pgmq._cron_next_local(pgmq._cron_spec,timestamp without time zone);
DROP FUNCTION IF EXISTS pgmq._cron_parse(text);
DROP FUNCTION IF EXISTS pgmq._cron_value(text,text,integer,integer,text[]);
DROP FUNCTION IF EXISTS pgmq._iso_time(timestamp with time zone,text);
DROP FUNCTION IF EXISTS pgmq._local_to_instant(timestamp without time zone,text);
DROP FUNCTION IF EXISTS pgmq._require_schedule(text);
DROP FUNCTION IF EXISTS pgmq._schedule_due_tick(pgmq._cron_spec,text,timestamp with time zone,interval,timestamp with time zone);
DROP FUNCTION IF EXISTS pgmq._utc_offset(timestamp with time zone,text);
DROP FUNCTION IF EXISTS pgmq.create_schedule(text,text,text,jsonb,jsonb,text,interval,boolean);
DROP FUNCTION IF EXISTS pgmq.drop_schedule(text);
DROP FUNCTION IF EXISTS pgmq.enable_schedule(text,boolean);
DROP FUNCTION IF EXISTS pgmq.enqueue_due_schedules(timestamp with time zone);
DROP FUNCTION IF EXISTS pgmq.list_schedules();
DROP FUNCTION IF EXISTS pgmq.next_ticks(text,text,timestamp with time zone,integer);
DROP FUNCTION IF EXISTS pgmq.run_schedule_now(text);
DROP INDEX IF EXISTS pgmq.schedules_due;
DROP INDEX IF EXISTS pgmq.schedules_queue;
-- BY HAND: the new tables and type go (their indexes and constraints with them).
DROP TABLE IF EXISTS pgmq.schedule_ticks;
DROP TABLE IF EXISTS pgmq.schedules;
DROP TYPE IF EXISTS pgmq._cron_spec;

-- 0022_concurrency_and_rate_limits (reverse)
-- 0022_concurrency_and_rate_limits: concurrency and rate limits
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
-- BY HAND: the limit state table goes (and the trigger that uses it first).
DROP TRIGGER IF EXISTS queue_attributes_forget_limits ON pgmq.queue_attributes;
DROP TABLE IF EXISTS pgmq.queue_limit_state;
DROP FUNCTION IF EXISTS pgmq._claim_filter(text,jsonb,integer,boolean,boolean);
DROP FUNCTION IF EXISTS pgmq._claim_limits(text,integer,boolean,boolean);
DROP FUNCTION IF EXISTS pgmq._claim_record(text,bigint[],timestamp with time zone[],integer[],bigint[],boolean);
DROP FUNCTION IF EXISTS pgmq._forget_queue_limits();
DROP FUNCTION IF EXISTS pgmq._limit_channel(text);
DROP FUNCTION IF EXISTS pgmq._sync_queue_limits(text,jsonb);
DROP FUNCTION IF EXISTS pgmq.queue_limits(text);
DROP TRIGGER IF EXISTS queue_attributes_forget_limits ON pgmq.queue_attributes;
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
REVOKE EXECUTE ON FUNCTION pgmq._claim_filter(text,jsonb,integer) FROM PUBLIC;

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
        ('paused', 'true or false')
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
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_attr_sql(text,"char",text,jsonb) FROM PUBLIC;

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
REVOKE EXECUTE ON FUNCTION pgmq._read_grouped(text,integer,integer,text) FROM PUBLIC;

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
GRANT EXECUTE ON FUNCTION pgmq.celery_next_visible(text[]) TO PUBLIC;

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
GRANT EXECUTE ON FUNCTION pgmq.spark_claim(text,text,integer,integer,bigint,bigint) TO PUBLIC;

-- BY HAND (done above): table pgmq.queue_limit_state and its primary key

-- 0021_issue_22_periphery_and_two_roles (reverse)
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

-- 0020_static_sql_core (reverse)
-- 0020_static_sql_core: static SQL core
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._claim_filter(text,jsonb,integer);
DROP FUNCTION IF EXISTS pgmq._low_water_mark(text);
DROP FUNCTION IF EXISTS pgmq._queue_ops_sql_for(text,"char",text);
DROP FUNCTION IF EXISTS pgmq._queue_ops_with_attributes(text,jsonb,"char",integer,integer,timestamp with time zone,bigint[],jsonb[],jsonb[],jsonb,bigint);
DROP FUNCTION IF EXISTS pgmq._send_deduplicated(text,jsonb,timestamp with time zone,jsonb[],jsonb[]);
CREATE OR REPLACE FUNCTION pgmq._drop_queue_ops(queue_name text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF to_regproc('pgmq.' || quote_ident(pgmq.format_table_name(queue_name, '_ops'))) IS NOT NULL THEN
        PERFORM pg_advisory_xact_lock(hashtext('pgmq.queue_ops_route'));
        EXECUTE format(
            'DROP FUNCTION pgmq.%I("char", integer, integer, timestamptz, bigint[], jsonb[], jsonb[], jsonb)',
            pgmq.format_table_name(queue_name, '_ops'));
        PERFORM pgmq._install_queue_route();
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._drop_queue_ops(text) IS NULL;


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


CREATE OR REPLACE FUNCTION pgmq._queue_ops_branches(names text[])
 RETURNS text
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
DECLARE
    n integer := coalesce(cardinality(names), 0);
    half integer := n / 2;
BEGIN
    IF n = 0 THEN
        RETURN '';
    ELSIF n = 1 THEN
        RETURN format(
            $if$
IF lname = %L THEN
    RETURN QUERY SELECT * FROM pgmq.%I(p_op, p_qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond);
    RETURN;
END IF;
$if$,
            names[1], '_ops_' || names[1]);
    END IF;
    RETURN format(E'IF lname < %L COLLATE "C" THEN\n%sELSE\n%sEND IF;\n',
                  names[half + 1],
                  pgmq._queue_ops_branches(names[1:half]),
                  pgmq._queue_ops_branches(names[half + 1:n]));
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_branches(text[]) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_hot(lname text, p_op "char", p_qty integer, p_secs integer, p_vt timestamp with time zone, p_ids bigint[], p_msgs jsonb[], p_headers jsonb[], p_cond jsonb)
 RETURNS SETOF pgmq.message_record
 LANGUAGE plpgsql
AS $function$
-- Written by pgmq._install_queue_route: 0 hot queue(s).
BEGIN

    RAISE EXCEPTION 'pgmq: % is not a hot queue', lname USING ERRCODE = 'PQ004';
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_hot(text,"char",integer,integer,timestamp with time zone,bigint[],jsonb[],jsonb[],jsonb) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_hot_set()
 RETURNS SETOF text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT substr(p.proname, 6)
    FROM pg_proc p
    WHERE p.pronamespace = 'pgmq'::regnamespace AND p.proname LIKE '\_ops\_%'
      AND pg_get_function_identity_arguments(p.oid) = 'p_op "char", p_qty integer, '
          'p_secs integer, p_vt timestamp with time zone, p_ids bigint[], p_msgs jsonb[], '
          'p_headers jsonb[], p_cond jsonb'
    ORDER BY substr(p.proname, 6) COLLATE "C";
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_hot_set() IS NULL;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_prologue(queue_name text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT CASE WHEN dlq IS NULL THEN '' ELSE format(
        'IF (p_op = ''r'' OR p_op = ''p'') THEN PERFORM pgmq._ensure_dead_letter_queue(%L); END IF;',
        dlq) END
    FROM (SELECT pgmq._queue_attributes(queue_name) ->> 'dead_letter_queue' AS dlq) a;
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_prologue(text) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_promote(queue_name text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    room integer := coalesce(nullif(current_setting('pgmq.hot_queues', true), ''), '32')::integer;
BEGIN
    -- One test at a time: SQL does not promise to evaluate an OR's operands in order, and
    -- a lock taken by a test that did not decide would be held to the end of the transaction.
    IF room <= 0 THEN
        RETURN;
    END IF;
    IF to_regproc('pgmq.' || quote_ident(pgmq.format_table_name(queue_name, '_ops'))) IS NOT NULL THEN
        RETURN;
    END IF;
    IF (SELECT count(*) FROM pgmq._queue_ops_hot_set()) >= room THEN
        RETURN;
    END IF;
    IF NOT pg_try_advisory_xact_lock(hashtext('pgmq.queue_' || lower(queue_name))) THEN
        RETURN;
    END IF;
    IF NOT pg_try_advisory_xact_lock(hashtext('pgmq.queue_ops_route')) THEN
        RETURN;
    END IF;
    IF to_regclass('pgmq.' || quote_ident(pgmq.format_table_name(queue_name, 'q'))) IS NULL THEN
        RETURN;
    END IF;
    BEGIN
        PERFORM pgmq._install_queue_ops(queue_name);
    EXCEPTION WHEN insufficient_privilege THEN
        RAISE NOTICE 'pgmq: % may not create functions in schema pgmq; queue % stays on the cold path',
            current_user, queue_name;
    END;
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_promote(text) IS NULL;

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

CREATE OR REPLACE FUNCTION pgmq._queue_ops_sql(queue_name text, op "char", low text DEFAULT '0'::text)
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
        pgmq.format_table_name(queue_name, 'q'),
        pgmq.format_table_name(queue_name, 'a'),
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
            pgmq.format_table_name(queue_name, 'q'), low));
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_sql(text,"char",text) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_text(queue_name text, op "char", low text DEFAULT '0'::text)
 RETURNS text
 LANGUAGE plpgsql
AS $function$
DECLARE
    attrs jsonb := pgmq._queue_attributes(queue_name);
BEGIN
    IF attrs IS NULL THEN
        RETURN pgmq._queue_ops_sql(queue_name, op, low);
    END IF;
    IF (op = 'r' OR op = 'p') AND attrs ? 'dead_letter_queue' THEN
        PERFORM pgmq._ensure_dead_letter_queue(attrs ->> 'dead_letter_queue');
    END IF;
    RETURN pgmq._queue_ops_attr_sql(queue_name, op, low, attrs);
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_text(text,"char",text) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_warmup()
 RETURNS integer
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$ SELECT 3 $function$
;
COMMENT ON FUNCTION pgmq._queue_ops_warmup() IS NULL;

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
    budget integer := qty;
    attrs jsonb := pgmq._queue_attributes(queue_name);
    max_reads integer := (attrs ->> 'max_receive_count')::integer;
    claim text;
    rec pgmq.message_record;
    dead bigint[] := '{}';
BEGIN
    IF qty IS NULL OR qty < 0 THEN
        RAISE EXCEPTION 'qty must be zero or more, got: %', coalesce(qty::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    IF qty = 0 OR (attrs -> 'paused') = 'true'::jsonb THEN
        RETURN;
    END IF;

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
    IF max_reads IS NULL THEN
        RETURN QUERY EXECUTE claim
            USING groups, qty, make_interval(secs => coalesce(vt, 0)), mode,
            -- The most one group can contribute: every other group gives at least one.
            CASE WHEN mode = 'head' THEN 1 ELSE qty - cardinality(groups) + 1 END;
        RETURN;
    END IF;
    FOR rec IN EXECUTE claim
        USING groups, qty, make_interval(secs => coalesce(vt, 0)), mode,
        CASE WHEN mode = 'head' THEN 1 ELSE qty - cardinality(groups) + 1 END
    LOOP
        IF rec.read_ct > max_reads THEN
            dead := dead || rec.msg_id;
        ELSE
            RETURN NEXT rec;
        END IF;
    END LOOP;
    PERFORM pgmq._dead_letter_ids(queue_name, dead, 1);
END
$function$
;
COMMENT ON FUNCTION pgmq._read_grouped(text,integer,integer,text) IS NULL;

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
    PERFORM pgmq._drop_queue_ops(queue_name);
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
    -- A hot queue's access function holds the statements: write it again.
    IF to_regproc('pgmq.' || quote_ident(pgmq.format_table_name(stored, '_ops'))) IS NOT NULL THEN
        PERFORM pg_advisory_xact_lock(hashtext('pgmq.queue_ops_route'));
        PERFORM pgmq._install_queue_ops(stored);
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


-- BY HAND: going back leaves every queue cold: the router written above names no hot
-- queue, and no access function is made until a session promotes a queue again.

-- 0019_fast_dedup_sends_topic_delays (reverse)
-- 0017_fast_dedup_sends_topic_delays: fast dedup sends, topic delays
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._queue_ops_send_block(text);
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
        RETURN QUERY %7$s;
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
        pgmq._queue_ops_text(queue_name, 's'),
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
    IF op = 's' THEN
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

CREATE OR REPLACE FUNCTION pgmq.send_batch_topic(routing_key text, msgs jsonb[])
 RETURNS TABLE(queue_name text, msg_id bigint)
 LANGUAGE sql
AS $function$ SELECT * FROM pgmq.send_batch_topic(routing_key, msgs, NULL::jsonb[], clock_timestamp()); $function$
;
COMMENT ON FUNCTION pgmq.send_batch_topic(text,jsonb[]) IS NULL;

CREATE OR REPLACE FUNCTION pgmq.send_batch_topic(routing_key text, msgs jsonb[], headers jsonb[])
 RETURNS TABLE(queue_name text, msg_id bigint)
 LANGUAGE sql
AS $function$ SELECT * FROM pgmq.send_batch_topic(routing_key, msgs, headers, clock_timestamp()); $function$
;
COMMENT ON FUNCTION pgmq.send_batch_topic(text,jsonb[],jsonb[]) IS NULL;


-- Written by hand: the access functions of hot queues with a deduplication window are
-- written again without the fast send.
SELECT pgmq._install_queue_ops(a.queue_name)
FROM pgmq.queue_attributes a
WHERE coalesce((a.attributes ->> 'deduplication_window')::integer, 0) > 0
  AND to_regproc('pgmq.' || quote_ident(pgmq.format_table_name(a.queue_name, '_ops'))) IS NOT NULL
ORDER BY a.queue_name;

-- 0018_metrics_answers_idle_queues_from_the_catalogue (reverse)
-- 0017_metrics_answers_idle_queues_from_the: metrics answers idle queues from the catalogue
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._metrics_counted(text[],text[],oid[],boolean[]);
DROP FUNCTION IF EXISTS pgmq._metrics_facts(text[]);
DROP FUNCTION IF EXISTS pgmq._metrics_idle(text,oid);
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

CREATE OR REPLACE FUNCTION pgmq.metrics(queue_name text)
 RETURNS pgmq.metrics_result
 LANGUAGE plpgsql
AS $function$
DECLARE
    result pgmq.metrics_result;
BEGIN
    EXECUTE pgmq._metrics_query(ARRAY[pgmq._require_queue(queue_name)]) INTO result;
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
    names text[] := ARRAY(SELECT m.queue_name FROM pgmq.meta m ORDER BY m.queue_name);
    chunk constant integer := 1000;
    first integer := 1;
BEGIN
    WHILE first <= coalesce(cardinality(names), 0) LOOP
        RETURN QUERY EXECUTE pgmq._metrics_query(names[first:first + chunk - 1]);
        first := first + chunk;
    END LOOP;
END
$function$
;
COMMENT ON FUNCTION pgmq.metrics_all() IS NULL;


-- 0017_attributes_for_clients (reverse)
-- 0017_attributes_for_clients: attributes for clients
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._spark_checked_send(text);
DROP FUNCTION IF EXISTS pgmq._spark_send_staged(text,regclass,bigint[]);
CREATE OR REPLACE FUNCTION pgmq._read_by_priority(queue_name text, vt integer, qty integer)
 RETURNS SETOF pgmq.message_record
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(pgmq._require_queue(queue_name), 'q');
BEGIN
    IF vt IS NULL OR vt < 0 OR qty IS NULL OR qty < 1 THEN
        RAISE EXCEPTION 'vt must be 0 or more and qty 1 or more, got vt % and qty %',
            coalesce(vt::text, 'NULL'), coalesce(qty::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    RETURN QUERY EXECUTE format(
        $q$
        WITH claimed AS (
            SELECT msg_id FROM pgmq.%1$I
            WHERE vt <= clock_timestamp()
            ORDER BY pgmq._task_priority(headers) DESC, msg_id
            LIMIT $1
            FOR UPDATE SKIP LOCKED
        ), updated AS (
            UPDATE pgmq.%1$I m
            SET vt = clock_timestamp() + make_interval(secs => $2),
                read_ct = m.read_ct + 1,
                last_read_at = clock_timestamp()
            FROM claimed
            WHERE m.msg_id = claimed.msg_id
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message,
                      m.headers
        )
        SELECT msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers
        FROM updated
        ORDER BY pgmq._task_priority(headers) DESC, msg_id
        $q$,
        qtable
    ) USING qty, vt;
END
$function$
;
COMMENT ON FUNCTION pgmq._read_by_priority(text,integer,integer) IS NULL;

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
    SELECT pgmq.send(queue, msg, headers, coalesce(deliver_at, clock_timestamp())) INTO sent;
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
    held bigint[];
    ids bigint[];
    next_batch bigint;
BEGIN
    PERFORM pgmq._require_queue(queue_name);
    IF vt IS NULL OR vt < 1 THEN
        RAISE EXCEPTION 'vt must be at least 1 second, got %', vt USING ERRCODE = 'PQ004';
    END IF;
    PERFORM pgmq._spark_consumer_lock(queue_name, consumer);
    SELECT coalesce(array_agg(id), '{}') INTO held
    FROM pgmq.spark_stream_batch b, unnest(b.msg_ids) AS id
    WHERE b.queue_name = $1 AND b.consumer = $2 AND b.acked_at IS NULL;

    EXECUTE format(
        $q$
        WITH picked AS (
            SELECT msg_id FROM pgmq.%I
            WHERE vt <= $1 AND ($2::bigint IS NULL OR msg_id <= $2) AND msg_id <> ALL ($3)
            ORDER BY msg_id
            LIMIT $4
            FOR UPDATE SKIP LOCKED
        ), claimed AS (
            UPDATE pgmq.%I q
            SET vt = $1 + make_interval(secs => $5), read_ct = q.read_ct + 1, last_read_at = $1
            FROM picked WHERE q.msg_id = picked.msg_id
            RETURNING q.msg_id
        )
        SELECT array_agg(msg_id ORDER BY msg_id) FROM claimed
        $q$,
        qtable, qtable
    ) INTO ids USING stamp, max_msg_id, held, qty, vt;

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
    EXECUTE format(
        'INSERT INTO pgmq.%I (vt, message, headers) '
        'SELECT vt, message, headers FROM pgmq.%I WHERE attempt = ANY ($1) ORDER BY part, seq',
        pgmq.format_table_name(entry.queue_name, 'q'), stage
    ) USING attempts;
    GET DIAGNOSTICS moved = ROW_COUNT;
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
        'seq bigint GENERATED ALWAYS AS IDENTITY, vt timestamptz NOT NULL, message jsonb, headers jsonb)',
        stage
    );
    INSERT INTO pgmq.spark_stage (stage_table, queue_name, writer_id) VALUES (stage, stored, $2);
    RETURN stage;
END
$function$
;
COMMENT ON FUNCTION pgmq.spark_stage_create(text,text) IS NULL;

-- BY HAND: staging tables get back their NOT NULL vt (a row without one: visible now).
DO $by_hand$
DECLARE
    stage text;
BEGIN
    FOR stage IN SELECT s.stage_table FROM pgmq.spark_stage s ORDER BY 1 LOOP
        IF to_regclass(format('pgmq.%I', stage)) IS NOT NULL THEN
            EXECUTE format('UPDATE pgmq.%I SET vt = now() WHERE vt IS NULL', stage);
            EXECUTE format('ALTER TABLE pgmq.%I ALTER COLUMN vt SET NOT NULL', stage);
        END IF;
    END LOOP;
END
$by_hand$;

-- 0016_cold_path_in_the_router (reverse)
-- 0016_cold_path_in_the_router: Cold path in the router, and metrics_all without name lookups
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
               (SELECT d.objid::regclass::text FROM pg_depend d
                WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass
                  AND d.refobjid = c.oid AND d.deptype IN ('a', 'i')
                  AND d.objid IN (SELECT s.seqrelid FROM pg_sequence s)) AS seq
        FROM unnest(names) WITH ORDINALITY AS u(n, o)
        LEFT JOIN pg_class c
            ON c.relnamespace = 'pgmq'::regnamespace AND c.relname = pgmq.format_table_name(u.n, 'q')
        LEFT JOIN pg_class a
            ON a.relnamespace = 'pgmq'::regnamespace AND a.relname = pgmq.format_table_name(u.n, 'a')
    )
    SELECT 'SELECT m.queue_name, m.queue_length, m.newest_msg_age_sec, m.oldest_msg_age_sec, '
      || 'm.total_messages, m.scrape_time, m.queue_visible_length, m.default_partition_length '
      || 'FROM (' || concat_ws(' UNION ALL ',
        (SELECT format(
             $q$
             SELECT u.n, 0::bigint, NULL::integer, NULL::integer,
                    coalesce(pg_sequence_last_value(u.seq::regclass), 0), now(), 0::bigint, NULL::bigint,
                    u.o
             FROM unnest(%L::text[], %L::text[], %L::integer[]) AS u(n, seq, o)
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

-- 0015_overview_figures_for_the_shown_queues (reverse)
-- 0015_overview_figures_for_the_shown_queues: overview figures for the shown queues only
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._dashboard_idle_queues(text[]);
DROP FUNCTION IF EXISTS pgmq._dashboard_stats_of(text[],bigint,jsonb);
CREATE OR REPLACE FUNCTION pgmq._dashboard_all_stats(exact_limit bigint DEFAULT 50000, max_reads jsonb DEFAULT '{}'::jsonb)
 RETURNS SETOF pgmq._dashboard_stats
 LANGUAGE plpgsql
AS $function$
DECLARE
    name text;
BEGIN
    FOR name IN SELECT m.queue_name FROM pgmq.meta m ORDER BY m.queue_name LOOP
        BEGIN
            RETURN NEXT pgmq._dashboard_queue_stats(
                name, exact_limit, (coalesce(max_reads, '{}') ->> name)::integer
            );
        EXCEPTION
            WHEN undefined_table OR SQLSTATE 'PQ002' THEN
                CONTINUE;
        END;
    END LOOP;
END
$function$
;
COMMENT ON FUNCTION pgmq._dashboard_all_stats(bigint,jsonb) IS NULL;

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

    r.total_messages := coalesce(
        pg_sequence_last_value(pg_get_serial_sequence(qtable::text, 'msg_id')::regclass), 0
    );
    r.estimated := est_names;
    RETURN r;
END
$function$
;
COMMENT ON FUNCTION pgmq._dashboard_queue_stats(text,bigint,integer) IS NULL;

