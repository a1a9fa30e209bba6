-- Per-queue concurrency and rate limits (issue 25): the queue attributes max_in_flight
-- (at most N messages read and not yet deleted, archived or visible again) and
-- rate_limit ({"count": N, "seconds": S}: at most N handed out in any S-second window),
-- exact across any number of sessions, at any isolation level.
--
-- How (docs/design.md, "Concurrency and rate limits"): a limited queue has one state
-- row here, written by pgmq.set_queue_attributes (the limits themselves) and by the
-- claim filter (pgmq._claim_filter, sql/25_attributes.sql). Every claim of a limited
-- queue locks that row first (FOR NO KEY UPDATE), so the claims of one queue happen
-- one at a time, each after the last one committed:
--   in_flight    the msg_ids handed out by a read that may still be in flight. Under
--                the lock, the claim keeps those whose row still exists with vt in the
--                future (archived, deleted, released or timed-out ones free their slot),
--                allows at most max_in_flight minus that, and adds what it claimed.
--   handed_out   one (time, count) pair per claim within the last window; the claim
--                allows at most count minus those of the last S seconds. A claim's time
--                is taken after its rows were claimed, so every later claim's
--                timestamps (last_read_at) are at or after it: any S-second window of
--                hand-outs, measured on the rows, holds at most count.
-- Under READ COMMITTED each statement after the lock sees every committed claim. Under
-- REPEATABLE READ or SERIALIZABLE a snapshot older than the state row's last change
-- would count stale rows: locking the row then fails with a serialization error (as
-- does locking an in-flight message changed since the snapshot), and the caller retries.
-- A queue without these attributes has no row here and never reaches this file's code.

CREATE TABLE pgmq.queue_limit_state (
    queue_name text PRIMARY KEY,  -- the queue's name, lower-cased
    max_in_flight integer,
    rate_count integer,
    rate_seconds double precision,
    in_flight bigint[] NOT NULL DEFAULT '{}',
    handed_out_at timestamptz[] NOT NULL DEFAULT '{}',
    handed_out_n integer[] NOT NULL DEFAULT '{}'
);

CREATE FUNCTION pgmq._forget_queue_limits()
RETURNS trigger
LANGUAGE plpgsql
AS $fn$
BEGIN
    DELETE FROM pgmq.queue_limit_state s WHERE s.queue_name::text = pg_catalog.lower(OLD.queue_name);
    RETURN OLD;
END
$fn$;

CREATE TRIGGER queue_attributes_forget_limits
AFTER DELETE ON pgmq.queue_attributes
FOR EACH ROW EXECUTE FUNCTION pgmq._forget_queue_limits();

-- Keep a queue's state row in step with its attributes (called by
-- pgmq.set_queue_attributes under the queue's lock). A new max_in_flight starts from
-- the messages in flight now (read, vt in the future); changed limits keep the counts.
CREATE FUNCTION pgmq._sync_queue_limits(queue_name text, attrs jsonb)
RETURNS void
LANGUAGE plpgsql
AS $fn$
DECLARE
    seeded bigint[];
BEGIN
    IF NOT (attrs ? 'max_in_flight' OR attrs ? 'rate_limit') THEN
        DELETE FROM pgmq.queue_limit_state s WHERE s.queue_name::text = pg_catalog.lower($1);
        RETURN;
    END IF;
    IF attrs ? 'max_in_flight' THEN
        EXECUTE pg_catalog.format(
            'SELECT coalesce(pg_catalog.array_agg(q.msg_id ORDER BY q.msg_id), ''{}'') FROM pgmq.%I q '
            'WHERE q.read_ct > 0 AND q.vt > pg_catalog.clock_timestamp()',
            pgmq.format_table_name(queue_name, 'q'::text)) INTO seeded;
    END IF;
    INSERT INTO pgmq.queue_limit_state AS s (queue_name, max_in_flight, rate_count, rate_seconds, in_flight)
    VALUES (pg_catalog.lower($1), (attrs ->> 'max_in_flight')::integer,
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
$fn$;

-- What a queue's limits allow a claim of qty now (pops: a pop, which max_in_flight does
-- not limit). take_lock: lock the state row until the transaction ends (a claim); else a
-- look that may be stale by the time anyone acts on it (metrics, a worker's wait).
-- held: the messages still in flight (NULL without max_in_flight); stamps and counts:
-- the claims of the current window (NULL without rate_limit); next_free_at: when the
-- limit that binds lets a claim through again (NULL when allowed > 0 or not known).
-- No state row: nothing limits (allowed = qty).
CREATE FUNCTION pgmq._claim_limits(
    queue_name text, qty integer, pops boolean, take_lock boolean,
    OUT allowed integer, OUT held bigint[], OUT stamps timestamptz[], OUT counts integer[],
    OUT max_in_flight integer, OUT rate_count integer, OUT rate_seconds double precision,
    OUT next_free_at timestamptz
)
LANGUAGE plpgsql
AS $fn$
DECLARE
    s pgmq.queue_limit_state;
    oldest_vt timestamptz;
    now_ timestamptz;
BEGIN
    allowed := qty;
    IF take_lock THEN
        SELECT * INTO s FROM pgmq.queue_limit_state l WHERE l.queue_name::text = pg_catalog.lower($1)
        FOR NO KEY UPDATE;
    ELSE
        SELECT * INTO s FROM pgmq.queue_limit_state l WHERE l.queue_name::text = pg_catalog.lower($1);
    END IF;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    max_in_flight := s.max_in_flight;
    rate_count := s.rate_count;
    rate_seconds := s.rate_seconds;
    IF s.max_in_flight IS NOT NULL THEN
        IF take_lock AND pg_catalog.current_setting('transaction_isolation') <> 'read committed' THEN
            -- A snapshot older than a change to one of these rows would count it wrong:
            -- locking it raises a serialization error instead.
            EXECUTE pg_catalog.format(
                'SELECT coalesce(pg_catalog.array_agg(x.msg_id ORDER BY x.msg_id) '
                '                FILTER (WHERE x.vt > pg_catalog.clock_timestamp()), ''{}''), '
                '       pg_catalog.min(x.vt) FILTER (WHERE x.vt > pg_catalog.clock_timestamp()) '
                'FROM (SELECT q.msg_id, q.vt FROM pgmq.%I q WHERE q.msg_id = ANY($1) FOR SHARE) x',
                pgmq.format_table_name(queue_name, 'q'::text)) INTO held, oldest_vt USING s.in_flight;
        ELSE
            EXECUTE pg_catalog.format(
                'SELECT coalesce(pg_catalog.array_agg(q.msg_id ORDER BY q.msg_id), ''{}''), pg_catalog.min(q.vt) '
                'FROM pgmq.%I q WHERE q.msg_id = ANY($1) AND q.vt > pg_catalog.clock_timestamp()',
                pgmq.format_table_name(queue_name, 'q'::text)) INTO held, oldest_vt USING s.in_flight;
        END IF;
        IF NOT pops THEN
            -- least() ignores a NULL qty ("all"): the limit caps it.
            allowed := least(allowed, greatest(s.max_in_flight - pg_catalog.cardinality(held), 0));
            IF allowed = 0 THEN
                next_free_at := oldest_vt;
            END IF;
        END IF;
    END IF;
    IF s.rate_count IS NOT NULL THEN
        now_ := pg_catalog.clock_timestamp();
        SELECT coalesce(pg_catalog.array_agg(h.t ORDER BY h.t), '{}'), coalesce(pg_catalog.array_agg(h.n ORDER BY h.t), '{}')
        INTO stamps, counts
        FROM unnest(s.handed_out_at, s.handed_out_n) AS h(t, n)
        WHERE h.t > now_ - pg_catalog.make_interval(secs => s.rate_seconds);
        allowed := least(allowed, greatest(s.rate_count - (SELECT coalesce(pg_catalog.sum(n), 0) FROM pg_catalog.unnest(counts) n)::integer, 0));
        IF allowed = 0 AND pg_catalog.cardinality(stamps) > 0 THEN
            next_free_at := greatest(next_free_at, stamps[1] + pg_catalog.make_interval(secs => s.rate_seconds));
        END IF;
    END IF;
END
$fn$;

-- Record a claim of a limited queue (after pgmq._claim_filter allowed it, in the same
-- transaction, which still holds the state row): claimed joins the messages in flight
-- (not for a pop), and its count the current window, stamped now. held and stamps are
-- the filter's; both NULL (no limit) writes nothing.
CREATE FUNCTION pgmq._claim_record(
    queue_name text, held bigint[], stamps timestamptz[], counts integer[], claimed bigint[],
    pops boolean DEFAULT false
)
RETURNS void
LANGUAGE sql
AS $fn$
    UPDATE pgmq.queue_limit_state s
    SET in_flight = CASE WHEN $2 IS NULL THEN s.in_flight
                         WHEN $6 THEN $2
                         ELSE $2 || coalesce($5, '{}') END,
        handed_out_at = CASE WHEN $3 IS NULL THEN s.handed_out_at
                             WHEN coalesce(pg_catalog.cardinality($5), 0) = 0 THEN $3
                             ELSE $3 || pg_catalog.clock_timestamp() END,
        handed_out_n = CASE WHEN $3 IS NULL THEN s.handed_out_n
                            WHEN coalesce(pg_catalog.cardinality($5), 0) = 0 THEN $4
                            ELSE $4 || pg_catalog.cardinality($5) END
    WHERE s.queue_name::text = pg_catalog.lower($1) AND ($2 IS NOT NULL OR $3 IS NOT NULL);
$fn$;

-- The channel a limited queue's slot frees on (archive, delete, set_vt of a queue with
-- max_in_flight notify it at commit, so a worker at the limit reads again at once).
CREATE FUNCTION pgmq._limit_channel(queue_name text)
RETURNS text
LANGUAGE sql IMMUTABLE
AS $fn$ SELECT 'pgmq.q_' || queue_name || '.FREE' $fn$;

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
    SELECT m.queue_name::text, l.max_in_flight, pg_catalog.cardinality(l.held),
           l.rate_count, l.rate_seconds,
           (SELECT coalesce(pg_catalog.sum(n), 0) FROM pg_catalog.unnest(l.counts) n)::integer,
           l.next_free_at
    FROM pgmq.meta m
    JOIN pgmq.queue_limit_state s ON s.queue_name::text = pg_catalog.lower(m.queue_name::text)
    CROSS JOIN LATERAL pgmq._claim_limits(m.queue_name::text, NULL, false, false) l
    WHERE $1 IS NULL OR pg_catalog.lower(m.queue_name::text) = pg_catalog.lower($1)
    ORDER BY m.queue_name;
$fn$;
