-- Messages: send, send_batch, read, read_with_poll, pop, delete, archive, set_vt.
-- Each family has one plpgsql implementation, which checks its arguments and calls
-- a router (sql/15_queue_ops.sql) with one op: pgmq._queue_ops_route_ids for those
-- that return msg_id (send, send_batch, archive, delete), pgmq._queue_ops_route for
-- those that return messages; the other overloads
-- call it with defaults or turn an integer delay into a timestamp (send and send_batch's
-- in PL/pgSQL, whose static call is cheaper per call than an SQL function's).
--
-- A send's delay NULL means "none given": the queue's delivery_delay attribute applies
-- (sql/25_attributes.sql), else the message is visible at once. An integer delay of 0
-- counts as none given, as every pgmq client passes 0 when its caller gave no delay; a
-- timestamp is always explicit.

CREATE OR REPLACE FUNCTION pgmq._delay_to_vt(delay integer)
RETURNS timestamptz
LANGUAGE plpgsql VOLATILE
AS $fn$
BEGIN
    IF delay IS NULL OR delay < 0 THEN
        RAISE EXCEPTION 'delay cannot be negative, got: %', coalesce(delay::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    IF delay = 0 THEN
        RETURN NULL;  -- none given: the queue's delivery_delay, if any
    END IF;
    RETURN pg_catalog.clock_timestamp() + pg_catalog.make_interval(secs => delay);
END
$fn$;

-- send ----------------------------------------------------------------------

CREATE OR REPLACE FUNCTION pgmq.send(queue_name text, msg jsonb, headers jsonb, delay timestamptz)
RETURNS SETOF bigint
LANGUAGE plpgsql
AS $fn$
BEGIN
    RETURN QUERY SELECT * FROM pgmq._queue_ops_route_ids(
        queue_name, 's'::"char", delay, NULL::bigint[], ARRAY[msg], ARRAY[headers]);
END
$fn$;

-- The most common call: a new session compiles one function less than through the
-- four-argument form. A queue without attributes (checked after the name, as the
-- router does) runs the one-message insert itself: one PL/pgSQL layer less than the
-- router's way, about a tenth of a send's server time (docs/benchmarks.md, 2026-11-27);
-- its statement straight from the send's builder: the one function a new session
-- inlines for it.
CREATE OR REPLACE FUNCTION pgmq.send(queue_name text, msg jsonb)
RETURNS SETOF bigint LANGUAGE plpgsql
AS $fn$
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
$fn$;

CREATE OR REPLACE FUNCTION pgmq.send(queue_name text, msg jsonb, delay integer)
RETURNS SETOF bigint LANGUAGE plpgsql
AS $fn$ BEGIN RETURN QUERY SELECT * FROM pgmq.send(queue_name, msg, NULL::jsonb, pgmq._delay_to_vt(delay)); END $fn$;

CREATE OR REPLACE FUNCTION pgmq.send(queue_name text, msg jsonb, delay timestamptz)
RETURNS SETOF bigint LANGUAGE plpgsql
AS $fn$ BEGIN RETURN QUERY SELECT * FROM pgmq.send(queue_name, msg, NULL::jsonb, delay); END $fn$;

CREATE OR REPLACE FUNCTION pgmq.send(queue_name text, msg jsonb, headers jsonb)
RETURNS SETOF bigint LANGUAGE plpgsql
AS $fn$ BEGIN RETURN QUERY SELECT * FROM pgmq.send(queue_name, msg, headers, NULL::timestamptz); END $fn$;

CREATE OR REPLACE FUNCTION pgmq.send(queue_name text, msg jsonb, headers jsonb, delay integer)
RETURNS SETOF bigint LANGUAGE plpgsql
AS $fn$ BEGIN RETURN QUERY SELECT * FROM pgmq.send(queue_name, msg, headers, pgmq._delay_to_vt(delay)); END $fn$;

-- send_batch ----------------------------------------------------------------

-- pgmq's batch checks, shared by send_batch and send_batch_topic (which makes them
-- before any queue is chosen, so a routing key that matches nothing still reports them).
CREATE OR REPLACE FUNCTION pgmq._validate_batch_params(msgs jsonb[], headers jsonb[])
RETURNS void
LANGUAGE plpgsql IMMUTABLE
AS $fn$
BEGIN
    IF msgs IS NULL OR pg_catalog.cardinality(msgs) = 0 THEN
        RAISE EXCEPTION 'msgs cannot be NULL or empty' USING ERRCODE = 'PQ004';
    END IF;
    IF headers IS NOT NULL AND pg_catalog.cardinality(headers) <> pg_catalog.cardinality(msgs) THEN
        RAISE EXCEPTION 'headers array length (%) must match msgs array length (%)',
            pg_catalog.cardinality(headers), pg_catalog.cardinality(msgs)
            USING ERRCODE = 'PQ004';
    END IF;
END
$fn$;


CREATE OR REPLACE FUNCTION pgmq.send_batch(
    queue_name text, msgs jsonb[], headers jsonb[], delay timestamptz
)
RETURNS SETOF bigint
LANGUAGE plpgsql
AS $fn$
BEGIN
    PERFORM pgmq._validate_batch_params(msgs, headers);
    RETURN QUERY SELECT * FROM pgmq._queue_ops_route_ids(
        queue_name, 's'::"char", delay, NULL::bigint[], msgs, headers);
END
$fn$;

-- The most common call: like the one-message pgmq.send, a queue without attributes
-- (checked after the name, as the router does) runs the router's statement itself, one
-- PL/pgSQL layer less; the batch checks run only when they fail (a PERFORM is a
-- statement of its own): about 40,000 instructions a batch less (docs/benchmarks.md,
-- 2026-11-28).
CREATE OR REPLACE FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[])
RETURNS SETOF bigint LANGUAGE plpgsql
AS $fn$
DECLARE
    qtable text;
BEGIN
    IF msgs IS NULL OR pg_catalog.cardinality(msgs) = 0 THEN
        PERFORM pgmq._validate_batch_params(msgs, NULL::jsonb[]);
    END IF;
    qtable := pgmq._message_table_name(queue_name, 'q'::text);
    IF NOT EXISTS (SELECT FROM pgmq.queue_attributes a WHERE pg_catalog.lower(a.queue_name::text) = pg_catalog.lower($1)) THEN
        RETURN QUERY EXECUTE pgmq._queue_ops_ids_sql(
            qtable, CASE WHEN pg_catalog.cardinality(msgs) = 1 THEN '1' ELSE 's' END::"char")
            USING NULL::"char", NULL::integer, NULL::integer, NULL::timestamptz, NULL::bigint[],
                  msgs, NULL::jsonb[], NULL::jsonb, 0::bigint;
        RETURN;
    END IF;
    RETURN QUERY SELECT * FROM pgmq._queue_ops_route_ids(
        queue_name, 's'::"char", NULL::timestamptz, NULL::bigint[], msgs, NULL::jsonb[]);
END
$fn$;

CREATE OR REPLACE FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], delay integer)
RETURNS SETOF bigint LANGUAGE plpgsql
AS $fn$ BEGIN RETURN QUERY SELECT * FROM pgmq.send_batch(queue_name, msgs, NULL::jsonb[], pgmq._delay_to_vt(delay)); END $fn$;

CREATE OR REPLACE FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], delay timestamptz)
RETURNS SETOF bigint LANGUAGE plpgsql
AS $fn$ BEGIN RETURN QUERY SELECT * FROM pgmq.send_batch(queue_name, msgs, NULL::jsonb[], delay); END $fn$;

CREATE OR REPLACE FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[])
RETURNS SETOF bigint LANGUAGE plpgsql
AS $fn$ BEGIN RETURN QUERY SELECT * FROM pgmq.send_batch(queue_name, msgs, headers, NULL::timestamptz); END $fn$;

CREATE OR REPLACE FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay integer)
RETURNS SETOF bigint LANGUAGE plpgsql
AS $fn$ BEGIN RETURN QUERY SELECT * FROM pgmq.send_batch(queue_name, msgs, headers, pgmq._delay_to_vt(delay)); END $fn$;

-- read ----------------------------------------------------------------------

-- Claim up to qty visible messages, oldest first, hiding them for vt seconds.
-- read and pop take the fast path once the session keeps the queue's statement
-- (sql/15_queue_ops.sql, "Kept plans"): no router layer, no separate attribute lookup,
-- the session's statement checked inside the one statement that runs it
-- (pgmq._queue_ops_kept_stmt); an empty result from it is checked against the
-- attributes once. archive and delete of an array of ids take theirs below.
CREATE OR REPLACE FUNCTION pgmq.read(
    queue_name text, vt integer, qty integer, conditional jsonb DEFAULT '{}'
)
RETURNS SETOF pgmq.message_record
LANGUAGE plpgsql
AS $fn$
DECLARE
    qtable text;
    n bigint;
    attrs jsonb;
    tids tid[];
    stmt text;
BEGIN
    IF qty IS NULL OR qty < 0 THEN
        RAISE EXCEPTION 'qty must be zero or more, got: %', coalesce(qty::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    qtable := pgmq._message_table_name(queue_name, 'q'::text);
    IF pg_catalog.current_setting(pgmq._queue_ops_kept_key(qtable, 'r'), true) = 'p' THEN
        RETURN QUERY SELECT * FROM pgmq._queue_ops_run_prepared(
            (SELECT k FROM pgmq._queue_ops_kept_stmt(qtable, 'r') k), qty, coalesce(vt, 0), NULL,
            coalesce(conditional, '{}'::jsonb), pgmq._low_water_mark_for(qtable));
        GET DIAGNOSTICS n = ROW_COUNT;
        IF n > 0 OR pgmq._queue_ops_kept_missed(queue_name, qtable, 'r') THEN
            RETURN;
        END IF;
    END IF;
    SELECT a.attributes INTO attrs
    FROM pgmq.queue_attributes a WHERE pg_catalog.lower(a.queue_name::text) = pg_catalog.lower($1);
    IF qty > 0 AND attrs ? 'max_in_flight' AND NOT attrs ?| pgmq._claim_keys_but_slots()
       AND pg_catalog.current_setting('transaction_isolation') = 'read committed' THEN
        -- The short claim (since migration 0010, docs/internals/attributes.md
        -- "Concurrency and rate limits"), here rather than in the router to spare its
        -- layer: a window of slots locked by the owner's pgmq._limit_lock, then the kept
        -- read 'm' (sql/15_queue_ops.sql) probes which are free, claims and records, in a
        -- statement of its own (its snapshot taken after the lock). When it used every
        -- free slot and that was fewer than asked, or no window was to be had, the rest
        -- goes the router's way, the checked claim (the ring walked, slots made, a full
        -- queue marked). At REPEATABLE READ and above the checked way only: it refuses a
        -- stale snapshot (pgmq._limit_reclaim).
        tids := pgmq._limit_lock(queue_name, qty);
        IF tids IS NOT NULL THEN
            IF pg_catalog.current_setting(pgmq._queue_ops_kept_key(qtable, 'm'), true) = 'p' THEN
                stmt := (SELECT k FROM pgmq._queue_ops_kept_stmt(qtable, 'm'::"char") k);
            ELSE
                stmt := pgmq._queue_ops_prepared(qtable, 'm');
            END IF;
            IF stmt IS NOT NULL THEN
                RETURN QUERY SELECT * FROM pgmq._queue_ops_run_limited(
                    stmt, qty, coalesce(vt, 0), coalesce(conditional, '{}'::jsonb),
                    pgmq._low_water_mark_for(qtable), tids);
            ELSE
                RETURN QUERY EXECUTE pgmq._queue_ops_kept_sql(qtable, 'm'::"char")
                    USING 'r'::"char", qty, coalesce(vt, 0), NULL::timestamptz, NULL::bigint[],
                          NULL::jsonb[], NULL::jsonb[], coalesce(conditional, '{}'::jsonb),
                          pgmq._low_water_mark_for(qtable), tids;
            END IF;
            GET DIAGNOSTICS n = ROW_COUNT;
            IF n >= qty OR pg_catalog.current_setting('pgmq.limit_short', true) IS DISTINCT FROM '1' THEN
                RETURN;
            END IF;
            PERFORM pg_catalog.set_config('pgmq.limit_short', '', false);
            qty := qty - n;
        END IF;
    END IF;
    RETURN QUERY SELECT * FROM pgmq._queue_ops_route(
        queue_name, 'r'::"char", qty, coalesce(vt, 0), NULL::timestamptz, NULL::bigint[], NULL::jsonb[],
        NULL::jsonb[], coalesce(conditional, '{}'::jsonb));
END
$fn$;

-- Run a reader until it returns rows or max_poll_seconds pass; shared by every
-- *_with_poll. The reader is one of a fixed set, never SQL text: 'read' (pgmq.read, extra
-- is its conditional as JSON text) or 'read_grouped' (extra is its mode).
CREATE OR REPLACE FUNCTION pgmq._poll(
    reader text, queue_name text, vt integer, qty integer, extra text,
    max_poll_seconds integer, poll_interval_ms integer
)
RETURNS SETOF pgmq.message_record
LANGUAGE plpgsql
AS $fn$
DECLARE
    deadline timestamptz := pg_catalog.clock_timestamp() + pg_catalog.make_interval(secs => coalesce(max_poll_seconds, 0));
    rec pgmq.message_record;
    got boolean;
BEGIN
    IF reader IS NULL OR reader NOT IN ('read', 'read_grouped') THEN
        RAISE EXCEPTION 'reader must be read or read_grouped, got: %', coalesce(reader, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    IF poll_interval_ms IS NULL OR poll_interval_ms <= 0 THEN
        RAISE EXCEPTION 'poll_interval_ms must be positive, got: %', coalesce(poll_interval_ms::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    LOOP
        got := false;
        IF reader = 'read' THEN
            FOR rec IN SELECT * FROM pgmq.read(queue_name, vt, qty, extra::jsonb) LOOP
                got := true;
                RETURN NEXT rec;
            END LOOP;
        ELSE
            FOR rec IN SELECT * FROM pgmq._read_grouped(queue_name, vt, qty, extra) LOOP
                got := true;
                RETURN NEXT rec;
            END LOOP;
        END IF;
        EXIT WHEN got OR pg_catalog.clock_timestamp() >= deadline;
        PERFORM pg_catalog.pg_sleep(least(poll_interval_ms / 1000.0,
                               extract(epoch FROM deadline - pg_catalog.clock_timestamp())));
    END LOOP;
END
$fn$;

-- Like read, but wait up to max_poll_seconds for a message to become visible.
CREATE OR REPLACE FUNCTION pgmq.read_with_poll(
    queue_name text,
    vt integer,
    qty integer,
    max_poll_seconds integer DEFAULT 5,
    poll_interval_ms integer DEFAULT 100,
    conditional jsonb DEFAULT '{}'
)
RETURNS SETOF pgmq.message_record
LANGUAGE sql
AS $fn$
    SELECT * FROM pgmq._poll(
        'read'::text,
        queue_name, vt, qty, conditional::text, max_poll_seconds, poll_interval_ms);
$fn$;

-- Read and delete in one step (at-most-once).
CREATE OR REPLACE FUNCTION pgmq.pop(queue_name text, qty integer DEFAULT 1)
RETURNS SETOF pgmq.message_record
LANGUAGE plpgsql
AS $fn$
DECLARE
    qtable text;
    n bigint;
BEGIN
    IF qty IS NULL OR qty < 0 THEN
        RAISE EXCEPTION 'qty must be zero or more, got: %', coalesce(qty::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    qtable := pgmq._message_table_name(queue_name, 'q'::text);
    IF pg_catalog.current_setting(pgmq._queue_ops_kept_key(qtable, 'p'), true) = 'p' THEN
        RETURN QUERY SELECT * FROM pgmq._queue_ops_run_prepared(
            (SELECT k FROM pgmq._queue_ops_kept_stmt(qtable, 'p') k), qty, NULL, NULL, NULL,
            pgmq._low_water_mark_for(qtable));
        GET DIAGNOSTICS n = ROW_COUNT;
        IF n > 0 OR pgmq._queue_ops_kept_missed(queue_name, qtable, 'p') THEN
            RETURN;
        END IF;
    END IF;
    RETURN QUERY SELECT * FROM pgmq._queue_ops_route(
        queue_name, 'p'::"char", qty, NULL::integer, NULL::timestamptz, NULL::bigint[], NULL::jsonb[],
        NULL::jsonb[], NULL::jsonb);
END
$fn$;

-- delete / archive ------------------------------------------------------------

-- delete(queue, id) and archive(queue, id): whether the message was there (op d or a).
CREATE OR REPLACE FUNCTION pgmq._queue_ops_one(queue_name text, op "char", msg_id bigint)
RETURNS boolean
LANGUAGE plpgsql
AS $fn$
BEGIN
    RETURN EXISTS (SELECT 1 FROM pgmq._queue_ops_route_ids(
        queue_name, op, NULL::timestamptz, ARRAY[$3], NULL::jsonb[], NULL::jsonb[]));
END
$fn$;

CREATE OR REPLACE FUNCTION pgmq.delete(queue_name text, msg_ids bigint[])
RETURNS SETOF bigint
LANGUAGE plpgsql
AS $fn$
DECLARE
    -- checks the name first, as pgmq's per-message functions do (sql/05_names.sql)
    qtable text := pgmq._message_table_name(queue_name, 'q'::text);
BEGIN
    -- the fast path (see read): the router's, without its layer
    IF pg_catalog.current_setting(pgmq._queue_ops_kept_key(qtable, 'd'), true) = 'p' THEN
        RETURN QUERY SELECT * FROM pgmq._queue_ops_run_prepared_ids(
            (SELECT k FROM pgmq._queue_ops_kept_stmt(qtable, 'd') k), msg_ids);
        RETURN;
    END IF;
    RETURN QUERY SELECT * FROM pgmq._queue_ops_route_ids(
        queue_name, 'd'::"char", NULL::timestamptz, msg_ids, NULL::jsonb[], NULL::jsonb[]);
END
$fn$;

CREATE OR REPLACE FUNCTION pgmq.delete(queue_name text, msg_id bigint)
RETURNS boolean
LANGUAGE plpgsql
AS $fn$ BEGIN RETURN pgmq._queue_ops_one(queue_name, 'd', $2); END $fn$;

-- Move messages to the archive table in one statement; returns the ids moved.
CREATE OR REPLACE FUNCTION pgmq.archive(queue_name text, msg_ids bigint[])
RETURNS SETOF bigint
LANGUAGE plpgsql
AS $fn$
DECLARE
    -- checks the name first, as pgmq's per-message functions do (sql/05_names.sql)
    qtable text := pgmq._message_table_name(queue_name, 'q'::text);
BEGIN
    -- the fast path (see read): the router's, without its layer
    IF pg_catalog.current_setting(pgmq._queue_ops_kept_key(qtable, 'a'), true) = 'p' THEN
        RETURN QUERY SELECT * FROM pgmq._queue_ops_run_prepared_ids(
            (SELECT k FROM pgmq._queue_ops_kept_stmt(qtable, 'a') k), msg_ids);
        RETURN;
    END IF;
    RETURN QUERY SELECT * FROM pgmq._queue_ops_route_ids(
        queue_name, 'a'::"char", NULL::timestamptz, msg_ids, NULL::jsonb[], NULL::jsonb[]);
END
$fn$;

CREATE OR REPLACE FUNCTION pgmq.archive(queue_name text, msg_id bigint)
RETURNS boolean
LANGUAGE plpgsql
AS $fn$ BEGIN RETURN pgmq._queue_ops_one(queue_name, 'a', $2); END $fn$;

-- set_vt ----------------------------------------------------------------------

CREATE OR REPLACE FUNCTION pgmq.set_vt(queue_name text, msg_ids bigint[], vt timestamptz)
RETURNS SETOF pgmq.message_record
LANGUAGE plpgsql
AS $fn$
BEGIN
    IF vt IS NULL THEN
        RAISE EXCEPTION 'vt cannot be NULL' USING ERRCODE = 'PQ004';
    END IF;
    RETURN QUERY SELECT * FROM pgmq._queue_ops_route(
        queue_name, 'v'::"char", NULL::integer, NULL::integer, vt, msg_ids, NULL::jsonb[], NULL::jsonb[],
        NULL::jsonb);
END
$fn$;

CREATE OR REPLACE FUNCTION pgmq.set_vt(queue_name text, msg_ids bigint[], vt integer)
RETURNS SETOF pgmq.message_record LANGUAGE sql
AS $fn$ SELECT * FROM pgmq.set_vt(queue_name, msg_ids, pg_catalog.clock_timestamp() + pg_catalog.make_interval(secs => vt)); $fn$;

CREATE OR REPLACE FUNCTION pgmq.set_vt(queue_name text, msg_id bigint, vt timestamptz)
RETURNS SETOF pgmq.message_record LANGUAGE sql
AS $fn$ SELECT * FROM pgmq.set_vt(queue_name, ARRAY[msg_id], vt); $fn$;

CREATE OR REPLACE FUNCTION pgmq.set_vt(queue_name text, msg_id bigint, vt integer)
RETURNS SETOF pgmq.message_record LANGUAGE sql
AS $fn$ SELECT * FROM pgmq.set_vt(queue_name, ARRAY[msg_id], pg_catalog.clock_timestamp() + pg_catalog.make_interval(secs => vt)); $fn$;
