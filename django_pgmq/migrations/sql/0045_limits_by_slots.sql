-- 0045_limits_by_slots: limits by slots
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
-- BEGIN HAND limits
-- Limits by slots (sql/26_limits.sql): the state row keeps the limits and how many slot
-- and token rows exist; the ids in flight and the window's claims become rows of
-- pgmq.queue_limit_slots (its indexes are made below, with the others): a slot for each
-- id of the old list still in flight, free slots up to min(max_in_flight, 1024), a used
-- token per message of the window's claims, free tokens up to min(count, 1024).
ALTER TABLE pgmq.queue_limit_state RENAME TO queue_limit_state_old;
ALTER TABLE pgmq.queue_limit_state_old RENAME CONSTRAINT queue_limit_state_pkey TO queue_limit_state_old_pkey;
CREATE TABLE pgmq.queue_limit_state (
    queue_name text PRIMARY KEY,
    max_in_flight integer,
    rate_count integer,
    rate_seconds double precision,
    slots_made integer NOT NULL DEFAULT 0,
    tokens_made integer NOT NULL DEFAULT 0
);
CREATE TABLE pgmq.queue_limit_slots (
    queue_name text NOT NULL,
    kind "char" NOT NULL,
    slot integer NOT NULL,
    t timestamptz NOT NULL DEFAULT '-infinity',
    msg_id bigint,
    read_ct integer
);
DO $hand_limits$
DECLARE
    r record;
    made integer;
    tokens integer;
BEGIN
    FOR r IN SELECT o.* FROM pgmq.queue_limit_state_old o
             WHERE EXISTS (SELECT 1 FROM pgmq.meta m WHERE lower(m.queue_name::text) = o.queue_name)
    LOOP
        made := 0;
        tokens := 0;
        IF r.max_in_flight IS NOT NULL THEN
            EXECUTE format(
                'INSERT INTO pgmq.queue_limit_slots (queue_name, kind, slot, t, msg_id, read_ct) '
                'SELECT $1, ''f'', row_number() OVER (ORDER BY q.msg_id), q.vt, q.msg_id, q.read_ct '
                'FROM pgmq.%I q WHERE q.msg_id = ANY ($2) AND q.vt > clock_timestamp()',
                pgmq.format_table_name(r.queue_name, 'q')) USING r.queue_name, r.in_flight;
            GET DIAGNOSTICS made = ROW_COUNT;
            INSERT INTO pgmq.queue_limit_slots (queue_name, kind, slot)
            SELECT r.queue_name, 'f', g FROM generate_series(made + 1, least(r.max_in_flight, 1024)) g;
            made := greatest(made, least(r.max_in_flight, 1024));
        END IF;
        IF r.rate_count IS NOT NULL THEN
            INSERT INTO pgmq.queue_limit_slots (queue_name, kind, slot, t)
            SELECT r.queue_name, 'r', row_number() OVER (ORDER BY h.t), h.t
            FROM unnest(r.handed_out_at, r.handed_out_n) AS h(t, n), generate_series(1, h.n)
            WHERE h.t > clock_timestamp() - make_interval(secs => r.rate_seconds);
            GET DIAGNOSTICS tokens = ROW_COUNT;
            INSERT INTO pgmq.queue_limit_slots (queue_name, kind, slot)
            SELECT r.queue_name, 'r', g FROM generate_series(tokens + 1, least(r.rate_count, 1024)) g;
            tokens := greatest(tokens, least(r.rate_count, 1024));
        END IF;
        INSERT INTO pgmq.queue_limit_state
            (queue_name, max_in_flight, rate_count, rate_seconds, slots_made, tokens_made)
        VALUES (r.queue_name, r.max_in_flight, r.rate_count, r.rate_seconds, made, tokens);
    END LOOP;
END
$hand_limits$;
DROP TABLE pgmq.queue_limit_state_old;
-- END HAND limits
DROP FUNCTION IF EXISTS pgmq._claim_filter(text,jsonb,integer,boolean,boolean);
DROP FUNCTION IF EXISTS pgmq._claim_limits(text,integer,boolean,boolean);
DROP FUNCTION IF EXISTS pgmq._claim_record(text,bigint[],timestamp with time zone[],integer[],bigint[],boolean);
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

CREATE OR REPLACE FUNCTION pgmq._claim_limits(queue_name text, qty integer, pops boolean, take_lock boolean, OUT allowed integer, OUT slots tid[], OUT tokens tid[], OUT max_in_flight integer, OUT in_flight integer, OUT rate_count integer, OUT rate_seconds double precision, OUT handed_out integer, OUT next_free_at timestamp with time zone)
 RETURNS record
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    lq text := pg_catalog.lower(queue_name);
    s pgmq.queue_limit_state;
    qtable text;
    now_ timestamptz := pg_catalog.clock_timestamp();
    window_start timestamptz;
    free_ integer;
BEGIN
    allowed := qty;
    SELECT * INTO s FROM pgmq.queue_limit_state l WHERE l.queue_name = lq;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    qtable := pgmq.format_table_name(queue_name, 'q');
    max_in_flight := s.max_in_flight;
    rate_count := s.rate_count;
    rate_seconds := s.rate_seconds;
    IF s.rate_count IS NOT NULL THEN
        window_start := now_ - pg_catalog.make_interval(secs => s.rate_seconds);
    END IF;
    IF take_lock THEN
        IF s.rate_count IS NOT NULL AND allowed IS DISTINCT FROM 0 THEN
            tokens := pgmq._limit_take(lq, 'r', allowed, s.rate_count, s.tokens_made, window_start, qtable);
            allowed := pg_catalog.cardinality(tokens);
        END IF;
        IF s.max_in_flight IS NOT NULL AND NOT pops AND allowed IS DISTINCT FROM 0 THEN
            slots := pgmq._limit_take(lq, 'f', allowed, s.max_in_flight, s.slots_made, now_, qtable);
            allowed := pg_catalog.cardinality(slots);
        END IF;
        IF s.rate_count IS NOT NULL AND tokens IS NULL THEN
            tokens := '{}';
        END IF;
        IF s.max_in_flight IS NOT NULL AND NOT pops AND slots IS NULL THEN
            slots := '{}';
        END IF;
        RETURN;
    END IF;

    -- A look: nothing taken.
    IF s.rate_count IS NOT NULL THEN
        handed_out := (SELECT pg_catalog.count(*) FROM pgmq.queue_limit_slots l
                       WHERE l.queue_name = lq AND l.kind = 'r' AND l.t > window_start);
        IF EXISTS (SELECT 1 FROM pgmq.queue_limit_slots l WHERE l.queue_name = lq AND l.kind = 'r'
                   AND l.slot > s.rate_count AND l.t > window_start) THEN
            free_ := 0;
        ELSE
            free_ := GREATEST(s.rate_count - s.tokens_made, 0)
                     + (SELECT pg_catalog.count(*) FROM (
                            SELECT 1 FROM pgmq.queue_limit_slots l
                            WHERE l.queue_name = lq AND l.kind = 'r' AND l.t <= window_start
                              AND l.slot <= s.rate_count
                            LIMIT allowed) x);
        END IF;
        allowed := LEAST(allowed, free_);
        IF free_ = 0 THEN
            next_free_at := (SELECT pg_catalog.min(l.t) FROM pgmq.queue_limit_slots l
                             WHERE l.queue_name = lq AND l.kind = 'r' AND l.t > window_start)
                            + pg_catalog.make_interval(secs => s.rate_seconds);
        END IF;
    END IF;
    IF s.max_in_flight IS NOT NULL AND (qty IS NULL OR NOT pops) THEN
        IF qty IS NULL THEN
            -- Counted in full (metrics): taken is t in the future, or passed while the
            -- message is still in flight under the same read (a heartbeat).
            EXECUTE pg_catalog.format(
                'SELECT pg_catalog.count(*) FROM pgmq.queue_limit_slots l '
                'WHERE l.queue_name = $1 AND l.kind = ''f'' AND l.msg_id IS NOT NULL '
                '  AND (l.t > $2 OR EXISTS (SELECT 1 FROM pgmq.%I q WHERE q.msg_id = l.msg_id '
                '       AND q.read_ct = l.read_ct AND q.vt > $2))',
                qtable) INTO in_flight USING lq, now_;
        END IF;
        IF NOT pops THEN
            IF EXISTS (SELECT 1 FROM pgmq.queue_limit_slots l WHERE l.queue_name = lq AND l.kind = 'f'
                       AND l.slot > s.max_in_flight AND l.t > now_) THEN
                free_ := 0;
            ELSIF qty IS NULL THEN
                free_ := GREATEST(s.max_in_flight - in_flight, 0);
            ELSE
                -- Enough to answer: at most qty free slots counted (no heartbeat check).
                free_ := GREATEST(s.max_in_flight - s.slots_made, 0)
                         + (SELECT pg_catalog.count(*) FROM (
                                SELECT 1 FROM pgmq.queue_limit_slots l
                                WHERE l.queue_name = lq AND l.kind = 'f' AND l.t <= now_
                                  AND l.slot <= s.max_in_flight
                                LIMIT qty) x);
            END IF;
            allowed := LEAST(allowed, free_);
            IF free_ = 0 THEN
                next_free_at := GREATEST(next_free_at, (
                    SELECT pg_catalog.min(l.t) FROM pgmq.queue_limit_slots l
                    WHERE l.queue_name = lq AND l.kind = 'f' AND l.t > now_));
            END IF;
        END IF;
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._claim_limits(text,integer,boolean,boolean) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._claim_limits(text,integer,boolean,boolean) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._claim_record(queue_name text, held tid[], stamps timestamp with time zone[], counts tid[], claimed bigint[], pops boolean DEFAULT false, claimed_read_cts integer[] DEFAULT NULL::integer[], claimed_vts timestamp with time zone[] DEFAULT NULL::timestamp with time zone[])
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    lq text := pg_catalog.lower(queue_name);
    n integer := coalesce(pg_catalog.cardinality(claimed), 0);
    s pgmq.queue_limit_state;
    ids bigint[];
    rcs integer[];
    vts timestamptz[];
BEGIN
    IF n = 0 THEN
        RETURN;
    END IF;
    SELECT * INTO s FROM pgmq.queue_limit_state l WHERE l.queue_name = lq;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    -- Each row by its ctid (a plan that cannot turn into a scan of the queue's rows,
    -- whatever the table's statistics); the other conditions check it is a free row of
    -- this queue.
    IF counts IS NOT NULL AND s.rate_count IS NOT NULL THEN
        UPDATE pgmq.queue_limit_slots l SET t = pg_catalog.clock_timestamp()
        WHERE l.ctid = ANY (counts[1:n]) AND l.queue_name = lq AND l.kind = 'r'
          AND l.slot <= s.rate_count
          AND l.t <= pg_catalog.clock_timestamp() - pg_catalog.make_interval(secs => s.rate_seconds);
    END IF;
    IF held IS NOT NULL AND NOT pops AND s.max_in_flight IS NOT NULL
       AND pg_catalog.cardinality(claimed_read_cts) = n AND pg_catalog.cardinality(claimed_vts) = n THEN
        -- The claim's own rows (the router's): a slot whose message is not in flight
        -- under that read is taken again after its t passes (pgmq._limit_take checks).
        UPDATE pgmq.queue_limit_slots l
        SET t = claimed_vts[x.i], msg_id = claimed[x.i], read_ct = claimed_read_cts[x.i]
        FROM (SELECT h.tid, h.i FROM ROWS FROM (pg_catalog.unnest(held[1:n])) WITH ORDINALITY AS h(tid, i)) x
        WHERE l.ctid = ANY (held[1:n]) AND l.ctid = x.tid AND l.queue_name = lq AND l.kind = 'f'
          AND l.slot <= s.max_in_flight AND l.t <= pg_catalog.clock_timestamp()
          AND claimed_vts[x.i] > pg_catalog.clock_timestamp() AND claimed_read_cts[x.i] > 0;
    ELSIF held IS NOT NULL AND NOT pops AND s.max_in_flight IS NOT NULL THEN
        EXECUTE pg_catalog.format(
            'SELECT pg_catalog.array_agg(q.msg_id ORDER BY q.msg_id), '
            '       pg_catalog.array_agg(q.read_ct ORDER BY q.msg_id), '
            '       pg_catalog.array_agg(q.vt ORDER BY q.msg_id) '
            'FROM pgmq.%I q WHERE q.msg_id = ANY ($1) AND q.read_ct > 0 '
            '  AND q.vt > pg_catalog.clock_timestamp()',
            pgmq.format_table_name(queue_name, 'q'))
        INTO ids, rcs, vts USING claimed;
        FOR i IN 1 .. LEAST(coalesce(pg_catalog.cardinality(ids), 0), pg_catalog.cardinality(held)) LOOP
            UPDATE pgmq.queue_limit_slots l SET t = vts[i], msg_id = ids[i], read_ct = rcs[i]
            WHERE l.ctid = held[i] AND l.queue_name = lq AND l.kind = 'f'
              AND l.slot <= s.max_in_flight AND l.t <= pg_catalog.clock_timestamp();
        END LOOP;
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._claim_record(text,tid[],timestamp with time zone[],tid[],bigint[],boolean,integer[],timestamp with time zone[]) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._claim_record(text,tid[],timestamp with time zone[],tid[],bigint[],boolean,integer[],timestamp with time zone[]) FROM PUBLIC;

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
    IF pgmq._queue_attributes(source) ? 'max_in_flight' THEN
        -- Its max_in_flight slot frees now, not when its vt passes (sql/26_limits.sql).
        PERFORM pgmq._limit_free(source, ARRAY[msg_id]);
    END IF;
    RETURN new_id;
END
$function$
;
COMMENT ON FUNCTION pgmq._dead_letter(text,bigint,text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._dead_letter(text,bigint,text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._forget_queue_limits()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    DELETE FROM pgmq.queue_limit_state s WHERE s.queue_name = pg_catalog.lower(OLD.queue_name::text);
    -- Rows a claim in progress holds stay (no wait); a limit set again reuses them.
    DELETE FROM pgmq.queue_limit_slots l
    WHERE (l.queue_name, l.kind, l.slot) IN (
        SELECT x.queue_name, x.kind, x.slot FROM pgmq.queue_limit_slots x
        WHERE x.queue_name = pg_catalog.lower(OLD.queue_name::text)
        FOR UPDATE SKIP LOCKED);
    RETURN OLD;
END
$function$
;
COMMENT ON FUNCTION pgmq._forget_queue_limits() IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._forget_queue_limits() FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._limit_drop_rows(lq text, kind "char", above integer DEFAULT NULL::integer)
 RETURNS void
 LANGUAGE sql
AS $function$
    DELETE FROM pgmq.queue_limit_slots l
    WHERE (l.queue_name, l.kind, l.slot) IN (
        SELECT x.queue_name, x.kind, x.slot FROM pgmq.queue_limit_slots x
        WHERE x.queue_name = $1 AND ($2 IS NULL OR x.kind = $2)
          AND ($3 IS NULL OR x.slot > $3)
          AND ($3 IS NULL OR x.kind = 'r' OR x.t <= pg_catalog.clock_timestamp())
        FOR UPDATE SKIP LOCKED);
$function$
;
COMMENT ON FUNCTION pgmq._limit_drop_rows(text,"char",integer) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._limit_drop_rows(text,"char",integer) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._limit_free(queue_name text, msg_ids bigint[])
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    lq text := pg_catalog.lower(queue_name);
    s pgmq.queue_limit_state;
    c_tids tid[];
    freed integer[];
BEGIN
    -- The slots these messages hold (skipping one a claim holds: no wait).
    -- (Only 'f' rows hold a msg_id: no kind here, so the plan is the msg_id index's.)
    SELECT pg_catalog.array_agg(l.ctid) INTO c_tids
    FROM (SELECT x.ctid FROM pgmq.queue_limit_slots x
          WHERE x.queue_name = lq AND x.msg_id = ANY (msg_ids)
            AND x.t > pg_catalog.clock_timestamp()
          FOR UPDATE SKIP LOCKED) l;
    IF c_tids IS NULL THEN
        RETURN;
    END IF;
    -- Freed, but those still in flight keep their slot.
    EXECUTE pg_catalog.format(
        'WITH u AS ('
        '    UPDATE pgmq.queue_limit_slots l SET t = ''-infinity'', msg_id = NULL, read_ct = NULL'
        '    WHERE l.ctid = ANY ($1) AND NOT EXISTS ('
        '        SELECT 1 FROM pgmq.%I q'
        '        WHERE q.msg_id = l.msg_id AND q.vt > pg_catalog.clock_timestamp())'
        '    RETURNING l.slot) '
        'SELECT pg_catalog.array_agg(u.slot) FROM u',
        pgmq.format_table_name(queue_name, 'q'))
    INTO freed USING c_tids;
    SELECT * INTO s FROM pgmq.queue_limit_state l WHERE l.queue_name = lq;
    IF freed IS NULL OR s.max_in_flight IS NULL OR s.slots_made < s.max_in_flight THEN
        RETURN;  -- nothing freed, or a reader could still have made a slot: nobody waits
    END IF;
    -- Another free slot within the limit (not one a claim is taking) means no reader
    -- was refused for want of this one.
    IF pg_catalog.current_setting('transaction_isolation') = 'read committed' THEN
        PERFORM 1 FROM pgmq.queue_limit_slots l
        WHERE l.queue_name = lq AND l.kind = 'f' AND l.t <= pg_catalog.clock_timestamp()
          AND l.slot <= s.max_in_flight AND l.slot <> ALL (freed)
        LIMIT 1 FOR KEY SHARE SKIP LOCKED;
    ELSE
        PERFORM 1 FROM pgmq.queue_limit_slots l
        WHERE l.queue_name = lq AND l.kind = 'f' AND l.t <= pg_catalog.clock_timestamp()
          AND l.slot <= s.max_in_flight AND l.slot <> ALL (freed)
        LIMIT 1;
    END IF;
    IF NOT FOUND THEN
        PERFORM pg_catalog.pg_notify(pgmq._limit_channel(
            (SELECT m.queue_name::text FROM pgmq.meta m
             WHERE pg_catalog.lower(m.queue_name::text) = lq)), '');
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._limit_free(text,bigint[]) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._limit_free(text,bigint[]) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._limit_prefill()
 RETURNS integer
 LANGUAGE sql
 IMMUTABLE
AS $function$ SELECT 1024 $function$
;
COMMENT ON FUNCTION pgmq._limit_prefill() IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._limit_prefill() FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._limit_take(lq text, kind "char", want integer, cap integer, made integer, free_before timestamp with time zone, qtable text)
 RETURNS tid[]
 LANGUAGE plpgsql
AS $function$
DECLARE
    got tid[] := '{}';
    seen integer[] := '{}';
    c_tids tid[];
    c_slots integer[];
    c_ids bigint[];
    c_rcs integer[];
    still tid[];
    n integer;
    rounds integer := 0;
    snap_strict boolean := pg_catalog.current_setting('transaction_isolation') <> 'read committed';
BEGIN
    IF want <= 0 THEN
        RETURN got;
    END IF;
    IF EXISTS (SELECT 1 FROM pgmq.queue_limit_slots l
               WHERE l.queue_name = lq AND l.kind = $2 AND l.slot > cap AND l.t > free_before) THEN
        RETURN got;
    END IF;
    LOOP
        rounds := rounds + 1;
        SELECT pg_catalog.array_agg(x.ctid), pg_catalog.array_agg(x.slot),
               pg_catalog.array_agg(x.msg_id), pg_catalog.array_agg(x.read_ct)
        INTO c_tids, c_slots, c_ids, c_rcs
        FROM (SELECT l.ctid, l.slot, l.msg_id, l.read_ct FROM pgmq.queue_limit_slots l
              WHERE l.queue_name = lq AND l.kind = $2 AND l.t <= free_before AND l.slot <= cap
                AND l.slot <> ALL (seen)
              ORDER BY l.t
              LIMIT want - pg_catalog.cardinality(got)
              FOR UPDATE SKIP LOCKED) x;
        EXIT WHEN c_tids IS NULL;
        still := '{}';
        IF kind = 'f' AND EXISTS (SELECT 1 FROM pg_catalog.unnest(c_ids) i WHERE i IS NOT NULL) THEN
            -- Timed-out slots: a message still in flight under the same read keeps its
            -- slot (its t follows the vt). At REPEATABLE READ the message is locked
            -- FOR SHARE, so one changed since the snapshot refuses the claim (40001).
            -- (Rows by ctid: this transaction holds them.)
            EXECUTE pg_catalog.format(
                'WITH c AS (SELECT * FROM ROWS FROM (pg_catalog.unnest($1::tid[]), pg_catalog.unnest($2::bigint[]), '
                '                                pg_catalog.unnest($3::integer[])) AS c(tid, id, rc)), '
                'h AS (SELECT c.tid, q.vt FROM c JOIN pgmq.%I q ON q.msg_id = c.id AND q.read_ct = c.rc '
                '      WHERE q.vt > pg_catalog.clock_timestamp() %s), '
                'u AS (UPDATE pgmq.queue_limit_slots l SET t = h.vt FROM h '
                '      WHERE l.ctid = h.tid AND l.queue_name = $4 RETURNING h.tid) '
                'SELECT coalesce(pg_catalog.array_agg(u.tid), ''{}'') FROM u',
                qtable, CASE WHEN snap_strict THEN 'FOR SHARE OF q SKIP LOCKED' ELSE '' END)
            INTO still USING c_tids, c_ids, c_rcs, lq;
        END IF;
        seen := seen || c_slots;
        got := got || ARRAY(SELECT x FROM pg_catalog.unnest(c_tids) x WHERE x <> ALL (still));
        EXIT WHEN pg_catalog.cardinality(still) = 0 OR rounds >= 8
               OR (want IS NOT NULL AND pg_catalog.cardinality(got) >= want);
    END LOOP;
    IF (want IS NULL OR pg_catalog.cardinality(got) < want) AND made < cap THEN
        -- Make more rows, under the state row (SKIP LOCKED: a claim making rows now, or
        -- idle after it, leaves this one with what it has).
        SELECT CASE WHEN $2 = 'f' THEN l.slots_made ELSE l.tokens_made END INTO made
        FROM pgmq.queue_limit_state l WHERE l.queue_name = lq
        FOR NO KEY UPDATE SKIP LOCKED;
        IF made < cap THEN
            n := LEAST(cap - made,
                       GREATEST(coalesce(want - pg_catalog.cardinality(got), cap - made),
                                LEAST(made, pgmq._limit_prefill())));
            -- Rows above made may exist (kept while taken when the limit was lowered).
            WITH m AS (
                INSERT INTO pgmq.queue_limit_slots AS l (queue_name, kind, slot)
                SELECT lq, $2, g FROM pg_catalog.generate_series(made + 1, made + n) g
                ON CONFLICT DO NOTHING
                RETURNING l.ctid, l.slot
            )
            SELECT got || coalesce(ARRAY(
                SELECT m.ctid FROM m ORDER BY m.slot
                LIMIT coalesce(want - pg_catalog.cardinality(got), n)), '{}')
            INTO got;
            IF kind = 'f' THEN
                UPDATE pgmq.queue_limit_state l SET slots_made = made + n WHERE l.queue_name = lq;
            ELSE
                UPDATE pgmq.queue_limit_state l SET tokens_made = made + n WHERE l.queue_name = lq;
            END IF;
        END IF;
    END IF;
    RETURN got;
END
$function$
;
COMMENT ON FUNCTION pgmq._limit_take(text,"char",integer,integer,integer,timestamp with time zone,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._limit_take(text,"char",integer,integer,integer,timestamp with time zone,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_with_attributes(queue_name text, attrs jsonb, p_op "char", p_qty integer, p_secs integer, p_vt timestamp with time zone, p_ids bigint[], p_msgs jsonb[], p_headers jsonb[], p_cond jsonb, low bigint)
 RETURNS SETOF pgmq.message_record
 LANGUAGE plpgsql
AS $function$
DECLARE
    f record;
    qty integer := p_qty;
    rec pgmq.message_record;
    claimed bigint[] := '{}';
    claimed_rcs integer[] := '{}';
    claimed_vts timestamptz[] := '{}';
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
                claimed_rcs := claimed_rcs || rec.read_ct;
                claimed_vts := claimed_vts || rec.vt;
                RETURN NEXT rec;
            END LOOP;
            PERFORM pgmq._claim_record(queue_name, f.held, f.stamps, f.counts, claimed, p_op = 'p',
                                       claimed_rcs, claimed_vts);
            RETURN;
        END IF;
    END IF;
    IF p_op = 'a' OR p_op = 'd' OR p_op = 'v' THEN
        -- The plain statements, whatever the attributes: not worth writing them anew.
        RETURN QUERY EXECUTE pgmq._queue_ops_sql(queue_name, p_op, '$9')
            USING p_op, qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond, low;
    ELSE
        RETURN QUERY EXECUTE pgmq._queue_ops_attr_sql(queue_name, p_op, '$9', attrs)
            USING p_op, qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond, low;
    END IF;
    IF (p_op = 'a' OR p_op = 'd' OR (p_op = 'v' AND p_vt <= clock_timestamp()))
       AND attrs ? 'max_in_flight' THEN
        -- A slot may have freed (not by a heartbeat's set_vt into the future): free it,
        -- and wake a worker waiting at the limit (at commit) if the queue was at it.
        GET DIAGNOSTICS n = ROW_COUNT;
        IF n > 0 THEN
            PERFORM pgmq._limit_free(queue_name, p_ids);
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
    lq text := pg_catalog.lower(queue_name);
    s pgmq.queue_limit_state;
    new_max integer := (attrs ->> 'max_in_flight')::integer;
    new_count integer := (attrs -> 'rate_limit' ->> 'count')::integer;
    tries integer := 0;
    made integer;
BEGIN
    LOOP
        BEGIN
            SELECT * INTO s FROM pgmq.queue_limit_state l WHERE l.queue_name = lq
            FOR NO KEY UPDATE NOWAIT;
            EXIT;
        EXCEPTION WHEN lock_not_available THEN
            tries := tries + 1;
            IF tries >= 20 THEN
                RAISE EXCEPTION 'queue "%": its limits are being used by a claim in progress; retry',
                    queue_name USING ERRCODE = 'lock_not_available';
            END IF;
            PERFORM pg_catalog.pg_sleep(0.05);
        END;
    END LOOP;
    IF NOT (attrs ? 'max_in_flight' OR attrs ? 'rate_limit') THEN
        DELETE FROM pgmq.queue_limit_state l WHERE l.queue_name = lq;
        PERFORM pgmq._limit_drop_rows(lq, NULL);
        RETURN;
    END IF;
    IF s.queue_name IS NULL THEN
        INSERT INTO pgmq.queue_limit_state (queue_name) VALUES (lq) RETURNING * INTO s;
    END IF;

    IF new_max IS NULL THEN
        PERFORM pgmq._limit_drop_rows(lq, 'f');
        s.slots_made := 0;
    ELSIF s.max_in_flight IS NULL THEN
        -- A new max_in_flight: a slot for each message in flight now, then free ones.
        PERFORM pgmq._limit_drop_rows(lq, 'f');
        made := coalesce((SELECT pg_catalog.max(l.slot) FROM pgmq.queue_limit_slots l
                          WHERE l.queue_name = lq AND l.kind = 'f'), 0);
        EXECUTE pg_catalog.format(
            'INSERT INTO pgmq.queue_limit_slots (queue_name, kind, slot, t, msg_id, read_ct) '
            'SELECT $1, ''f'', $2 + pg_catalog.row_number() OVER (ORDER BY q.msg_id), q.vt, q.msg_id, q.read_ct '
            'FROM pgmq.%I q WHERE q.read_ct > 0 AND q.vt > pg_catalog.clock_timestamp() '
            '  AND NOT EXISTS (SELECT 1 FROM pgmq.queue_limit_slots x '
            '                  WHERE x.queue_name = $1 AND x.msg_id = q.msg_id)',
            pgmq.format_table_name(queue_name, 'q')) USING lq, made;
        made := coalesce((SELECT pg_catalog.max(l.slot) FROM pgmq.queue_limit_slots l
                          WHERE l.queue_name = lq AND l.kind = 'f'), 0);
        INSERT INTO pgmq.queue_limit_slots (queue_name, kind, slot)
        SELECT lq, 'f', g FROM pg_catalog.generate_series(made + 1, LEAST(new_max, pgmq._limit_prefill())) g;
        s.slots_made := GREATEST(made, LEAST(new_max, pgmq._limit_prefill()));
    ELSIF new_max < s.max_in_flight THEN
        PERFORM pgmq._limit_drop_rows(lq, 'f', new_max);
        s.slots_made := LEAST(s.slots_made, new_max);
    END IF;

    IF new_count IS NULL THEN
        PERFORM pgmq._limit_drop_rows(lq, 'r');
        s.tokens_made := 0;
    ELSIF s.rate_count IS NULL THEN
        PERFORM pgmq._limit_drop_rows(lq, 'r');
        made := coalesce((SELECT pg_catalog.max(l.slot) FROM pgmq.queue_limit_slots l
                          WHERE l.queue_name = lq AND l.kind = 'r'), 0);
        INSERT INTO pgmq.queue_limit_slots (queue_name, kind, slot)
        SELECT lq, 'r', g FROM pg_catalog.generate_series(made + 1, LEAST(new_count, pgmq._limit_prefill())) g;
        s.tokens_made := GREATEST(made, LEAST(new_count, pgmq._limit_prefill()));
    ELSIF new_count < s.rate_count THEN
        PERFORM pgmq._limit_drop_rows(lq, 'r', new_count);
        s.tokens_made := LEAST(s.tokens_made, new_count);
    END IF;

    UPDATE pgmq.queue_limit_state l
    SET max_in_flight = new_max, rate_count = new_count,
        rate_seconds = (attrs -> 'rate_limit' ->> 'seconds')::double precision,
        slots_made = s.slots_made, tokens_made = s.tokens_made
    WHERE l.queue_name = lq;
END
$function$
;
COMMENT ON FUNCTION pgmq._sync_queue_limits(text,jsonb) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._sync_queue_limits(text,jsonb) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.queue_limits(queue_name text DEFAULT NULL::text)
 RETURNS TABLE(queue_name text, max_in_flight integer, in_flight integer, rate_count integer, rate_seconds double precision, handed_out integer, next_free_at timestamp with time zone)
 LANGUAGE sql
AS $function$
    SELECT m.queue_name::text, l.max_in_flight, l.in_flight,
           l.rate_count, l.rate_seconds, l.handed_out, l.next_free_at
    FROM pgmq.meta m
    JOIN pgmq.queue_limit_state s ON s.queue_name = pg_catalog.lower(m.queue_name::text)
    CROSS JOIN LATERAL pgmq._claim_limits(m.queue_name::text, NULL::integer, false, false) l
    WHERE $1 IS NULL OR pg_catalog.lower(m.queue_name::text) = pg_catalog.lower($1)
    ORDER BY m.queue_name;
$function$
;
COMMENT ON FUNCTION pgmq.queue_limits(text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.queue_limits(text) TO PUBLIC;

CREATE INDEX queue_limit_slots_free ON pgmq.queue_limit_slots USING btree (queue_name, kind, t);

CREATE UNIQUE INDEX queue_limit_slots_key ON pgmq.queue_limit_slots USING btree (queue_name, kind, slot);

CREATE INDEX queue_limit_slots_msg ON pgmq.queue_limit_slots USING btree (queue_name, msg_id) WHERE (msg_id IS NOT NULL);

