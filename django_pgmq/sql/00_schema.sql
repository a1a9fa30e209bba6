-- django-pgmq: schema, catalogue table, record types and name rules.
-- Shapes and names follow pgmq 1.13 so its clients work unchanged; the SQL is our own.

DO $guard$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_catalog.pg_extension WHERE extname = 'pgmq') THEN
        RAISE EXCEPTION 'django-pgmq: this database already has the pgmq extension installed'
            USING ERRCODE = 'PQ000',
                  HINT = 'django-pgmq provides the same SQL API itself; run DROP EXTENSION pgmq '
                         'first if you mean to replace it, or point Django at another database.';
    END IF;
    IF EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = 'pgmq') THEN
        RAISE EXCEPTION 'django-pgmq: schema "pgmq" already exists in this database'
            USING ERRCODE = 'PQ000',
                  HINT = 'It was not created by these migrations (a SQL-only pgmq install?). '
                         'Move or drop it before running migrate.';
    END IF;
END
$guard$;

CREATE SCHEMA pgmq;

COMMENT ON SCHEMA pgmq IS 'Message queues managed by django-pgmq (pgmq-compatible SQL API)';

-- One row per queue. queue_name keeps the name as given; the unique index on
-- lower(queue_name) refuses two names that would share one table.
CREATE TABLE pgmq.meta (
    queue_name varchar UNIQUE NOT NULL,
    is_partitioned boolean NOT NULL,
    is_unlogged boolean NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX meta_table_key ON pgmq.meta (lower(queue_name));

CREATE TYPE pgmq.message_record AS (
    msg_id bigint,
    read_ct integer,
    enqueued_at timestamptz,
    last_read_at timestamptz,
    vt timestamptz,
    message jsonb,
    headers jsonb
);

CREATE TYPE pgmq.queue_record AS (
    queue_name varchar,
    is_partitioned boolean,
    is_unlogged boolean,
    created_at timestamptz
);

CREATE TYPE pgmq.metrics_result AS (
    queue_name text,
    queue_length bigint,
    newest_msg_age_sec integer,
    oldest_msg_age_sec integer,
    total_messages bigint,
    scrape_time timestamptz,
    queue_visible_length bigint,
    default_partition_length bigint
);

-- Error codes of our own (class PQ) let clients tell causes apart:
--   PQ001 invalid queue name, PQ002 queue does not exist, PQ003 name conflict,
--   PQ004 invalid argument. pgmq's own message texts start each message.

-- The name rules (validate_queue_name, format_table_name): sql/05_names.sql.

-- Serialises create/drop of one table name across sessions.
CREATE FUNCTION pgmq.acquire_queue_lock(queue_name text)
RETURNS void
LANGUAGE sql
AS $fn$
    SELECT pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('pgmq.queue_' || pg_catalog.lower(queue_name)));
$fn$;

-- The advisory-lock key of a queue's live table, shared by index builds and the DDL on
-- that table (docs/internals/locks.md, "Index builds and queue DDL"): the two-int form, class
-- 1885826417 (the bytes 'pgmq') and hashtext of the lower-cased queue name, which is
-- what names the table. The two-int space never meets acquire_queue_lock's bigint keys.
CREATE FUNCTION pgmq._queue_table_lock_key(queue_name text, OUT class_id integer, OUT object_id integer)
LANGUAGE sql IMMUTABLE
AS $fn$
    SELECT 1885826417, pg_catalog.hashtext(pg_catalog.lower(queue_name));
$fn$;

-- Taken (until commit) by whatever drops, truncates or alters a queue's live table:
-- drop_queue, purge_queue, convert_archive_partitioned, the notify trigger. An index
-- build holds the same lock at session level around its CREATE INDEX CONCURRENTLY and
-- gives way as soon as a session waits here (django_pgmq/index_builds.py), so the DDL
-- waits for a running build's cancellation, never meets it on the table.
CREATE FUNCTION pgmq._lock_queue_table(queue_name text)
RETURNS void
LANGUAGE sql
AS $fn$
    SELECT pg_catalog.pg_advisory_xact_lock(k.class_id, k.object_id)
    FROM pgmq._queue_table_lock_key(queue_name) k;
$fn$;

-- The queue's name as stored in pgmq.meta (any case given), or NULL; validates first.
CREATE FUNCTION pgmq._stored_queue_name(queue_name text)
RETURNS text
LANGUAGE plpgsql STABLE
AS $fn$
BEGIN
    PERFORM pgmq.validate_queue_name(queue_name);
    RETURN (SELECT m.queue_name FROM pgmq.meta m WHERE pg_catalog.lower(m.queue_name::text) = pg_catalog.lower($1));
END
$fn$;

-- Raise PQ002 unless the queue is in the catalogue; returns the name as stored.
CREATE FUNCTION pgmq._require_queue(queue_name text)
RETURNS text
LANGUAGE plpgsql STABLE
AS $fn$
DECLARE
    stored text := pgmq._stored_queue_name(queue_name);
BEGIN
    IF stored IS NULL THEN
        RAISE EXCEPTION 'queue "%" does not exist', queue_name
            USING ERRCODE = 'PQ002', HINT = 'Create it first with pgmq.create().';
    END IF;
    RETURN stored;
END
$fn$;
