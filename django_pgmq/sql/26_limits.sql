-- Per-queue in-flight and rate limits (slot and token rows since migration 0045): the queue
-- attributes max_in_flight (at most N messages read and not yet deleted, archived or
-- visible again) and rate_limit ({"count": N, "seconds": S}: at most N handed out in any
-- S-second window), exact across any number of sessions, at any isolation level.
--
-- How (docs/internals/attributes.md, "Concurrency and rate limits"): a limited queue has a few
-- numbered rows in pgmq.queue_limit_slots, and a claim takes one row per message it
-- hands out, with FOR UPDATE SKIP LOCKED, so readers of one queue take different rows at
-- once and none waits for another (nor for a session idle in its transaction: it just
-- does not get the rows that session holds).
--   kind 'f'   max_in_flight slots, numbered 1..max_in_flight. A slot holds the message
--              (msg_id, read_ct) that took it (t unused: every change of the row is in
--              columns no index holds, a HOT update). It frees lazily: no
--              archive, delete or release touches it; a claim reuses a slot once its
--              message is no longer in flight under that read (gone, visible again, or
--              read again under another slot), checked after the slot is locked
--              (pgmq._limit_take, _limit_reclaim). One slot, one message in flight, so
--              no instant has more than max_in_flight in flight.
--   kind 'r'   rate_limit tokens, numbered 1..count. t is when the token was last
--              handed out (a time taken after the claim's rows were claimed); a token
--              is free once t is S seconds old. Each token is used at most once in any
--              S-second window, so no window holds more than count hand-outs.
--   kind 'w'   one row per max_in_flight queue (slot 0): t when a claim last found the
--              queue full, '-infinity' once an acknowledgement woke the readers waiting
--              (pgmq._limit_mark_full, _limit_wake).
-- Rows are made on demand (pgmq.queue_limit_state counts them, and is locked, SKIP
-- LOCKED, only to make more), so a claim costs O(its batch), whatever is in flight,
-- and the table holds at most max_in_flight 'f' rows (about the high-water mark of what
-- was in flight when messages are acknowledged in about the order they were read; more
-- while old reads stay in flight, see pgmq._limit_take).
-- Rows a claim holds are written by their ctid, the queue checked with IS NOT DISTINCT
-- FROM, which is no index condition: the plan stays a TID scan of those rows (with "=" on
-- queue_name PostgreSQL may prefer the index and filter every row of the queue). The
-- claim's functions (pgmq._claim_limits and what it calls, pgmq._claim_record) run with
-- enable_seqscan off: their statements' plans are cached for the session, and one made
-- while the table was small would scan every queue's rows once it is large (measured:
-- a generic plan's Seq Scan in place of the TID scan, a claim 3x slower after a few
-- thousand token rows). And with plan_cache_mode force_generic_plan: every statement
-- of theirs is a lookup by key or by ctid whose plan does not depend on the values, but
-- the plan cache kept planning some anew at each call (their LIMIT and array parameters
-- make the generic plan's estimate look dearer than a custom one's; measured with
-- callgrind on PostgreSQL 15: the planning a limited read+archive cycle adds went from
-- 224,000 to 85,000 instructions, 1.5% of the cycle). The statements that name the
-- queue's table are planned at each call anyway.
-- REPEATABLE READ and SERIALIZABLE: locking a row changed after the snapshot raises a
-- serialization error (a stale snapshot is refused, never counted wrong).
-- A queue without these attributes has no row here and never reaches this file's code.
--
-- The short claim (migration 0010): a read at READ COMMITTED of a queue whose only
-- read-side attribute is max_in_flight locks a window of slots (pgmq._limit_lock), and
-- its kept read probes them, claims and records (pgmq._limit_record) in a statement of its
-- own; the rest, when the window had too few free, the checked way (pgmq._claim_limits).
--
-- Rights: the application role reads and acknowledges a limited queue without any right
-- on these tables: the state writes are in SECURITY DEFINER functions
-- (pgmq._claim_limits, pgmq._claim_record, pgmq._limit_lock, pgmq._limit_record,
-- pgmq._limit_wake) that write only these tables, and leave the queue table's own UPDATE
-- or DELETE to the caller's statement. pgmq._limit_record takes the caller's word that
-- the slots it fills are free (docs/internals/attributes.md, "Rights": a role with
-- UPDATE on the queue table can hand itself messages past any limit already); the
-- others check what they are given.

CREATE TABLE pgmq.queue_limit_state (
    queue_name text PRIMARY KEY,  -- the queue's name, lower-cased
    max_in_flight integer,
    rate_count integer,
    rate_seconds double precision,
    slots_made integer NOT NULL DEFAULT 0,   -- 'f' rows made: numbered 1..slots_made
    tokens_made integer NOT NULL DEFAULT 0   -- 'r' rows made: numbered 1..tokens_made
);

CREATE TABLE pgmq.queue_limit_slots (
    queue_name text NOT NULL,      -- the queue's name, lower-cased
    kind "char" NOT NULL,          -- 'f' a max_in_flight slot, 'r' a rate_limit token
    slot integer NOT NULL,
    t timestamptz NOT NULL DEFAULT '-infinity',  -- 'r': last handed out; 'w': marked full
                                   -- ('f': unused since migration 0046)
    msg_id bigint,                 -- 'f': the message holding the slot
    read_ct integer                -- 'f': its read_ct when it took the slot (-1: reclaimed)
) WITH (fillfactor = 50);
-- Half of each page left free (since migration 0050): a checked claim updates each slot
-- row it takes twice (reclaimed, recorded; the short claim of migration 0010 once), and
-- an update that finds no room on the row's page
-- is not HOT: it adds an entry to both indexes (the unique one checked), which later
-- scans walk past. The table holds at most max_in_flight small rows per queue.
-- The rows of a queue (a unique index, not a constraint, so that the migrations make it
-- with the other indexes); the tokens by t (a claim takes the oldest first). No index
-- by msg_id: since migration 0046 no acknowledgement looks a slot up.
-- The index by t holds the tokens only (since migration 0052): every 'f' row has the same
-- t, and a generic plan of the ring's walk (queue_name, kind 'f', slot from the session's
-- cursor, ORDER BY slot LIMIT want), with no statistics on the table (autovacuum off, or
-- a claim before its first analyze), estimated both indexes at one row and could take
-- this one: a scan of every slot of the queue and a sort, O(slots made) a claim
-- (measured with callgrind on PostgreSQL 15: 7.1 M to 7.7 M instructions a read+archive
-- cycle of 10 at 1,024 slots, 3.7 M to 4.2 M by the key; 2.3 M without a limit).
CREATE UNIQUE INDEX queue_limit_slots_key ON pgmq.queue_limit_slots (queue_name, kind, slot);
CREATE INDEX queue_limit_slots_free ON pgmq.queue_limit_slots (queue_name, kind, t) WHERE kind = 'r';

-- Rows made up front for a new limit (more are made on demand, up to the limit).
CREATE FUNCTION pgmq._limit_prefill()
RETURNS integer
LANGUAGE sql IMMUTABLE
AS $fn$ SELECT 1024 $fn$;

CREATE FUNCTION pgmq._forget_queue_limits()
RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
    DELETE FROM pgmq.queue_limit_state s WHERE s.queue_name::text = pg_catalog.lower(OLD.queue_name::text);
    -- Rows a claim in progress holds stay (no wait); a limit set again reuses them.
    DELETE FROM pgmq.queue_limit_slots l
    WHERE (l.queue_name, l.kind, l.slot) IN (
        SELECT x.queue_name, x.kind, x.slot FROM pgmq.queue_limit_slots x
        WHERE x.queue_name::text = pg_catalog.lower(OLD.queue_name::text)
        FOR UPDATE SKIP LOCKED);
    RETURN OLD;
END
$fn$;

CREATE TRIGGER queue_attributes_forget_limits
AFTER DELETE ON pgmq.queue_attributes
FOR EACH ROW EXECUTE FUNCTION pgmq._forget_queue_limits();

-- Keep a queue's limit rows in step with its attributes (called by
-- pgmq.set_queue_attributes under the queue's lock). A new max_in_flight starts from the
-- messages in flight now (read, vt in the future), each given a slot; changed limits keep
-- the rows (a lowered limit hands out nothing while slots above it are taken). Never
-- waits on a claim: the state row is taken NOWAIT (a claim making rows holds it for its
-- transaction; retried for up to a second, then 55P03), rows a claim holds are left.
CREATE FUNCTION pgmq._sync_queue_limits(queue_name text, attrs jsonb)
RETURNS void
LANGUAGE plpgsql
AS $fn$
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
            SELECT * INTO s FROM pgmq.queue_limit_state l WHERE l.queue_name::text = lq
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
    IF NOT attrs ?| pgmq._limit_keys() THEN
        DELETE FROM pgmq.queue_limit_state l WHERE l.queue_name::text = lq;
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
                          WHERE l.queue_name::text = lq AND l.kind = 'f'), 0);
        EXECUTE pg_catalog.format(
            'INSERT INTO pgmq.queue_limit_slots (queue_name, kind, slot, t, msg_id, read_ct) '
            'SELECT $1, ''f'', $2 + pg_catalog.row_number() OVER (ORDER BY q.msg_id), q.vt, q.msg_id, q.read_ct '
            'FROM pgmq.%I q WHERE q.read_ct > 0 AND q.vt > pg_catalog.clock_timestamp() '
            '  AND NOT EXISTS (SELECT 1 FROM pgmq.queue_limit_slots x '
            '                  WHERE x.queue_name::text = $1 AND x.msg_id = q.msg_id)',
            pgmq.format_table_name(queue_name, 'q')) USING lq, made;
        made := coalesce((SELECT pg_catalog.max(l.slot) FROM pgmq.queue_limit_slots l
                          WHERE l.queue_name::text = lq AND l.kind = 'f'), 0);
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
                          WHERE l.queue_name::text = lq AND l.kind = 'r'), 0);
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
    WHERE l.queue_name::text = lq;
END
$fn$;

-- Delete a queue's free limit rows of kind (NULL: both) numbered above (NULL: all),
-- skipping those a claim holds (they stay, and are used again once the limit allows).
-- A slot still holding a message is kept, and counts, until it frees.
CREATE FUNCTION pgmq._limit_drop_rows(lq text, kind "char", above integer DEFAULT NULL)
RETURNS void
LANGUAGE sql
AS $fn$
    DELETE FROM pgmq.queue_limit_slots l
    WHERE (l.queue_name, l.kind, l.slot) IN (
        SELECT x.queue_name, x.kind, x.slot FROM pgmq.queue_limit_slots x
        WHERE x.queue_name::text = $1 AND ($2 IS NULL OR x.kind = $2)
          AND ($3 IS NULL OR x.slot > $3)
          AND ($3 IS NULL OR x.kind = 'r' OR x.msg_id IS NULL OR x.read_ct = -1)
        FOR UPDATE SKIP LOCKED);
$fn$;

-- Take up to want (NULL: all there are) free rows of kind, numbered 1..cap, for this
-- transaction (their ctids: the rows stay where they are while it holds them) (FOR
-- UPDATE SKIP LOCKED: a row another claim holds is skipped, never waited for), making
-- more rows when too few are free and fewer than cap exist (made, as the state row said;
-- re-read under its lock). None while a row above cap is still taken (a lowered limit).
-- Called by pgmq._claim_limits only (it runs as the owner).
--   'r'  a token is free when t <= free_before (now - S); the oldest first.
--   'f'  slots free lazily (acknowledgements touch no slot): a slot is free when it holds
--        no message, or its message is no longer in flight under the read that took it
--        (deleted, archived, visible again, or read again under another slot), which
--        pgmq._limit_reclaim checks after the slot is locked. The slots are tried in
--        turn, as a ring: from where this session's last claim of the queue stopped
--        (the session setting pgmq.limit_at_<queue>, a hint only: any value is safe),
--        by slot number, so the slot tried first is the one this session used longest
--        ago. A slot's row changes only in columns no index holds (msg_id, read_ct:
--        HOT updates), so the walk by slot number meets no dead index entries however
--        busy the queue. When the slots tried still hold messages in flight, the claim
--        looks past them in one walk along the ring (the queue's messages probed by
--        msg_id, nothing locked until a slot is found free; the session's cursor then
--        starts its next claim after them, so each slot in flight is walked past once
--        per turn of the ring, not once per claim), and makes new slots, while fewer
--        than cap exist, when the walk finds too few. With cap made, the walk waits
--        for a second after a claim found the queue full (the 'w' row): at a full queue
--        a claim costs O(its batch), and the walk runs at most once a second.
CREATE FUNCTION pgmq._limit_take(
    lq text, kind "char", want integer, cap integer, made integer, free_before timestamptz,
    qtable text
)
RETURNS tid[]
LANGUAGE plpgsql
AS $fn$
DECLARE
    got tid[] := '{}';
    seen integer[] := '{}';
    c_tids tid[];
    c_slots integer[];
    c_ids bigint[];
    c_held boolean;
    c_free tid[];
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
    upto integer := cap;
BEGIN
    IF want <= 0 THEN
        RETURN got;
    END IF;
    IF kind = 'r' THEN
        -- (an IF of its own: a condition with a subquery runs as a statement, also for 'f')
        IF EXISTS (SELECT 1 FROM pgmq.queue_limit_slots l
                   WHERE l.queue_name::text = lq AND l.kind = 'r' AND l.slot > cap
                     AND l.t > free_before) THEN
            RETURN got;
        END IF;
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
            -- The first round looks at a window of the ring only (since migration
            -- 0009): a btree scan checks every entry of the leaf page it reads until a
            -- bound fails, so with cap as the only bound each claim checked the ~400
            -- entries of a page (callgrind, PostgreSQL 15: 0.13 M instructions a read
            -- of 10, a third of what the claim's ring walk cost). An empty window goes
            -- on with the rest of the ring.
            upto := CASE WHEN rounds = 1 AND NOT walk
                         THEN LEAST(cap::bigint, at::bigint + 2 * (want - pg_catalog.cardinality(got))::bigint + 8)
                         ELSE cap END;
            IF NOT walk THEN
                SELECT pg_catalog.array_agg(x.ctid), pg_catalog.array_agg(x.slot),
                       pg_catalog.array_agg(x.msg_id),
                       pg_catalog.bool_or(x.msg_id IS NOT NULL AND x.read_ct <> -1),
                       pg_catalog.array_agg(x.ctid) FILTER (WHERE x.msg_id IS NULL OR x.read_ct = -1)
                INTO c_tids, c_slots, c_ids, c_held, c_free
                FROM (SELECT l.ctid, l.slot, l.msg_id, l.read_ct FROM pgmq.queue_limit_slots l
                      WHERE l.queue_name::text = lq AND l.kind = 'f' AND l.slot >= at
                        AND l.slot <= upto AND l.slot <> ALL (seen)
                      ORDER BY l.slot
                      LIMIT want - pg_catalog.cardinality(got)
                      FOR UPDATE SKIP LOCKED) x;
            ELSE
                EXECUTE pg_catalog.format(
                    'SELECT pg_catalog.array_agg(x.ctid), pg_catalog.array_agg(x.slot), '
                    '       pg_catalog.array_agg(x.msg_id), '
                    '       pg_catalog.bool_or(x.msg_id IS NOT NULL AND x.read_ct <> -1), '
                    '       pg_catalog.array_agg(x.ctid) FILTER (WHERE x.msg_id IS NULL OR x.read_ct = -1) '
                    'FROM (SELECT l.ctid, l.slot, l.msg_id, l.read_ct FROM pgmq.queue_limit_slots l '
                    '      WHERE l.queue_name::text = $1 AND l.kind = ''f'' AND l.slot >= $5 '
                    '        AND l.slot <= $2 AND l.slot <> ALL ($3) '
                    '        AND NOT EXISTS (SELECT 1 FROM pgmq.%I q WHERE q.msg_id = l.msg_id '
                    '            AND q.read_ct = l.read_ct AND q.vt > pg_catalog.clock_timestamp()) '
                    '      ORDER BY l.slot LIMIT $4 FOR UPDATE SKIP LOCKED) x', qtable)
                INTO c_tids, c_slots, c_ids, c_held, c_free
                USING lq, cap, seen, want - pg_catalog.cardinality(got), at;
            END IF;
            IF c_tids IS NULL AND upto < LEAST(cap, made) THEN
                -- an empty window (its slots held by other claims): the rest of the ring
                at := upto + 1;
                CONTINUE;
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
            -- the slots free as locked (no message, or reclaimed already), and those
            -- whose message is no longer in flight under the read that took them
            freed := CASE WHEN c_held
                          THEN coalesce(c_free, '{}') || pgmq._limit_reclaim(lq, c_tids, c_ids, qtable)
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
$fn$;

-- Of the max_in_flight slots tids (rows this transaction locked, holding messages ids:
-- their values as locked), those that held a message no longer in flight: their ctids
-- after this call (the slots free as locked, no message or reclaimed already, the
-- caller has from its locking statement since migration 0051). A slot whose message is still in flight under the read that took it keeps it; one that
-- held a message no longer in flight is marked reclaimed (read_ct -1, which no message
-- has, so it stays free until pgmq._claim_record fills it; a HOT update, as every change
-- of an 'f' row). The messages are looked up in a statement of their own, after the slots
-- were locked: at READ COMMITTED its snapshot sees every claim that wrote them (the
-- values passed are the rows' latest versions: no one else writes a row this
-- transaction holds). At REPEATABLE READ they are locked FOR SHARE first, so one changed
-- since the snapshot refuses the claim (40001) rather than freeing a slot on a stale
-- view. The values come from the statement that locked the rows (no second look at
-- them). Called by pgmq._limit_take only.
CREATE FUNCTION pgmq._limit_reclaim(lq text, tids tid[], ids bigint[], qtable text)
RETURNS tid[]
LANGUAGE plpgsql
AS $fn$
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
    -- Marked reclaimed, their ctids change (a new version of each row). A slot's message
    -- is found by its position in f_ids (msg_id is the queue table's key: each at most
    -- once), with no function scan of the arrays (since migration 0051: a FunctionScan's
    -- start-up was a tenth of what a claim adds).
    WITH u AS (
        UPDATE pgmq.queue_limit_slots l SET read_ct = -1
        WHERE l.ctid = ANY (tids) AND l.queue_name IS NOT DISTINCT FROM lq AND l.msg_id IS NOT NULL
          AND l.read_ct IS DISTINCT FROM -1
          AND f_rcs[pg_catalog.array_position(f_ids, l.msg_id)] IS DISTINCT FROM l.read_ct
        RETURNING l.ctid
    )
    SELECT coalesce(pg_catalog.array_agg(u.ctid), '{}') INTO freed FROM u;
    RETURN freed;
END
$fn$;

-- What a queue's limits allow a claim of qty now (pops: a pop, which max_in_flight does
-- not limit). take_lock: a claim: the rows it may use (slots, tokens) are taken for its
-- transaction, to be recorded by pgmq._claim_record. Else a look that may be stale by
-- the time anyone acts on it (metrics, a worker's wait), which takes nothing: then
-- in_flight and handed_out are the counts now (qty NULL: counted in full), and
-- next_free_at when the limit that binds lets a claim through again (NULL when allowed
-- > 0 or not known). No state row: nothing limits (allowed = qty, the rest NULL).
CREATE FUNCTION pgmq._claim_limits(
    queue_name text, qty integer, pops boolean, take_lock boolean,
    OUT allowed integer, OUT slots tid[], OUT tokens tid[],
    OUT max_in_flight integer, OUT in_flight integer,
    OUT rate_count integer, OUT rate_seconds double precision, OUT handed_out integer,
    OUT next_free_at timestamptz
)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
SET enable_seqscan = off SET plan_cache_mode = force_generic_plan
AS $fn$
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
$fn$;

-- Record a claim of a limited queue (after pgmq._claim_filter allowed it, in the same
-- transaction, which holds the rows it was given): the claimed messages take the slots
-- in held (not for a pop), one each, t their vt (claimed_vts and claimed_read_cts when
-- the caller has the claimed rows, else looked up); as many tokens of counts are stamped
-- now. stamps only says the queue has a rate limit (the filter's marker). Only free
-- rows are written (a token whose t passed; a slot never used or reclaimed: read_ct
-- -1, pgmq._limit_reclaim; a slot's t never changes, so its updates are HOT), only
-- messages in flight take a slot, and the limits are the queue's: a call with made-up
-- arguments can use up the caller's own claims, not free anyone else's.
CREATE FUNCTION pgmq._claim_record(
    queue_name text, held tid[], stamps timestamptz[], counts tid[], claimed bigint[],
    pops boolean DEFAULT false, claimed_read_cts integer[] DEFAULT NULL,
    claimed_vts timestamptz[] DEFAULT NULL
)
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
SET enable_seqscan = off SET plan_cache_mode = force_generic_plan
AS $fn$
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
$fn$;

-- The short claim of a max_in_flight queue (since migration 0010), for a read at READ
-- COMMITTED whose only read-side attribute is that limit (called by pgmq.read): want
-- slots of the ring locked for this transaction, FOR UPDATE SKIP LOCKED, from this
-- session's cursor (as pgmq._limit_take walks it), in a window of the ring; their ctids.
-- Nothing is checked here: the caller's kept read (pgmq._read_sql with slots) reads these
-- rows by ctid and probes which are free, in a statement of its own whose snapshot is
-- taken after this lock (so it sees every claim that wrote them, and the rows as
-- locked), reads at most that many messages and records them with pgmq._limit_record.
-- NULL when a window of want slots is not to be had (the ring's slots not yet made,
-- other claims holding the window's slots, a limit lowered while slots above it are
-- taken): the caller then claims the checked way (pgmq._claim_limits), which walks the
-- ring, makes slots and marks a full queue. Slots locked here and not used stay locked
-- until the transaction ends; the checked way may take them.
CREATE FUNCTION pgmq._limit_lock(queue_name text, want integer)
RETURNS tid[]
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
SET enable_seqscan = off SET plan_cache_mode = force_generic_plan
AS $fn$
DECLARE
    lq text := pg_catalog.lower(queue_name);
    at_key text := 'pgmq.limit_at_' || pg_catalog.replace(lq, '-', '$');
    at_ text := pg_catalog.current_setting(at_key, true);
    -- up to nine digits (as '^[0-9]{1,9}$' would say: a regular expression with counted
    -- repeats cost about 7,000 instructions a read), else from slot 1
    at bigint := CASE WHEN pg_catalog.octet_length(at_) BETWEEN 1 AND 9
                           AND pg_catalog.ltrim(at_, '0123456789') = '' THEN at_::bigint ELSE 1 END;
    tids tid[];
BEGIN
    -- One statement (each costs its own set-up): the window (want slots from the
    -- cursor, from the ring's start when fewer are left before its end; none while a
    -- slot above the limit still holds a message: a lowered limit) locked, and when it is
    -- whole, the cursor moved past it.
    SELECT CASE WHEN want > 0 AND pg_catalog.count(*) = want
                     AND pg_catalog.set_config(at_key, (pg_catalog.max(x.slot) + 1)::text, false) IS NOT NULL
                THEN pg_catalog.array_agg(x.ctid) END
    INTO tids
    FROM pgmq.queue_limit_state s
    CROSS JOIN LATERAL (
        SELECT l.ctid, l.slot FROM pgmq.queue_limit_slots l
        WHERE l.queue_name::text = lq AND l.kind = 'f'
          AND l.slot >= CASE WHEN at + want - 1 > LEAST(s.max_in_flight, s.slots_made) THEN 1 ELSE at END
          AND l.slot <= LEAST(s.max_in_flight, s.slots_made,
                              CASE WHEN at + want - 1 > LEAST(s.max_in_flight, s.slots_made) THEN 1 ELSE at END
                              + 2 * want::bigint + 8)
          AND NOT EXISTS (SELECT 1 FROM pgmq.queue_limit_slots o
                          WHERE o.queue_name::text = lq AND o.kind = 'f' AND o.slot > s.max_in_flight
                            AND o.msg_id IS NOT NULL)
        ORDER BY l.slot
        LIMIT GREATEST(want, 0)
        FOR UPDATE OF l SKIP LOCKED) x
    WHERE s.queue_name::text = lq AND s.max_in_flight IS NOT NULL;
    RETURN tids;
END
$fn$;

-- Record a short claim (pgmq._limit_lock): the claimed messages (ids, read under
-- read_cts) take the slots free, one each, in order, each slot written once (no
-- "reclaimed" write before). Called by the kept limited read (pgmq._read_sql with slots),
-- in its statement, after its claim. The caller's word is taken that these slots are free
-- (docs/internals/attributes.md, "Rights": a role that may read the queue may already
-- hand itself messages past any limit), but whatever the arguments this writes only
-- max_in_flight slot rows of queue_name, never the queue's state or attributes, and never
-- waits (a row another transaction holds raises lock_not_available within a
-- millisecond, as NOWAIT would). When every free slot
-- was used and fewer than qty were free, sets the session setting pgmq.limit_short to
-- '1': the caller then claims the rest the checked way. How many slots were written.
CREATE FUNCTION pgmq._limit_record(
    queue_name text, qty integer, free tid[], ids bigint[], read_cts integer[]
)
RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
SET enable_seqscan = off SET plan_cache_mode = force_generic_plan SET lock_timeout = '1ms'
AS $fn$
DECLARE
    n integer;
BEGIN
    IF coalesce(pg_catalog.cardinality(ids), 0) >= coalesce(pg_catalog.cardinality(free), 0)
       AND coalesce(pg_catalog.cardinality(free), 0) < qty THEN
        PERFORM pg_catalog.set_config('pgmq.limit_short', '1', false);
    END IF;
    -- Each row by its ctid (of the first as many as there are messages), its message
    -- found by the ctid's place in free (no join with a function scan of the arrays:
    -- 54,000 instructions a claim of 10 less); every other condition is no index
    -- condition (IS NOT DISTINCT FROM), so the plan stays a TID scan of the rows given
    -- (with kind = 'f' PostgreSQL's generic plan scanned every slot of the index).
    -- The caller's own claim holds these rows (pgmq._limit_lock), so the update waits
    -- for nothing; a made-up ctid of a row another transaction holds would wait, which
    -- lock_timeout turns into an error at once (55P03, as NOWAIT: a re-lock SKIP LOCKED
    -- cost 48,000 instructions a claim of 10).
    UPDATE pgmq.queue_limit_slots l
    SET msg_id = ids[pg_catalog.array_position(free, l.ctid)],
        read_ct = read_cts[pg_catalog.array_position(free, l.ctid)]
    WHERE l.ctid = ANY (free[1:LEAST(pg_catalog.cardinality(ids), pg_catalog.cardinality(read_cts))])
      AND l.queue_name IS NOT DISTINCT FROM pg_catalog.lower($1)
      AND l.kind IS NOT DISTINCT FROM 'f'::"char";
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$fn$;

-- Mark a max_in_flight queue (its lower-cased name) full: a claim was refused some for
-- want of a slot (so a reader may be waiting). The mark is the queue's 'w' row in pgmq.queue_limit_slots (slot 0,
-- t when it was marked, '-infinity' when not): acknowledgements look at it, and the first
-- one after it wakes the readers waiting (pgmq._limit_wake). Refreshed at most once a
-- second (the claims' walk past slots in flight, pgmq._limit_take, waits for that too);
-- never waits: a row another session holds is left as it is. The row is made here when
-- missing, under the state row (SKIP LOCKED), so no two sessions insert it at once. At
-- READ COMMITTED only (the worker's level; a reader at a higher level relies on its poll).
CREATE FUNCTION pgmq._limit_mark_full(lq text)
RETURNS void
LANGUAGE plpgsql
AS $fn$
BEGIN
    IF pg_catalog.current_setting('transaction_isolation') <> 'read committed' THEN
        RETURN;
    END IF;
    UPDATE pgmq.queue_limit_slots w SET t = pg_catalog.clock_timestamp()
    WHERE w.ctid = (SELECT x.ctid FROM pgmq.queue_limit_slots x
                    WHERE x.queue_name::text = lq AND x.kind = 'w' AND x.slot = 0
                      AND x.t < pg_catalog.clock_timestamp() - interval '1 second'
                    FOR UPDATE SKIP LOCKED)
      AND w.queue_name IS NOT DISTINCT FROM lq;
    IF NOT FOUND AND NOT EXISTS (SELECT 1 FROM pgmq.queue_limit_slots x
                                 WHERE x.queue_name::text = lq AND x.kind = 'w' AND x.slot = 0) THEN
        PERFORM 1 FROM pgmq.queue_limit_state l WHERE l.queue_name::text = lq
        FOR NO KEY UPDATE SKIP LOCKED;
        IF FOUND THEN
            INSERT INTO pgmq.queue_limit_slots (queue_name, kind, slot, t)
            VALUES (lq, 'w', 0, pg_catalog.clock_timestamp())
            ON CONFLICT DO NOTHING;
        END IF;
    END IF;
END
$fn$;

-- After an acknowledgement (archive, delete, a release by set_vt, a dead letter) of a
-- queue (its lower-cased name): when a claim marked the queue full since the last wake,
-- notify pgmq._limit_channel (at commit) and clear the mark, so a stream of
-- acknowledgements notifies once per time the queue filled up (a notifying commit takes
-- PostgreSQL's database-wide NOTIFY lock: one per acknowledgement would serialize every
-- commit). The mark is cleared SKIP LOCKED (another acknowledgement clearing it notifies
-- instead), and at a level above READ COMMITTED not at all (that would risk 40001 for
-- an acknowledgement): the notification then goes out each time. Frees nothing: a claim
-- finds a slot whose message is gone by itself (pgmq._limit_take). Whether anything
-- was notified. Acknowledgements of every queue ask, in their statement: one index
-- lookup, no row written unless the queue was marked full.
CREATE FUNCTION pgmq._limit_wake(lq text)
RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    channel text;
BEGIN
    IF pg_catalog.current_setting('transaction_isolation') = 'read committed' THEN
        UPDATE pgmq.queue_limit_slots w SET t = '-infinity'
        WHERE w.ctid = (SELECT x.ctid FROM pgmq.queue_limit_slots x
                        WHERE x.queue_name::text = lq AND x.kind = 'w' AND x.slot = 0
                          AND x.t > '-infinity'::timestamptz
                        FOR UPDATE SKIP LOCKED)
          AND w.queue_name IS NOT DISTINCT FROM lq;
    ELSE
        PERFORM 1 FROM pgmq.queue_limit_slots x
        WHERE x.queue_name::text = lq AND x.kind = 'w' AND x.slot = 0 AND x.t > '-infinity'::timestamptz;
    END IF;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    channel := (SELECT pgmq._limit_channel(m.queue_name::text) FROM pgmq.meta m
                WHERE pg_catalog.lower(m.queue_name::text) = lq);
    IF channel IS NULL THEN
        RETURN false;
    END IF;
    PERFORM pg_catalog.pg_notify(channel, '');
    RETURN true;
END
$fn$;

-- The channel a limited queue's slot frees on (the first archive, delete or release
-- after the queue filled up notifies it at commit, pgmq._limit_wake, so a worker at the
-- limit reads again at once).
CREATE FUNCTION pgmq._limit_channel(queue_name text)
RETURNS text
LANGUAGE sql IMMUTABLE
AS $fn$ SELECT pgmq._queue_channel(queue_name, 'FREE'::text) $fn$;

-- The limits of one queue, or of every limited queue: the limits, the messages in flight
-- now, those handed out in the current window, and (at a limit) when a claim can next
-- get through. Not part of pgmq's API.
CREATE FUNCTION pgmq.queue_limits(queue_name text DEFAULT NULL)
RETURNS TABLE(
    queue_name text, max_in_flight integer, in_flight integer, rate_count integer,
    rate_seconds double precision, handed_out integer, next_free_at timestamptz
)
LANGUAGE sql
AS $fn$
    SELECT m.queue_name::text, l.max_in_flight, l.in_flight,
           l.rate_count, l.rate_seconds, l.handed_out, l.next_free_at
    FROM pgmq.meta m
    JOIN pgmq.queue_limit_state s ON s.queue_name::text = pg_catalog.lower(m.queue_name::text)
    CROSS JOIN LATERAL pgmq._claim_limits(m.queue_name::text, NULL::integer, false, false) l
    WHERE $1 IS NULL OR pg_catalog.lower(m.queue_name::text) = pg_catalog.lower($1)
    ORDER BY m.queue_name;
$fn$;
