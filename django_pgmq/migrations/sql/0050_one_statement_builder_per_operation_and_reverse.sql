-- 0050_one_statement_builder_per_operation_and: one statement builder per operation and fewer limit statements
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._ack_sql(text,boolean,text,text);
DROP FUNCTION IF EXISTS pgmq._kept_guard_sql(text);
DROP FUNCTION IF EXISTS pgmq._limit_reclaim(text,tid[],bigint[],integer[],text);
DROP FUNCTION IF EXISTS pgmq._read_pick_sql(text,text,text,text,text,text);
DROP FUNCTION IF EXISTS pgmq._read_sql(text,boolean,text,text,text,text,boolean,integer,text);
DROP FUNCTION IF EXISTS pgmq._record_rest_sql();
DROP FUNCTION IF EXISTS pgmq._send_sql(text,boolean,text,text,text,text,text);
DROP FUNCTION IF EXISTS pgmq._set_vt_sql(text);
CREATE OR REPLACE FUNCTION pgmq._claim_limits(queue_name text, qty integer, pops boolean, take_lock boolean, OUT allowed integer, OUT slots tid[], OUT tokens tid[], OUT max_in_flight integer, OUT in_flight integer, OUT rate_count integer, OUT rate_seconds double precision, OUT handed_out integer, OUT next_free_at timestamp with time zone)
 RETURNS record
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET enable_seqscan TO 'off'
AS $function$
DECLARE
    lq text := pg_catalog.lower(queue_name);
    s pgmq.queue_limit_state;
    qtable text;
    now_ timestamptz := pg_catalog.clock_timestamp();
    window_start timestamptz;
    free_ integer;
    free_before timestamptz;
BEGIN
    allowed := qty;
    SELECT * INTO s FROM pgmq.queue_limit_state l WHERE l.queue_name::text = lq;
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
            free_ := allowed;
            slots := pgmq._limit_take(lq, 'f', allowed, s.max_in_flight, s.slots_made, now_, qtable);
            allowed := pg_catalog.cardinality(slots);
            -- Full: refused some for want of a slot. The next acknowledgement wakes the
            -- readers waiting (pgmq._limit_wake). (Not "took the last free slot": with
            -- slots freed lazily that takes a look at every slot's message to know.)
            IF allowed < free_ THEN
                PERFORM pgmq._limit_mark_full(lq);
            END IF;
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
                       WHERE l.queue_name::text = lq AND l.kind = 'r' AND l.t > window_start);
        IF EXISTS (SELECT 1 FROM pgmq.queue_limit_slots l WHERE l.queue_name::text = lq AND l.kind = 'r'
                   AND l.slot > s.rate_count AND l.t > window_start) THEN
            free_ := 0;
        ELSE
            free_ := GREATEST(s.rate_count - s.tokens_made, 0)
                     + (SELECT pg_catalog.count(*) FROM (
                            SELECT 1 FROM pgmq.queue_limit_slots l
                            WHERE l.queue_name::text = lq AND l.kind = 'r' AND l.t <= window_start
                              AND l.slot <= s.rate_count
                            LIMIT allowed) x);
        END IF;
        allowed := LEAST(allowed, free_);
        IF free_ = 0 THEN
            next_free_at := (SELECT pg_catalog.min(l.t) FROM pgmq.queue_limit_slots l
                             WHERE l.queue_name::text = lq AND l.kind = 'r' AND l.t > window_start)
                            + pg_catalog.make_interval(secs => s.rate_seconds);
        END IF;
    END IF;
    IF s.max_in_flight IS NOT NULL AND (qty IS NULL OR NOT pops) THEN
        IF qty IS NULL THEN
            -- Counted in full (metrics): a slot is taken while its message is in flight
            -- under the read that took it (slots free lazily: t says nothing alone).
            EXECUTE pg_catalog.format(
                'SELECT pg_catalog.count(*) FROM pgmq.queue_limit_slots l '
                'WHERE l.queue_name::text = $1 AND l.kind = ''f'' AND l.msg_id IS NOT NULL '
                '  AND EXISTS (SELECT 1 FROM pgmq.%I q WHERE q.msg_id = l.msg_id '
                '       AND q.read_ct = l.read_ct AND q.vt > $2)',
                qtable) INTO in_flight USING lq, now_;
        END IF;
        IF NOT pops THEN
            IF EXISTS (SELECT 1 FROM pgmq.queue_limit_slots l WHERE l.queue_name::text = lq AND l.kind = 'f'
                       AND l.slot > s.max_in_flight AND l.msg_id IS NOT NULL
                       AND l.read_ct IS DISTINCT FROM -1) THEN
                free_ := 0;
            ELSIF qty IS NULL THEN
                free_ := GREATEST(s.max_in_flight - in_flight, 0);
            ELSE
                -- Enough to answer: at most qty free slots counted.
                EXECUTE pg_catalog.format(
                    'SELECT pg_catalog.count(*) FROM (SELECT 1 FROM pgmq.queue_limit_slots l '
                    'WHERE l.queue_name::text = $1 AND l.kind = ''f'' AND l.slot <= $3 '
                    '  AND NOT EXISTS (SELECT 1 FROM pgmq.%I q WHERE q.msg_id = l.msg_id '
                    '       AND q.read_ct = l.read_ct AND q.vt > $2) '
                    'LIMIT $4) x', qtable)
                    INTO free_ USING lq, now_, s.max_in_flight, qty;
                free_ := free_ + GREATEST(s.max_in_flight - s.slots_made, 0);
            END IF;
            allowed := LEAST(allowed, free_);
            IF free_ = 0 THEN
                -- the first vt of a message in flight in a slot
                EXECUTE pg_catalog.format(
                    'SELECT pg_catalog.min(q.vt) FROM pgmq.queue_limit_slots l JOIN pgmq.%I q '
                    '  ON q.msg_id = l.msg_id AND q.read_ct = l.read_ct '
                    'WHERE l.queue_name::text = $1 AND l.kind = ''f'' AND q.vt > $2', qtable)
                    INTO free_before USING lq, now_;
                next_free_at := GREATEST(next_free_at, free_before);
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
 SET enable_seqscan TO 'off'
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
    SELECT * INTO s FROM pgmq.queue_limit_state l WHERE l.queue_name::text = lq;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    -- Each row by its ctid (a plan that cannot turn into a scan of the queue's rows,
    -- whatever the table's statistics); the other conditions check it is a free row of
    -- this queue.
    IF counts IS NOT NULL AND s.rate_count IS NOT NULL THEN
        UPDATE pgmq.queue_limit_slots l SET t = pg_catalog.clock_timestamp()
        WHERE l.ctid = ANY (counts[1:n]) AND l.queue_name IS NOT DISTINCT FROM lq AND l.kind = 'r'
          AND l.slot <= s.rate_count
          AND l.t <= pg_catalog.clock_timestamp() - pg_catalog.make_interval(secs => s.rate_seconds);
    END IF;
    IF held IS NOT NULL AND NOT pops AND s.max_in_flight IS NOT NULL
       AND pg_catalog.cardinality(claimed_read_cts) = n AND pg_catalog.cardinality(claimed_vts) = n THEN
        -- The claim's own rows (the router's): a slot whose message is not in flight
        -- under that read is taken again (pgmq._limit_take checks).
        UPDATE pgmq.queue_limit_slots l
        SET msg_id = claimed[x.i], read_ct = claimed_read_cts[x.i]
        FROM (SELECT h.tid, h.i FROM ROWS FROM (pg_catalog.unnest(held[1:n])) WITH ORDINALITY AS h(tid, i)) x
        WHERE l.ctid = ANY (held[1:n]) AND l.ctid = x.tid AND l.queue_name IS NOT DISTINCT FROM lq AND l.kind = 'f'
          AND l.slot <= s.max_in_flight AND (l.msg_id IS NULL OR l.read_ct = -1)
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
            UPDATE pgmq.queue_limit_slots l SET msg_id = ids[i], read_ct = rcs[i]
            WHERE l.ctid = held[i] AND l.queue_name IS NOT DISTINCT FROM lq AND l.kind = 'f'
              AND l.slot <= s.max_in_flight AND (l.msg_id IS NULL OR l.read_ct = -1);
        END LOOP;
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._claim_record(text,tid[],timestamp with time zone[],tid[],bigint[],boolean,integer[],timestamp with time zone[]) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._claim_record(text,tid[],timestamp with time zone[],tid[],bigint[],boolean,integer[],timestamp with time zone[]) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._limit_reclaim(lq text, tids tid[], qtable text)
 RETURNS tid[]
 LANGUAGE plpgsql
AS $function$
DECLARE
    ids bigint[] := ARRAY(SELECT l.msg_id FROM pgmq.queue_limit_slots l
                          WHERE l.ctid = ANY (tids) AND l.queue_name IS NOT DISTINCT FROM lq
                            AND l.msg_id IS NOT NULL AND l.read_ct IS DISTINCT FROM -1);
    f_ids bigint[];
    f_rcs integer[];
    freed tid[];
BEGIN
    IF pg_catalog.current_setting('transaction_isolation') <> 'read committed' THEN
        EXECUTE pg_catalog.format(
            'SELECT pg_catalog.count(*) FROM (SELECT 1 FROM pgmq.%I q WHERE q.msg_id = ANY ($1) '
            '  FOR SHARE OF q SKIP LOCKED) x', qtable)
            USING ids;
    END IF;
    -- The messages still in flight (one short statement: planned at each call).
    EXECUTE pg_catalog.format(
        'SELECT pg_catalog.array_agg(q.msg_id), pg_catalog.array_agg(q.read_ct) '
        'FROM pgmq.%I q WHERE q.msg_id = ANY ($1) AND q.vt > pg_catalog.clock_timestamp()', qtable)
        INTO f_ids, f_rcs USING ids;
    WITH held AS (
        SELECT f.id, f.rc
        FROM ROWS FROM (pg_catalog.unnest(f_ids), pg_catalog.unnest(f_rcs)) AS f(id, rc)
    ), u AS (
        UPDATE pgmq.queue_limit_slots l SET read_ct = -1
        WHERE l.ctid = ANY (tids) AND l.queue_name IS NOT DISTINCT FROM lq AND l.msg_id IS NOT NULL
          AND l.read_ct IS DISTINCT FROM -1
          AND NOT EXISTS (SELECT 1 FROM held h WHERE h.id = l.msg_id AND h.rc = l.read_ct)
        RETURNING l.ctid
    )
    SELECT coalesce(pg_catalog.array_agg(x.tid), '{}') INTO freed
    FROM (SELECT u.ctid AS tid FROM u
          UNION ALL
          SELECT l.ctid FROM pgmq.queue_limit_slots l
          WHERE l.ctid = ANY (tids) AND l.queue_name IS NOT DISTINCT FROM lq
            AND (l.msg_id IS NULL OR l.read_ct = -1)) x;
    RETURN freed;
END
$function$
;
COMMENT ON FUNCTION pgmq._limit_reclaim(text,tid[],text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._limit_reclaim(text,tid[],text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._limit_take(lq text, kind "char", want integer, cap integer, made integer, free_before timestamp with time zone, qtable text)
 RETURNS tid[]
 LANGUAGE plpgsql
AS $function$
DECLARE
    got tid[] := '{}';
    seen integer[] := '{}';
    c_tids tid[];
    c_slots integer[];
    c_held boolean;
    freed tid[];
    n integer;
    rounds integer := 0;
    -- 'f' with no want (all there are): every free slot, found by the walk at once
    walk boolean := kind = 'f' AND want IS NULL;
    at_key text := 'pgmq.limit_at_' || pg_catalog.replace(lq, '-', '$');
    at_ text := pg_catalog.current_setting(at_key, true);
    at integer := CASE WHEN at_ ~ '^[0-9]{1,9}$' THEN at_::integer ELSE 1 END;
    wrapped boolean := false;
    had integer;
BEGIN
    IF want <= 0 THEN
        RETURN got;
    END IF;
    IF kind = 'r' AND EXISTS (SELECT 1 FROM pgmq.queue_limit_slots l
                              WHERE l.queue_name::text = lq AND l.kind = 'r' AND l.slot > cap
                                AND l.t > free_before) THEN
        RETURN got;
    END IF;
    IF kind = 'r' THEN
        SELECT pg_catalog.array_agg(x.ctid) INTO c_tids
        FROM (SELECT l.ctid FROM pgmq.queue_limit_slots l
              WHERE l.queue_name::text = lq AND l.kind = 'r' AND l.slot <= cap AND l.t <= free_before
              ORDER BY l.t
              LIMIT want
              FOR UPDATE SKIP LOCKED) x;
        got := coalesce(c_tids, '{}');
    ELSE
        IF EXISTS (SELECT 1 FROM pgmq.queue_limit_slots l
                   WHERE l.queue_name::text = lq AND l.kind = 'f' AND l.slot > cap
                     AND l.msg_id IS NOT NULL) THEN
            EXECUTE pg_catalog.format(
                'SELECT EXISTS (SELECT 1 FROM pgmq.queue_limit_slots l JOIN pgmq.%I q '
                '  ON q.msg_id = l.msg_id AND q.read_ct = l.read_ct AND q.vt > pg_catalog.clock_timestamp() '
                '  WHERE l.queue_name::text = $1 AND l.kind = ''f'' AND l.slot > $2)', qtable)
                INTO c_held USING lq, cap;
            IF c_held THEN
                RETURN got;
            END IF;
        END IF;
        IF at > LEAST(cap, made) THEN
            at := 1;
        END IF;
        LOOP
            rounds := rounds + 1;
            IF NOT walk THEN
                SELECT pg_catalog.array_agg(x.ctid), pg_catalog.array_agg(x.slot),
                       pg_catalog.bool_or(x.msg_id IS NOT NULL)
                INTO c_tids, c_slots, c_held
                FROM (SELECT l.ctid, l.slot, l.msg_id FROM pgmq.queue_limit_slots l
                      WHERE l.queue_name::text = lq AND l.kind = 'f' AND l.slot >= at
                        AND l.slot <= cap AND l.slot <> ALL (seen)
                      ORDER BY l.slot
                      LIMIT want - pg_catalog.cardinality(got)
                      FOR UPDATE SKIP LOCKED) x;
            ELSE
                EXECUTE pg_catalog.format(
                    'SELECT pg_catalog.array_agg(x.ctid), pg_catalog.array_agg(x.slot), '
                    '       pg_catalog.bool_or(x.msg_id IS NOT NULL) '
                    'FROM (SELECT l.ctid, l.slot, l.msg_id FROM pgmq.queue_limit_slots l '
                    '      WHERE l.queue_name::text = $1 AND l.kind = ''f'' AND l.slot >= $5 '
                    '        AND l.slot <= $2 AND l.slot <> ALL ($3) '
                    '        AND NOT EXISTS (SELECT 1 FROM pgmq.%I q WHERE q.msg_id = l.msg_id '
                    '            AND q.read_ct = l.read_ct AND q.vt > pg_catalog.clock_timestamp()) '
                    '      ORDER BY l.slot LIMIT $4 FOR UPDATE SKIP LOCKED) x', qtable)
                INTO c_tids, c_slots, c_held USING lq, cap, seen, want - pg_catalog.cardinality(got), at;
            END IF;
            IF c_tids IS NULL THEN
                -- the end of the ring: once round from its start
                EXIT WHEN wrapped OR at = 1;
                wrapped := true;
                at := 1;
                CONTINUE;
            END IF;
            seen := seen || c_slots;
            at := (SELECT pg_catalog.max(x) FROM pg_catalog.unnest(c_slots) x) + 1;
            freed := CASE WHEN c_held THEN pgmq._limit_reclaim(lq, c_tids, qtable) ELSE c_tids END;
            got := got || freed;
            EXIT WHEN want IS NULL OR pg_catalog.cardinality(got) >= want OR rounds >= 6;
            IF NOT walk AND pg_catalog.cardinality(freed) < pg_catalog.cardinality(c_tids) THEN
                -- Some slots tried still hold messages in flight: walk past them (the
                -- cursor then starts this session's next claim after them), unless every
                -- slot is made and the queue was found full within the last second.
                walk := made < cap OR NOT EXISTS (
                    SELECT 1 FROM pgmq.queue_limit_slots w
                    WHERE w.queue_name::text = lq AND w.kind = 'w' AND w.slot = 0
                      AND w.t > pg_catalog.clock_timestamp() - interval '1 second');
                EXIT WHEN NOT walk;
            END IF;
        END LOOP;
        PERFORM pg_catalog.set_config(at_key, at::text, false);
    END IF;
    IF (want IS NULL OR pg_catalog.cardinality(got) < want) AND made < cap THEN
        -- Make more rows, under the state row (SKIP LOCKED: a claim making rows now, or
        -- idle after it, leaves this one with what it has).
        SELECT CASE WHEN $2 = 'f' THEN l.slots_made ELSE l.tokens_made END INTO made
        FROM pgmq.queue_limit_state l WHERE l.queue_name::text = lq
        FOR NO KEY UPDATE SKIP LOCKED;
        IF made < cap THEN
            n := LEAST(cap - made,
                       GREATEST(coalesce(want - pg_catalog.cardinality(got), cap - made),
                                LEAST(made, pgmq._limit_prefill())));
            had := pg_catalog.cardinality(got);
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
                UPDATE pgmq.queue_limit_state l SET slots_made = made + n WHERE l.queue_name::text = lq;
                -- this session's next claim starts after the new rows it took
                PERFORM pg_catalog.set_config(
                    at_key, (made + 1 + pg_catalog.cardinality(got) - had)::text, false);
            ELSE
                UPDATE pgmq.queue_limit_state l SET tokens_made = made + n WHERE l.queue_name::text = lq;
            END IF;
        END IF;
    END IF;
    RETURN got;
END
$function$
;
COMMENT ON FUNCTION pgmq._limit_take(text,"char",integer,integer,integer,timestamp with time zone,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._limit_take(text,"char",integer,integer,integer,timestamp with time zone,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_attr_sql(queue_name text, op "char", low text, attrs jsonb)
 RETURNS text
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q'::text);
    checks text := nullif(pgmq._send_checks_sql(attrs), '');
    gate text := 'TRUE';
    msg text := 'u.msg';
    vt text := 'coalesce($4, pg_catalog.clock_timestamp())';
    -- Only the ordering and redrive matter here: the limits are the caller's (no lock).
    f record := pgmq._claim_filter(queue_name, attrs - pgmq._limit_keys(), NULL);
    window_ text := (attrs ->> 'deduplication_window') || ' seconds';
    order_by text;
    pick text;
BEGIN
    IF op = 's' OR op = 'S' THEN
        IF checks IS NOT NULL THEN
            -- Valid messages pass an inline test; pgmq._checked_message raises the error
            -- that names what is wrong with the first of the others.
            gate := pg_catalog.format(
                '(SELECT pg_catalog.count(pgmq._checked_message(%L, u.msg, u.hdr, %s, %L, %L)) '
                'FROM unnest($6, $7) AS u(msg, hdr) WHERE (%s) IS NOT TRUE) >= 0',
                queue_name, coalesce(attrs ->> 'max_message_size', 'NULL'), f.by_priority,
                window_ IS NOT NULL AND (attrs ->> 'deduplication_window')::integer > 0, checks);
        END IF;
        IF coalesce((attrs ->> 'delivery_delay')::integer, 0) > 0 THEN
            vt := pg_catalog.format('coalesce($4, pg_catalog.clock_timestamp() + interval %L)',
                         (attrs ->> 'delivery_delay') || ' seconds');
        END IF;
        IF coalesce((attrs ->> 'deduplication_window')::integer, 0) = 0 THEN
            RETURN pg_catalog.format(
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
            RETURN pg_catalog.format(
                $sql$
        WITH m AS (
            INSERT INTO pgmq.%1$I AS q (vt, message, headers)
            SELECT %2$s, %3$s, u.hdr FROM unnest($6, $7) AS u(msg, hdr)
            WHERE %5$s
            RETURNING q.msg_id, q.headers ->> 'deduplication_id' AS dedup
        ), claimed AS (
            -- the owner's helper records the ids (pgmq._dedup_record)
            SELECT pgmq._dedup_record(%4$L::text,
                                      pg_catalog.array_agg(m.dedup ORDER BY m.dedup),
                                      pg_catalog.array_agg(m.msg_id ORDER BY m.dedup)) AS n
            FROM m WHERE m.dedup IS NOT NULL
        )
        SELECT (SELECT pg_catalog.array_agg(m.msg_id ORDER BY m.msg_id) FROM m) FROM claimed
                $sql$, qtable, vt, msg, pg_catalog.lower(queue_name), gate);
        END IF;
        -- Deduplication: a message takes a new msg_id only when it may be enqueued: it
        -- has no deduplication id, or it is its id's first in the batch and no send within
        -- the window holds that id (as this statement's snapshot sees it). Each such id is
        -- claimed in pgmq.queue_deduplication; a conflict (a concurrent sender waits there
        -- for the first one's commit) keeps the row of a send within the window, so only
        -- a claim that kept our new msg_id enqueues its message (the loser of that race
        -- is the one case where an id is used up without a message). Every message of the
        -- batch returns its id's msg_id.
        RETURN pg_catalog.format(
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
                                WHERE d.queue_name::text = %5$L AND d.deduplication_id = i.dedup
                                  AND d.sent_at > pg_catalog.clock_timestamp() - interval %6$L))
                        THEN pg_catalog.nextval(%4$L::regclass) END AS new_id
            FROM (SELECT x.*, pg_catalog.row_number() OVER (PARTITION BY x.dedup ORDER BY x.ord) = 1 AS first
                  FROM input x) i
            ORDER BY i.ord
        ),
        claimed AS MATERIALIZED (
            -- the owner's helper claims the ids (pgmq._dedup_claim)
            SELECT c.deduplication_id, c.msg_id
            FROM (SELECT pg_catalog.array_agg(n.dedup ORDER BY n.dedup) AS dedups,
                         pg_catalog.array_agg(n.new_id ORDER BY n.dedup) AS ids
                  FROM numbered n WHERE n.dedup IS NOT NULL AND n.new_id IS NOT NULL) x,
                 pgmq._dedup_claim(%5$L::text, x.dedups, x.ids) c
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
                         WHERE d.queue_name::text = %5$L AND d.deduplication_id = n.dedup),
                        n.new_id),
               NULL::integer, NULL::timestamptz, NULL::timestamptz,
               NULL::timestamptz, NULL::jsonb, NULL::jsonb
        FROM numbered n
        LEFT JOIN claimed c ON c.deduplication_id = n.dedup
        ORDER BY n.ord
            $sql$,
            qtable, vt, msg,
            pg_catalog.pg_get_serial_sequence(pg_catalog.format('pgmq.%I', qtable), 'msg_id'),
            pg_catalog.lower(queue_name), window_, gate);
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
    -- the qty; the over-read ones among those the pick walked past (all
    -- of them when it found fewer than qty) move to the dead-letter queue, at most
    -- max(qty, 100) per call.
    pick := pg_catalog.format(
        $pick$
            SELECT q.msg_id FROM pgmq.%I q
            WHERE q.msg_id >= %s AND q.vt <= pg_catalog.clock_timestamp()
              AND ($8 IS NULL OR $8 = '{}'::jsonb OR q.message @> $8)
              %s
            ORDER BY %s
            LIMIT $2
            FOR UPDATE SKIP LOCKED
        $pick$,
        qtable, low,
        CASE WHEN f.dead_letter_queue IS NULL THEN ''
             ELSE pg_catalog.format('AND q.read_ct < %s', f.max_receive_count) END,
        pg_catalog.format(order_by, 'q'));
    RETURN pg_catalog.format(
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
        CASE WHEN f.dead_letter_queue IS NULL THEN '' ELSE pg_catalog.format(
            $dead$
        dead AS (
            DELETE FROM pgmq.%1$I m
            WHERE m.msg_id = ANY(ARRAY(
                SELECT q.msg_id FROM pgmq.%1$I q
                WHERE q.msg_id >= %3$s AND q.vt <= pg_catalog.clock_timestamp()
                  AND ($8 IS NULL OR $8 = '{}'::jsonb OR q.message @> $8)
                  AND q.read_ct >= %2$s
                  AND ((SELECT pg_catalog.count(*) FROM picked) < $2
                       OR q.msg_id < (SELECT pg_catalog.max(p.msg_id) FROM picked p))
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
        CASE WHEN op = 'r' THEN pg_catalog.format(
            $upd$
            UPDATE pgmq.%I m
            SET vt = pg_catalog.clock_timestamp() + pg_catalog.make_interval(secs => $3),
                read_ct = m.read_ct + 1,
                last_read_at = pg_catalog.clock_timestamp()
            $upd$, qtable)
        ELSE pg_catalog.format('DELETE FROM pgmq.%I m', qtable) END,
        pg_catalog.format(order_by, 'd'));
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_attr_sql(text,"char",text,jsonb) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_attr_sql(text,"char",text,jsonb) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_ids_sql(qtable text, op "char", cond text DEFAULT ''::text, ids text DEFAULT '$5'::text, vt text DEFAULT '$4'::text, msgs text DEFAULT '$6'::text, hdrs text DEFAULT '$7'::text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT pg_catalog.format(
        CASE op
        -- A function scan yields the arrays in order and the insert numbers rows as they
        -- come, so ids follow the array order; unnest pads a NULL headers array with NULLs.
        WHEN 's' THEN $sql$
        INSERT INTO pgmq.%1$I AS q (vt, message, headers)
        SELECT coalesce(%5$s, pg_catalog.clock_timestamp()), u.msg, u.hdr
        FROM unnest(%6$s, %7$s) AS u(msg, hdr)%3$s
        RETURNING q.msg_id$sql$
        -- one message: a VALUES row plans in less time than a function scan
        WHEN '1' THEN $sql$
        INSERT INTO pgmq.%1$I AS q (vt, message, headers)
        VALUES (coalesce(%5$s, pg_catalog.clock_timestamp()), (%6$s)[1], (%7$s)[1])
        RETURNING q.msg_id$sql$
        WHEN 'a' THEN $sql$
        WITH moved AS (
            DELETE FROM pgmq.%1$I q WHERE q.msg_id = ANY(%4$s)%3$s
            RETURNING q.msg_id, q.read_ct, q.enqueued_at, q.last_read_at, q.vt, q.message, q.headers
        )
        INSERT INTO pgmq.%2$I AS a (msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers)
        SELECT * FROM moved
        RETURNING a.msg_id$sql$
        WHEN 'd' THEN $sql$
        DELETE FROM pgmq.%1$I q WHERE q.msg_id = ANY(%4$s)%3$s
        RETURNING q.msg_id$sql$
        END,
        qtable,
        'a' || pg_catalog.substr(qtable, 2),
        cond,
        ids,
        vt,
        msgs,
        hdrs);
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_ids_sql(text,"char",text,text,text,text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_ids_sql(text,"char",text,text,text,text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_kept_sql(qtable text, op "char", low text DEFAULT '$9'::text, qty text DEFAULT '$2'::text, secs text DEFAULT '$3'::text, cond text DEFAULT '$8'::text, ids text DEFAULT '$5'::text, vt text DEFAULT '$4'::text, msgs text DEFAULT '$6'::text, hdrs text DEFAULT '$7'::text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT CASE WHEN op IN ('a', 'd')
                THEN pgmq._queue_ops_ids_sql(qtable, op, ' AND ' || pgmq._limit_wake_sql(qtable), ids)
                -- 'l': a limited queue's read, run by the router after the claim filter
                -- capped its quantity (sql/25_attributes.sql): the plain read, no guard
                WHEN op = 'l'
                THEN pgmq._queue_ops_sql_for(qtable, 'r', low, qty, secs, cond)
                WHEN op = 's'
                THEN pgmq._queue_ops_ids_sql(qtable, op, ' WHERE ' || g.guard, ids, vt, msgs, hdrs)
                ELSE pgmq._queue_ops_sql_for(qtable, op, low || ' AND ' || g.guard, qty, secs, cond)
           END
    FROM (SELECT pg_catalog.format(
              'NOT EXISTS (SELECT FROM pgmq.queue_attributes x WHERE pg_catalog.lower(x.queue_name::text) = %L)',
              pg_catalog.substr(qtable, 3)) AS guard) g;
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_kept_sql(text,"char",text,text,text,text,text,text,text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_kept_sql(text,"char",text,text,text,text,text,text,text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_sql_for(qtable text, op "char", low text, qty text DEFAULT '$2'::text, secs text DEFAULT '$3'::text, cond text DEFAULT '$8'::text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT CASE
        WHEN op IN ('s', '1', 'a', 'd') THEN
            -- the statement pgmq._queue_ops_ids_sql gives, with the record's other columns
            pgmq._queue_ops_ids_sql(qtable, op) || $cols$, NULL::integer, NULL::timestamptz,
                  NULL::timestamptz, NULL::timestamptz, NULL::jsonb, NULL::jsonb$cols$
        ELSE pg_catalog.format(
        CASE op
        WHEN 'r' THEN $sql$
        WITH claimed AS (
            UPDATE pgmq.%1$I m
            SET vt = pg_catalog.clock_timestamp() + pg_catalog.make_interval(secs => %3$s),
                read_ct = m.read_ct + 1,
                last_read_at = pg_catalog.clock_timestamp()
            WHERE m.msg_id = ANY(ARRAY(%2$s))
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message, m.headers
        )
        SELECT * FROM claimed c ORDER BY c.msg_id
        $sql$
        WHEN 'p' THEN $sql$
        WITH removed AS (
            DELETE FROM pgmq.%1$I m
            WHERE m.msg_id = ANY(ARRAY(%2$s))
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message, m.headers
        )
        SELECT * FROM removed r ORDER BY r.msg_id
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
        -- read's and pop's pick: the oldest visible messages from the mark up, locked; the
        -- rows are then claimed with "= ANY(ARRAY(pick))", so the update looks up exactly
        -- the picked rows by key, whatever the plan's row estimates (a join could walk
        -- the table)
        pg_catalog.format(
            $pick$
                SELECT q.msg_id FROM pgmq.%1$I q
                WHERE q.msg_id >= %2$s AND q.vt <= pg_catalog.clock_timestamp()
                  AND (%3$s IS NULL OR %3$s = '{}'::jsonb OR q.message @> %3$s)
                ORDER BY q.msg_id
                LIMIT %4$s
                FOR UPDATE SKIP LOCKED
            $pick$,
            qtable, low, cond, qty),
        secs)
        END;
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_sql_for(text,"char",text,text,text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_sql_for(text,"char",text,text,text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.send(queue_name text, msg jsonb)
 RETURNS SETOF bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text := pgmq._message_table_name(queue_name, 'q'::text);
BEGIN
    IF NOT EXISTS (SELECT FROM pgmq.queue_attributes a WHERE pg_catalog.lower(a.queue_name::text) = pg_catalog.lower($1)) THEN
        RETURN QUERY EXECUTE pgmq._queue_ops_ids_sql(qtable, '1')
            USING NULL::"char", NULL::integer, NULL::integer, NULL::timestamptz, NULL::bigint[],
                  ARRAY[msg], ARRAY[NULL::jsonb], NULL::jsonb, 0::bigint;
        RETURN;
    END IF;
    RETURN QUERY SELECT * FROM pgmq._queue_ops_route_ids(
        queue_name, 's'::"char", NULL::timestamptz, NULL::bigint[], ARRAY[msg], ARRAY[NULL::jsonb]);
END
$function$
;
COMMENT ON FUNCTION pgmq.send(text,jsonb) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.send(text,jsonb) TO PUBLIC;

-- By hand: table pgmq.queue_limit_slots
-- Pages fill up again (the table's default fillfactor).
ALTER TABLE pgmq.queue_limit_slots RESET (fillfactor);
