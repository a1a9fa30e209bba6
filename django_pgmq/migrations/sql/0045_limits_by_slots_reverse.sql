-- 0045_limits_by_slots: limits by slots
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
-- BEGIN HAND limits
-- Back to one state row per limited queue with the ids in flight and the window's claims
-- as arrays, rebuilt from the slot and token rows; the rows go.
ALTER TABLE pgmq.queue_limit_state RENAME TO queue_limit_state_new;
ALTER TABLE pgmq.queue_limit_state_new RENAME CONSTRAINT queue_limit_state_pkey TO queue_limit_state_new_pkey;
CREATE TABLE pgmq.queue_limit_state (
    queue_name text PRIMARY KEY,
    max_in_flight integer,
    rate_count integer,
    rate_seconds double precision,
    in_flight bigint[] NOT NULL DEFAULT '{}',
    handed_out_at timestamptz[] NOT NULL DEFAULT '{}',
    handed_out_n integer[] NOT NULL DEFAULT '{}'
);
INSERT INTO pgmq.queue_limit_state
    (queue_name, max_in_flight, rate_count, rate_seconds, in_flight, handed_out_at, handed_out_n)
SELECT s.queue_name, s.max_in_flight, s.rate_count, s.rate_seconds,
       CASE WHEN s.max_in_flight IS NULL THEN '{}' ELSE coalesce((
           SELECT array_agg(DISTINCT l.msg_id ORDER BY l.msg_id) FROM pgmq.queue_limit_slots l
           WHERE l.queue_name = s.queue_name AND l.kind = 'f' AND l.msg_id IS NOT NULL), '{}') END,
       CASE WHEN s.rate_count IS NULL THEN '{}' ELSE coalesce((
           SELECT array_agg(l.t ORDER BY l.t) FROM pgmq.queue_limit_slots l
           WHERE l.queue_name = s.queue_name AND l.kind = 'r'
             AND l.t > clock_timestamp() - make_interval(secs => s.rate_seconds)), '{}') END,
       CASE WHEN s.rate_count IS NULL THEN '{}' ELSE coalesce((
           SELECT array_agg(1 ORDER BY l.t) FROM pgmq.queue_limit_slots l
           WHERE l.queue_name = s.queue_name AND l.kind = 'r'
             AND l.t > clock_timestamp() - make_interval(secs => s.rate_seconds)), '{}') END
FROM pgmq.queue_limit_state_new s;
DROP TABLE pgmq.queue_limit_slots;
DROP TABLE pgmq.queue_limit_state_new;
-- END HAND limits
DROP FUNCTION IF EXISTS pgmq._claim_filter(text,jsonb,integer,boolean,boolean);
DROP FUNCTION IF EXISTS pgmq._claim_limits(text,integer,boolean,boolean);
DROP FUNCTION IF EXISTS pgmq._claim_record(text,tid[],timestamp with time zone[],tid[],bigint[],boolean,integer[],timestamp with time zone[]);
DROP FUNCTION IF EXISTS pgmq._limit_drop_rows(text,"char",integer);
DROP FUNCTION IF EXISTS pgmq._limit_free(text,bigint[]);
DROP FUNCTION IF EXISTS pgmq._limit_prefill();
DROP FUNCTION IF EXISTS pgmq._limit_take(text,"char",integer,integer,integer,timestamp with time zone,text);
DROP INDEX IF EXISTS pgmq.queue_limit_slots_free;
DROP INDEX IF EXISTS pgmq.queue_limit_slots_key;
DROP INDEX IF EXISTS pgmq.queue_limit_slots_msg;
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

