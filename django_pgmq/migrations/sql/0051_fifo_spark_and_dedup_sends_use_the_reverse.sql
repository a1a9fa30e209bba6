-- 0051_fifo_spark_and_dedup_sends_use_the: fifo spark and dedup sends use the builders, a cheaper reclaim
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._limit_reclaim(text,tid[],bigint[],text);
DROP FUNCTION IF EXISTS pgmq._read_claim_sql(text,boolean,text,text,text,text);
DROP FUNCTION IF EXISTS pgmq._read_pick_sql(text,text,text,text,text,text,text);
DROP FUNCTION IF EXISTS pgmq._send_sql(text,boolean,text,text,text,text,text,text,text);
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

CREATE OR REPLACE FUNCTION pgmq._read_grouped(queue_name text, vt integer, qty integer, mode text)
 RETURNS SETOF pgmq.message_record
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text := pgmq._message_table_name(queue_name, 'q'::text);  -- pgmq's per-message check
    lock_space integer := pg_catalog.hashtext(qtable);
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
    FOR grp IN EXECUTE pg_catalog.format(
        $q$
        SELECT h.grp
        FROM (
            SELECT DISTINCT ON (pgmq._fifo_group(headers))
                   pgmq._fifo_group(headers) AS grp, msg_id, vt
            FROM pgmq.%I
            ORDER BY pgmq._fifo_group(headers), msg_id
        ) h
        WHERE h.vt <= pg_catalog.clock_timestamp()
        ORDER BY h.msg_id
        $q$,
        qtable
    )
    LOOP
        -- Another reader holds this group until it commits: leave it alone.
        CONTINUE WHEN NOT pg_catalog.pg_try_advisory_xact_lock(lock_space, pg_catalog.hashtext(grp));
        -- A new statement, so a new snapshot: it sees what the last holder committed.
        EXECUTE pg_catalog.format(
            $q$
            SELECT pg_catalog.count(*) FILTER (WHERE ok)
            FROM (
                SELECT pg_catalog.bool_and(vt <= pg_catalog.clock_timestamp()) OVER (ORDER BY msg_id) AS ok
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

    EXIT WHEN pg_catalog.cardinality(groups) = 0;

    claim := pg_catalog.format(
        $q$
        WITH wanted AS MATERIALIZED (
            -- The readable front of each locked group, ranked, then chosen by mode.
            SELECT g.prio, r.msg_id, r.rnk
            FROM pg_catalog.unnest($1::text[]) WITH ORDINALITY AS g(grp, prio)
            CROSS JOIN LATERAL (
                SELECT f.msg_id,
                       pg_catalog.row_number() OVER w AS rnk,
                       pg_catalog.bool_and(f.vt <= pg_catalog.clock_timestamp()) OVER w AS ok
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
            WHERE m.msg_id IN (SELECT msg_id FROM wanted) AND m.vt <= pg_catalog.clock_timestamp()
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
            SET vt = pg_catalog.clock_timestamp() + $3,
                read_ct = m.read_ct + 1,
                last_read_at = pg_catalog.clock_timestamp()
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
            USING groups, wanted, pg_catalog.make_interval(secs => coalesce(vt, 0)), mode,
            -- The most one group can contribute: every other group gives at least one.
            CASE WHEN mode = 'head' THEN 1 ELSE wanted - pg_catalog.cardinality(groups) + 1 END, given;
        RETURN;
    END IF;
    FOR rec IN EXECUTE claim
        USING groups, wanted, pg_catalog.make_interval(secs => coalesce(vt, 0)), mode,
        CASE WHEN mode = 'head' THEN 1 ELSE wanted - pg_catalog.cardinality(groups) + 1 END, given
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
    EXIT WHEN pg_catalog.cardinality(dead) = 0 OR wanted <= 0;
    END LOOP;
    IF limited THEN
        PERFORM pgmq._claim_record(queue_name, f.held, f.stamps, f.counts, given);
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._read_grouped(text,integer,integer,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._read_grouped(text,integer,integer,text) FROM PUBLIC;

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

CREATE OR REPLACE FUNCTION pgmq.spark_claim(queue_name text, consumer text, vt integer, qty integer, max_msg_id bigint, min_batch bigint)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q'::text);
    stamp timestamptz := pg_catalog.clock_timestamp();
    f record;
    held bigint[];
    ids bigint[];
    dead bigint[];
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
    stamp := pg_catalog.clock_timestamp();
    PERFORM pgmq._spark_consumer_lock(queue_name, consumer);
    SELECT coalesce(pg_catalog.array_agg(id), '{}') INTO held
    FROM pgmq.spark_stream_batch b, pg_catalog.unnest(b.msg_ids) AS id
    WHERE b.queue_name::text = $1 AND b.consumer = $2 AND b.acked_at IS NULL;

    -- $6: max_receive_count when the queue has a dead-letter queue, else NULL (none dead).
    -- Only deliverable messages are picked; the over-read ones the pick walked past (all
    -- of them when it found fewer than qty) are locked to be dead-lettered.
    EXECUTE pg_catalog.format(
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
              AND ($4 IS NULL OR (SELECT pg_catalog.count(*) FROM picked) < $4
                   OR msg_id < (SELECT pg_catalog.max(p.msg_id) FROM picked p))
            ORDER BY msg_id
            LIMIT greatest($4, 100)
            FOR UPDATE SKIP LOCKED
        ), claimed AS (
            UPDATE pgmq.%1$I q
            SET vt = $1 + pg_catalog.make_interval(secs => $5), read_ct = q.read_ct + 1, last_read_at = $1
            WHERE q.msg_id = ANY(ARRAY(SELECT p.msg_id FROM picked p))
            RETURNING q.msg_id
        )
        SELECT (SELECT pg_catalog.array_agg(c.msg_id ORDER BY c.msg_id) FROM claimed c),
               (SELECT pg_catalog.array_agg(o.msg_id ORDER BY o.msg_id) FROM over_read o)
        $q$,
        qtable,
        CASE WHEN f.by_priority THEN 'pgmq._task_priority(headers) DESC, msg_id' ELSE 'msg_id' END
    ) INTO ids, dead
    USING stamp, max_msg_id, held, f.allowed, vt, f.max_receive_count;
    IF dead IS NOT NULL THEN
        PERFORM pgmq._dead_letter_ids(queue_name, dead, 0);
    END IF;
    IF f.held IS NOT NULL OR f.stamps IS NOT NULL THEN
        -- a limited queue only (as pgmq.read): an unlimited one has no state to record
        PERFORM pgmq._claim_record(queue_name, f.held, f.stamps, f.counts, ids);
    END IF;

    IF ids IS NULL THEN
        RETURN NULL;
    END IF;
    -- The owner's helper records the batch (application roles may not write the table).
    RETURN pgmq._spark_batch_record(queue_name::text, consumer::text, min_batch::bigint, ids, stamp);
END
$function$
;
COMMENT ON FUNCTION pgmq.spark_claim(text,text,integer,integer,bigint,bigint) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.spark_claim(text,text,integer,integer,bigint,bigint) TO PUBLIC;

