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
