-- Topics: route one message to every queue bound to a matching pattern.
--
-- Routing keys are dot-separated words ("orders.eu.created"). A pattern may use
-- '*' for exactly one word and '#' for any run of characters, dots included
-- (so "orders.#" matches "orders.eu" and "orders.eu.created" but not "orders",
-- exactly as pgmq does). Each pattern is compiled to an anchored regex once,
-- when it is bound.

-- The anchored regex of a pattern: every character other than a letter, digit,
-- '_', '-' or wildcard is backslash-escaped (in practice only '.'), then
-- '*' -> [^.]+ and '#' -> .*
CREATE FUNCTION pgmq._topic_regex(pattern text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $fn$
    SELECT '^'
        || pg_catalog.replace(
               pg_catalog.replace(pg_catalog.regexp_replace(pattern, '([^[:alnum:]_*#-])', '\\\1', 'g'), '*', '[^.]+'),
               '#', '.*')
        || '$';
$fn$;

CREATE TABLE pgmq.topic_bindings (
    pattern text NOT NULL,
    queue_name text NOT NULL
        CONSTRAINT topic_bindings_meta_queue_name_fk
            REFERENCES pgmq.meta (queue_name) ON DELETE CASCADE,
    bound_at timestamptz NOT NULL DEFAULT now(),
    compiled_regex text GENERATED ALWAYS AS (pgmq._topic_regex(pattern)) STORED,
    CONSTRAINT topic_bindings_unique_pattern_queue UNIQUE (pattern, queue_name)
);
-- For the cascade from pgmq.meta and list_topic_bindings(queue_name).
CREATE INDEX topic_bindings_queue_name_idx ON pgmq.topic_bindings (queue_name);

-- Checks shared by routing keys and patterns; what names the argument in the
-- message, allowed is the character class, allowed_text says it in words.
CREATE FUNCTION pgmq._check_topic_text(what text, value text, allowed text, allowed_text text)
RETURNS void
LANGUAGE plpgsql IMMUTABLE
AS $fn$
BEGIN
    IF value IS NULL OR value = '' THEN
        RAISE EXCEPTION '% cannot be NULL or empty', what USING ERRCODE = 'PQ004';
    END IF;
    IF pg_catalog.length(value) > 255 THEN
        RAISE EXCEPTION '% length cannot exceed 255 characters, got % characters', what, pg_catalog.length(value)
            USING ERRCODE = 'PQ004';
    END IF;
    IF value !~ ('^[' || allowed || ']+$') THEN
        RAISE EXCEPTION '% contains invalid characters. Only %. Got: %', what, allowed_text, value
            USING ERRCODE = 'PQ004';
    END IF;
    IF pg_catalog.left(value, 1) = '.' THEN
        RAISE EXCEPTION '% cannot start with a dot. Got: %', what, value USING ERRCODE = 'PQ004';
    END IF;
    IF pg_catalog.right(value, 1) = '.' THEN
        RAISE EXCEPTION '% cannot end with a dot. Got: %', what, value USING ERRCODE = 'PQ004';
    END IF;
    IF pg_catalog.strpos(value, '..') > 0 THEN
        RAISE EXCEPTION '% cannot contain consecutive dots. Got: %', what, value USING ERRCODE = 'PQ004';
    END IF;
END
$fn$;

CREATE FUNCTION pgmq.validate_routing_key(routing_key text)
RETURNS boolean
LANGUAGE plpgsql IMMUTABLE
AS $fn$
BEGIN
    PERFORM pgmq._check_topic_text(
        'routing_key'::text, routing_key, 'a-zA-Z0-9._-'::text,
        'alphanumeric, dots, hyphens, and underscores are allowed'::text);
    RETURN true;
END
$fn$;

CREATE FUNCTION pgmq.validate_topic_pattern(pattern text)
RETURNS boolean
LANGUAGE plpgsql IMMUTABLE
AS $fn$
BEGIN
    PERFORM pgmq._check_topic_text(
        'pattern'::text, pattern, 'a-zA-Z0-9._*#-'::text,
        'alphanumeric, dots, hyphens, underscores, *, and # are allowed'::text);
    IF pg_catalog.strpos(pattern, '**') > 0 THEN
        RAISE EXCEPTION 'pattern cannot contain consecutive stars (**). '
            'Use # for multi-segment matching. Got: %', pattern
            USING ERRCODE = 'PQ004';
    END IF;
    IF pg_catalog.strpos(pattern, '##') > 0 THEN
        RAISE EXCEPTION 'pattern cannot contain consecutive hashes (##). '
            'A single # already matches zero or more segments. Got: %', pattern
            USING ERRCODE = 'PQ004';
    END IF;
    IF pg_catalog.strpos(pattern, '*#') > 0 OR pg_catalog.strpos(pattern, '#*') > 0 THEN
        RAISE EXCEPTION 'pattern cannot contain adjacent wildcards (*# or #*). '
            'Separate wildcards with dots. Got: %', pattern
            USING ERRCODE = 'PQ004';
    END IF;
    RETURN true;
END
$fn$;

CREATE FUNCTION pgmq._check_topic_queue_arg(queue_name text)
RETURNS void
LANGUAGE plpgsql IMMUTABLE
AS $fn$
BEGIN
    IF queue_name IS NULL OR queue_name = '' THEN
        RAISE EXCEPTION 'queue_name cannot be NULL or empty' USING ERRCODE = 'PQ004';
    END IF;
END
$fn$;

-- Bind a pattern to a queue; binding twice is a no-op.
-- Bindings are policy (they steer every send_topic): only the owner and roles granted
-- manage_queues change them, through these owner functions (42501 otherwise);
-- application roles have no write right on pgmq.topic_bindings.
CREATE FUNCTION pgmq.bind_topic(pattern text, queue_name text)
RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
    PERFORM pgmq._require_privilege('manage_queues'::text);
    PERFORM pgmq.validate_topic_pattern(pattern);
    PERFORM pgmq._check_topic_queue_arg(queue_name);
    INSERT INTO pgmq.topic_bindings (pattern, queue_name)
    VALUES (pattern, pgmq._existing_queue(queue_name, 'the queue'::text))
    ON CONFLICT ON CONSTRAINT topic_bindings_unique_pattern_queue DO NOTHING;
END
$fn$;

-- Remove a binding; false when there was none.
CREATE FUNCTION pgmq.unbind_topic(pattern text, queue_name text)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
    PERFORM pgmq._require_privilege('manage_queues'::text);
    IF pattern IS NULL OR pattern = '' THEN
        RAISE EXCEPTION 'pattern cannot be NULL or empty' USING ERRCODE = 'PQ004';
    END IF;
    PERFORM pgmq._check_topic_queue_arg(queue_name);
    DELETE FROM pgmq.topic_bindings b
    WHERE b.pattern = $1 AND pg_catalog.lower(b.queue_name::text) = pg_catalog.lower($2);
    RETURN FOUND;
END
$fn$;

-- The bindings a routing key would reach, without sending anything.
CREATE FUNCTION pgmq.test_routing(routing_key text)
RETURNS TABLE (pattern text, queue_name text, compiled_regex text)
LANGUAGE plpgsql STABLE
AS $fn$
BEGIN
    PERFORM pgmq.validate_routing_key(routing_key);
    RETURN QUERY
        SELECT b.pattern, b.queue_name, b.compiled_regex
        FROM pgmq.topic_bindings b
        WHERE $1 ~ b.compiled_regex
        ORDER BY b.pattern, b.queue_name;
END
$fn$;

-- The queues a routing key reaches, each once, in name order.
CREATE FUNCTION pgmq._topic_queues(routing_key text)
RETURNS SETOF text
LANGUAGE sql STABLE
AS $fn$
    SELECT DISTINCT b.queue_name
    FROM pgmq.topic_bindings b
    WHERE $1 ~ b.compiled_regex
    ORDER BY b.queue_name;
$fn$;

CREATE FUNCTION pgmq.list_topic_bindings()
RETURNS TABLE (pattern text, queue_name text, bound_at timestamptz, compiled_regex text)
LANGUAGE sql STABLE
AS $fn$
    SELECT b.pattern, b.queue_name, b.bound_at, b.compiled_regex
    FROM pgmq.topic_bindings b
    ORDER BY b.bound_at DESC, b.pattern, b.queue_name;
$fn$;

CREATE FUNCTION pgmq.list_topic_bindings(queue_name text)
RETURNS TABLE (pattern text, queue_name text, bound_at timestamptz, compiled_regex text)
LANGUAGE sql STABLE
AS $fn$
    SELECT b.pattern, b.queue_name, b.bound_at, b.compiled_regex
    FROM pgmq.topic_bindings b
    WHERE pg_catalog.lower(b.queue_name::text) = pg_catalog.lower($1)
    ORDER BY b.bound_at DESC, b.pattern;
$fn$;

-- send_topic ------------------------------------------------------------------

-- Send one message to every matching queue; returns how many queues got it. A delay of
-- 0 (the forms without one pass 0) is "none given": each queue's delivery_delay applies.
CREATE FUNCTION pgmq.send_topic(routing_key text, msg jsonb, headers jsonb, delay integer)
RETURNS integer
LANGUAGE plpgsql
AS $fn$
DECLARE
    target text;
    visible_at timestamptz;
    sent integer := 0;
BEGIN
    PERFORM pgmq.validate_routing_key(routing_key);
    IF msg IS NULL THEN
        RAISE EXCEPTION 'msg cannot be NULL' USING ERRCODE = 'PQ004';
    END IF;
    visible_at := pgmq._delay_to_vt(delay);
    FOR target IN SELECT * FROM pgmq._topic_queues(routing_key) LOOP
        PERFORM pgmq.send(target, msg, headers, visible_at);
        sent := sent + 1;
    END LOOP;
    RETURN sent;
END
$fn$;

CREATE FUNCTION pgmq.send_topic(routing_key text, msg jsonb)
RETURNS integer LANGUAGE sql
AS $fn$ SELECT pgmq.send_topic(routing_key, msg, NULL::jsonb, 0); $fn$;

CREATE FUNCTION pgmq.send_topic(routing_key text, msg jsonb, delay integer)
RETURNS integer LANGUAGE sql
AS $fn$ SELECT pgmq.send_topic(routing_key, msg, NULL::jsonb, delay); $fn$;

-- Not in pgmq 1.13's SQL, but pgmq's Python client calls it (headers, no delay).
CREATE FUNCTION pgmq.send_topic(routing_key text, msg jsonb, headers jsonb)
RETURNS integer LANGUAGE sql
AS $fn$ SELECT pgmq.send_topic(routing_key, msg, headers, 0); $fn$;

-- send_batch_topic ------------------------------------------------------------

-- Send a batch to every matching queue; one (queue_name, msg_id) row per message sent.
-- A delay NULL (what the forms without a delay pass, and an integer delay of 0) means
-- "none given", as for send_batch: each queue's delivery_delay attribute applies to its
-- copies. A timestamp is explicit, whatever the queues' attributes.
CREATE FUNCTION pgmq.send_batch_topic(
    routing_key text, msgs jsonb[], headers jsonb[], delay timestamptz
)
RETURNS TABLE (queue_name text, msg_id bigint)
LANGUAGE plpgsql
AS $fn$
DECLARE
    target text;
BEGIN
    PERFORM pgmq.validate_routing_key(routing_key);
    PERFORM pgmq._validate_batch_params(msgs, headers);
    FOR target IN SELECT * FROM pgmq._topic_queues(routing_key) LOOP
        RETURN QUERY SELECT target, s.id FROM pgmq.send_batch(target, msgs, headers, delay) AS s(id);
    END LOOP;
END
$fn$;

CREATE FUNCTION pgmq.send_batch_topic(routing_key text, msgs jsonb[])
RETURNS TABLE (queue_name text, msg_id bigint) LANGUAGE sql
AS $fn$ SELECT * FROM pgmq.send_batch_topic(routing_key, msgs, NULL::jsonb[], NULL::timestamptz); $fn$;

CREATE FUNCTION pgmq.send_batch_topic(routing_key text, msgs jsonb[], headers jsonb[])
RETURNS TABLE (queue_name text, msg_id bigint) LANGUAGE sql
AS $fn$ SELECT * FROM pgmq.send_batch_topic(routing_key, msgs, headers, NULL::timestamptz); $fn$;

CREATE FUNCTION pgmq.send_batch_topic(routing_key text, msgs jsonb[], delay integer)
RETURNS TABLE (queue_name text, msg_id bigint) LANGUAGE sql
AS $fn$ SELECT * FROM pgmq.send_batch_topic(routing_key, msgs, NULL::jsonb[], pgmq._delay_to_vt(delay)); $fn$;

CREATE FUNCTION pgmq.send_batch_topic(routing_key text, msgs jsonb[], delay timestamptz)
RETURNS TABLE (queue_name text, msg_id bigint) LANGUAGE sql
AS $fn$ SELECT * FROM pgmq.send_batch_topic(routing_key, msgs, NULL::jsonb[], delay); $fn$;

CREATE FUNCTION pgmq.send_batch_topic(routing_key text, msgs jsonb[], headers jsonb[], delay integer)
RETURNS TABLE (queue_name text, msg_id bigint) LANGUAGE sql
AS $fn$ SELECT * FROM pgmq.send_batch_topic(routing_key, msgs, headers, pgmq._delay_to_vt(delay)); $fn$;
