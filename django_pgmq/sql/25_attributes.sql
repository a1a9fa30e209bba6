-- Queue attributes (SQS-grade, for every client): pgmq.set_queue_attributes and
-- pgmq.get_queue_attributes, the claim filter, and the statements of
-- sql/15_queue_ops.sql for a queue that has some.
--
-- A queue without attributes has no row in pgmq.queue_attributes and runs the plain
-- statements of pgmq._queue_ops_sql, unchanged. A queue with attributes gets
-- statements written for exactly its attributes by pgmq._queue_ops_attr_sql (a delay
-- is a constant, a check is present only when its attribute is set), at each call:
-- nothing is generated or kept, so a change is seen by the next statement. Readers
-- apply the read-side attributes through one definition, pgmq._claim_filter.
--
-- Keys: delivery_delay, deduplication_window (header "deduplication_id"),
-- max_receive_count + dead_letter_queue (redrive at read: header "dead_letter"),
-- message_retention, archive_retention (pgmq.enforce_retention), max_message_size,
-- priorities (header "priority", -100..100, higher first), paused, max_in_flight and
-- rate_limit (sql/26_limits.sql). Not part of pgmq's
-- API, but callable by any of its clients.

-- One row per queue with attributes; it goes with the queue (ON DELETE CASCADE).
CREATE TABLE pgmq.queue_attributes (
    queue_name varchar PRIMARY KEY
        REFERENCES pgmq.meta (queue_name) ON DELETE CASCADE ON UPDATE CASCADE,
    attributes jsonb NOT NULL CHECK (jsonb_typeof(attributes) = 'object'),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX queue_attributes_table_key ON pgmq.queue_attributes (lower(queue_name));

-- The deduplication ids sent to a queue (by its lower-cased name) and the message each
-- first enqueued. No foreign key (a send would lock the queue's row): the rows of a
-- queue go when its attributes row goes (trigger below) or the window is turned off,
-- and rows past the window are deleted by pgmq.enforce_retention.
CREATE TABLE pgmq.queue_deduplication (
    queue_name text NOT NULL,
    deduplication_id text NOT NULL,
    msg_id bigint NOT NULL,
    sent_at timestamptz NOT NULL,
    PRIMARY KEY (queue_name, deduplication_id)
);

CREATE FUNCTION pgmq._forget_deduplication()
RETURNS trigger
LANGUAGE plpgsql
AS $fn$
BEGIN
    DELETE FROM pgmq.queue_deduplication d WHERE d.queue_name::text = pg_catalog.lower(OLD.queue_name);
    RETURN OLD;
END
$fn$;

CREATE TRIGGER queue_attributes_forget_deduplication
AFTER DELETE ON pgmq.queue_attributes
FOR EACH ROW EXECUTE FUNCTION pgmq._forget_deduplication();

-- Validation ------------------------------------------------------------------

-- THE declaration of the queue attributes: one row per key. Everything else derives
-- from it: the checks below (by kind and minimum), the error messages (allowed), and,
-- through the generated module django_pgmq/attributes_declared.py, the admin form,
-- pgmq_create's options (option), pgmq_attributes' help and the docs table
-- (python -m django_pgmq.sqltools.attributes write; a test fails when one drifts).
--   kind     seconds | bytes | count (whole numbers, minimum or more), switch (true or
--            false), queue (another queue's name), rate ({"count": N, "seconds": S})
--   side     send (applied when a message is sent), read (when it is read), both,
--            retention (by pgmq.enforce_retention), limit (when it is read, through the
--            limit rows of sql/26_limits.sql: pgmq._limit_keys() lists these keys, and
--            every place that treats the limits alike asks it)
--   option   pgmq_create's option for it (NULL: none)
--   allowed  what a value must be (the error messages say it)
--   help     what it does, in one line
CREATE FUNCTION pgmq._queue_attribute_declaration()
RETURNS TABLE(key text, kind text, minimum integer, side text, option text, allowed text, help text)
LANGUAGE sql IMMUTABLE
AS $fn$
    VALUES
        ('delivery_delay', 'seconds', 0, 'send', '--delay',
         'an integer number of seconds, 0 or more',
         'Delay every send that gives no delay of its own.'),
        ('deduplication_window', 'seconds', 0, 'send', '--dedup-window',
         'an integer number of seconds, 0 (off) or more',
         'Drop a send whose deduplication_id was sent within this duration.'),
        ('max_receive_count', 'count', 1, 'read', '--max-receives',
         'an integer, 1 or more, set together with dead_letter_queue',
         'Move a message to the dead-letter queue instead of delivering it more often than this.'),
        ('dead_letter_queue', 'queue', NULL, 'read', '--dead-letter',
         'the name of another queue, set together with max_receive_count',
         'The dead-letter queue (with max_receive_count).'),
        ('message_retention', 'seconds', 1, 'retention', '--retention',
         'an integer number of seconds, 1 or more',
         'Delete live messages enqueued longer ago (by pgmq_maintain and the workers).'),
        ('archive_retention', 'seconds', 1, 'retention', '--archive-retention',
         'an integer number of seconds, 1 or more',
         'Delete archived messages archived longer ago (by pgmq_maintain and the workers).'),
        ('max_message_size', 'bytes', 1, 'send', '--max-size',
         'an integer number of bytes, 1 or more',
         'Refuse messages whose JSON text is larger.'),
        ('priorities', 'switch', NULL, 'both', '--priorities',
         'true or false',
         'Read messages with a higher "priority" header (-100..100) first.'),
        ('paused', 'switch', NULL, 'read', NULL,
         'true or false',
         'Readers return no messages; sends go on.'),
        ('max_in_flight', 'count', 1, 'limit', '--max-in-flight',
         'an integer, 1 or more',
         'Hand out at most N messages at once (read, not yet deleted, archived or visible again).'),
        ('rate_limit', 'rate', NULL, 'limit', '--rate-limit',
         'an object {"count": N, "seconds": S}, N an integer 1 or more, S a number of seconds more than 0',
         'Hand out at most COUNT messages in any window of DURATION.')
$fn$;

-- The keys of the limits (side 'limit'): what sql/26_limits.sql keeps state rows for.
-- IMMUTABLE, as the declaration: a caller's plan holds the array as a constant.
CREATE FUNCTION pgmq._limit_keys()
RETURNS text[]
LANGUAGE sql IMMUTABLE
AS $fn$
    SELECT pg_catalog.array_agg(d.key ORDER BY d.key) FROM pgmq._queue_attribute_declaration() d
    WHERE d.side = 'limit';
$fn$;

-- The read-side keys (sides read, both and limit) but max_in_flight: a read of a queue
-- that has max_in_flight and none of these runs on the short claim
-- (pgmq.read, sql/26_limits.sql). IMMUTABLE, as _limit_keys.
CREATE FUNCTION pgmq._claim_keys_but_slots()
RETURNS text[]
LANGUAGE sql IMMUTABLE
AS $fn$
    SELECT pg_catalog.array_agg(d.key ORDER BY d.key) FROM pgmq._queue_attribute_declaration() d
    WHERE d.side IN ('read', 'both', 'limit') AND d.key <> 'max_in_flight';
$fn$;

-- The limits among attrs (an object of the limit keys attrs has).
CREATE FUNCTION pgmq._limit_attributes(attrs jsonb)
RETURNS jsonb
LANGUAGE sql IMMUTABLE
AS $fn$
    SELECT coalesce(pg_catalog.jsonb_object_agg(e.key, e.value), '{}'::jsonb)
    FROM pg_catalog.jsonb_each(attrs) e WHERE e.key = ANY (pgmq._limit_keys());
$fn$;

-- The attribute keys and what each allows (the error messages list them).
CREATE FUNCTION pgmq._queue_attribute_rules()
RETURNS TABLE(key text, allowed text)
LANGUAGE sql IMMUTABLE
AS $fn$
    SELECT d.key, d.allowed FROM pgmq._queue_attribute_declaration() d;
$fn$;

CREATE FUNCTION pgmq._bad_queue_attribute(queue_name text, key text, got jsonb)
RETURNS void
LANGUAGE plpgsql
AS $fn$
DECLARE
    allowed text := (SELECT r.allowed FROM pgmq._queue_attribute_rules() r WHERE r.key = $2);
BEGIN
    IF allowed IS NULL THEN
        RAISE EXCEPTION 'queue "%": unknown queue attribute "%"', queue_name, key
            USING ERRCODE = 'PQ004',
                  HINT = 'Known attributes: ' || (SELECT pg_catalog.string_agg(r.key, ', ')
                                                  FROM pgmq._queue_attribute_rules() r) || '.';
    END IF;
    RAISE EXCEPTION 'queue "%": queue attribute "%" must be %, got %', queue_name, key, allowed, got
        USING ERRCODE = 'PQ004';
END
$fn$;

-- Whether a JSON value is a whole number in low..2147483647.
CREATE FUNCTION pgmq._json_int_at_least(value jsonb, low integer)
RETURNS boolean
LANGUAGE sql IMMUTABLE
AS $fn$
    SELECT pg_catalog.jsonb_typeof(value) = 'number'
       AND value::text::numeric = pg_catalog.trunc(value::text::numeric)
       AND value::text::numeric BETWEEN low AND 2147483647;
$fn$;

-- Raise PQ004 (naming the key and what it allows) unless attrs, the whole set of a
-- queue (stored name), is valid.
CREATE FUNCTION pgmq._check_queue_attributes(queue_name text, attrs jsonb)
RETURNS void
LANGUAGE plpgsql
AS $fn$
DECLARE
    k text;
    v jsonb;
    ok boolean;
    kind text;
    minimum integer;
BEGIN
    FOR k, v IN SELECT e.key, e.value FROM pg_catalog.jsonb_each(attrs) e ORDER BY e.key LOOP
        SELECT d.kind, d.minimum INTO kind, minimum
        FROM pgmq._queue_attribute_declaration() d WHERE d.key = k;
        ok := CASE
            -- the number kinds: an integer at least the declared minimum
            WHEN kind IN ('seconds', 'bytes', 'count') THEN pgmq._json_int_at_least(v, minimum)
            WHEN kind = 'switch' THEN pg_catalog.jsonb_typeof(v) = 'boolean'
            WHEN kind = 'queue' THEN pg_catalog.jsonb_typeof(v) = 'string'
            -- CASE, not AND: each test may only run once the one before it held.
            WHEN kind = 'rate' THEN CASE
                WHEN pg_catalog.jsonb_typeof(v) <> 'object' THEN false
                WHEN (SELECT pg_catalog.array_agg(x ORDER BY x) FROM pg_catalog.jsonb_object_keys(v) x)
                     <> '{count,seconds}' THEN false
                WHEN pg_catalog.jsonb_typeof(v -> 'seconds') <> 'number' THEN false
                ELSE pgmq._json_int_at_least(v -> 'count', 1)
                     AND (v ->> 'seconds')::numeric > 0 AND (v ->> 'seconds')::numeric <= 31536000
                END
            ELSE false  -- unknown key (no row): the error says so
        END;
        IF NOT ok THEN
            PERFORM pgmq._bad_queue_attribute(queue_name, k, v);
        END IF;
    END LOOP;
    IF attrs ? 'dead_letter_queue' THEN
        BEGIN
            PERFORM pgmq.validate_queue_name(attrs ->> 'dead_letter_queue');
        EXCEPTION WHEN SQLSTATE 'PQ001' THEN
            PERFORM pgmq._bad_queue_attribute(queue_name, 'dead_letter_queue'::text, attrs -> 'dead_letter_queue');
        END;
        IF pg_catalog.lower(attrs ->> 'dead_letter_queue') = pg_catalog.lower(queue_name) THEN
            RAISE EXCEPTION 'queue "%": queue attribute "dead_letter_queue" must be another queue, '
                'not the queue itself', queue_name
                USING ERRCODE = 'PQ004';
        END IF;
    END IF;
    IF (attrs ? 'max_receive_count') <> (attrs ? 'dead_letter_queue') THEN
        RAISE EXCEPTION 'queue "%": queue attributes "max_receive_count" and "dead_letter_queue" '
            'go together: set both, or remove both', queue_name
            USING ERRCODE = 'PQ004';
    END IF;
END
$fn$;

-- The SQL API -------------------------------------------------------------------

-- The attributes of a queue ('{}' for none); NULL when the queue has no row (internal).
CREATE FUNCTION pgmq._queue_attributes(queue_name text)
RETURNS jsonb
LANGUAGE sql STABLE
AS $fn$
    SELECT a.attributes FROM pgmq.queue_attributes a WHERE pg_catalog.lower(a.queue_name::text) = pg_catalog.lower($1);
$fn$;

CREATE FUNCTION pgmq.get_queue_attributes(queue_name text)
RETURNS jsonb
LANGUAGE plpgsql STABLE
AS $fn$
BEGIN
    PERFORM pgmq._require_queue(queue_name);
    RETURN coalesce(pgmq._queue_attributes(queue_name), '{}'::jsonb);
END
$fn$;

-- Merge attributes into the queue's set (a key given as JSON null is removed) and return
-- the whole set. All or nothing: a bad key or value changes nothing.
-- Policy: only the owner and roles granted manage_queues may change it (42501 otherwise;
-- a call that changes nothing, as a worker's start makes, passes for any role).
-- An owner function (SECURITY DEFINER): application roles have no write right on
-- pgmq.queue_attributes, pgmq.queue_limit_state or pgmq.queue_deduplication; it writes no
-- queue table, so the pinned search_path never reaches a user's trigger.
CREATE FUNCTION pgmq.set_queue_attributes(queue_name text, attributes jsonb)
RETURNS jsonb
LANGUAGE sql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
    SELECT pgmq._apply_queue_attributes($1::text, $2::jsonb, 'manage_queues'::text);
$fn$;

-- The body of set_queue_attributes; a change needs the right `privilege` of the session
-- (NULL: the calling owner function checked what it allows, e.g. the Celery transport's
-- priorities on a queue it created). Not SECURITY DEFINER: called directly by an
-- application role it runs as that role, which may not write these tables.
CREATE FUNCTION pgmq._apply_queue_attributes(queue_name text, attributes jsonb, privilege text)
RETURNS jsonb
LANGUAGE plpgsql
AS $fn$
DECLARE
    stored text;
    old jsonb;
    merged jsonb;
    k text;
BEGIN
    stored := pgmq._require_queue(queue_name::text);
    IF attributes IS NULL OR pg_catalog.jsonb_typeof(attributes) <> 'object' THEN
        RAISE EXCEPTION 'queue "%": attributes must be a JSON object, got %', stored,
            coalesce(attributes::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    FOR k IN SELECT pg_catalog.jsonb_object_keys(attributes) LOOP
        IF NOT EXISTS (SELECT 1 FROM pgmq._queue_attribute_rules() r WHERE r.key = k) THEN
            PERFORM pgmq._bad_queue_attribute(stored, k, attributes -> k);
        END IF;
    END LOOP;
    PERFORM pgmq.acquire_queue_lock(stored);
    old := coalesce(pgmq._queue_attributes(stored), '{}'::jsonb);
    merged := pg_catalog.jsonb_strip_nulls(old || attributes);
    PERFORM pgmq._check_queue_attributes(stored, merged);
    IF merged = old THEN
        RETURN merged;
    END IF;
    IF privilege IS NOT NULL THEN
        PERFORM pgmq._require_privilege(privilege);
    END IF;

    IF merged ? 'dead_letter_queue'
       AND NOT EXISTS (SELECT 1 FROM pgmq.meta m
                       WHERE pg_catalog.lower(m.queue_name::text)
                             = pg_catalog.lower(merged ->> 'dead_letter_queue')) THEN
        PERFORM pgmq."create"(merged ->> 'dead_letter_queue');
    END IF;
    IF (merged -> 'priorities') = 'true'::jsonb THEN
        -- The tasks backend's index (sql/75_tasks.sql): priority descending, then msg_id,
        -- built CONCURRENTLY after the commit (sql/22_index_builds.sql).
        PERFORM pgmq._want_queue_index(stored, 'priority'::text);
    END IF;
    IF coalesce((merged ->> 'deduplication_window')::integer, 0) = 0 THEN
        DELETE FROM pgmq.queue_deduplication d WHERE d.queue_name::text = pg_catalog.lower(stored);
    END IF;

    IF pgmq._limit_attributes(old) IS DISTINCT FROM pgmq._limit_attributes(merged) THEN
        -- as the owner: pgmq.queue_limit_state is the owner's (sql/26_limits.sql)
        PERFORM pgmq._sync_queue_limits(stored, merged);
    END IF;

    IF merged = '{}'::jsonb THEN
        DELETE FROM pgmq.queue_attributes a WHERE a.queue_name::text = stored;
    ELSE
        INSERT INTO pgmq.queue_attributes AS a (queue_name, attributes)
        VALUES (stored, merged)
        ON CONFLICT ON CONSTRAINT queue_attributes_pkey
        DO UPDATE SET attributes = excluded.attributes, updated_at = pg_catalog.now();
    END IF;
    RETURN merged;
END
$fn$;

-- Deduplication side state ------------------------------------------------------------

-- The deduplication window of a queue (by its lower-cased name), in seconds, when it
-- has one above 0; PQ004 otherwise. The owner helpers below take the window from the
-- queue's own attributes, never from their caller.
CREATE FUNCTION pgmq._dedup_window(queue_key text)
RETURNS integer
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    secs integer;
BEGIN
    SELECT (a.attributes ->> 'deduplication_window')::integer INTO secs
    FROM pgmq.queue_attributes a
    WHERE pg_catalog.lower(a.queue_name::text) = queue_key;
    IF coalesce(secs, 0) <= 0 OR queue_key IS DISTINCT FROM pg_catalog.lower(queue_key) THEN
        RAISE EXCEPTION 'queue "%" has no deduplication window', coalesce(queue_key, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    RETURN secs;
END
$fn$;

-- Record the deduplication ids of messages just sent (the fast send: plain inserts, so
-- an id already recorded raises unique_violation and the caller's subtransaction rolls
-- back its messages too). Owner helper: the only write an application role's send makes
-- outside the queue's table; the queue must have a window, and a row only says which
-- message first took an id, so a caller can at worst hold back its own later sends of
-- that id, which it could anyway. Returns how many ids were recorded.
CREATE FUNCTION pgmq._dedup_record(queue_key text, dedup_ids text[], msg_ids bigint[])
RETURNS integer
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    n integer;
BEGIN
    IF coalesce(pg_catalog.cardinality(dedup_ids), 0) = 0 THEN
        RETURN 0;
    END IF;
    PERFORM pgmq._dedup_window(queue_key);
    IF pg_catalog.cardinality(dedup_ids) <> coalesce(pg_catalog.cardinality(msg_ids), -1) THEN
        RAISE EXCEPTION 'dedup_ids and msg_ids differ in length' USING ERRCODE = 'PQ004';
    END IF;
    INSERT INTO pgmq.queue_deduplication (queue_name, deduplication_id, msg_id, sent_at)
    SELECT queue_key, u.dedup, u.id, pg_catalog.clock_timestamp()
    FROM unnest(dedup_ids, msg_ids) AS u(dedup, id)  -- multi-argument unnest is syntax, not a function
    WHERE u.dedup IS NOT NULL
    ORDER BY u.dedup;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$fn$;

-- Claim deduplication ids for new messages: an id sent within the queue's window keeps
-- its first message (returned), any other takes the new msg_id. In dedup order, so two
-- senders never wait on each other's ids crosswise. Owner helper, as _dedup_record.
CREATE FUNCTION pgmq._dedup_claim(queue_key text, dedup_ids text[], msg_ids bigint[])
RETURNS TABLE(deduplication_id text, msg_id bigint)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
#variable_conflict use_column
DECLARE
    win interval;
BEGIN
    IF coalesce(pg_catalog.cardinality(dedup_ids), 0) = 0 THEN
        RETURN;
    END IF;
    win := pg_catalog.make_interval(secs => pgmq._dedup_window(queue_key)::double precision);
    IF pg_catalog.cardinality(dedup_ids) <> coalesce(pg_catalog.cardinality(msg_ids), -1) THEN
        RAISE EXCEPTION 'dedup_ids and msg_ids differ in length' USING ERRCODE = 'PQ004';
    END IF;
    RETURN QUERY
        INSERT INTO pgmq.queue_deduplication AS d (queue_name, deduplication_id, msg_id, sent_at)
        SELECT queue_key, u.dedup, u.id, pg_catalog.clock_timestamp()
        FROM unnest(dedup_ids, msg_ids) AS u(dedup, id)  -- multi-argument unnest is syntax, not a function
        WHERE u.dedup IS NOT NULL AND u.id IS NOT NULL
        ORDER BY u.dedup
        ON CONFLICT (queue_name, deduplication_id) DO UPDATE
        SET msg_id = CASE WHEN d.sent_at > pg_catalog.clock_timestamp() - win
                          THEN d.msg_id ELSE excluded.msg_id END,
            sent_at = CASE WHEN d.sent_at > pg_catalog.clock_timestamp() - win
                           THEN d.sent_at ELSE excluded.sent_at END
        RETURNING d.deduplication_id, d.msg_id;
END
$fn$;

-- Forget a queue's deduplication ids past its window (retention, run by any role that
-- runs maintenance). Owner helper: it deletes only what the queue's own window lets go.
CREATE FUNCTION pgmq._dedup_expire(queue_name text)
RETURNS bigint
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    key text := pg_catalog.lower(queue_name);
    secs integer := (SELECT (a.attributes ->> 'deduplication_window')::integer
                     FROM pgmq.queue_attributes a
                     WHERE pg_catalog.lower(a.queue_name::text) = key);
    n bigint;
BEGIN
    IF coalesce(secs, 0) <= 0 THEN
        RETURN 0;
    END IF;
    DELETE FROM pgmq.queue_deduplication d
    WHERE d.queue_name::text = key
      AND d.sent_at < pg_catalog.clock_timestamp() - pg_catalog.make_interval(secs => secs::double precision);
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$fn$;

-- Sending -------------------------------------------------------------------------

-- A message about to be sent to a queue with checks (max_message_size, priorities,
-- deduplication_window): the message itself, or PQ004 naming what is wrong.
CREATE FUNCTION pgmq._checked_message(
    queue_name text, msg jsonb, headers jsonb, max_size integer, priorities boolean, dedup boolean
)
RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE
AS $fn$
DECLARE
    size integer;
    v jsonb;
BEGIN
    IF max_size IS NOT NULL THEN
        size := pg_catalog.octet_length(msg::text);
        IF size > max_size THEN
            RAISE EXCEPTION 'queue "%": message of % bytes is larger than the queue''s '
                'max_message_size of % bytes', queue_name, size, max_size
                USING ERRCODE = 'PQ004';
        END IF;
    END IF;
    IF pg_catalog.jsonb_typeof(headers) = 'object' THEN
        v := headers -> 'priority';
        IF priorities AND v IS NOT NULL
           AND NOT (pg_catalog.jsonb_typeof(v) = 'number' AND v::text ~ '^-?[0-9]{1,3}$'
                    AND pg_catalog.abs(v::text::integer) <= 100) THEN
            RAISE EXCEPTION 'queue "%": header "priority" must be an integer from -100 to 100, got %',
                queue_name, v
                USING ERRCODE = 'PQ004';
        END IF;
        v := headers -> 'deduplication_id';
        IF dedup AND v IS NOT NULL
           AND NOT (pg_catalog.jsonb_typeof(v) = 'string' AND pg_catalog.char_length(v #>> '{}') BETWEEN 1 AND 128) THEN
            RAISE EXCEPTION 'queue "%": header "deduplication_id" must be a string of 1 to 128 '
                'characters, got %', queue_name, pg_catalog.left(v::text, 200)
                USING ERRCODE = 'PQ004';
        END IF;
    END IF;
    RETURN msg;
END
$fn$;

-- The "dead_letter" header of a message moved to a dead-letter queue: where it came
-- from, how often it was read, when, and the last error the worker recorded (if any).
-- Headers that are not a JSON object are kept under "headers".
CREATE FUNCTION pgmq._dead_letter_headers(
    headers jsonb, queue_name text, msg_id bigint, read_ct integer, enqueued_at timestamptz,
    error text
)
RETURNS jsonb
LANGUAGE sql VOLATILE
AS $fn$
    SELECT CASE
               WHEN headers IS NULL THEN '{}'::jsonb
               WHEN pg_catalog.jsonb_typeof(headers) = 'object' THEN headers
               ELSE pg_catalog.jsonb_build_object('headers', headers)
           END
           || pg_catalog.jsonb_build_object('dead_letter', pg_catalog.jsonb_build_object(
                  'queue', queue_name,
                  'msg_id', msg_id,
                  'read_ct', read_ct,
                  'enqueued_at', enqueued_at,
                  'dead_lettered_at', pg_catalog.clock_timestamp(),
                  'error', coalesce(error, CASE WHEN pg_catalog.jsonb_typeof(headers -> 'attempt_errors') = 'array'
                                                THEN headers -> 'attempt_errors' -> -1 ->> 'error' END)));
$fn$;

-- The one way a message becomes a dead letter, shared by the read-time redrive, the
-- FIFO readers (pgmq._dead_letter_ids) and the worker (pgmq._dead_letter): the text of
-- a data-modifying CTE "moved" that inserts the rows of a CTE "dead" (msg_id, read_ct,
-- enqueued_at, message, headers, error; deleted from queue_name by the same statement)
-- into dead_letter_queue's table as they are, visible at once, headers gaining
-- "dead_letter". Its RETURNING gives the new msg_id. A plain insert, never pgmq.send:
-- the dead-letter queue's send-side attributes (delivery_delay, max_message_size,
-- deduplication_window) do not apply, so a size limit or a deduplication window there
-- can never refuse, and so lose, a failed message; and the move stays one statement
-- with the delete, so the message is in exactly one of the two queues. A workflow step's
-- message gets its error recorded on the way (pgmq._workflow_message_failed), so the
-- delete fails the step instead of finishing it (sql/57_workflow_settle.sql).
CREATE FUNCTION pgmq._dead_letter_move_sql(queue_name text, dead_letter_queue text)
RETURNS text
LANGUAGE sql STABLE
AS $fn$
    SELECT pg_catalog.format(
        $sql$
        moved AS (
            INSERT INTO pgmq.%1$I (vt, message, headers)
            SELECT pg_catalog.clock_timestamp(), x.message,
                   pgmq._dead_letter_headers(
                       pgmq._workflow_message_failed(x.headers, %2$L, x.msg_id,
                           pg_catalog.jsonb_build_object(
                               'error', coalesce(x.error, 'dead-lettered: read too often (max_receive_count)'),
                               'dead_letter_queue', %3$L::text)),
                       %2$L, x.msg_id, x.read_ct, x.enqueued_at, x.error)
            FROM dead x ORDER BY x.msg_id
            RETURNING msg_id
        )
        $sql$,
        pgmq.format_table_name(dead_letter_queue, 'q'::text), queue_name, dead_letter_queue);
$fn$;

-- The statements -------------------------------------------------------------------

-- The SQL test (on u.msg and u.hdr) that a message passes the send checks of attrs:
-- pgmq._checked_message's tests, inline, so a valid message costs no function call.
CREATE FUNCTION pgmq._send_checks_sql(attrs jsonb)
RETURNS text
LANGUAGE sql STABLE
AS $fn$
    SELECT pg_catalog.concat_ws(' AND ',
        CASE WHEN attrs ? 'max_message_size'
             THEN pg_catalog.format('pg_catalog.octet_length(u.msg::text) <= %s', (attrs ->> 'max_message_size')::integer) END,
        CASE WHEN (attrs -> 'priorities') = 'true'::jsonb THEN $t$
            CASE WHEN u.hdr -> 'priority' IS NULL OR pg_catalog.jsonb_typeof(u.hdr) <> 'object' THEN true
                 WHEN pg_catalog.jsonb_typeof(u.hdr -> 'priority') <> 'number'
                      OR (u.hdr ->> 'priority') !~ '^-?[0-9]{1,3}$' THEN false
                 ELSE pg_catalog.abs((u.hdr ->> 'priority')::integer) <= 100 END$t$ END,
        CASE WHEN coalesce((attrs ->> 'deduplication_window')::integer, 0) > 0 THEN $t$
            CASE WHEN u.hdr -> 'deduplication_id' IS NULL OR pg_catalog.jsonb_typeof(u.hdr) <> 'object' THEN true
                 WHEN pg_catalog.jsonb_typeof(u.hdr -> 'deduplication_id') <> 'string' THEN false
                 ELSE pg_catalog.char_length(u.hdr ->> 'deduplication_id') BETWEEN 1 AND 128 END$t$ END);
$fn$;

-- The claim filter: the one definition of what a queue's read-side attributes let a
-- reader claim. Every reader asks it (read, read_with_poll and pop through
-- pgmq._queue_ops_with_attributes, the FIFO readers, the Spark claim, the Tasks
-- backend's priority read; the Celery read and the worker call pgmq.read), so a new
-- read-side attribute is a change here:
--   allowed            how many of the qty asked for the reader may claim now (0 when
--                      the queue is paused; NULL qty, "all", stays NULL unless a limit
--                      caps it). max_in_flight (not for a pop) and rate_limit lower it
--                      (sql/26_limits.sql): the claim then holds one slot (and one
--                      token) per message it may take until its transaction ends (taken
--                      SKIP LOCKED: it never waits for another claim), and records what
--                      it claimed with
--                      pgmq._claim_record(queue_name, held, stamps, counts, claimed ids).
--   max_receive_count  with dead_letter_queue: a visible message already read this often
--   dead_letter_queue  is moved there instead of being handed out (NULL: no redrive); the
--                      move never uses up the reader's qty.
--   by_priority        claim by header "priority" (highest first), then msg_id.
--   held, stamps,      the limit state to record the claim against (all NULL for a
--   counts             queue without limits: nothing to record).
-- pops: the claim is a pop. take_lock false: only look (no lock, nothing to record: for
-- a caller that does not claim; pgmq._claim_limits' take_lock).
CREATE FUNCTION pgmq._claim_filter(
    queue_name text, attrs jsonb, qty integer, pops boolean DEFAULT false,
    take_lock boolean DEFAULT true,
    OUT allowed integer, OUT max_receive_count integer, OUT dead_letter_queue text,
    OUT by_priority boolean, OUT held tid[], OUT stamps timestamptz[], OUT counts tid[]
)
LANGUAGE plpgsql
AS $fn$
BEGIN
    allowed := CASE WHEN (attrs -> 'paused') = 'true'::jsonb THEN 0 ELSE qty END;
    max_receive_count := CASE WHEN attrs ? 'dead_letter_queue'
                              THEN (attrs ->> 'max_receive_count')::integer END;
    dead_letter_queue := attrs ->> 'dead_letter_queue';
    by_priority := coalesce((attrs -> 'priorities') = 'true'::jsonb, false);
    IF allowed IS DISTINCT FROM 0 AND attrs ?| pgmq._limit_keys() THEN
        -- held: the max_in_flight slots taken for the claim; counts: the rate_limit
        -- tokens (their rows' ctids); stamps: '{}' when the queue has a rate limit
        -- (sql/26_limits.sql).
        SELECT l.allowed, l.slots,
               CASE WHEN l.tokens IS NOT NULL THEN '{}'::timestamptz[] END, l.tokens
        INTO allowed, held, stamps, counts
        FROM pgmq._claim_limits(queue_name, allowed, pops, take_lock) l;
    END IF;
END
$fn$;

-- The statement of op on a queue with attributes attrs (sql/15_queue_ops.sql gives the
-- parameters and the ops; low is the low-water mark's expression). Archive, delete and
-- set_vt are the plain ones. Read and pop claim as pgmq._claim_filter says, with $2 the
-- number it allowed. One op of its own: 'S', a deduplicating queue's fast send
-- (pgmq._send_deduplicated), which yields the msg_ids as one array.
--
-- A send with checks (max_message_size, priorities, deduplication_window) checks the
-- whole batch before it takes any msg_id (an uncorrelated subquery in WHERE, which runs
-- once before the first row), so a refused batch uses up no ids and total_messages
-- counts only messages.
CREATE FUNCTION pgmq._queue_ops_attr_sql(queue_name text, op "char", low text, attrs jsonb)
RETURNS text
LANGUAGE plpgsql STABLE
AS $fn$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q'::text);
    checks text := nullif(pgmq._send_checks_sql(attrs), '');
    gate text := 'TRUE';
    msg text := 'u.msg';
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
        WITH m AS (%1$s
        ), claimed AS (
            -- the owner's helper records the ids (pgmq._dedup_record)
            SELECT pgmq._dedup_record(%4$L::text,
                                      pg_catalog.array_agg(m.dedup ORDER BY m.dedup),
                                      pg_catalog.array_agg(m.msg_id ORDER BY m.dedup)) AS n
            FROM m WHERE m.dedup IS NOT NULL
        )
        SELECT (SELECT pg_catalog.array_agg(m.msg_id ORDER BY m.msg_id) FROM m) FROM claimed
                $sql$,
                pgmq._send_sql(qtable, false, CASE WHEN gate = 'TRUE' THEN '' ELSE ' WHERE ' || gate END,
                               '$4', '$6', '$7', delay, $r$q.msg_id, q.headers ->> 'deduplication_id' AS dedup$r$),
                NULL, NULL, pg_catalog.lower(queue_name));
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
        inserted AS (%2$s
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
            qtable,
            pgmq._send_sql(qtable, false, '', '$4', NULL, NULL, delay, 'q.msg_id', $rows$(
                SELECT n.msg, n.hdr, n.new_id AS id
                FROM numbered n
                WHERE n.dedup IS NULL OR n.new_id IN (SELECT c.msg_id FROM claimed c)
                ORDER BY n.ord) AS u$rows$),
            msg,
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
$fn$;

-- Run op on a queue with attributes attrs (the router's arguments; low the session's
-- low-water mark): a deduplicating send through pgmq._send_deduplicated, a read or pop
-- through the claim filter, anything else by its statement.
CREATE FUNCTION pgmq._queue_ops_with_attributes(
    queue_name text, attrs jsonb, p_op "char", p_qty integer, p_secs integer,
    p_vt timestamptz, p_ids bigint[], p_msgs jsonb[], p_headers jsonb[], p_cond jsonb,
    low bigint
)
RETURNS SETOF pgmq.message_record
LANGUAGE plpgsql
AS $fn$
DECLARE
    f record;
    qty integer := p_qty;
    rec pgmq.message_record;
    claimed bigint[] := '{}';
    claimed_rcs integer[] := '{}';
    claimed_vts timestamptz[] := '{}';
    n bigint;
    stmt text;
    qtable text;
    rows refcursor;
BEGIN
    IF p_op = 's' AND coalesce((attrs ->> 'deduplication_window')::integer, 0) > 0 THEN
        RETURN QUERY SELECT * FROM pgmq._send_deduplicated(queue_name, attrs, p_vt, p_msgs, p_headers);
        RETURN;
    END IF;
    IF p_op = 'r' OR p_op = 'p' THEN
        f := pgmq._claim_filter(queue_name, attrs, qty, p_op = 'p');
        qty := f.allowed;
        IF qty = 0 THEN
            RETURN;
        END IF;
        IF f.dead_letter_queue IS NOT NULL THEN
            PERFORM pgmq._ensure_dead_letter_queue(f.dead_letter_queue);
        END IF;
        IF f.held IS NOT NULL OR f.stamps IS NOT NULL THEN
            -- A limited queue: note what was claimed, for pgmq._claim_record. A read that
            -- the limits only cap (no priorities, no redrive) is the plain read of the
            -- quantity allowed: kept in the session as 'l' (sql/15_queue_ops.sql).
            IF p_op = 'r' AND NOT f.by_priority AND f.dead_letter_queue IS NULL THEN
                qtable := pgmq.format_table_name(queue_name, 'q'::text);
                -- once kept, straight to the check of its text (as archive and delete do)
                IF pg_catalog.current_setting(pgmq._queue_ops_kept_key(qtable, 'l'), true) = 'p' THEN
                    stmt := (SELECT k FROM pgmq._queue_ops_kept_stmt(qtable, 'l'::"char") k);
                ELSE
                    stmt := pgmq._queue_ops_prepared(qtable, 'l');
                END IF;
            END IF;
            IF stmt IS NOT NULL THEN
                RETURN QUERY
                    WITH r AS MATERIALIZED (
                        SELECT * FROM pgmq._queue_ops_run_prepared(stmt, qty, p_secs, p_ids, p_cond, low))
                    SELECT r.* FROM r
                    WHERE (SELECT pgmq._claim_record(
                                      queue_name, f.held, f.stamps, f.counts,
                                      pg_catalog.array_agg(x.msg_id), p_op = 'p',
                                      pg_catalog.array_agg(x.read_ct), pg_catalog.array_agg(x.vt)) IS NULL
                           FROM r x) IS NOT NULL;
                RETURN;
            END IF;
            OPEN rows FOR EXECUTE pgmq._queue_ops_attr_sql(queue_name, p_op, '$9'::text, attrs)
                USING p_op, qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond, low;
            LOOP
                FETCH rows INTO rec;
                EXIT WHEN NOT FOUND;
                claimed := claimed || rec.msg_id;
                claimed_rcs := claimed_rcs || rec.read_ct;
                claimed_vts := claimed_vts || rec.vt;
                RETURN NEXT rec;
            END LOOP;
            CLOSE rows;
            PERFORM pgmq._claim_record(queue_name, f.held, f.stamps, f.counts, claimed, p_op = 'p',
                                       claimed_rcs, claimed_vts);
            RETURN;
        END IF;
    END IF;
    IF p_op = 'a' OR p_op = 'd' OR p_op = 'v' THEN
        -- The plain statements, whatever the attributes: not worth writing them anew.
        RETURN QUERY EXECUTE pgmq._queue_ops_sql(queue_name, p_op, '$9')
            USING p_op, qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond, low;
    ELSE
        RETURN QUERY EXECUTE pgmq._queue_ops_attr_sql(queue_name, p_op, '$9', attrs)
            USING p_op, qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond, low;
    END IF;
    IF (p_op = 'a' OR p_op = 'd' OR (p_op = 'v' AND p_vt <= pg_catalog.clock_timestamp()))
       AND attrs ? 'max_in_flight' THEN
        -- A slot may have freed (not by a heartbeat's set_vt into the future): wake a
        -- worker waiting at the limit (at commit) if a claim found the queue full. The
        -- slot itself frees lazily (sql/26_limits.sql).
        GET DIAGNOSTICS n = ROW_COUNT;
        IF n > 0 THEN
            PERFORM pgmq._limit_wake(pg_catalog.lower(queue_name));
        END IF;
    END IF;
END
$fn$;

-- A send to a queue with a deduplication window: the fast send first, then, when an id
-- was taken, the ON CONFLICT statement.
--
-- Why (docs/internals/attributes.md, measured on PostgreSQL 18): INSERT ... ON CONFLICT inserts each
-- row speculatively (a pre-check of the index, a lock per row, a confirming WAL record),
-- about 4.5 us per message, twice what the message itself costs. The fast send inserts
-- the ids plainly, in a subtransaction; an id already claimed raises unique_violation,
-- which rolls the attempt back, and the ON CONFLICT statement then decides as before.
-- It is not tried when the batch repeats an id or one of its ids is already recorded,
-- so a duplicate uses up no msg_id. Each committed subtransaction stays in the
-- transaction's cache of 64 subtransaction ids, past which every snapshot on the server
-- gets slower, so a transaction tries the fast send at most 16 times (counted in the
-- session setting pgmq.dedup_tries, "<xid> <count>"); its later sends run the ON
-- CONFLICT statement only.
CREATE FUNCTION pgmq._send_deduplicated(
    queue_name text, attrs jsonb, p_vt timestamptz, p_msgs jsonb[], p_headers jsonb[]
)
RETURNS SETOF pgmq.message_record
LANGUAGE plpgsql
AS $fn$
DECLARE
    ids bigint[];
    tries text := coalesce(pg_catalog.current_setting('pgmq.dedup_tries', true), '');
    tried integer := CASE WHEN pg_catalog.split_part(tries, ' ', 1) = pg_catalog.pg_current_xact_id_if_assigned()::text
                          THEN pg_catalog.split_part(tries, ' ', 2)::integer ELSE 0 END;
BEGIN
    IF tried < 16 AND NOT EXISTS (
        SELECT 1
        FROM (SELECT h ->> 'deduplication_id' AS dedup FROM pg_catalog.unnest(p_headers) AS h) x
        WHERE x.dedup IS NOT NULL
        GROUP BY x.dedup
        HAVING pg_catalog.count(*) > 1 OR EXISTS (
            SELECT 1 FROM pgmq.queue_deduplication d
            WHERE d.queue_name::text = pg_catalog.lower($1) AND d.deduplication_id = x.dedup))
    THEN
        BEGIN
            EXECUTE pgmq._queue_ops_attr_sql(queue_name, 'S', '0'::text, attrs) INTO ids
                USING NULL::"char", NULL::integer, NULL::integer, p_vt, NULL::bigint[],
                      p_msgs, p_headers, NULL::jsonb;
        EXCEPTION WHEN unique_violation THEN
            ids := NULL;
        END;
        PERFORM pg_catalog.set_config('pgmq.dedup_tries',
                           coalesce(pg_catalog.pg_current_xact_id_if_assigned()::text, '') || ' ' || (tried + 1),
                           false);
        IF ids IS NOT NULL THEN
            RETURN QUERY SELECT i, NULL::integer, NULL::timestamptz, NULL::timestamptz,
                                NULL::timestamptz, NULL::jsonb, NULL::jsonb
                         FROM pg_catalog.unnest(ids) AS i;
            RETURN;
        END IF;
    END IF;
    RETURN QUERY EXECUTE pgmq._queue_ops_attr_sql(queue_name, 's', '0'::text, attrs)
        USING NULL::"char", NULL::integer, NULL::integer, p_vt, NULL::bigint[],
              p_msgs, p_headers, NULL::jsonb;
END
$fn$;

-- Create a dead-letter queue that is missing (it was dropped after being named).
CREATE FUNCTION pgmq._ensure_dead_letter_queue(queue_name text)
RETURNS void
LANGUAGE plpgsql
AS $fn$
BEGIN
    IF pg_catalog.to_regclass(pg_catalog.format('pgmq.%I', pgmq.format_table_name(queue_name, 'q'::text))) IS NULL THEN
        PERFORM pgmq."create"(queue_name);
    END IF;
END
$fn$;

-- Move the messages msg_ids of a queue (locked by the caller) to its dead-letter queue,
-- as a read would have (used by the FIFO readers, which claim first). delivered: how
-- many of each message's read_ct the caller added. Returns how many moved.
CREATE FUNCTION pgmq._dead_letter_ids(queue_name text, msg_ids bigint[], delivered integer DEFAULT 0)
RETURNS bigint
LANGUAGE plpgsql
AS $fn$
DECLARE
    dlq text := pgmq._queue_attributes(queue_name) ->> 'dead_letter_queue';
    moved bigint;
BEGIN
    IF dlq IS NULL OR coalesce(pg_catalog.cardinality(msg_ids), 0) = 0 THEN
        RETURN 0;
    END IF;
    PERFORM pgmq._ensure_dead_letter_queue(dlq);
    EXECUTE pg_catalog.format(
        $q$
        WITH dead AS (
            DELETE FROM pgmq.%1$I m WHERE m.msg_id = ANY($1)
            RETURNING m.msg_id, m.read_ct - $2 AS read_ct, m.enqueued_at, m.message, m.headers,
                      NULL::text AS error
        ), %2$s
        SELECT pg_catalog.count(*) FROM moved
        $q$,
        pgmq.format_table_name(queue_name, 'q'::text),
        pgmq._dead_letter_move_sql(pgmq._stored_queue_name(queue_name), dlq)
    ) INTO moved USING msg_ids, coalesce(delivered, 0);
    RETURN moved;
END
$fn$;

-- Retention ---------------------------------------------------------------------------

-- One batch of a queue's retention: delete at most batch_size of its live messages
-- enqueued longer ago than its message_retention and at most batch_size of its archived
-- rows older than its archive_retention (rows locked only while deleted, no table lock,
-- rows other sessions hold skipped), and its deduplication ids past their window.
-- Returns how many of each went; fewer than batch_size of both: the queue is done.
-- Clients that want each batch committed (manage.py pgmq_maintain, the workers'
-- sampler) call it per queue and per batch in autocommit; pgmq.enforce_retention runs
-- the whole loop in the caller's transaction.
CREATE FUNCTION pgmq._retention_batch(queue_name text, batch_size integer DEFAULT 5000)
RETURNS TABLE(expired bigint, archive_deleted bigint)
LANGUAGE plpgsql
AS $fn$
DECLARE
    stored text := pgmq._require_queue(queue_name);
    attrs jsonb := coalesce(pgmq._queue_attributes(stored), '{}'::jsonb);
BEGIN
    IF batch_size IS NULL OR batch_size < 1 THEN
        RAISE EXCEPTION 'batch_size must be at least 1, got %', batch_size USING ERRCODE = 'PQ004';
    END IF;
    expired := 0;
    archive_deleted := 0;
    IF attrs ? 'message_retention' THEN
        -- a workflow step's message expires as a failure of its step (sql/57_workflow_settle.sql):
        -- the error is recorded (a locking CTE, so only rows this batch deletes) first
        EXECUTE pg_catalog.format(
            $d$
            WITH picked AS MATERIALIZED (
                SELECT x.msg_id, x.headers FROM pgmq.%1$I x
                WHERE x.enqueued_at < pg_catalog.clock_timestamp() - pg_catalog.make_interval(secs => $1)
                ORDER BY x.msg_id LIMIT $2 FOR UPDATE SKIP LOCKED
            ), noted AS MATERIALIZED (
                SELECT p.msg_id, CASE WHEN p.headers ? 'workflow'::text
                    THEN pgmq._workflow_message_failed(p.headers, %2$L, p.msg_id,
                             pg_catalog.jsonb_build_object('error', 'expired: message_retention'::text))
                    END AS headers
                FROM picked p
            )
            DELETE FROM pgmq.%1$I m WHERE m.msg_id = ANY(ARRAY(SELECT n.msg_id FROM noted n))
            $d$, pgmq.format_table_name(stored, 'q'::text), stored)
        USING (attrs ->> 'message_retention')::integer, batch_size;
        GET DIAGNOSTICS expired = ROW_COUNT;
    END IF;
    IF attrs ? 'archive_retention' THEN
        EXECUTE pg_catalog.format(
            $d$
            DELETE FROM pgmq.%1$I a WHERE (a.msg_id, a.archived_at) IN (
                SELECT x.msg_id, x.archived_at FROM pgmq.%1$I x
                WHERE x.archived_at < pg_catalog.clock_timestamp() - pg_catalog.make_interval(secs => $1)
                ORDER BY x.archived_at LIMIT $2 FOR UPDATE SKIP LOCKED)
            $d$, pgmq.format_table_name(stored, 'a'::text))
        USING (attrs ->> 'archive_retention')::integer, batch_size;
        GET DIAGNOSTICS archive_deleted = ROW_COUNT;
    END IF;
    IF coalesce((attrs ->> 'deduplication_window')::integer, 0) > 0 THEN
        PERFORM pgmq._dedup_expire(stored);  -- the owner's helper
    END IF;
    RETURN NEXT;
END
$fn$;

-- The queues retention applies to (they have a retention or deduplication attribute),
-- and whether a run reports them (message_retention or archive_retention).
CREATE FUNCTION pgmq._retention_queues(only_queue text DEFAULT NULL)
RETURNS TABLE(queue_name text, reported boolean)
LANGUAGE sql STABLE
AS $fn$
    SELECT a.queue_name::text, a.attributes ? 'message_retention' OR a.attributes ? 'archive_retention'
    FROM pgmq.queue_attributes a
    WHERE (only_queue IS NULL OR pg_catalog.lower(a.queue_name::text) = pg_catalog.lower(only_queue))
      AND (a.attributes ? 'message_retention' OR a.attributes ? 'archive_retention'
           OR coalesce((a.attributes ->> 'deduplication_window')::integer, 0) > 0)
    ORDER BY a.queue_name;
$fn$;

-- Every batch of retention for one queue, or every queue with attributes, in the
-- caller's transaction (see pgmq._retention_batch for the committed way).
CREATE FUNCTION pgmq._enforce_retention(only_queue text)
RETURNS TABLE(queue text, expired bigint, archive_deleted bigint)
LANGUAGE plpgsql
AS $fn$
DECLARE
    batch_size constant integer := 5000;
    q record;
    b record;
BEGIN
    IF only_queue IS NOT NULL THEN
        PERFORM pgmq._require_queue(only_queue);
    END IF;
    FOR q IN SELECT * FROM pgmq._retention_queues(only_queue) LOOP
        queue := q.queue_name::text;
        expired := 0;
        archive_deleted := 0;
        LOOP
            SELECT * INTO b FROM pgmq._retention_batch(q.queue_name::text, batch_size);
            expired := expired + b.expired;
            archive_deleted := archive_deleted + b.archive_deleted;
            EXIT WHEN b.expired < batch_size AND b.archive_deleted < batch_size;
        END LOOP;
        IF q.reported THEN
            RETURN NEXT;
        END IF;
    END LOOP;
END
$fn$;

-- pgmq.enforce_retention's arguments and columns share a name, which PL/pgSQL refuses.
CREATE FUNCTION pgmq.enforce_retention(queue_name text DEFAULT NULL)
RETURNS TABLE(queue_name text, expired bigint, archive_deleted bigint)
LANGUAGE sql
AS $fn$
    SELECT * FROM pgmq._enforce_retention($1);
$fn$;

-- Redrive ----------------------------------------------------------------------------

-- Move dead letters back to the queues they came from (headers "dead_letter" -> "queue"),
-- like SQS's redrive: those whose message contains conditional, at most max_messages
-- (NULL: all), oldest first. Each goes back as a new message, visible at once, without
-- its "dead_letter" header. Rows another transaction holds are skipped, so concurrent
-- redrives never move one twice. Messages whose header names no queue, an invalid name
-- or a queue that does not exist stay where they are and are reported, never an error
-- for the whole dead-letter queue: one row per such name (source_queue as written, NULL
-- when none) with moved 0 and skipped = how many, and a NOTICE.
CREATE FUNCTION pgmq.redrive(
    dead_letter_queue text, conditional jsonb DEFAULT '{}', max_messages integer DEFAULT NULL
)
RETURNS TABLE(source_queue text, moved bigint, skipped bigint)
LANGUAGE plpgsql
AS $fn$
DECLARE
    dlq_table text := pgmq.format_table_name(pgmq._require_queue(dead_letter_queue), 'q'::text);
    source text;
    waiting bigint;
    target text;
    budget integer := max_messages;
BEGIN
    IF max_messages IS NOT NULL AND max_messages < 0 THEN
        RAISE EXCEPTION 'max_messages must be zero or more, got: %', max_messages
            USING ERRCODE = 'PQ004';
    END IF;
    FOR source, waiting IN EXECUTE pg_catalog.format(
        $q$
        SELECT m.headers -> 'dead_letter' ->> 'queue', pg_catalog.count(*) FROM pgmq.%I m
        WHERE pg_catalog.jsonb_typeof(m.headers -> 'dead_letter') = 'object'
          AND m.message @> coalesce($1, '{}'::jsonb)
        GROUP BY 1 ORDER BY 1
        $q$, dlq_table) USING conditional
    LOOP
        target := NULL;
        BEGIN
            target := pgmq._stored_queue_name(source);
        EXCEPTION WHEN SQLSTATE 'PQ001' THEN
            target := NULL;  -- not a valid queue name: reported below
        END;
        IF target IS NULL THEN
            RAISE NOTICE 'pgmq.redrive: % message(s) in "%" name queue % in their dead_letter '
                'header, which is not a valid queue name or does not exist; they stay',
                waiting, dead_letter_queue, coalesce(pg_catalog.format('"%s"', source), 'NULL');
            source_queue := source;
            moved := 0;
            skipped := waiting;
            RETURN NEXT;
            CONTINUE;
        END IF;
        CONTINUE WHEN budget IS NOT NULL AND budget <= 0;
        skipped := 0;
        source_queue := target;
        EXECUTE pg_catalog.format(
            $q$
            WITH picked AS (
                SELECT m.msg_id FROM pgmq.%1$I m
                WHERE m.headers -> 'dead_letter' ->> 'queue' = $1
                  AND m.message @> coalesce($2, '{}'::jsonb)
                ORDER BY m.msg_id
                LIMIT $3
                FOR UPDATE SKIP LOCKED
            ), gone AS (
                DELETE FROM pgmq.%1$I m WHERE m.msg_id IN (SELECT p.msg_id FROM picked p)
                RETURNING m.msg_id, m.message, m.headers
            ), back AS (
                INSERT INTO pgmq.%2$I (vt, message, headers)
                SELECT pg_catalog.clock_timestamp(), g.message, g.headers - 'dead_letter'
                FROM gone g ORDER BY g.msg_id
                RETURNING 1
            )
            SELECT pg_catalog.count(*) FROM back
            $q$,
            dlq_table, pgmq.format_table_name(source_queue, 'q'::text))
        INTO moved USING source, conditional, budget;
        budget := budget - moved;
        RETURN NEXT;
    END LOOP;
END
$fn$;
