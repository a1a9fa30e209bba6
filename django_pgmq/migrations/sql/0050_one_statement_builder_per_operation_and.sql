-- 0050_one_statement_builder_per_operation_and: one statement builder per operation and fewer limit statements
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._limit_reclaim(text,tid[],text);
CREATE OR REPLACE FUNCTION pgmq._ack_sql(qtable text, archive boolean, cond text DEFAULT ''::text, ids text DEFAULT '$5'::text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT pg_catalog.format(
        CASE WHEN archive THEN $sql$
        WITH moved AS (
            DELETE FROM pgmq.%1$I q WHERE q.msg_id = ANY(%4$s)%3$s
            RETURNING q.msg_id, q.read_ct, q.enqueued_at, q.last_read_at, q.vt, q.message, q.headers
        )
        INSERT INTO pgmq.%2$I AS a (msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers)
        SELECT * FROM moved
        RETURNING a.msg_id$sql$
        ELSE $sql$
        DELETE FROM pgmq.%1$I q WHERE q.msg_id = ANY(%4$s)%3$s
        RETURNING q.msg_id$sql$ END,
        qtable, 'a' || pg_catalog.substr(qtable, 2), cond, ids);
$function$
;
COMMENT ON FUNCTION pgmq._ack_sql(text,boolean,text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._ack_sql(text,boolean,text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._claim_limits(queue_name text, qty integer, pops boolean, take_lock boolean, OUT allowed integer, OUT slots tid[], OUT tokens tid[], OUT max_in_flight integer, OUT in_flight integer, OUT rate_count integer, OUT rate_seconds double precision, OUT handed_out integer, OUT next_free_at timestamp with time zone)
 RETURNS record
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
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
 SET plan_cache_mode TO 'force_generic_plan'
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

CREATE OR REPLACE FUNCTION pgmq._kept_guard_sql(qtable text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT pg_catalog.format(
        'NOT EXISTS (SELECT FROM pgmq.queue_attributes x WHERE pg_catalog.lower(x.queue_name::text) = %L)',
        pg_catalog.substr(qtable, 3));
$function$
;
COMMENT ON FUNCTION pgmq._kept_guard_sql(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._kept_guard_sql(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._limit_reclaim(lq text, tids tid[], ids bigint[], rcs integer[], qtable text)
 RETURNS tid[]
 LANGUAGE plpgsql
AS $function$
DECLARE
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
    -- The messages still in flight (one short statement: planned at each call, as it
    -- names the queue's table; the rest is static, its plan kept).
    EXECUTE pg_catalog.format(
        'SELECT pg_catalog.array_agg(q.msg_id), pg_catalog.array_agg(q.read_ct) '
        'FROM pgmq.%I q WHERE q.msg_id = ANY ($1) AND q.vt > pg_catalog.clock_timestamp()', qtable)
        INTO f_ids, f_rcs USING ids;
    -- Marked reclaimed, their ctids change (a new version of each row); the others free
    -- as locked (no message, or reclaimed already) keep theirs.
    WITH u AS (
        UPDATE pgmq.queue_limit_slots l SET read_ct = -1
        WHERE l.ctid = ANY (tids) AND l.queue_name IS NOT DISTINCT FROM lq AND l.msg_id IS NOT NULL
          AND l.read_ct IS DISTINCT FROM -1
          AND NOT EXISTS (SELECT 1 FROM ROWS FROM (pg_catalog.unnest(f_ids), pg_catalog.unnest(f_rcs)) AS h(id, rc)
                          WHERE h.id = l.msg_id AND h.rc = l.read_ct)
        RETURNING l.ctid
    )
    SELECT coalesce(pg_catalog.array_agg(x.tid), '{}') INTO freed
    FROM (SELECT u.ctid AS tid FROM u
          UNION ALL
          SELECT s.tid FROM ROWS FROM (pg_catalog.unnest(tids), pg_catalog.unnest(ids), pg_catalog.unnest(rcs))
                            AS s(tid, id, rc)
          WHERE s.id IS NULL OR s.rc = -1) x;
    RETURN freed;
END
$function$
;
COMMENT ON FUNCTION pgmq._limit_reclaim(text,tid[],bigint[],integer[],text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._limit_reclaim(text,tid[],bigint[],integer[],text) FROM PUBLIC;

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
            -- The rows locked, as locked (the latest version of each: what the claim
            -- checks after its lock).
            IF NOT walk THEN
                SELECT pg_catalog.array_agg(x.ctid), pg_catalog.array_agg(x.slot),
                       pg_catalog.array_agg(x.msg_id), pg_catalog.array_agg(x.read_ct),
                       pg_catalog.bool_or(x.msg_id IS NOT NULL AND x.read_ct <> -1)
                INTO c_tids, c_slots, c_ids, c_rcs, c_held
                FROM (SELECT l.ctid, l.slot, l.msg_id, l.read_ct FROM pgmq.queue_limit_slots l
                      WHERE l.queue_name::text = lq AND l.kind = 'f' AND l.slot >= at
                        AND l.slot <= cap AND l.slot <> ALL (seen)
                      ORDER BY l.slot
                      LIMIT want - pg_catalog.cardinality(got)
                      FOR UPDATE SKIP LOCKED) x;
            ELSE
                EXECUTE pg_catalog.format(
                    'SELECT pg_catalog.array_agg(x.ctid), pg_catalog.array_agg(x.slot), '
                    '       pg_catalog.array_agg(x.msg_id), pg_catalog.array_agg(x.read_ct), '
                    '       pg_catalog.bool_or(x.msg_id IS NOT NULL AND x.read_ct <> -1) '
                    'FROM (SELECT l.ctid, l.slot, l.msg_id, l.read_ct FROM pgmq.queue_limit_slots l '
                    '      WHERE l.queue_name::text = $1 AND l.kind = ''f'' AND l.slot >= $5 '
                    '        AND l.slot <= $2 AND l.slot <> ALL ($3) '
                    '        AND NOT EXISTS (SELECT 1 FROM pgmq.%I q WHERE q.msg_id = l.msg_id '
                    '            AND q.read_ct = l.read_ct AND q.vt > pg_catalog.clock_timestamp()) '
                    '      ORDER BY l.slot LIMIT $4 FOR UPDATE SKIP LOCKED) x', qtable)
                INTO c_tids, c_slots, c_ids, c_rcs, c_held
                USING lq, cap, seen, want - pg_catalog.cardinality(got), at;
            END IF;
            IF c_tids IS NULL THEN
                -- the end of the ring: once round from its start
                EXIT WHEN wrapped OR at = 1;
                wrapped := true;
                at := 1;
                CONTINUE;
            END IF;
            seen := seen || c_slots;
            -- by slot number: the last is the highest (a hint only, whatever it is)
            at := c_slots[pg_catalog.cardinality(c_slots)] + 1;
            freed := CASE WHEN c_held THEN pgmq._limit_reclaim(lq, c_tids, c_ids, c_rcs, qtable)
                          ELSE c_tids END;
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
    delay text := '';
    -- Only the ordering and redrive matter here: the limits are the caller's (no lock).
    f record := pgmq._claim_filter(queue_name, attrs - pgmq._limit_keys(), NULL);
    window_ text := (attrs ->> 'deduplication_window') || ' seconds';
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
            delay := pg_catalog.format(' + interval %L', (attrs ->> 'delivery_delay') || ' seconds');
            vt := 'coalesce($4, pg_catalog.clock_timestamp()' || delay || ')';
        END IF;
        IF coalesce((attrs ->> 'deduplication_window')::integer, 0) = 0 THEN
            RETURN pgmq._send_sql(qtable, false, CASE WHEN gate = 'TRUE' THEN '' ELSE ' WHERE ' || gate END,
                                  '$4', '$6', '$7', delay) || pgmq._record_rest_sql();
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
    RETURN pgmq._read_sql(
        qtable, op = 'p', low, '$2', '$3', '$8', f.by_priority, f.max_receive_count,
        -- the name as stored, as the worker's dead letters write it, whatever the
        -- caller's spelling
        CASE WHEN f.dead_letter_queue IS NOT NULL
             THEN pgmq._dead_letter_move_sql(pgmq._stored_queue_name(queue_name), f.dead_letter_queue) END);
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
    SELECT CASE WHEN op IN ('s', '1') THEN pgmq._send_sql(qtable, op = '1', cond, vt, msgs, hdrs)
                WHEN op IN ('a', 'd') THEN pgmq._ack_sql(qtable, op = 'a', cond, ids)
           END;
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
                THEN pgmq._queue_ops_ids_sql(qtable, op, ' WHERE ' || pgmq._kept_guard_sql(qtable), ids, vt, msgs, hdrs)
                ELSE pgmq._queue_ops_sql_for(qtable, op, low || ' AND ' || pgmq._kept_guard_sql(qtable), qty, secs, cond)
           END;
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
        WHEN op IN ('s', '1', 'a', 'd') THEN pgmq._queue_ops_ids_sql(qtable, op) || pgmq._record_rest_sql()
        WHEN op IN ('r', 'p') THEN pgmq._read_sql(qtable, op = 'p', low, qty, secs, cond)
        WHEN op = 'v' THEN pgmq._set_vt_sql(qtable)
    END;
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_sql_for(text,"char",text,text,text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_sql_for(text,"char",text,text,text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._read_pick_sql(qtable text, low text, qty text, cond text, extra text DEFAULT ''::text, order_by text DEFAULT 'q.msg_id'::text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT pg_catalog.format(
        $pick$
                SELECT q.msg_id FROM pgmq.%1$I q
                WHERE q.msg_id >= %2$s AND q.vt <= pg_catalog.clock_timestamp()
                  AND (%3$s IS NULL OR %3$s = '{}'::jsonb OR q.message @> %3$s)%5$s
                ORDER BY %6$s
                LIMIT %4$s
                FOR UPDATE SKIP LOCKED
            $pick$,
        qtable, low, cond, qty, extra, order_by);
$function$
;
COMMENT ON FUNCTION pgmq._read_pick_sql(text,text,text,text,text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._read_pick_sql(text,text,text,text,text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._read_sql(qtable text, pops boolean, low text, qty text DEFAULT '$2'::text, secs text DEFAULT '$3'::text, cond text DEFAULT '$8'::text, by_priority boolean DEFAULT false, max_receive_count integer DEFAULT NULL::integer, dead_move text DEFAULT NULL::text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT pg_catalog.format(
        CASE WHEN dead_move IS NULL THEN $sql$
        WITH $sql$ ELSE $dead$
        WITH picked AS MATERIALIZED (%3$s),
        dead AS (
            DELETE FROM pgmq.%1$I m
            WHERE m.msg_id = ANY(ARRAY(%5$s))
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.message, m.headers,
                      NULL::text AS error
        ),
        %6$s,
        $dead$ END
        || $sql$claimed AS (
            %2$s
            WHERE m.msg_id = ANY(ARRAY($sql$
        || CASE WHEN dead_move IS NULL THEN '%3$s' ELSE 'SELECT p.msg_id FROM picked p' END
        || $sql$))
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message, m.headers
        )
        SELECT * FROM claimed c ORDER BY %4$s
        $sql$,
        qtable,
        CASE WHEN pops THEN pg_catalog.format('DELETE FROM pgmq.%I m', qtable)
        ELSE pg_catalog.format($upd$UPDATE pgmq.%I m
            SET vt = pg_catalog.clock_timestamp() + pg_catalog.make_interval(secs => %s),
                read_ct = m.read_ct + 1,
                last_read_at = pg_catalog.clock_timestamp()$upd$, qtable, secs) END,
        pgmq._read_pick_sql(
            qtable, low, qty, cond,
            CASE WHEN dead_move IS NOT NULL THEN ' AND q.read_ct < ' || max_receive_count::text ELSE '' END,
            CASE WHEN by_priority THEN 'pgmq._task_priority(q.headers) DESC, q.msg_id' ELSE 'q.msg_id' END),
        CASE WHEN by_priority THEN 'pgmq._task_priority(c.headers) DESC, c.msg_id' ELSE 'c.msg_id' END,
        CASE WHEN dead_move IS NOT NULL THEN pgmq._read_pick_sql(
            qtable, low, 'greatest(' || qty || ', 100)', cond,
            pg_catalog.format(
                $x$ AND q.read_ct >= %s
                  AND ((SELECT pg_catalog.count(*) FROM picked) < %s
                       OR q.msg_id < (SELECT pg_catalog.max(p.msg_id) FROM picked p))$x$,
                max_receive_count, qty)) END,
        dead_move);
$function$
;
COMMENT ON FUNCTION pgmq._read_sql(text,boolean,text,text,text,text,boolean,integer,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._read_sql(text,boolean,text,text,text,text,boolean,integer,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._record_rest_sql()
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
    SELECT $cols$, NULL::integer, NULL::timestamptz,
                  NULL::timestamptz, NULL::timestamptz, NULL::jsonb, NULL::jsonb$cols$::text;
$function$
;
COMMENT ON FUNCTION pgmq._record_rest_sql() IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._record_rest_sql() FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._send_sql(qtable text, one boolean DEFAULT false, cond text DEFAULT ''::text, vt text DEFAULT '$4'::text, msgs text DEFAULT '$6'::text, hdrs text DEFAULT '$7'::text, delay text DEFAULT ''::text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT pg_catalog.format(
        CASE WHEN one THEN $sql$
        INSERT INTO pgmq.%1$I AS q (vt, message, headers)
        VALUES (coalesce(%2$s, pg_catalog.clock_timestamp()%6$s), (%3$s)[1], (%4$s)[1])
        RETURNING q.msg_id$sql$
        ELSE $sql$
        INSERT INTO pgmq.%1$I AS q (vt, message, headers)
        SELECT coalesce(%2$s, pg_catalog.clock_timestamp()%6$s), u.msg, u.hdr
        FROM unnest(%3$s, %4$s) AS u(msg, hdr)%5$s
        RETURNING q.msg_id$sql$ END,
        qtable, vt, msgs, hdrs, cond, delay);
$function$
;
COMMENT ON FUNCTION pgmq._send_sql(text,boolean,text,text,text,text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._send_sql(text,boolean,text,text,text,text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._set_vt_sql(qtable text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT pg_catalog.format($sql$
        WITH moved AS (
            UPDATE pgmq.%1$I q SET vt = $4 WHERE q.msg_id = ANY($5)
            RETURNING q.msg_id, q.read_ct, q.enqueued_at, q.last_read_at, q.vt, q.message, q.headers
        )
        SELECT * FROM moved m ORDER BY m.msg_id
        $sql$, qtable);
$function$
;
COMMENT ON FUNCTION pgmq._set_vt_sql(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._set_vt_sql(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.send(queue_name text, msg jsonb)
 RETURNS SETOF bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text := pgmq._message_table_name(queue_name, 'q'::text);
BEGIN
    IF NOT EXISTS (SELECT FROM pgmq.queue_attributes a WHERE pg_catalog.lower(a.queue_name::text) = pg_catalog.lower($1)) THEN
        RETURN QUERY EXECUTE pgmq._send_sql(qtable, true)
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
-- Half of each page left free, so that a claim's two updates of a slot row stay HOT
-- (rows already there keep their place; pages fill to 50% from now on).
ALTER TABLE pgmq.queue_limit_slots SET (fillfactor = 50);
