-- 0045_side_tables_written_through_owner: side tables written through owner functions
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
-- BEGIN HAND side
ALTER TABLE pgmq.spark_stage DROP COLUMN IF EXISTS writer_role;
ALTER TABLE pgmq.celery_queue DROP COLUMN IF EXISTS created_by_celery;
-- END HAND side
ALTER TABLE pgmq.app_role DROP CONSTRAINT IF EXISTS app_role_pkey;
DROP FUNCTION IF EXISTS pgmq._apply_queue_attributes(text,jsonb,text);
DROP FUNCTION IF EXISTS pgmq._celery_cleanup_queues();
DROP FUNCTION IF EXISTS pgmq._celery_own_session(integer);
DROP FUNCTION IF EXISTS pgmq._dedup_claim(text,text[],bigint[]);
DROP FUNCTION IF EXISTS pgmq._dedup_expire(text);
DROP FUNCTION IF EXISTS pgmq._dedup_record(text,text[],bigint[]);
DROP FUNCTION IF EXISTS pgmq._dedup_window(text);
DROP FUNCTION IF EXISTS pgmq._notify_throttle_pass(text);
DROP FUNCTION IF EXISTS pgmq._rearm_notify(text);
DROP FUNCTION IF EXISTS pgmq._require_app_role();
DROP FUNCTION IF EXISTS pgmq._require_privilege(text);
DROP FUNCTION IF EXISTS pgmq._schedule_claim_due(timestamp with time zone);
DROP FUNCTION IF EXISTS pgmq._schedule_tick_done(text,timestamp with time zone,bigint,text);
DROP FUNCTION IF EXISTS pgmq._spark_batch_ack(text,text,bigint);
DROP FUNCTION IF EXISTS pgmq._spark_batch_record(text,text,bigint,bigint[],timestamp with time zone);
DROP FUNCTION IF EXISTS pgmq._spark_export_run(text,text,double precision);
DROP FUNCTION IF EXISTS pgmq._spark_export_set_stage(uuid,text,bigint,bigint);
DROP FUNCTION IF EXISTS pgmq._spark_stage_entry(text);
DROP FUNCTION IF EXISTS pgmq._spark_stage_finish(text,bigint,boolean);
DROP FUNCTION IF EXISTS pgmq._spark_stage_lock(text);
DROP FUNCTION IF EXISTS pgmq._spark_stage_make(text,text,name);
DROP FUNCTION IF EXISTS pgmq._spark_stats_upsert(text,timestamp with time zone,bigint,double precision,double precision,double precision,bigint);
DROP FUNCTION IF EXISTS pgmq.celery_delete_queue(text);
DROP FUNCTION IF EXISTS pgmq.celery_enable_priorities(text);
DROP FUNCTION IF EXISTS pgmq.set_schedule_origin(text[],text);
CREATE OR REPLACE FUNCTION pgmq._celery_drop_if_unused(queue text)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
DECLARE
    q pgmq.celery_queue;
BEGIN
    PERFORM pgmq.acquire_queue_lock(queue);
    SELECT * INTO q FROM pgmq.celery_queue c WHERE c.queue_name = queue FOR UPDATE;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    DELETE FROM pgmq.celery_consumer k
    WHERE k.queue_name = queue AND NOT pgmq._celery_session_alive(k.session_id);
    IF EXISTS (SELECT 1 FROM pgmq.celery_consumer k WHERE k.queue_name = queue) THEN
        RETURN false;
    END IF;
    IF q.auto_delete AND q.ever_consumed
       OR q.expires IS NOT NULL AND q.last_used_at + q.expires < now() THEN
        PERFORM pgmq.drop_queue(queue);
        RETURN true;
    END IF;
    RETURN false;
END
$function$
;
COMMENT ON FUNCTION pgmq._celery_drop_if_unused(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._celery_drop_if_unused(text) FROM PUBLIC;

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

CREATE OR REPLACE FUNCTION pgmq.bind_topic(pattern text, queue_name text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
    PERFORM pgmq.validate_topic_pattern(pattern);
    PERFORM pgmq._check_topic_queue_arg(queue_name);
    INSERT INTO pgmq.topic_bindings (pattern, queue_name)
    VALUES (pattern, pgmq._existing_queue(queue_name, 'the queue'))
    ON CONFLICT ON CONSTRAINT topic_bindings_unique_pattern_queue DO NOTHING;
END
$function$
;
COMMENT ON FUNCTION pgmq.bind_topic(text,text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.bind_topic(text,text) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.celery_bind(exchange text, exchange_type text, routing_key text, queue text)
 RETURNS void
 LANGUAGE sql
AS $function$
    INSERT INTO pgmq.celery_binding (exchange, exchange_type, routing_key, queue_name, key_regex)
    VALUES ($1, $2, $3, $4, CASE WHEN $2 = 'topic' THEN pgmq._celery_topic_regex($3) END)
    ON CONFLICT (exchange, queue_name, routing_key) DO UPDATE
    SET exchange_type = EXCLUDED.exchange_type, key_regex = EXCLUDED.key_regex;
$function$
;
COMMENT ON FUNCTION pgmq.celery_bind(text,text,text,text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.celery_bind(text,text,text,text) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.celery_cancel(queue text, session integer)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
BEGIN
    DELETE FROM pgmq.celery_consumer k WHERE k.queue_name = queue AND k.session_id = session;
    UPDATE pgmq.celery_queue c SET last_used_at = now() WHERE c.queue_name = queue;
    PERFORM set_config('lock_timeout', '2s', true);
    BEGIN
        RETURN pgmq._celery_drop_if_unused(queue);
    EXCEPTION WHEN lock_not_available THEN
        RETURN false;  -- busy: the periodic cleanup will drop it
    END;
END
$function$
;
COMMENT ON FUNCTION pgmq.celery_cancel(text,integer) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.celery_cancel(text,integer) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.celery_cleanup()
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
DECLARE
    q record;
    dropped integer := 0;
BEGIN
    IF NOT pg_try_advisory_xact_lock(pgmq._celery_lock_space(), 0) THEN
        RETURN 0;
    END IF;
    PERFORM set_config('lock_timeout', '1s', true);
    DELETE FROM pgmq.celery_consumer k WHERE NOT pgmq._celery_session_alive(k.session_id);
    FOR q IN
        SELECT c.queue_name FROM pgmq.celery_queue c
        WHERE NOT EXISTS (SELECT 1 FROM pgmq.celery_consumer k WHERE k.queue_name = c.queue_name)
          AND (c.auto_delete AND c.ever_consumed
               OR c.expires IS NOT NULL AND c.last_used_at + c.expires < now())
        ORDER BY c.queue_name
    LOOP
        BEGIN
            IF pgmq._celery_drop_if_unused(q.queue_name) THEN
                dropped := dropped + 1;
            END IF;
        EXCEPTION WHEN lock_not_available OR undefined_table THEN
            NULL;  -- in use right now, or dropped by someone else; next time
        END;
    END LOOP;
    FOR q IN
        SELECT c.queue_name, c.message_ttl FROM pgmq.celery_queue c
        WHERE c.message_ttl IS NOT NULL ORDER BY c.queue_name
    LOOP
        BEGIN
            EXECUTE format('DELETE FROM pgmq.%I WHERE enqueued_at < clock_timestamp() - $1',
                           pgmq.format_table_name(q.queue_name, 'q'))
                USING q.message_ttl;
        EXCEPTION WHEN lock_not_available OR undefined_table THEN
            NULL;  -- busy, or dropped since the loop started
        END;
    END LOOP;
    RETURN dropped;
END
$function$
;
COMMENT ON FUNCTION pgmq.celery_cleanup() IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.celery_cleanup() TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.celery_consume(queue text, session integer)
 RETURNS void
 LANGUAGE sql
AS $function$
    INSERT INTO pgmq.celery_consumer (queue_name, session_id)
    SELECT c.queue_name, $2 FROM pgmq.celery_queue c WHERE c.queue_name = $1
    ON CONFLICT DO NOTHING;
    UPDATE pgmq.celery_queue c SET ever_consumed = true, last_used_at = now()
    WHERE c.queue_name = $1;
$function$
;
COMMENT ON FUNCTION pgmq.celery_consume(text,integer) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.celery_consume(text,integer) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.celery_declare_queue(queue text, original_name text, durable boolean DEFAULT true, is_auto_delete boolean DEFAULT false, expires_ms bigint DEFAULT NULL::bigint, ttl_ms bigint DEFAULT NULL::bigint)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF expires_ms IS NOT NULL AND expires_ms <= 0 OR ttl_ms IS NOT NULL AND ttl_ms < 0 THEN
        RAISE EXCEPTION 'queue "%": x-expires must be positive and x-message-ttl not negative',
            queue USING ERRCODE = 'PQ004';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pgmq.meta m WHERE m.queue_name = queue) THEN
        IF durable THEN
            PERFORM pgmq."create"(queue);
        ELSE
            PERFORM pgmq.create_unlogged(queue);
        END IF;
    END IF;
    INSERT INTO pgmq.celery_queue AS c (queue_name, celery_name, auto_delete, expires, message_ttl)
    VALUES (queue, original_name, is_auto_delete,
            make_interval(secs => expires_ms / 1000.0), make_interval(secs => ttl_ms / 1000.0))
    ON CONFLICT (queue_name) DO UPDATE
    SET celery_name = EXCLUDED.celery_name,
        auto_delete = EXCLUDED.auto_delete,
        expires = EXCLUDED.expires,
        message_ttl = EXCLUDED.message_ttl,
        last_used_at = now(),
        -- A redeclared auto-delete queue without live consumers starts afresh.
        ever_consumed = c.ever_consumed AND EXISTS (
            SELECT 1 FROM pgmq.celery_consumer k
            WHERE k.queue_name = c.queue_name AND pgmq._celery_session_alive(k.session_id));
END
$function$
;
COMMENT ON FUNCTION pgmq.celery_declare_queue(text,text,boolean,boolean,bigint,bigint) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.celery_declare_queue(text,text,boolean,boolean,bigint,bigint) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.celery_delete_exchange(exchange text)
 RETURNS void
 LANGUAGE sql
AS $function$
    DELETE FROM pgmq.celery_binding b WHERE b.exchange = $1;
$function$
;
COMMENT ON FUNCTION pgmq.celery_delete_exchange(text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.celery_delete_exchange(text) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.celery_unbind(exchange text, routing_key text, queue text)
 RETURNS void
 LANGUAGE sql
AS $function$
    DELETE FROM pgmq.celery_binding b
    WHERE b.exchange = $1 AND b.routing_key = $2 AND b.queue_name = $3;
$function$
;
COMMENT ON FUNCTION pgmq.celery_unbind(text,text,text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.celery_unbind(text,text,text) TO PUBLIC;

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
GRANT EXECUTE ON FUNCTION pgmq.create_schedule(text,text,text,jsonb,jsonb,text,interval,boolean) TO PUBLIC;

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
GRANT EXECUTE ON FUNCTION pgmq.drop_schedule(text) TO PUBLIC;

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
GRANT EXECUTE ON FUNCTION pgmq.enable_schedule(text,boolean) TO PUBLIC;

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
GRANT EXECUTE ON FUNCTION pgmq.enqueue_due_schedules(timestamp with time zone) TO PUBLIC;

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
    IF current_setting(decided, true) = 'yes' THEN
        RETURN NULL;
    END IF;
    PERFORM set_config(decided, 'yes', true);

    SELECT t.throttle_interval_ms, t.last_notified_at INTO throttle, last_at
    FROM pgmq.notify_insert_throttle t
    WHERE t.queue_name = queue;

    -- Throttle 0 (or no row) notifies every commit without touching the row, so
    -- concurrent producers never queue up on its lock.
    IF coalesce(throttle, 0) > 0 THEN
        IF clock_timestamp() - last_at < throttle * interval '1 millisecond' THEN
            RETURN NULL;
        END IF;
        -- Re-checked under the row lock: of two commits racing past the window, one notifies.
        UPDATE pgmq.notify_insert_throttle t
        SET last_notified_at = clock_timestamp()
        WHERE t.queue_name = queue
          AND clock_timestamp() - t.last_notified_at >= t.throttle_interval_ms * interval '1 millisecond';
        IF NOT FOUND THEN
            RETURN NULL;
        END IF;
    END IF;

    PERFORM pg_notify('pgmq.q_' || queue || '.INSERT', NULL);
    RETURN NULL;
END
$function$
;
COMMENT ON FUNCTION pgmq.notify_queue_listeners() IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.notify_queue_listeners() TO PUBLIC;

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

CREATE OR REPLACE FUNCTION pgmq.spark_ack(queue_name text, consumer text, upto_batch bigint, mode text)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
DECLARE
    ids bigint[];
    batches integer;
    last_acked bigint;
BEGIN
    IF mode IS NULL OR mode NOT IN ('archive', 'delete', 'none') THEN
        RAISE EXCEPTION 'ack must be archive, delete or none, got %', coalesce(mode, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    PERFORM pgmq._spark_consumer_lock(queue_name, consumer);
    SELECT array_agg(id), count(DISTINCT b.batch) INTO ids, batches
    FROM pgmq.spark_stream_batch b, unnest(b.msg_ids) AS id
    WHERE b.queue_name = $1 AND b.consumer = $2 AND b.batch <= upto_batch AND b.acked_at IS NULL;
    IF ids IS NULL THEN
        RETURN 0;
    END IF;
    IF mode = 'archive' THEN
        PERFORM count(*) FROM pgmq.archive(queue_name, ids);
    ELSIF mode = 'delete' THEN
        PERFORM count(*) FROM pgmq.delete(queue_name, ids);
    END IF;
    UPDATE pgmq.spark_stream_batch b SET acked_at = clock_timestamp()
    WHERE b.queue_name = $1 AND b.consumer = $2 AND b.batch <= upto_batch AND b.acked_at IS NULL;
    SELECT max(b.batch) INTO last_acked FROM pgmq.spark_stream_batch b
    WHERE b.queue_name = $1 AND b.consumer = $2 AND b.acked_at IS NOT NULL;
    DELETE FROM pgmq.spark_stream_batch b
    WHERE b.queue_name = $1 AND b.consumer = $2 AND b.acked_at IS NOT NULL AND b.batch < last_acked;
    RETURN batches;
END
$function$
;
COMMENT ON FUNCTION pgmq.spark_ack(text,text,bigint,text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.spark_ack(text,text,bigint,text) TO PUBLIC;

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

CREATE OR REPLACE FUNCTION pgmq.unbind_topic(pattern text, queue_name text)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF pattern IS NULL OR pattern = '' THEN
        RAISE EXCEPTION 'pattern cannot be NULL or empty' USING ERRCODE = 'PQ004';
    END IF;
    PERFORM pgmq._check_topic_queue_arg(queue_name);
    DELETE FROM pgmq.topic_bindings b
    WHERE b.pattern = $1 AND lower(b.queue_name) = lower($2);
    RETURN FOUND;
END
$function$
;
COMMENT ON FUNCTION pgmq.unbind_topic(text,text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.unbind_topic(text,text) TO PUBLIC;

-- BY HAND: index pgmq.app_role_pkey
-- BY HAND: table pgmq.app_role
-- BY HAND: table pgmq.celery_queue
-- BY HAND: table pgmq.spark_stage
