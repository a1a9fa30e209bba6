-- 0051_limit_reclaim_without_function_scans: limit reclaim without function scans
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._limit_reclaim(text,tid[],bigint[],text);
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

