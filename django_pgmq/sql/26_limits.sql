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
--   kind 'f'   max_in_flight slots, numbered 1..max_in_flight. A slot is free from t on:
--              t is the vt of the message that holds it (msg_id, read_ct), '-infinity'
--              once an archive, delete or release freed it (pgmq._limit_free). A slot
--              whose t passed is checked against its message first (a heartbeat that
--              moved the vt keeps the slot: its t moves too). One slot, one message, so
--              no instant has more than max_in_flight in flight.
--   kind 'r'   rate_limit tokens, numbered 1..count. t is when the token was last
--              handed out (a time taken after the claim's rows were claimed); a token
--              is free once t is S seconds old. Each token is used at most once in any
--              S-second window, so no window holds more than count hand-outs.
-- Rows are made on demand (pgmq.queue_limit_state counts them, and is locked, SKIP
-- LOCKED, only to make more), so a claim costs O(its batch), whatever is in flight,
-- and the table holds at most the high-water mark of what was in flight.
-- REPEATABLE READ and SERIALIZABLE: locking a row changed after the snapshot raises a
-- serialization error (a stale snapshot is refused, never counted wrong).
-- A queue without these attributes has no row here and never reaches this file's code.
--
-- Rights: the application role reads and acknowledges a limited queue without any right
-- on these tables: the state writes are in SECURITY DEFINER functions
-- (pgmq._claim_limits, pgmq._claim_record, pgmq._limit_free) that write only these
-- tables, check what they are given, and leave the queue table's own UPDATE or DELETE
-- to the caller's statement.

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
    t timestamptz NOT NULL DEFAULT '-infinity',  -- 'f': free from then; 'r': last handed out
    msg_id bigint,                 -- 'f': the message holding the slot
    read_ct integer                -- 'f': its read_ct when it took the slot
);
-- The rows of a queue (a unique index, not a constraint, so that the migrations make it
-- with the other indexes); the free rows first (a claim); the holder of a message (an
-- acknowledgement).
CREATE UNIQUE INDEX queue_limit_slots_key ON pgmq.queue_limit_slots (queue_name, kind, slot);
CREATE INDEX queue_limit_slots_free ON pgmq.queue_limit_slots (queue_name, kind, t);
CREATE INDEX queue_limit_slots_msg ON pgmq.queue_limit_slots (queue_name, msg_id)
    WHERE msg_id IS NOT NULL;

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
    IF NOT (attrs ? 'max_in_flight' OR attrs ? 'rate_limit') THEN
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
          AND ($3 IS NULL OR x.kind = 'r' OR x.t <= pg_catalog.clock_timestamp())
        FOR UPDATE SKIP LOCKED);
$fn$;

-- Take up to want (NULL: all there are) free rows of kind, numbered 1..cap, for this
-- transaction (their ctids: the rows stay where they are while it holds them) (FOR UPDATE SKIP LOCKED: a row another claim holds is skipped, never
-- waited for), making more rows when too few are free and fewer than cap exist (made,
-- as the state row said; re-read under its lock). A row
-- is free when t <= free_before ('f': now; 'r': now - S). An 'f' slot whose t passed
-- while its message is still in flight under the same read (a heartbeat moved its vt)
-- is kept, its t moved to the new vt. None while a row above cap is still taken (a
-- lowered limit). Called by pgmq._claim_limits only (it runs as the owner).
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
               WHERE l.queue_name::text = lq AND l.kind = $2 AND l.slot > cap AND l.t > free_before) THEN
        RETURN got;
    END IF;
    LOOP
        rounds := rounds + 1;
        SELECT pg_catalog.array_agg(x.ctid), pg_catalog.array_agg(x.slot),
               pg_catalog.array_agg(x.msg_id), pg_catalog.array_agg(x.read_ct)
        INTO c_tids, c_slots, c_ids, c_rcs
        FROM (SELECT l.ctid, l.slot, l.msg_id, l.read_ct FROM pgmq.queue_limit_slots l
              WHERE l.queue_name::text = lq AND l.kind = $2 AND l.t <= free_before AND l.slot <= cap
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
                '      WHERE l.ctid = h.tid AND l.queue_name::text = $4 RETURNING h.tid) '
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
        FROM pgmq.queue_limit_state l WHERE l.queue_name::text = lq
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
                UPDATE pgmq.queue_limit_state l SET slots_made = made + n WHERE l.queue_name::text = lq;
            ELSE
                UPDATE pgmq.queue_limit_state l SET tokens_made = made + n WHERE l.queue_name::text = lq;
            END IF;
        END IF;
    END IF;
    RETURN got;
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
AS $fn$
DECLARE
    lq text := pg_catalog.lower(queue_name);
    s pgmq.queue_limit_state;
    qtable text;
    now_ timestamptz := pg_catalog.clock_timestamp();
    window_start timestamptz;
    free_ integer;
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
            -- Counted in full (metrics): taken is t in the future, or passed while the
            -- message is still in flight under the same read (a heartbeat).
            EXECUTE pg_catalog.format(
                'SELECT pg_catalog.count(*) FROM pgmq.queue_limit_slots l '
                'WHERE l.queue_name::text = $1 AND l.kind = ''f'' AND l.msg_id IS NOT NULL '
                '  AND (l.t > $2 OR EXISTS (SELECT 1 FROM pgmq.%I q WHERE q.msg_id = l.msg_id '
                '       AND q.read_ct = l.read_ct AND q.vt > $2))',
                qtable) INTO in_flight USING lq, now_;
        END IF;
        IF NOT pops THEN
            IF EXISTS (SELECT 1 FROM pgmq.queue_limit_slots l WHERE l.queue_name::text = lq AND l.kind = 'f'
                       AND l.slot > s.max_in_flight AND l.t > now_) THEN
                free_ := 0;
            ELSIF qty IS NULL THEN
                free_ := GREATEST(s.max_in_flight - in_flight, 0);
            ELSE
                -- Enough to answer: at most qty free slots counted (no heartbeat check).
                free_ := GREATEST(s.max_in_flight - s.slots_made, 0)
                         + (SELECT pg_catalog.count(*) FROM (
                                SELECT 1 FROM pgmq.queue_limit_slots l
                                WHERE l.queue_name::text = lq AND l.kind = 'f' AND l.t <= now_
                                  AND l.slot <= s.max_in_flight
                                LIMIT qty) x);
            END IF;
            allowed := LEAST(allowed, free_);
            IF free_ = 0 THEN
                next_free_at := GREATEST(next_free_at, (
                    SELECT pg_catalog.min(l.t) FROM pgmq.queue_limit_slots l
                    WHERE l.queue_name::text = lq AND l.kind = 'f' AND l.t > now_));
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
-- rows are written, only messages in flight take a slot, and the limits are the
-- queue's: a call with made-up arguments can use up the caller's own claims, not free
-- anyone else's.
CREATE FUNCTION pgmq._claim_record(
    queue_name text, held tid[], stamps timestamptz[], counts tid[], claimed bigint[],
    pops boolean DEFAULT false, claimed_read_cts integer[] DEFAULT NULL,
    claimed_vts timestamptz[] DEFAULT NULL
)
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
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
        WHERE l.ctid = ANY (counts[1:n]) AND l.queue_name::text = lq AND l.kind = 'r'
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
        WHERE l.ctid = ANY (held[1:n]) AND l.ctid = x.tid AND l.queue_name::text = lq AND l.kind = 'f'
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
            WHERE l.ctid = held[i] AND l.queue_name::text = lq AND l.kind = 'f'
              AND l.slot <= s.max_in_flight AND l.t <= pg_catalog.clock_timestamp();
        END LOOP;
    END IF;
END
$fn$;

-- Free the slots of msg_ids after an archive, delete or release (set_vt to now) of a
-- queue with max_in_flight, in the caller's transaction (the caller's own statement
-- changed the queue table). Only a slot whose message is no longer in flight is freed,
-- and a slot a claim holds is skipped (it frees when its t passes). Notifies
-- pgmq._limit_channel only when the queue was at its limit: no other slot free or to be
-- made (a notifying commit takes PostgreSQL's database-wide NOTIFY
-- lock, so an unlimited stream of them would serialize every commit).
CREATE FUNCTION pgmq._limit_free(queue_name text, msg_ids bigint[])
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $fn$
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
          WHERE x.queue_name::text = lq AND x.msg_id = ANY (msg_ids)
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
    SELECT * INTO s FROM pgmq.queue_limit_state l WHERE l.queue_name::text = lq;
    IF freed IS NULL OR s.max_in_flight IS NULL OR s.slots_made < s.max_in_flight THEN
        RETURN;  -- nothing freed, or a reader could still have made a slot: nobody waits
    END IF;
    -- Another free slot within the limit (not one a claim is taking) means no reader
    -- was refused for want of this one.
    IF pg_catalog.current_setting('transaction_isolation') = 'read committed' THEN
        PERFORM 1 FROM pgmq.queue_limit_slots l
        WHERE l.queue_name::text = lq AND l.kind = 'f' AND l.t <= pg_catalog.clock_timestamp()
          AND l.slot <= s.max_in_flight AND l.slot <> ALL (freed)
        LIMIT 1 FOR KEY SHARE SKIP LOCKED;
    ELSE
        PERFORM 1 FROM pgmq.queue_limit_slots l
        WHERE l.queue_name::text = lq AND l.kind = 'f' AND l.t <= pg_catalog.clock_timestamp()
          AND l.slot <= s.max_in_flight AND l.slot <> ALL (freed)
        LIMIT 1;
    END IF;
    IF NOT FOUND THEN
        PERFORM pg_catalog.pg_notify(pgmq._limit_channel(
            (SELECT m.queue_name::text FROM pgmq.meta m
             WHERE pg_catalog.lower(m.queue_name::text) = lq)), '');
    END IF;
END
$fn$;

-- The channel a limited queue's slot frees on (archive, delete, set_vt of a queue with
-- max_in_flight at its limit notify it at commit, so a worker at the limit reads again
-- at once).
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
