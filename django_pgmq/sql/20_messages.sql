-- Messages: send, send_batch, read, read_with_poll, pop, delete, archive, set_vt.
-- Each family has one plpgsql implementation; the other overloads are SQL wrappers
-- that turn an integer delay into a timestamp.

CREATE FUNCTION pgmq._delay_to_vt(delay integer)
RETURNS timestamptz
LANGUAGE plpgsql VOLATILE
AS $fn$
BEGIN
    IF delay IS NULL OR delay < 0 THEN
        RAISE EXCEPTION 'delay cannot be negative, got: %', coalesce(delay::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    RETURN clock_timestamp() + make_interval(secs => delay);
END
$fn$;

-- send ----------------------------------------------------------------------

CREATE FUNCTION pgmq.send(queue_name text, msg jsonb, headers jsonb, delay timestamptz)
RETURNS SETOF bigint
LANGUAGE plpgsql
AS $fn$
BEGIN
    RETURN QUERY EXECUTE format(
        'INSERT INTO pgmq.%I (vt, message, headers) VALUES ($1, $2, $3) RETURNING msg_id',
        pgmq.format_table_name(queue_name, 'q')
    ) USING coalesce(delay, clock_timestamp()), msg, headers;
END
$fn$;

CREATE FUNCTION pgmq.send(queue_name text, msg jsonb)
RETURNS SETOF bigint LANGUAGE sql
AS $fn$ SELECT pgmq.send(queue_name, msg, NULL::jsonb, clock_timestamp()); $fn$;

CREATE FUNCTION pgmq.send(queue_name text, msg jsonb, delay integer)
RETURNS SETOF bigint LANGUAGE sql
AS $fn$ SELECT pgmq.send(queue_name, msg, NULL::jsonb, pgmq._delay_to_vt(delay)); $fn$;

CREATE FUNCTION pgmq.send(queue_name text, msg jsonb, delay timestamptz)
RETURNS SETOF bigint LANGUAGE sql
AS $fn$ SELECT pgmq.send(queue_name, msg, NULL::jsonb, delay); $fn$;

CREATE FUNCTION pgmq.send(queue_name text, msg jsonb, headers jsonb)
RETURNS SETOF bigint LANGUAGE sql
AS $fn$ SELECT pgmq.send(queue_name, msg, headers, clock_timestamp()); $fn$;

CREATE FUNCTION pgmq.send(queue_name text, msg jsonb, headers jsonb, delay integer)
RETURNS SETOF bigint LANGUAGE sql
AS $fn$ SELECT pgmq.send(queue_name, msg, headers, pgmq._delay_to_vt(delay)); $fn$;

-- send_batch ----------------------------------------------------------------

-- pgmq's batch checks, shared by send_batch and send_batch_topic (which makes them
-- before any queue is chosen, so a routing key that matches nothing still reports them).
CREATE FUNCTION pgmq._validate_batch_params(msgs jsonb[], headers jsonb[])
RETURNS void
LANGUAGE plpgsql IMMUTABLE
AS $fn$
BEGIN
    IF msgs IS NULL OR cardinality(msgs) = 0 THEN
        RAISE EXCEPTION 'msgs cannot be NULL or empty' USING ERRCODE = 'PQ004';
    END IF;
    IF headers IS NOT NULL AND cardinality(headers) <> cardinality(msgs) THEN
        RAISE EXCEPTION 'headers array length (%) must match msgs array length (%)',
            cardinality(headers), cardinality(msgs)
            USING ERRCODE = 'PQ004';
    END IF;
END
$fn$;


CREATE FUNCTION pgmq.send_batch(
    queue_name text, msgs jsonb[], headers jsonb[], delay timestamptz
)
RETURNS SETOF bigint
LANGUAGE plpgsql
AS $fn$
BEGIN
    PERFORM pgmq._validate_batch_params(msgs, headers);
    -- Ids are assigned in array order, and returned in that order: a function
    -- scan yields the arrays' elements in order, and the insert numbers and
    -- returns rows as they come. unnest of two arrays pads a NULL headers array
    -- with NULLs. (No join, sort or CTE: this statement runs on every batch.)
    RETURN QUERY EXECUTE format(
        'INSERT INTO pgmq.%I (vt, message, headers) '
        'SELECT $1, u.msg, u.hdr FROM unnest($2, $3) AS u(msg, hdr) RETURNING msg_id',
        pgmq.format_table_name(queue_name, 'q')
    ) USING coalesce(delay, clock_timestamp()), msgs, headers;
END
$fn$;

CREATE FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[])
RETURNS SETOF bigint LANGUAGE sql
AS $fn$ SELECT pgmq.send_batch(queue_name, msgs, NULL::jsonb[], clock_timestamp()); $fn$;

CREATE FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], delay integer)
RETURNS SETOF bigint LANGUAGE sql
AS $fn$ SELECT pgmq.send_batch(queue_name, msgs, NULL::jsonb[], pgmq._delay_to_vt(delay)); $fn$;

CREATE FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], delay timestamptz)
RETURNS SETOF bigint LANGUAGE sql
AS $fn$ SELECT pgmq.send_batch(queue_name, msgs, NULL::jsonb[], delay); $fn$;

CREATE FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[])
RETURNS SETOF bigint LANGUAGE sql
AS $fn$ SELECT pgmq.send_batch(queue_name, msgs, headers, clock_timestamp()); $fn$;

CREATE FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay integer)
RETURNS SETOF bigint LANGUAGE sql
AS $fn$ SELECT pgmq.send_batch(queue_name, msgs, headers, pgmq._delay_to_vt(delay)); $fn$;

-- read ----------------------------------------------------------------------

-- Claim up to qty visible messages, oldest first, hiding them for vt seconds.
CREATE FUNCTION pgmq.read(
    queue_name text, vt integer, qty integer, conditional jsonb DEFAULT '{}'
)
RETURNS SETOF pgmq.message_record
LANGUAGE plpgsql
AS $fn$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q');
BEGIN
    IF qty IS NULL OR qty < 0 THEN
        RAISE EXCEPTION 'qty must be zero or more, got: %', coalesce(qty::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    RETURN QUERY EXECUTE format(
        $q$
        WITH picked AS (
            SELECT msg_id FROM pgmq.%1$I
            WHERE vt <= clock_timestamp() AND ($3 = '{}'::jsonb OR message @> $3)
            ORDER BY msg_id
            LIMIT $1
            FOR UPDATE SKIP LOCKED
        ),
        claimed AS (
            UPDATE pgmq.%1$I m
            SET vt = clock_timestamp() + $2,
                read_ct = m.read_ct + 1,
                last_read_at = clock_timestamp()
            FROM picked
            WHERE m.msg_id = picked.msg_id
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message, m.headers
        )
        SELECT * FROM claimed ORDER BY msg_id
        $q$,
        qtable
    ) USING qty, make_interval(secs => coalesce(vt, 0)), coalesce(conditional, '{}'::jsonb);
END
$fn$;

-- Run a reader statement ($1 queue_name, $2 vt, $3 qty, $4 extra argument as text)
-- until it returns rows or max_poll_seconds pass; shared by every *_with_poll.
CREATE FUNCTION pgmq._poll(
    reader text, queue_name text, vt integer, qty integer, extra text,
    max_poll_seconds integer, poll_interval_ms integer
)
RETURNS SETOF pgmq.message_record
LANGUAGE plpgsql
AS $fn$
DECLARE
    deadline timestamptz := clock_timestamp() + make_interval(secs => coalesce(max_poll_seconds, 0));
    rec pgmq.message_record;
    got boolean;
BEGIN
    IF poll_interval_ms IS NULL OR poll_interval_ms <= 0 THEN
        RAISE EXCEPTION 'poll_interval_ms must be positive, got: %', coalesce(poll_interval_ms::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    LOOP
        got := false;
        FOR rec IN EXECUTE reader USING queue_name, vt, qty, extra LOOP
            got := true;
            RETURN NEXT rec;
        END LOOP;
        EXIT WHEN got OR clock_timestamp() >= deadline;
        PERFORM pg_sleep(least(poll_interval_ms / 1000.0,
                               extract(epoch FROM deadline - clock_timestamp())));
    END LOOP;
END
$fn$;

-- Like read, but wait up to max_poll_seconds for a message to become visible.
CREATE FUNCTION pgmq.read_with_poll(
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
        'SELECT * FROM pgmq.read($1, $2, $3, $4::jsonb)',
        queue_name, vt, qty, conditional::text, max_poll_seconds, poll_interval_ms);
$fn$;

-- Read and delete in one step (at-most-once).
CREATE FUNCTION pgmq.pop(queue_name text, qty integer DEFAULT 1)
RETURNS SETOF pgmq.message_record
LANGUAGE plpgsql
AS $fn$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q');
BEGIN
    IF qty IS NULL OR qty < 0 THEN
        RAISE EXCEPTION 'qty must be zero or more, got: %', coalesce(qty::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    RETURN QUERY EXECUTE format(
        $q$
        WITH picked AS (
            SELECT msg_id FROM pgmq.%1$I
            WHERE vt <= clock_timestamp()
            ORDER BY msg_id
            LIMIT $1
            FOR UPDATE SKIP LOCKED
        ),
        removed AS (
            DELETE FROM pgmq.%1$I m USING picked
            WHERE m.msg_id = picked.msg_id
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message, m.headers
        )
        SELECT * FROM removed ORDER BY msg_id
        $q$,
        qtable
    ) USING qty;
END
$fn$;

-- delete / archive ------------------------------------------------------------

CREATE FUNCTION pgmq.delete(queue_name text, msg_ids bigint[])
RETURNS SETOF bigint
LANGUAGE plpgsql
AS $fn$
BEGIN
    RETURN QUERY EXECUTE format(
        'DELETE FROM pgmq.%I WHERE msg_id = ANY($1) RETURNING msg_id',
        pgmq.format_table_name(queue_name, 'q')
    ) USING msg_ids;
END
$fn$;

CREATE FUNCTION pgmq.delete(queue_name text, msg_id bigint)
RETURNS boolean
LANGUAGE sql
AS $fn$ SELECT EXISTS (SELECT 1 FROM pgmq.delete(queue_name, ARRAY[msg_id])); $fn$;

-- Move messages to the archive table in one statement; returns the ids moved.
CREATE FUNCTION pgmq.archive(queue_name text, msg_ids bigint[])
RETURNS SETOF bigint
LANGUAGE plpgsql
AS $fn$
BEGIN
    RETURN QUERY EXECUTE format(
        $q$
        WITH moved AS (
            DELETE FROM pgmq.%I WHERE msg_id = ANY($1)
            RETURNING msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers
        )
        INSERT INTO pgmq.%I (msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers)
        SELECT msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers FROM moved
        RETURNING msg_id
        $q$,
        pgmq.format_table_name(queue_name, 'q'), pgmq.format_table_name(queue_name, 'a')
    ) USING msg_ids;
END
$fn$;

CREATE FUNCTION pgmq.archive(queue_name text, msg_id bigint)
RETURNS boolean
LANGUAGE sql
AS $fn$ SELECT EXISTS (SELECT 1 FROM pgmq.archive(queue_name, ARRAY[msg_id])); $fn$;

-- set_vt ----------------------------------------------------------------------

CREATE FUNCTION pgmq.set_vt(queue_name text, msg_ids bigint[], vt timestamptz)
RETURNS SETOF pgmq.message_record
LANGUAGE plpgsql
AS $fn$
BEGIN
    IF vt IS NULL THEN
        RAISE EXCEPTION 'vt cannot be NULL' USING ERRCODE = 'PQ004';
    END IF;
    RETURN QUERY EXECUTE format(
        $q$
        WITH moved AS (
            UPDATE pgmq.%I SET vt = $2 WHERE msg_id = ANY($1)
            RETURNING msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers
        )
        SELECT * FROM moved ORDER BY msg_id
        $q$,
        pgmq.format_table_name(queue_name, 'q')
    ) USING msg_ids, vt;
END
$fn$;

CREATE FUNCTION pgmq.set_vt(queue_name text, msg_ids bigint[], vt integer)
RETURNS SETOF pgmq.message_record LANGUAGE sql
AS $fn$ SELECT * FROM pgmq.set_vt(queue_name, msg_ids, clock_timestamp() + make_interval(secs => vt)); $fn$;

CREATE FUNCTION pgmq.set_vt(queue_name text, msg_id bigint, vt timestamptz)
RETURNS SETOF pgmq.message_record LANGUAGE sql
AS $fn$ SELECT * FROM pgmq.set_vt(queue_name, ARRAY[msg_id], vt); $fn$;

CREATE FUNCTION pgmq.set_vt(queue_name text, msg_id bigint, vt integer)
RETURNS SETOF pgmq.message_record LANGUAGE sql
AS $fn$ SELECT * FROM pgmq.set_vt(queue_name, ARRAY[msg_id], clock_timestamp() + make_interval(secs => vt)); $fn$;
