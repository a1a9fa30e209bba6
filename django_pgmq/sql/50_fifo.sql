-- FIFO groups: ordered reads per message group.
--
-- A message's group is its header "x-pgmq-group" (else '_default_fifo_group').
-- Within a group, messages are handed out in msg_id order, and only from the
-- front: a group can be read up to its first invisible message (in flight or
-- delayed), so one group is never processed by two consumers at once or out of
-- order. Readers take a transaction-level advisory lock per group, then look at
-- the group again with a fresh snapshot, so two concurrent readers never share a
-- group and a reader never acts on a snapshot older than another's commit.
--
-- Queue attributes apply through the claim filter (pgmq._claim_filter,
-- sql/25_attributes.sql): a paused queue returns no rows; with max_receive_count, a
-- claimed message read more often than that goes to the dead-letter queue instead of
-- being returned, and the read goes on for the rest of its qty; max_in_flight and
-- rate_limit cap the qty, and the claim is recorded against them. Priorities do not
-- reorder a group.

-- The group key; inlined by the planner, so the FIFO index matches it.
CREATE FUNCTION pgmq._fifo_group(headers jsonb)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $fn$ SELECT coalesce(headers ->> 'x-pgmq-group', '_default_fifo_group') $fn$;

-- Shared body of the group readers. mode: 'fill' (read_grouped: as much as
-- possible from the oldest group, then the next), 'rr' (read_grouped_rr: one per
-- group per round) or 'head' (read_grouped_head: the first message of each group).
CREATE FUNCTION pgmq._read_grouped(queue_name text, vt integer, qty integer, mode text)
RETURNS SETOF pgmq.message_record
LANGUAGE plpgsql
AS $fn$
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
            %2$s
        )
        SELECT c.msg_id, c.read_ct, c.enqueued_at, c.last_read_at, c.vt, c.message, c.headers
        FROM claimed c JOIN usable u ON u.msg_id = c.msg_id
        -- Round-robin keeps its rounds (as pgmq does); the others come in msg_id order.
        ORDER BY CASE WHEN $4 = 'rr' THEN u.rnk ELSE 0 END,
                 CASE WHEN $4 = 'rr' THEN u.prio ELSE 0 END,
                 c.msg_id
        $q$,
        qtable,
        -- the claim every read makes (sql/15_queue_ops.sql)
        pgmq._read_claim_sql(qtable, false, '$3', 'SELECT u.msg_id FROM usable u')
    );
    IF f.max_receive_count IS NULL AND NOT limited THEN
        RETURN QUERY EXECUTE claim
            USING groups, wanted, coalesce(vt, 0), mode,
            -- The most one group can contribute: every other group gives at least one.
            CASE WHEN mode = 'head' THEN 1 ELSE wanted - pg_catalog.cardinality(groups) + 1 END, given;
        RETURN;
    END IF;
    FOR rec IN EXECUTE claim
        USING groups, wanted, coalesce(vt, 0), mode,
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
$fn$;

-- Repeat a group read until it returns something or max_poll_seconds pass.
CREATE FUNCTION pgmq._read_grouped_poll(
    queue_name text, vt integer, qty integer, max_poll_seconds integer, poll_interval_ms integer,
    mode text
)
RETURNS SETOF pgmq.message_record
LANGUAGE sql
AS $fn$
    SELECT * FROM pgmq._poll(
        'read_grouped'::text,
        queue_name, vt, qty, mode, max_poll_seconds, poll_interval_ms);
$fn$;

CREATE FUNCTION pgmq.read_grouped(queue_name text, vt integer, qty integer)
RETURNS SETOF pgmq.message_record LANGUAGE sql
AS $fn$ SELECT * FROM pgmq._read_grouped(queue_name, vt, qty, 'fill'::text); $fn$;

CREATE FUNCTION pgmq.read_grouped_rr(queue_name text, vt integer, qty integer)
RETURNS SETOF pgmq.message_record LANGUAGE sql
AS $fn$ SELECT * FROM pgmq._read_grouped(queue_name, vt, qty, 'rr'::text); $fn$;

CREATE FUNCTION pgmq.read_grouped_head(queue_name text, vt integer, qty integer)
RETURNS SETOF pgmq.message_record LANGUAGE sql
AS $fn$ SELECT * FROM pgmq._read_grouped(queue_name, vt, qty, 'head'::text); $fn$;

CREATE FUNCTION pgmq.read_grouped_with_poll(
    queue_name text, vt integer, qty integer,
    max_poll_seconds integer DEFAULT 5, poll_interval_ms integer DEFAULT 100
)
RETURNS SETOF pgmq.message_record LANGUAGE sql
AS $fn$
    SELECT * FROM pgmq._read_grouped_poll(queue_name, vt, qty, max_poll_seconds, poll_interval_ms, 'fill'::text);
$fn$;

CREATE FUNCTION pgmq.read_grouped_rr_with_poll(
    queue_name text, vt integer, qty integer,
    max_poll_seconds integer DEFAULT 5, poll_interval_ms integer DEFAULT 100
)
RETURNS SETOF pgmq.message_record LANGUAGE sql
AS $fn$
    SELECT * FROM pgmq._read_grouped_poll(queue_name, vt, qty, max_poll_seconds, poll_interval_ms, 'rr'::text);
$fn$;

CREATE FUNCTION pgmq.read_grouped_head_with_poll(
    queue_name text, vt integer, qty integer,
    max_poll_seconds integer DEFAULT 5, poll_interval_ms integer DEFAULT 100
)
RETURNS SETOF pgmq.message_record LANGUAGE sql
AS $fn$
    SELECT * FROM pgmq._read_grouped_poll(queue_name, vt, qty, max_poll_seconds, poll_interval_ms, 'head'::text);
$fn$;

-- A btree on (group, msg_id): each group's front is an index range, and the
-- group heads come out in index order. Built at once where that blocks no writer (a
-- small table, a call that is its own transaction: as on pgmq, pgmq.create then
-- pgmq.create_fifo_index leaves the index), else deferred with a NOTICE and built
-- CONCURRENTLY outside the caller's transaction (sql/22_index_builds.sql:
-- pgmq._want_queue_index, pgmq.pending_indexes()); the group readers work without it
-- meanwhile.
CREATE FUNCTION pgmq.create_fifo_index(queue_name text)
RETURNS void
LANGUAGE plpgsql
AS $fn$
BEGIN
    PERFORM pgmq._want_queue_index(queue_name, 'fifo'::text);
END
$fn$;

CREATE FUNCTION pgmq.create_fifo_indexes_all()
RETURNS void
LANGUAGE plpgsql
AS $fn$
DECLARE
    name text;
BEGIN
    FOR name IN SELECT m.queue_name FROM pgmq.meta m ORDER BY m.queue_name LOOP
        PERFORM pgmq.create_fifo_index(name);
    END LOOP;
END
$fn$;
