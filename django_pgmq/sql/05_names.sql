-- Queue name rules: pgmq.validate_queue_name and pgmq.format_table_name.

-- Same rules as django_pgmq/names.py: 1-47 chars of [A-Za-z0-9_-], not starting
-- with '-', never containing '--'.
CREATE OR REPLACE FUNCTION pgmq.validate_queue_name(queue_name text)
RETURNS void
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $fn$
BEGIN
    IF queue_name IS NULL OR queue_name = '' THEN
        RAISE EXCEPTION 'queue name must not be empty' USING ERRCODE = 'PQ001';
    END IF;
    IF pg_catalog.length(queue_name) > 47 THEN
        RAISE EXCEPTION 'queue name is too long, maximum length is 47 characters: "%" has %',
            pg_catalog.left(queue_name, 57), pg_catalog.length(queue_name)
            USING ERRCODE = 'PQ001';
    END IF;
    IF queue_name ~ '[$;'']|--' THEN
        RAISE EXCEPTION 'queue name contains invalid characters: $, ;, --, or \'': "%"', queue_name
            USING ERRCODE = 'PQ001';
    END IF;
    IF queue_name !~ '^[A-Za-z0-9_][A-Za-z0-9_-]*$' THEN
        RAISE EXCEPTION 'queue name "%" is invalid: use ASCII letters, digits, ''_'' and ''-'' (not first)',
            queue_name
            USING ERRCODE = 'PQ001';
    END IF;
END
$fn$;

-- format_table_name's slow path: raise the name's error (or, should the rules above
-- and the quick check ever disagree, return the name).
CREATE OR REPLACE FUNCTION pgmq._invalid_queue_name(queue_name text, prefix text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $fn$
BEGIN
    PERFORM pgmq.validate_queue_name(queue_name);
    RETURN pg_catalog.lower(prefix || '_' || queue_name);
END
$fn$;

-- The unquoted table name for a queue: prefix '_' lower(name). An inlinable SQL
-- function: every message function calls it, so the common case (a valid name) is one
-- regular expression in the caller's own expression; a bad name gets
-- validate_queue_name's error. The length is checked apart from the expression, and
-- first: a bounded repetition ({0,46}) builds a large automaton, and cost about 18,000
-- instructions a call against about 3,000 for the unbounded class (callgrind,
-- PostgreSQL 15; docs/benchmarks.md).
CREATE OR REPLACE FUNCTION pgmq.format_table_name(queue_name text, prefix text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $fn$
    SELECT CASE
        WHEN pg_catalog.length(queue_name) <= 47 AND queue_name ~ '^[A-Za-z0-9_][A-Za-z0-9_-]*$'
             AND pg_catalog.strpos(queue_name, '--') = 0
        THEN pg_catalog.lower(prefix || '_' || queue_name)
        ELSE pgmq._invalid_queue_name(queue_name, prefix)
    END;
$fn$;

-- The name check of the per-message functions (send, send_batch, read, read_with_poll,
-- pop, delete, archive, set_vt, the FIFO readers), in pgmq's order: like pgmq's
-- format_table_name they refuse only the characters pgmq forbids (with its text); any
-- other name that is not a queue's (too long, another character, empty) names no table,
-- so it fails as pgmq's does, with 42P01 "relation ... does not exist". Queue
-- administration (create, drop, purge, attributes, metrics) keeps validate_queue_name.
-- Returns the table name for prefix; an inlinable SQL function, one regular expression
-- in the caller's expression for a valid name.
CREATE OR REPLACE FUNCTION pgmq._message_table_name(queue_name text, prefix text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $fn$
    SELECT CASE
        WHEN pg_catalog.length(queue_name) <= 47 AND queue_name ~ '^[A-Za-z0-9_][A-Za-z0-9_-]*$'
             AND pg_catalog.strpos(queue_name, '--') = 0
        THEN pg_catalog.lower(prefix || '_' || queue_name)
        ELSE pgmq._message_name_error(queue_name, prefix)
    END;
$fn$;

-- _message_table_name's slow path: raise the error pgmq's per-message functions raise.
CREATE OR REPLACE FUNCTION pgmq._message_name_error(queue_name text, prefix text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $fn$
BEGIN
    IF queue_name IS NULL THEN
        PERFORM pgmq.validate_queue_name(queue_name);  -- "must not be empty"
    END IF;
    IF queue_name ~ '[$;'']|--' THEN
        RAISE EXCEPTION 'queue name contains invalid characters: $, ;, --, or \'': "%"', queue_name
            USING ERRCODE = 'PQ001';
    END IF;
    -- PostgreSQL's own text for a missing table (identifiers cut at 63 bytes, as it does).
    RAISE EXCEPTION 'relation "pgmq.%" does not exist', pg_catalog.left(pg_catalog.lower(prefix || '_' || queue_name), 63)
        USING ERRCODE = '42P01';
END
$fn$;

-- The notification channel of a queue (its name as stored in pgmq.meta) for an event:
-- 'INSERT', a message was sent (pgmq's channel: pgmq.q_<name>.INSERT), or 'FREE', a
-- slot of its max_in_flight may have freed. The one spelling of the channels in SQL;
-- django_pgmq/names.py builds the same text (tests/integration/test_notify_channels.py
-- fails when the two differ, or when a body spells a channel itself).
CREATE FUNCTION pgmq._queue_channel(queue_name text, event text)
RETURNS text
LANGUAGE sql IMMUTABLE
AS $fn$ SELECT 'pgmq.q_' || queue_name || '.' || event $fn$;
