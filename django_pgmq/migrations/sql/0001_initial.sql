-- django-pgmq: schema, catalogue table, record types and name rules.
-- Shapes and names follow pgmq 1.13 so its clients work unchanged; the SQL is our own.

DO $guard$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pgmq') THEN
        RAISE EXCEPTION 'django-pgmq: this database already has the pgmq extension installed'
            USING ERRCODE = 'PQ000',
                  HINT = 'django-pgmq provides the same SQL API itself; run DROP EXTENSION pgmq '
                         'first if you mean to replace it, or point Django at another database.';
    END IF;
    IF EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = 'pgmq') THEN
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
    SELECT pg_advisory_xact_lock(hashtext('pgmq.queue_' || lower(queue_name)));
$fn$;

-- The queue's name as stored in pgmq.meta (any case given), or NULL; validates first.
CREATE FUNCTION pgmq._stored_queue_name(queue_name text)
RETURNS text
LANGUAGE plpgsql STABLE
AS $fn$
BEGIN
    PERFORM pgmq.validate_queue_name(queue_name);
    RETURN (SELECT m.queue_name FROM pgmq.meta m WHERE lower(m.queue_name) = lower($1));
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
    IF length(queue_name) > 47 THEN
        RAISE EXCEPTION 'queue name is too long, maximum length is 47 characters: "%" has %',
            left(queue_name, 57), length(queue_name)
            USING ERRCODE = 'PQ001';
    END IF;
    IF queue_name ~ '[$;'']|--' THEN
        RAISE EXCEPTION 'queue name contains invalid characters: $, ;, --, or '': "%"', queue_name
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
    RETURN lower(prefix || '_' || queue_name);
END
$fn$;

-- The unquoted table name for a queue: prefix '_' lower(name). An inlinable SQL
-- function: every message function calls it, so the common case (a valid name) is one
-- regular expression in the caller's own expression; a bad name gets
-- validate_queue_name's error.
CREATE OR REPLACE FUNCTION pgmq.format_table_name(queue_name text, prefix text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $fn$
    SELECT CASE
        WHEN queue_name ~ '^[A-Za-z0-9_][A-Za-z0-9_-]{0,46}$' AND strpos(queue_name, '--') = 0
        THEN lower(prefix || '_' || queue_name)
        ELSE pgmq._invalid_queue_name(queue_name, prefix)
    END;
$fn$;

-- Queue management: create, drop, purge, list.

-- The catalogue row of queue_name (all NULL when it is new); PQ003 when a name
-- differing only in case already holds its tables.
CREATE OR REPLACE FUNCTION pgmq._same_name_queue(queue_name text)
RETURNS pgmq.meta
LANGUAGE plpgsql STABLE
AS $fn$
DECLARE
    existing pgmq.meta;
BEGIN
    SELECT m.* INTO existing FROM pgmq.meta m WHERE lower(m.queue_name) = lower($1);
    IF existing.queue_name IS NOT NULL AND existing.queue_name <> queue_name THEN
        RAISE EXCEPTION 'queue name "%" maps to table pgmq.%, which queue "%" already uses',
            queue_name, pgmq.format_table_name(queue_name, 'q'), existing.queue_name
            USING ERRCODE = 'PQ003',
                  HINT = 'Table names are lower-cased; use the existing name or another one.';
    END IF;
    RETURN existing;
END
$fn$;

-- The live and archive tables of a queue with their indexes (each IF NOT EXISTS).
-- q_key / a_key: the range partition key of a partitioned table, NULL for a plain one.
-- A partitioned table's primary key must hold its partition key, hence (msg_id, key).
-- The storage of a live table (a plain queue's, or one partition of a partitioned
-- queue's; a partitioned parent stores nothing). Every read updates vt, read_ct and
-- last_read_at: none of them is indexed (unlike pgmq, there is no index on vt: read
-- walks the primary key, skipping invisible rows, with or without it), so the update
-- can be HOT (no new index entries, about a quarter less WAL per message) when the
-- page has room, which a fillfactor below 100 keeps for it.
CREATE OR REPLACE FUNCTION pgmq._tune_live_table(tbl text)
RETURNS void
LANGUAGE plpgsql
AS $fn$
BEGIN
    EXECUTE format('ALTER TABLE pgmq.%I SET (fillfactor = 80)', tbl);
END
$fn$;

CREATE OR REPLACE FUNCTION pgmq._create_queue_tables(queue_name text, unlogged boolean, q_key text, a_key text)
RETURNS void
LANGUAGE plpgsql
AS $fn$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q');
    atable text := pgmq.format_table_name(queue_name, 'a');
BEGIN
    EXECUTE format(
        $ddl$
        CREATE %s TABLE IF NOT EXISTS pgmq.%I (
            msg_id bigint GENERATED ALWAYS AS IDENTITY,
            read_ct integer NOT NULL DEFAULT 0,
            enqueued_at timestamptz NOT NULL DEFAULT now(),
            last_read_at timestamptz,
            vt timestamptz NOT NULL,
            message jsonb,
            headers jsonb,
            PRIMARY KEY (%s)
        ) %s
        $ddl$,
        CASE WHEN unlogged THEN 'UNLOGGED' ELSE '' END, qtable,
        CASE WHEN coalesce(q_key, 'msg_id') = 'msg_id' THEN 'msg_id' ELSE format('msg_id, %I', q_key) END,
        CASE WHEN q_key IS NULL THEN '' ELSE format('PARTITION BY RANGE (%I)', q_key) END
    );
    IF q_key IS NULL THEN
        PERFORM pgmq._tune_live_table(qtable);
    END IF;

    EXECUTE format(
        $ddl$
        CREATE TABLE IF NOT EXISTS pgmq.%I (
            msg_id bigint NOT NULL,
            read_ct integer NOT NULL DEFAULT 0,
            enqueued_at timestamptz NOT NULL DEFAULT now(),
            last_read_at timestamptz,
            archived_at timestamptz NOT NULL DEFAULT now(),
            vt timestamptz NOT NULL,
            message jsonb,
            headers jsonb,
            PRIMARY KEY (%s)
        ) %s
        $ddl$,
        atable,
        CASE WHEN coalesce(a_key, 'msg_id') = 'msg_id' THEN 'msg_id' ELSE format('msg_id, %I', a_key) END,
        CASE WHEN a_key IS NULL THEN '' ELSE format('PARTITION BY RANGE (%I)', a_key) END
    );
    -- pgmq's index name; '<atable>_archived_at_idx' would pass 63 bytes for a 47-char name.
    EXECUTE format(
        'CREATE INDEX IF NOT EXISTS %I ON pgmq.%I (archived_at)',
        'archived_at_idx_' || lower(queue_name), atable
    );
    PERFORM pgmq._install_queue_ops(queue_name);
END
$fn$;

-- Create the live and archive tables of a queue and record it; idempotent.
CREATE OR REPLACE FUNCTION pgmq._create_queue(queue_name text, unlogged boolean)
RETURNS void
LANGUAGE plpgsql
AS $fn$
BEGIN
    PERFORM pgmq.validate_queue_name(queue_name);
    PERFORM pgmq.acquire_queue_lock(queue_name);
    PERFORM pgmq._same_name_queue(queue_name);
    PERFORM pgmq._create_queue_tables(queue_name, unlogged, NULL, NULL);
    INSERT INTO pgmq.meta (queue_name, is_partitioned, is_unlogged)
    VALUES (queue_name, false, unlogged)
    ON CONFLICT DO NOTHING;
END
$fn$;

CREATE OR REPLACE FUNCTION pgmq.create_non_partitioned(queue_name text)
RETURNS void
LANGUAGE sql
AS $fn$
    SELECT pgmq._create_queue(queue_name, false);
$fn$;

CREATE OR REPLACE FUNCTION pgmq.create_unlogged(queue_name text)
RETURNS void
LANGUAGE sql
AS $fn$
    SELECT pgmq._create_queue(queue_name, true);
$fn$;

CREATE OR REPLACE FUNCTION pgmq."create"(queue_name text)
RETURNS void
LANGUAGE sql
AS $fn$
    SELECT pgmq._create_queue(queue_name, false);
$fn$;

-- create_partitioned and convert_archive_partitioned: sql/45_partitions.sql.

-- Drop a queue's tables and catalogue row; false (with a notice) when it does not exist.
CREATE OR REPLACE FUNCTION pgmq.drop_queue(queue_name text)
RETURNS boolean
LANGUAGE plpgsql
AS $fn$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q');
    atable text := pgmq.format_table_name(queue_name, 'a');
BEGIN
    PERFORM pgmq.acquire_queue_lock(queue_name);
    IF to_regclass(format('pgmq.%I', qtable)) IS NULL
       AND NOT EXISTS (SELECT 1 FROM pgmq.meta m WHERE lower(m.queue_name) = lower($1)) THEN
        RAISE NOTICE 'pgmq queue `%` does not exist', queue_name;
        RETURN false;
    END IF;
    EXECUTE format('DROP TABLE IF EXISTS pgmq.%I', qtable);
    EXECUTE format('DROP TABLE IF EXISTS pgmq.%I', atable);
    EXECUTE format(
        'DROP FUNCTION IF EXISTS pgmq.%I("char", integer, integer, timestamptz, bigint[], jsonb[], jsonb[], jsonb)',
        pgmq.format_table_name(queue_name, '_ops'));
    PERFORM pgmq._install_queue_route();
    DELETE FROM pgmq.meta m WHERE lower(m.queue_name) = lower($1);
    RETURN true;
END
$fn$;

CREATE OR REPLACE FUNCTION pgmq.drop_queue(queue_name text, partitioned boolean)
RETURNS boolean
LANGUAGE plpgsql
AS $fn$
BEGIN
    RAISE WARNING 'drop_queue(queue_name, partitioned) is deprecated and will be removed in PGMQ v2.0. '
        'Use drop_queue(queue_name) instead';
    RETURN pgmq.drop_queue(queue_name);
END
$fn$;

-- Remove every live message (the archive is kept); returns how many there were.
CREATE OR REPLACE FUNCTION pgmq.purge_queue(queue_name text)
RETURNS bigint
LANGUAGE plpgsql
AS $fn$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q');
    removed bigint;
BEGIN
    PERFORM pgmq._require_queue(queue_name);
    -- Lock first so the count and the truncate see the same rows.
    EXECUTE format('LOCK TABLE pgmq.%I IN ACCESS EXCLUSIVE MODE', qtable);
    EXECUTE format('SELECT count(*) FROM pgmq.%I', qtable) INTO removed;
    EXECUTE format('TRUNCATE TABLE pgmq.%I', qtable);
    RETURN removed;
END
$fn$;

CREATE OR REPLACE FUNCTION pgmq.list_queues()
RETURNS SETOF pgmq.queue_record
LANGUAGE sql STABLE
AS $fn$
    SELECT queue_name, is_partitioned, is_unlogged, created_at
    FROM pgmq.meta
    ORDER BY queue_name;
$fn$;

CREATE OR REPLACE FUNCTION pgmq.detach_archive(queue_name text)
RETURNS void
LANGUAGE plpgsql
AS $fn$
BEGIN
    PERFORM pgmq.validate_queue_name(queue_name);
    RAISE WARNING 'detach_archive(queue_name) is deprecated and is a no-op. It will be removed in PGMQ v2.0. '
        'Archive tables are no longer member objects.';
END
$fn$;

-- Per-queue access functions: the statements behind send, read, pop, archive, delete
-- and set_vt, written out for one queue's tables. (Helpers here are named _queue_ops_*,
-- never _ops_*, which is the access functions' prefix: a queue may be called "missing".)
--
-- pgmq's functions take the queue name as text, so each call would otherwise build
-- its statement with format() and EXECUTE it: parsed and planned again on every call,
-- which costs more server CPU than the rows it moves at batch 10. Instead every queue
-- gets pgmq._ops_<name>, a PL/pgSQL function whose statements name the queue's
-- tables, so PostgreSQL parses them once per session and keeps their plans. The
-- public functions (sql/20_messages.sql) only check their arguments and call it.
--
-- Low-water mark: read and pop walk the primary key from the oldest message. Archived
-- and deleted messages leave index entries behind until VACUUM removes them, and in a
-- busy queue autovacuum (at most once a minute per table) leaves hundreds of thousands,
-- so a walk from the start of the index would slow every read as the minute goes on. So
-- each session keeps, per queue, the smallest msg_id alive when it last looked (a
-- session setting pgmq.low_<name>) and starts its reads there, looking again once a
-- second. Every message alive then has an id at or above the mark and ids only grow,
-- so no message is skipped; the one exception is a message whose sending transaction
-- was still open when the mark was taken and which had a lower id than every message
-- alive: it becomes visible to this session at the next look, within a second.
--
-- Plans: the function runs with plan_cache_mode = force_generic_plan, so one plan per
-- statement is kept (a custom plan per call would cost what EXECUTE costs), and with
-- enable_seqscan and enable_bitmapscan off, so that plan walks the primary key in order
-- whatever the statistics were when it was made. Without them a plan made while the
-- table was empty could keep a sequential scan while the queue grows to millions of
-- rows, and one made for "msg_id >= low LIMIT n" with unknown values could read and
-- sort every row above the mark on every call.

-- Create or replace the access function of queue_name (its tables must exist), and
-- write the router again.
CREATE OR REPLACE FUNCTION pgmq._install_queue_ops(queue_name text)
RETURNS void
LANGUAGE plpgsql
AS $fn$
BEGIN
    EXECUTE format(
        $ddl$
CREATE OR REPLACE FUNCTION pgmq.%1$I(
    p_op "char", p_qty integer, p_secs integer, p_vt timestamptz, p_ids bigint[],
    p_msgs jsonb[], p_headers jsonb[], p_cond jsonb
)
RETURNS SETOF pgmq.message_record
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
SET enable_bitmapscan = off
AS $body$
-- Generated by pgmq._install_queue_ops for the tables pgmq.%2$I and pgmq.%3$I.
-- Ops: s send (p_msgs, p_headers, p_vt), r read (p_qty, p_secs, p_cond), p pop (p_qty),
-- a archive, d delete (p_ids), v set_vt (p_ids, p_vt). s, a and d return only msg_id.
DECLARE
    mark text;
    low bigint;
BEGIN
    IF p_op = 'r' OR p_op = 'p' THEN
        -- The low-water mark (see sql/15_queue_ops.sql): "<table oid> <next look> <msg_id>";
        -- the table's oid tells a mark of a dropped queue from one of its namesake.
        mark := current_setting(%4$L, true);
        IF coalesce(split_part(mark, ' ', 1), '') <> %6$L
           OR split_part(mark, ' ', 2)::float8 < extract(epoch FROM clock_timestamp()) THEN
            low := coalesce(
                (SELECT q.msg_id FROM pgmq.%2$I q ORDER BY q.msg_id LIMIT 1),
                pg_sequence_last_value(%5$L::regclass),
                0);
            PERFORM set_config(%4$L, concat_ws(' ', %6$L,
                extract(epoch FROM clock_timestamp()) + 1, low), false);
        ELSE
            low := split_part(mark, ' ', 3)::bigint;
        END IF;
    END IF;
    IF p_op = 'r' THEN
        -- Claimed with "= ANY(ARRAY(pick))": the update then looks up exactly the picked
        -- rows by key, whatever the plan's row estimates (a join could walk the table).
        RETURN QUERY
        WITH claimed AS (
            UPDATE pgmq.%2$I m
            SET vt = clock_timestamp() + make_interval(secs => p_secs),
                read_ct = m.read_ct + 1,
                last_read_at = clock_timestamp()
            WHERE m.msg_id = ANY(ARRAY(%7$s))
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message, m.headers
        )
        SELECT * FROM claimed c ORDER BY c.msg_id;
    ELSIF p_op = 's' THEN
        -- A function scan yields the arrays in order and the insert numbers rows as they
        -- come, so ids follow the array order; unnest pads a NULL headers array with NULLs.
        RETURN QUERY
        INSERT INTO pgmq.%2$I AS q (vt, message, headers)
        SELECT p_vt, u.msg, u.hdr FROM unnest(p_msgs, p_headers) AS u(msg, hdr)
        RETURNING q.msg_id, NULL::integer, NULL::timestamptz, NULL::timestamptz,
                  NULL::timestamptz, NULL::jsonb, NULL::jsonb;
    ELSIF p_op = 'a' THEN
        RETURN QUERY
        WITH moved AS (
            DELETE FROM pgmq.%2$I q WHERE q.msg_id = ANY(p_ids)
            RETURNING q.msg_id, q.read_ct, q.enqueued_at, q.last_read_at, q.vt, q.message, q.headers
        )
        INSERT INTO pgmq.%3$I AS a (msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers)
        SELECT * FROM moved
        RETURNING a.msg_id, NULL::integer, NULL::timestamptz, NULL::timestamptz,
                  NULL::timestamptz, NULL::jsonb, NULL::jsonb;
    ELSIF p_op = 'd' THEN
        RETURN QUERY
        DELETE FROM pgmq.%2$I q WHERE q.msg_id = ANY(p_ids)
        RETURNING q.msg_id, NULL::integer, NULL::timestamptz, NULL::timestamptz,
                  NULL::timestamptz, NULL::jsonb, NULL::jsonb;
    ELSIF p_op = 'p' THEN
        RETURN QUERY
        WITH removed AS (
            DELETE FROM pgmq.%2$I m
            WHERE m.msg_id = ANY(ARRAY(%7$s))
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message, m.headers
        )
        SELECT * FROM removed r ORDER BY r.msg_id;
    ELSIF p_op = 'v' THEN
        RETURN QUERY
        WITH moved AS (
            UPDATE pgmq.%2$I q SET vt = p_vt WHERE q.msg_id = ANY(p_ids)
            RETURNING q.msg_id, q.read_ct, q.enqueued_at, q.last_read_at, q.vt, q.message, q.headers
        )
        SELECT * FROM moved m ORDER BY m.msg_id;
    ELSE
        RAISE EXCEPTION 'unknown queue operation: %%', p_op USING ERRCODE = 'PQ004';
    END IF;
END
$body$
        $ddl$,
        pgmq.format_table_name(queue_name, '_ops'),
        pgmq.format_table_name(queue_name, 'q'),
        pgmq.format_table_name(queue_name, 'a'),
        -- '-' may not appear in a setting's name, '$' may (and never in a queue name)
        'pgmq.low_' || replace(pgmq.format_table_name(queue_name, 'q'), '-', '$'),
        pg_get_serial_sequence(format('pgmq.%I', pgmq.format_table_name(queue_name, 'q')), 'msg_id'),
        to_regclass(format('pgmq.%I', pgmq.format_table_name(queue_name, 'q')))::oid::text,
        -- read's and pop's pick: the oldest visible messages from the mark up, locked
        format(
            $pick$
                SELECT q.msg_id FROM pgmq.%I q
                WHERE q.msg_id >= low AND q.vt <= clock_timestamp()
                  AND (p_cond IS NULL OR p_cond = '{}'::jsonb OR q.message @> p_cond)
                ORDER BY q.msg_id
                LIMIT p_qty
                FOR UPDATE SKIP LOCKED
            $pick$,
            pgmq.format_table_name(queue_name, 'q'))
    );
    PERFORM pgmq._install_queue_route();
END
$fn$;

-- A queue whose tables exist without its access function (made before it existed, or
-- restored without it) gets it here, under the queue's lock; returns ''. A queue without
-- tables raises the error an EXECUTE on its table would: relation "pgmq.q_<name>" does
-- not exist.
CREATE OR REPLACE FUNCTION pgmq._queue_ops_missing(queue_name text)
RETURNS text
LANGUAGE plpgsql
AS $fn$
BEGIN
    IF to_regclass('pgmq.' || quote_ident(pgmq.format_table_name(queue_name, 'q'))) IS NULL THEN
        RAISE EXCEPTION 'relation "pgmq.%" does not exist', pgmq.format_table_name(queue_name, 'q')
            USING ERRCODE = '42P01';
    END IF;
    PERFORM pgmq.acquire_queue_lock(queue_name);
    IF to_regproc('pgmq.' || quote_ident(pgmq.format_table_name(queue_name, '_ops'))) IS NULL THEN
        PERFORM pgmq._install_queue_ops(queue_name);
    END IF;
    RETURN '';
END
$fn$;

-- The statement "SELECT * FROM pgmq._ops_<name>($1 .. $8)" for queue_name. An inlinable
-- SQL function, evaluated as part of the router's own expression; the rare case of a
-- missing function is _queue_ops_missing's.
CREATE OR REPLACE FUNCTION pgmq._queue_ops_statement(queue_name text)
RETURNS text
LANGUAGE sql VOLATILE
AS $fn$
    SELECT CASE
            WHEN to_regproc('pgmq.' || quote_ident(pgmq.format_table_name(queue_name, '_ops'))) IS NULL
            THEN pgmq._queue_ops_missing(queue_name)
            ELSE ''
        END
        || format('SELECT * FROM pgmq.%I($1, $2, $3, $4, $5, $6, $7, $8)',
                  pgmq.format_table_name(queue_name, '_ops'));
$fn$;

-- The router: every message function calls pgmq._queue_ops_route, which calls the
-- queue's access function by a static statement (its plan kept like any other), found by
-- comparing the lower-cased name with the queues' names, in a tree of IFs over their
-- sorted list (log2(queues) comparisons). Any other name takes the EXECUTE path above
-- (a queue whose function is missing, or one made by a role that may not replace the
-- router). It is written by _install_queue_route (below) whenever a queue's access
-- function is made or dropped, and when this file is installed.

-- The router's tree of IFs: picks among names (sorted, lower-case) by its variable lname.
CREATE OR REPLACE FUNCTION pgmq._queue_ops_branches(names text[])
RETURNS text
LANGUAGE plpgsql IMMUTABLE
AS $fn$
DECLARE
    n integer := coalesce(cardinality(names), 0);
    half integer := n / 2;
BEGIN
    IF n = 0 THEN
        RETURN '';
    ELSIF n = 1 THEN
        RETURN format(
            $if$
IF lname = %L THEN
    RETURN QUERY SELECT * FROM pgmq.%I(p_op, p_qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond);
    RETURN;
END IF;
$if$,
            names[1], '_ops_' || names[1]);
    END IF;
    RETURN format(E'IF lname < %L COLLATE "C" THEN\n%sELSE\n%sEND IF;\n',
                  names[half + 1],
                  pgmq._queue_ops_branches(names[1:half]),
                  pgmq._queue_ops_branches(names[half + 1:n]));
END
$fn$;

-- Write the router again with a branch for every queue's access function. Serialised
-- by a lock, as two sessions may not replace one function at once. A role that may not
-- replace it (not its owner) leaves it as it is: its queues take the EXECUTE path.
CREATE OR REPLACE FUNCTION pgmq._install_queue_route()
RETURNS void
LANGUAGE plpgsql
AS $fn$
DECLARE
    names text[];
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('pgmq.queue_ops_route'));
    SELECT coalesce(array_agg(substr(p.proname, 6) ORDER BY substr(p.proname, 6) COLLATE "C"), '{}')
    INTO names
    FROM pg_proc p
    WHERE p.pronamespace = 'pgmq'::regnamespace AND p.proname LIKE '\_ops\_%'
      AND pg_get_function_identity_arguments(p.oid) = 'p_op "char", p_qty integer, '
          'p_secs integer, p_vt timestamp with time zone, p_ids bigint[], p_msgs jsonb[], '
          'p_headers jsonb[], p_cond jsonb';
    BEGIN
        EXECUTE format(
            $ddl$
CREATE OR REPLACE FUNCTION pgmq._queue_ops_route(
    queue_name text, p_op "char", p_qty integer, p_secs integer, p_vt timestamptz,
    p_ids bigint[], p_msgs jsonb[], p_headers jsonb[], p_cond jsonb
)
RETURNS SETOF pgmq.message_record
LANGUAGE plpgsql
AS $body$
-- Written by pgmq._install_queue_route: %s queue(s).
DECLARE
    lname text := lower(queue_name);
BEGIN
%s
    RETURN QUERY EXECUTE pgmq._queue_ops_statement(queue_name)
        USING p_op, p_qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond;
END
$body$
            $ddl$,
            cardinality(names), pgmq._queue_ops_branches(names));
    EXCEPTION WHEN insufficient_privilege THEN
        RAISE NOTICE 'pgmq: % may not replace pgmq._queue_ops_route; new queues take its slower path',
            current_user;
    END;
END
$fn$;

SELECT pgmq._install_queue_route();

-- Messages: send, send_batch, read, read_with_poll, pop, delete, archive, set_vt.
-- Each family has one plpgsql implementation, which checks its arguments and calls
-- the queue's access function (sql/15_queue_ops.sql) with one op; the other overloads
-- call it with defaults or turn an integer delay into a timestamp (send and send_batch's
-- in PL/pgSQL, whose static call is cheaper per call than an SQL function's).

CREATE OR REPLACE FUNCTION pgmq._delay_to_vt(delay integer)
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

CREATE OR REPLACE FUNCTION pgmq.send(queue_name text, msg jsonb, headers jsonb, delay timestamptz)
RETURNS SETOF bigint
LANGUAGE plpgsql
AS $fn$
BEGIN
    RETURN QUERY SELECT r.msg_id FROM pgmq._queue_ops_route(
        queue_name, 's'::"char", NULL::integer, NULL::integer, coalesce(delay, clock_timestamp()),
        NULL::bigint[], ARRAY[msg], ARRAY[headers], NULL::jsonb) r;
END
$fn$;

CREATE OR REPLACE FUNCTION pgmq.send(queue_name text, msg jsonb)
RETURNS SETOF bigint LANGUAGE plpgsql
AS $fn$ BEGIN RETURN QUERY SELECT * FROM pgmq.send(queue_name, msg, NULL::jsonb, clock_timestamp()); END $fn$;

CREATE OR REPLACE FUNCTION pgmq.send(queue_name text, msg jsonb, delay integer)
RETURNS SETOF bigint LANGUAGE plpgsql
AS $fn$ BEGIN RETURN QUERY SELECT * FROM pgmq.send(queue_name, msg, NULL::jsonb, pgmq._delay_to_vt(delay)); END $fn$;

CREATE OR REPLACE FUNCTION pgmq.send(queue_name text, msg jsonb, delay timestamptz)
RETURNS SETOF bigint LANGUAGE plpgsql
AS $fn$ BEGIN RETURN QUERY SELECT * FROM pgmq.send(queue_name, msg, NULL::jsonb, delay); END $fn$;

CREATE OR REPLACE FUNCTION pgmq.send(queue_name text, msg jsonb, headers jsonb)
RETURNS SETOF bigint LANGUAGE plpgsql
AS $fn$ BEGIN RETURN QUERY SELECT * FROM pgmq.send(queue_name, msg, headers, clock_timestamp()); END $fn$;

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


CREATE OR REPLACE FUNCTION pgmq.send_batch(
    queue_name text, msgs jsonb[], headers jsonb[], delay timestamptz
)
RETURNS SETOF bigint
LANGUAGE plpgsql
AS $fn$
BEGIN
    PERFORM pgmq._validate_batch_params(msgs, headers);
    RETURN QUERY SELECT r.msg_id FROM pgmq._queue_ops_route(
        queue_name, 's'::"char", NULL::integer, NULL::integer, coalesce(delay, clock_timestamp()),
        NULL::bigint[], msgs, headers, NULL::jsonb) r;
END
$fn$;

CREATE OR REPLACE FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[])
RETURNS SETOF bigint LANGUAGE plpgsql
AS $fn$ BEGIN RETURN QUERY SELECT * FROM pgmq.send_batch(queue_name, msgs, NULL::jsonb[], clock_timestamp()); END $fn$;

CREATE OR REPLACE FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], delay integer)
RETURNS SETOF bigint LANGUAGE plpgsql
AS $fn$ BEGIN RETURN QUERY SELECT * FROM pgmq.send_batch(queue_name, msgs, NULL::jsonb[], pgmq._delay_to_vt(delay)); END $fn$;

CREATE OR REPLACE FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], delay timestamptz)
RETURNS SETOF bigint LANGUAGE plpgsql
AS $fn$ BEGIN RETURN QUERY SELECT * FROM pgmq.send_batch(queue_name, msgs, NULL::jsonb[], delay); END $fn$;

CREATE OR REPLACE FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[])
RETURNS SETOF bigint LANGUAGE plpgsql
AS $fn$ BEGIN RETURN QUERY SELECT * FROM pgmq.send_batch(queue_name, msgs, headers, clock_timestamp()); END $fn$;

CREATE OR REPLACE FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay integer)
RETURNS SETOF bigint LANGUAGE plpgsql
AS $fn$ BEGIN RETURN QUERY SELECT * FROM pgmq.send_batch(queue_name, msgs, headers, pgmq._delay_to_vt(delay)); END $fn$;

-- read ----------------------------------------------------------------------

-- Claim up to qty visible messages, oldest first, hiding them for vt seconds.
CREATE OR REPLACE FUNCTION pgmq.read(
    queue_name text, vt integer, qty integer, conditional jsonb DEFAULT '{}'
)
RETURNS SETOF pgmq.message_record
LANGUAGE plpgsql
AS $fn$
BEGIN
    IF qty IS NULL OR qty < 0 THEN
        RAISE EXCEPTION 'qty must be zero or more, got: %', coalesce(qty::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    RETURN QUERY SELECT * FROM pgmq._queue_ops_route(
        queue_name, 'r'::"char", qty, coalesce(vt, 0), NULL::timestamptz, NULL::bigint[], NULL::jsonb[],
        NULL::jsonb[], coalesce(conditional, '{}'::jsonb));
END
$fn$;

-- Run a reader statement ($1 queue_name, $2 vt, $3 qty, $4 extra argument as text)
-- until it returns rows or max_poll_seconds pass; shared by every *_with_poll.
CREATE OR REPLACE FUNCTION pgmq._poll(
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
        'SELECT * FROM pgmq.read($1, $2, $3, $4::jsonb)',
        queue_name, vt, qty, conditional::text, max_poll_seconds, poll_interval_ms);
$fn$;

-- Read and delete in one step (at-most-once).
CREATE OR REPLACE FUNCTION pgmq.pop(queue_name text, qty integer DEFAULT 1)
RETURNS SETOF pgmq.message_record
LANGUAGE plpgsql
AS $fn$
BEGIN
    IF qty IS NULL OR qty < 0 THEN
        RAISE EXCEPTION 'qty must be zero or more, got: %', coalesce(qty::text, 'NULL')
            USING ERRCODE = 'PQ004';
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
    RETURN EXISTS (SELECT 1 FROM pgmq._queue_ops_route(
        queue_name, op, NULL::integer, NULL::integer, NULL::timestamptz, ARRAY[$3],
        NULL::jsonb[], NULL::jsonb[], NULL::jsonb));
END
$fn$;

CREATE OR REPLACE FUNCTION pgmq.delete(queue_name text, msg_ids bigint[])
RETURNS SETOF bigint
LANGUAGE plpgsql
AS $fn$
BEGIN
    RETURN QUERY SELECT r.msg_id FROM pgmq._queue_ops_route(
        queue_name, 'd'::"char", NULL::integer, NULL::integer, NULL::timestamptz, msg_ids, NULL::jsonb[],
        NULL::jsonb[], NULL::jsonb) r;
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
BEGIN
    RETURN QUERY SELECT r.msg_id FROM pgmq._queue_ops_route(
        queue_name, 'a'::"char", NULL::integer, NULL::integer, NULL::timestamptz, msg_ids, NULL::jsonb[],
        NULL::jsonb[], NULL::jsonb) r;
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
AS $fn$ SELECT * FROM pgmq.set_vt(queue_name, msg_ids, clock_timestamp() + make_interval(secs => vt)); $fn$;

CREATE OR REPLACE FUNCTION pgmq.set_vt(queue_name text, msg_id bigint, vt timestamptz)
RETURNS SETOF pgmq.message_record LANGUAGE sql
AS $fn$ SELECT * FROM pgmq.set_vt(queue_name, ARRAY[msg_id], vt); $fn$;

CREATE OR REPLACE FUNCTION pgmq.set_vt(queue_name text, msg_id bigint, vt integer)
RETURNS SETOF pgmq.message_record LANGUAGE sql
AS $fn$ SELECT * FROM pgmq.set_vt(queue_name, ARRAY[msg_id], clock_timestamp() + make_interval(secs => vt)); $fn$;

-- Metrics: lengths, ages and the all-time message count of a queue.

CREATE FUNCTION pgmq.metrics(queue_name text)
RETURNS pgmq.metrics_result
LANGUAGE plpgsql
AS $fn$
DECLARE
    stored text := pgmq._require_queue(queue_name);
    qtable text := pgmq.format_table_name(queue_name, 'q');
    result pgmq.metrics_result;
BEGIN
    EXECUTE format(
        $q$
        SELECT
            $1::text,
            count(*),
            extract(epoch FROM now() - max(enqueued_at))::integer,
            extract(epoch FROM now() - min(enqueued_at))::integer,
            coalesce(pg_sequence_last_value(pg_get_serial_sequence($2, 'msg_id')::regclass), 0),
            now(),
            count(*) FILTER (WHERE vt <= now()),
            $3
        FROM pgmq.%I
        $q$,
        qtable
    ) INTO result USING stored, format('pgmq.%I', qtable),
        pgmq._default_partition_length(stored);  -- NULL unless partitioned (45_partitions.sql)
    RETURN result;
END
$fn$;

CREATE FUNCTION pgmq.metrics_all()
RETURNS SETOF pgmq.metrics_result
LANGUAGE plpgsql
AS $fn$
DECLARE
    name text;
BEGIN
    FOR name IN SELECT queue_name FROM pgmq.meta ORDER BY queue_name LOOP
        RETURN NEXT pgmq.metrics(name);
    END LOOP;
END
$fn$;

-- Insert notifications: pgmq.enable_notify_insert and friends.
--
-- A queue with notifications enabled has one deferred constraint trigger on its
-- live table. At commit it sends pg_notify('pgmq.q_<name as stored>.INSERT', '')
-- at most once per transaction, and at most once per throttle window per queue,
-- so a rolled-back send never wakes anybody.
--
-- The trigger is the one django_pgmq/notify.py defines as a django-pgtrigger
-- Trigger: same name, function, definition and comment, so `manage.py pgtrigger
-- ls` shows it INSTALLED whichever path installed it (tests compare the two).

-- One row per queue with notifications on. Kept in a logged table so the
-- setting survives a crash and reaches replicas; the row goes with the queue.
CREATE TABLE pgmq.notify_insert_throttle (
    queue_name varchar UNIQUE NOT NULL
        CONSTRAINT notify_insert_throttle_meta_queue_name_fk
            REFERENCES pgmq.meta (queue_name) ON DELETE CASCADE,
    throttle_interval_ms integer NOT NULL DEFAULT 0,
    last_notified_at timestamptz NOT NULL DEFAULT to_timestamp(0)
);

-- The queue's name as stored in pgmq.meta, or pgmq's "does not exist" error.
-- subject is the word pgmq's text uses there: 'it' or 'the queue'.
CREATE FUNCTION pgmq._existing_queue(queue_name text, subject text)
RETURNS text
LANGUAGE plpgsql STABLE
AS $fn$
DECLARE
    stored text := pgmq._stored_queue_name(queue_name);
BEGIN
    IF stored IS NULL THEN
        RAISE EXCEPTION 'Queue "%" does not exist. Create % first using pgmq.create()',
            queue_name, subject
            USING ERRCODE = 'PQ002';
    END IF;
    RETURN stored;
END
$fn$;

CREATE FUNCTION pgmq._check_throttle(throttle_interval_ms integer)
RETURNS void
LANGUAGE plpgsql IMMUTABLE
AS $fn$
BEGIN
    IF throttle_interval_ms IS NULL OR throttle_interval_ms < 0 THEN
        RAISE EXCEPTION 'throttle_interval_ms must be non-negative, got: %',
            coalesce(throttle_interval_ms::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
END
$fn$;

-- The trigger body. TG_ARGV[0] is the queue name as stored, so the channel keeps
-- its case; without an argument the name comes from the table (pgmq's way).
CREATE FUNCTION pgmq.notify_queue_listeners()
RETURNS trigger
LANGUAGE plpgsql
AS $fn$
DECLARE
    queue text := coalesce(TG_ARGV[0], substring(TG_TABLE_NAME FROM 3));
    -- Transaction-local marker: the first row of a commit decides, the others skip.
    decided text := 'pgmq_notify.t' || TG_RELID;
    throttle integer;
    last_at timestamptz;
BEGIN
    IF current_setting(decided, true) = 'yes' THEN
        RETURN NULL;
    END IF;
    PERFORM set_config(decided, 'yes', true);

    SELECT t.throttle_interval_ms, t.last_notified_at INTO throttle, last_at
    FROM pgmq.notify_insert_throttle t
    WHERE t.queue_name = queue;

    -- Throttle 0 (or no row) notifies every commit without touching the row, so
    -- concurrent producers never queue up on its lock.
    IF coalesce(throttle, 0) > 0 THEN
        IF clock_timestamp() - last_at < throttle * interval '1 millisecond' THEN
            RETURN NULL;
        END IF;
        -- Re-checked under the row lock: of two commits racing past the window, one notifies.
        UPDATE pgmq.notify_insert_throttle t
        SET last_notified_at = clock_timestamp()
        WHERE t.queue_name = queue
          AND clock_timestamp() - t.last_notified_at >= t.throttle_interval_ms * interval '1 millisecond';
        IF NOT FOUND THEN
            RETURN NULL;
        END IF;
    END IF;

    PERFORM pg_notify('pgmq.q_' || queue || '.INSERT', NULL);
    RETURN NULL;
END
$fn$;

-- The trigger's name on the queue's table (django-pgtrigger's "pgid", unique per
-- queue as pgtrigger's registry requires): q_<name>_notify_insert, or, for a name
-- that is not a plain identifier (it has a '-'), pgmq_notify_<hash>. Never starting
-- with 'pgtrigger_', it is never a candidate for `manage.py pgtrigger prune`.
CREATE FUNCTION pgmq._notify_trigger_name(queue_name text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $fn$
    SELECT CASE
        WHEN lower(queue_name) ~ '^[a-z0-9_]+$' THEN 'q_' || lower(queue_name) || '_notify_insert'
        ELSE 'pgmq_notify_' || left(encode(sha256(convert_to(lower(queue_name), 'UTF8')), 'hex'), 20)
    END;
$fn$;

-- The trigger's comment: the "hash" django-pgtrigger compares to tell INSTALLED from
-- OUTDATED. A version: change it (and notify.NOTIFY_TRIGGER_HASH) with the trigger.
CREATE FUNCTION pgmq._notify_trigger_hash()
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $fn$ SELECT 'django_pgmq.notify_insert.v1' $fn$;

-- The one place in SQL that creates a queue's notify trigger (re-created if present).
CREATE FUNCTION pgmq._install_notify_trigger(queue_name text)
RETURNS void
LANGUAGE plpgsql
SET client_min_messages = warning  -- no "does not exist, skipping" notice
AS $fn$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q');
    trigger_name text := pgmq._notify_trigger_name(queue_name);
BEGIN
    EXECUTE format('DROP TRIGGER IF EXISTS %I ON pgmq.%I', trigger_name, qtable);
    EXECUTE format(
        $ddl$
        CREATE CONSTRAINT TRIGGER %I
        AFTER INSERT ON pgmq.%I
        DEFERRABLE INITIALLY DEFERRED
        FOR EACH ROW
        EXECUTE FUNCTION pgmq.notify_queue_listeners(%L)
        $ddl$,
        trigger_name, qtable, queue_name
    );
    EXECUTE format('COMMENT ON TRIGGER %I ON pgmq.%I IS %L',
                   trigger_name, qtable, pgmq._notify_trigger_hash());
END
$fn$;

CREATE FUNCTION pgmq._remove_notify_trigger(queue_name text)
RETURNS void
LANGUAGE plpgsql
SET client_min_messages = warning
AS $fn$
BEGIN
    EXECUTE format(
        'DROP TRIGGER IF EXISTS %I ON pgmq.%I',
        pgmq._notify_trigger_name(queue_name), pgmq.format_table_name(queue_name, 'q')
    );
END
$fn$;

-- Turn notifications on (or change the throttle when already on).
CREATE FUNCTION pgmq.enable_notify_insert(queue_name text, throttle_interval_ms integer DEFAULT 250)
RETURNS void
LANGUAGE plpgsql
AS $fn$
DECLARE
    stored text;
BEGIN
    PERFORM pgmq._check_throttle(throttle_interval_ms);
    PERFORM pgmq.acquire_queue_lock(queue_name);
    stored := pgmq._existing_queue(queue_name, 'it');
    INSERT INTO pgmq.notify_insert_throttle (queue_name, throttle_interval_ms)
    VALUES (stored, throttle_interval_ms)
    ON CONFLICT ON CONSTRAINT notify_insert_throttle_queue_name_key DO UPDATE
        SET throttle_interval_ms = excluded.throttle_interval_ms,
            last_notified_at = to_timestamp(0);
    PERFORM pgmq._install_notify_trigger(stored);
END
$fn$;

-- Turn notifications off; a no-op when they are already off.
CREATE FUNCTION pgmq.disable_notify_insert(queue_name text)
RETURNS void
LANGUAGE plpgsql
AS $fn$
DECLARE
    stored text;
BEGIN
    PERFORM pgmq.acquire_queue_lock(queue_name);
    stored := pgmq._existing_queue(queue_name, 'it');
    PERFORM pgmq._remove_notify_trigger(stored);
    DELETE FROM pgmq.notify_insert_throttle t WHERE t.queue_name = stored;
END
$fn$;

-- Change the throttle of a queue whose notifications are on.
CREATE FUNCTION pgmq.update_notify_insert(queue_name text, throttle_interval_ms integer)
RETURNS void
LANGUAGE plpgsql
AS $fn$
DECLARE
    stored text;
BEGIN
    PERFORM pgmq._check_throttle(throttle_interval_ms);
    stored := pgmq._existing_queue(queue_name, 'the queue');
    UPDATE pgmq.notify_insert_throttle t
    SET throttle_interval_ms = $2,
        last_notified_at = to_timestamp(0)
    WHERE t.queue_name = stored;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'Queue "%" does not have notify_insert enabled. '
            'Enable it first using pgmq.enable_notify_insert()', queue_name
            USING ERRCODE = 'PQ004';
    END IF;
END
$fn$;

CREATE FUNCTION pgmq.list_notify_insert_throttles()
RETURNS TABLE (queue_name text, throttle_interval_ms integer, last_notified_at timestamptz)
LANGUAGE sql STABLE
AS $fn$
    SELECT t.queue_name, t.throttle_interval_ms, t.last_notified_at
    FROM pgmq.notify_insert_throttle t
    ORDER BY t.queue_name;
$fn$;

-- Partitioned queues on PostgreSQL's declarative partitioning (no pg_partman).
--
-- pgmq.create_partitioned makes q_<name> and a_<name> range-partitioned: by
-- msg_id when partition_interval is an integer (pgmq's rule), otherwise by time
-- (enqueued_at for the queue, archived_at for the archive). Each partitioned
-- table has a DEFAULT partition that catches rows no partition covers yet, and a
-- row in pgmq.partition_config. pgmq.maintain_partitions creates partitions
-- ahead and drops those past retention; run it from cron (manage.py pgmq_maintain).
--
-- Internally a position on the partition key is a numeric: the msg_id itself, or
-- epoch seconds for time. Time buckets are aligned in UTC from 2000-01-01, so the
-- session's TimeZone never changes where a boundary falls.

CREATE TABLE pgmq.partition_config (
    table_name text PRIMARY KEY,
    queue_name varchar NOT NULL
        CONSTRAINT partition_config_meta_queue_name_fk
            REFERENCES pgmq.meta (queue_name) ON DELETE CASCADE,
    partition_column text NOT NULL
        CONSTRAINT partition_config_column_check
            CHECK (partition_column IN ('msg_id', 'enqueued_at', 'archived_at')),
    partition_interval text NOT NULL,
    retention_interval text,
    premake integer NOT NULL CONSTRAINT partition_config_premake_check CHECK (premake >= 1)
);

-- pgmq's rule: an interval that casts to integer partitions by msg_id, anything else by time.
CREATE FUNCTION pgmq._partition_by_id(partition_interval text)
RETURNS boolean
LANGUAGE plpgsql IMMUTABLE
AS $fn$
BEGIN
    PERFORM partition_interval::integer;
    RETURN true;
EXCEPTION WHEN invalid_text_representation OR numeric_value_out_of_range THEN
    RETURN false;
END
$fn$;

CREATE FUNCTION pgmq._partition_arg_error(what text, expected text, got text)
RETURNS void
LANGUAGE plpgsql IMMUTABLE
AS $fn$
BEGIN
    RAISE EXCEPTION '% must be %, got: %', what, expected, coalesce(quote_literal(got), 'NULL')
        USING ERRCODE = 'PQ004';
END
$fn$;

-- A time step: positive, at least a second, and either whole months or a fixed length.
CREATE FUNCTION pgmq._time_step(what text, step text)
RETURNS interval
LANGUAGE plpgsql IMMUTABLE
AS $fn$
DECLARE
    expected constant text := 'a positive integer (msg_id ranges) or a time interval such as '
        '''1 day'' or ''1 month'' (time ranges)';
    iv interval;
BEGIN
    BEGIN
        iv := step::interval;
    EXCEPTION WHEN invalid_datetime_format OR datetime_field_overflow OR interval_field_overflow
                   OR numeric_value_out_of_range THEN
        PERFORM pgmq._partition_arg_error(what, expected, step);
    END;
    IF iv < interval '1 second' THEN
        PERFORM pgmq._partition_arg_error(what, 'at least 1 second', step);
    END IF;
    -- date_trunc('day', iv) keeps the months and days of an interval, not its time.
    IF extract(year FROM iv) * 12 + extract(month FROM iv) <> 0
       AND (extract(day FROM iv) <> 0 OR date_trunc('day', iv) <> iv) THEN
        PERFORM pgmq._partition_arg_error(
            what, 'whole months (''3 months'') or a fixed length (''12 hours''), not both', step);
    END IF;
    RETURN iv;
END
$fn$;

-- Check create_partitioned's (or convert_archive_partitioned's) arguments, with pgmq's texts.
CREATE FUNCTION pgmq._check_partition_args(
    partition_interval text, retention_interval text, premake integer, premake_name text
)
RETURNS void
LANGUAGE plpgsql IMMUTABLE
AS $fn$
BEGIN
    IF premake IS NULL OR premake < 1 THEN
        RAISE EXCEPTION '% must be at least 1, got %', premake_name, coalesce(premake::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    IF partition_interval IS NULL OR btrim(partition_interval) = '' THEN
        PERFORM pgmq._partition_arg_error('partition_interval', 'given', partition_interval);
    END IF;
    IF pgmq._partition_by_id(partition_interval) THEN
        IF partition_interval::integer < 1 THEN
            PERFORM pgmq._partition_arg_error(
                'partition_interval', 'a positive integer for msg_id ranges', partition_interval);
        END IF;
        IF retention_interval IS NOT NULL AND (retention_interval !~ '^\s*\d{1,18}\s*$'
                                               OR retention_interval::bigint < 1) THEN
            PERFORM pgmq._partition_arg_error(
                'retention_interval', 'a positive integer (a number of msg_ids) when '
                'partition_interval is one', retention_interval);
        END IF;
    ELSE
        PERFORM pgmq._time_step('partition_interval', partition_interval);
        IF retention_interval IS NOT NULL AND pgmq._partition_by_id(retention_interval) THEN
            PERFORM pgmq._partition_arg_error(
                'retention_interval', 'a time interval such as ''7 days'' when partition_interval '
                'is one', retention_interval);
        ELSIF retention_interval IS NOT NULL THEN
            PERFORM pgmq._time_step('retention_interval', retention_interval);
        END IF;
    END IF;
END
$fn$;

-- The start of the bucket holding pos.
CREATE FUNCTION pgmq._partition_floor(by_id boolean, step text, pos numeric)
RETURNS numeric
LANGUAGE plpgsql IMMUTABLE
AS $fn$
DECLARE
    iv interval;
    utc timestamp;
    months integer;
    n integer;
BEGIN
    IF by_id THEN
        RETURN floor(pos / step::bigint) * step::bigint;
    END IF;
    iv := step::interval;
    utc := to_timestamp(pos::double precision) AT TIME ZONE 'UTC';
    months := extract(year FROM iv)::integer * 12 + extract(month FROM iv)::integer;
    IF months > 0 THEN
        n := (extract(year FROM utc)::integer - 2000) * 12 + extract(month FROM utc)::integer - 1;
        utc := timestamp '2000-01-01' + make_interval(months => floor(n::numeric / months)::integer * months);
    ELSE
        utc := date_bin(iv, utc, timestamp '2000-01-01');
    END IF;
    RETURN extract(epoch FROM utc AT TIME ZONE 'UTC');
END
$fn$;

-- The start of the bucket after the one starting at lo.
CREATE FUNCTION pgmq._partition_next(by_id boolean, step text, lo numeric)
RETURNS numeric
LANGUAGE sql IMMUTABLE
AS $fn$
    SELECT CASE WHEN by_id THEN lo + step::bigint
                ELSE extract(epoch FROM ((to_timestamp(lo::double precision) AT TIME ZONE 'UTC')
                                         + step::interval) AT TIME ZONE 'UTC')
           END;
$fn$;

-- A position as a partition bound: a msg_id, an ISO 8601 time in UTC, or
-- MINVALUE/MAXVALUE for the infinities.
CREATE FUNCTION pgmq._partition_bound(by_id boolean, pos numeric)
RETURNS text
LANGUAGE sql IMMUTABLE
AS $fn$
    SELECT CASE
        WHEN pos = '-Infinity'::numeric THEN 'MINVALUE'
        WHEN pos = 'Infinity'::numeric THEN 'MAXVALUE'
        WHEN by_id THEN (pos::bigint)::text
        ELSE to_char(to_timestamp(pos::double precision) AT TIME ZONE 'UTC',
                     CASE WHEN pos = trunc(pos) THEN 'YYYY-MM-DD"T"HH24:MI:SS"+00"'
                          ELSE 'YYYY-MM-DD"T"HH24:MI:SS.US"+00"' END)
    END;
$fn$;

-- The same, as SQL for a FOR VALUES clause.
CREATE FUNCTION pgmq._partition_literal(by_id boolean, pos numeric)
RETURNS text
LANGUAGE sql IMMUTABLE
AS $fn$
    SELECT CASE WHEN abs(pos) = 'Infinity'::numeric THEN pgmq._partition_bound(by_id, pos)
                ELSE quote_literal(pgmq._partition_bound(by_id, pos)) END;
$fn$;

-- A partition bound as PostgreSQL prints it, back to a position.
CREATE FUNCTION pgmq._partition_position(by_id boolean, bound text)
RETURNS numeric
LANGUAGE sql STABLE
AS $fn$
    SELECT CASE
        WHEN bound = 'MINVALUE' THEN '-Infinity'::numeric
        WHEN bound = 'MAXVALUE' THEN 'Infinity'::numeric
        WHEN by_id THEN btrim(bound, '''')::numeric
        ELSE extract(epoch FROM btrim(bound, '''')::timestamptz)
    END;
$fn$;

-- An identifier of at most 63 bytes: base || suffix, or a shortened base plus a
-- hash of it when that is too long (two long names never shorten to the same one).
CREATE FUNCTION pgmq._fit_name(base text, suffix text)
RETURNS text
LANGUAGE sql IMMUTABLE
AS $fn$
    SELECT CASE
        WHEN octet_length(base || suffix) <= 63 THEN base || suffix
        ELSE left(base, 63 - octet_length(suffix) - 9) || '_'
             || left(encode(sha256(convert_to(base, 'UTF8')), 'hex'), 8) || suffix
    END;
$fn$;

-- The name of the partition whose range starts at lo.
CREATE FUNCTION pgmq._partition_name(parent text, by_id boolean, step text, lo numeric)
RETURNS text
LANGUAGE sql IMMUTABLE
AS $fn$
    SELECT pgmq._fit_name(parent, '_p' || CASE
        WHEN by_id THEN (lo::bigint)::text
        WHEN step::interval = date_trunc('day', step::interval)
            THEN to_char(to_timestamp(lo::double precision) AT TIME ZONE 'UTC', 'YYYYMMDD')
        ELSE to_char(to_timestamp(lo::double precision) AT TIME ZONE 'UTC', 'YYYYMMDD"_"HH24MISS')
    END);
$fn$;

-- The partitions of pgmq.<parent>: name, range [lo, hi) as positions, and whether it is the default.
CREATE FUNCTION pgmq._partitions(parent text, by_id boolean)
RETURNS TABLE (partition_name text, lo numeric, hi numeric, is_default boolean)
LANGUAGE sql STABLE
AS $fn$
    SELECT c.relname::text,
           pgmq._partition_position(by_id, b[1]),
           pgmq._partition_position(by_id, b[2]),
           b IS NULL
    FROM pg_inherits i
    JOIN pg_class c ON c.oid = i.inhrelid
    CROSS JOIN LATERAL regexp_match(pg_get_expr(c.relpartbound, c.oid),
                                    '^FOR VALUES FROM \((.*)\) TO \((.*)\)$') AS b
    WHERE i.inhparent = to_regclass(format('pgmq.%I', parent))
    ORDER BY 2 NULLS FIRST;
$fn$;

-- The DEFAULT partition of pgmq.<parent>, if it has one.
CREATE FUNCTION pgmq._default_partition(parent text)
RETURNS regclass
LANGUAGE sql STABLE
AS $fn$
    SELECT nullif(p.partdefid, 0)::regclass FROM pg_partitioned_table p
    WHERE p.partrelid = to_regclass(format('pgmq.%I', parent));
$fn$;

-- Where the partition key of the table stands now: the next msg_id, or the clock.
CREATE FUNCTION pgmq._partition_now(queue_name text, by_id boolean)
RETURNS numeric
LANGUAGE sql VOLATILE
AS $fn$
    SELECT CASE WHEN by_id
        THEN coalesce(pg_sequence_last_value(pg_get_serial_sequence(
                 format('pgmq.%I', pgmq.format_table_name(queue_name, 'q')), 'msg_id')::regclass), 0) + 1
        ELSE extract(epoch FROM clock_timestamp())
    END;
$fn$;

-- Create the partition [lo, hi) of cfg's table. Rows of that range waiting in the
-- default partition move into it first, so they get their proper place.
CREATE FUNCTION pgmq._create_partition(cfg pgmq.partition_config, lo numeric, hi numeric)
RETURNS TABLE (partition_name text, rows_moved bigint)
LANGUAGE plpgsql
AS $fn$
DECLARE
    by_id boolean := cfg.partition_column = 'msg_id';
    key_type text := CASE WHEN by_id THEN 'bigint' ELSE 'timestamptz' END;
    part text := pgmq._partition_name(cfg.table_name, by_id, cfg.partition_interval, lo);
    lo_lit text := pgmq._partition_literal(by_id, lo);
    hi_lit text := pgmq._partition_literal(by_id, hi);
    spill regclass := pgmq._default_partition(cfg.table_name);
    moved bigint := 0;
BEGIN
    EXECUTE format('CREATE TABLE pgmq.%I (LIKE pgmq.%I INCLUDING DEFAULTS)', part, cfg.table_name);
    IF cfg.table_name = pgmq.format_table_name(cfg.queue_name, 'q') THEN
        PERFORM pgmq._tune_live_table(part);
    END IF;
    IF spill IS NOT NULL THEN
        EXECUTE format(
            $q$
            WITH moved AS (
                DELETE FROM %1$s WHERE %2$I >= %3$s::%5$s AND %2$I < %4$s::%5$s RETURNING *
            )
            INSERT INTO pgmq.%6$I SELECT * FROM moved
            $q$,
            spill, cfg.partition_column, lo_lit, hi_lit, key_type, part
        );
        GET DIAGNOSTICS moved = ROW_COUNT;
    END IF;
    -- ATTACH (not CREATE ... PARTITION OF) leaves readers and writers of the queue running.
    EXECUTE format('ALTER TABLE pgmq.%I ATTACH PARTITION pgmq.%I FOR VALUES FROM (%s) TO (%s)',
                   cfg.table_name, part, lo_lit, hi_lit);
    RETURN QUERY SELECT part, moved;
END
$fn$;

-- Bring one partitioned table up to date: partitions for the current bucket, premake
-- buckets ahead and every bucket with rows in the default partition; then drop the
-- partitions wholly past retention. The caller holds the queue's lock.
CREATE FUNCTION pgmq._maintain_table(cfg pgmq.partition_config)
RETURNS TABLE (action text, partition_name text, range_start text, range_end text, rows_moved bigint)
LANGUAGE plpgsql
AS $fn$
DECLARE
    by_id boolean := cfg.partition_column = 'msg_id';
    step text := cfg.partition_interval;
    cur numeric := pgmq._partition_now(cfg.queue_name, by_id);
    spill regclass := pgmq._default_partition(cfg.table_name);
    wanted numeric[] := '{}';
    spilled numeric[];
    bucket numeric;
    bucket_end numeric;
    threshold numeric;
    old record;
    made record;
BEGIN
    bucket := pgmq._partition_floor(by_id, step, cur);
    FOR i IN 0..cfg.premake LOOP
        wanted := wanted || bucket;
        bucket := pgmq._partition_next(by_id, step, bucket);
    END LOOP;
    IF spill IS NOT NULL THEN
        EXECUTE format(
            'SELECT array_agg(DISTINCT pgmq._partition_floor($1, $2, %s)) FROM %s',
            CASE WHEN by_id THEN format('%I::numeric', cfg.partition_column)
                 ELSE format('extract(epoch FROM %I)', cfg.partition_column) END,
            spill
        ) INTO spilled USING by_id, step;
    END IF;

    FOR bucket IN SELECT DISTINCT w FROM unnest(wanted || coalesce(spilled, '{}')) AS w ORDER BY w LOOP
        CONTINUE WHEN EXISTS (
            SELECT 1 FROM pgmq._partitions(cfg.table_name, by_id) p
            WHERE NOT p.is_default AND p.lo <= bucket AND bucket < p.hi
        );
        -- Never overlap a partition made with other bounds (a converted archive's history).
        SELECT least(pgmq._partition_next(by_id, step, bucket), min(p.lo)) INTO bucket_end
        FROM pgmq._partitions(cfg.table_name, by_id) p
        WHERE NOT p.is_default AND p.lo > bucket;
        SELECT * INTO made FROM pgmq._create_partition(cfg, bucket, bucket_end);
        RETURN QUERY SELECT 'created', made.partition_name, pgmq._partition_bound(by_id, bucket),
                            pgmq._partition_bound(by_id, bucket_end), made.rows_moved;
    END LOOP;

    IF cfg.retention_interval IS NOT NULL THEN
        threshold := CASE WHEN by_id THEN cur - cfg.retention_interval::bigint
            ELSE extract(epoch FROM ((clock_timestamp() AT TIME ZONE 'UTC')
                                     - cfg.retention_interval::interval) AT TIME ZONE 'UTC')
        END;
        FOR old IN
            SELECT * FROM pgmq._partitions(cfg.table_name, by_id) p
            WHERE NOT p.is_default AND p.hi <= threshold
        LOOP
            EXECUTE format('DROP TABLE pgmq.%I', old.partition_name);
            RETURN QUERY SELECT 'dropped', old.partition_name,
                                pgmq._partition_bound(by_id, old.lo),
                                pgmq._partition_bound(by_id, old.hi), NULL::bigint;
        END LOOP;
    END IF;
END
$fn$;

-- Maintain the partitions of one queue, or of every partitioned queue (NULL).
-- Safe to run at any frequency and from several sessions at once: each queue is
-- maintained under its queue lock, which create/drop_queue also take, so a second
-- run waits, then finds nothing to do. Run it in READ COMMITTED (the default).
CREATE FUNCTION pgmq.maintain_partitions(queue_name text DEFAULT NULL)
RETURNS TABLE (
    queue text, partitioned_table text, action text, partition_name text,
    range_start text, range_end text, rows_moved bigint
)
LANGUAGE plpgsql
AS $fn$
DECLARE
    target text;
    stored text;
    cfg pgmq.partition_config;
BEGIN
    IF $1 IS NOT NULL THEN
        target := pgmq._require_queue($1);
        IF NOT EXISTS (SELECT 1 FROM pgmq.partition_config c WHERE c.queue_name = target) THEN
            RAISE EXCEPTION 'queue "%" is not partitioned: it has no partitions to maintain', $1
                USING ERRCODE = 'PQ004',
                      HINT = 'Create it with pgmq.create_partitioned(), or convert its archive '
                             'with pgmq.convert_archive_partitioned().';
        END IF;
    END IF;
    FOR stored IN
        SELECT DISTINCT c.queue_name FROM pgmq.partition_config c
        WHERE target IS NULL OR c.queue_name = target
        ORDER BY 1
    LOOP
        PERFORM pgmq.acquire_queue_lock(stored);
        -- Read the configuration after the lock: a drop_queue may have just committed.
        FOR cfg IN
            SELECT * FROM pgmq.partition_config c WHERE c.queue_name = stored ORDER BY c.table_name DESC
        LOOP
            RETURN QUERY SELECT stored, cfg.table_name, m.* FROM pgmq._maintain_table(cfg) m;
        END LOOP;
    END LOOP;
END
$fn$;

-- The partitions of a queue's tables, by table then range.
CREATE FUNCTION pgmq.list_partitions(queue_name text)
RETURNS TABLE (
    partitioned_table text, partition_name text, range_start text, range_end text,
    is_default boolean
)
LANGUAGE plpgsql STABLE
AS $fn$
DECLARE
    stored text := pgmq._require_queue(queue_name);
BEGIN
    RETURN QUERY
        SELECT c.table_name, p.partition_name,
               pgmq._partition_bound(c.partition_column = 'msg_id', p.lo),
               pgmq._partition_bound(c.partition_column = 'msg_id', p.hi),
               p.is_default
        FROM pgmq.partition_config c
        CROSS JOIN LATERAL pgmq._partitions(c.table_name, c.partition_column = 'msg_id') p
        WHERE c.queue_name = stored
        ORDER BY c.table_name DESC, p.is_default, p.lo;
END
$fn$;

-- pgmq.create_partitioned, natively. Creating it again is a no-op.
CREATE FUNCTION pgmq.create_partitioned(
    queue_name text,
    partition_interval text DEFAULT '10000',
    retention_interval text DEFAULT '100000',
    premake integer DEFAULT 4
)
RETURNS void
LANGUAGE plpgsql
AS $fn$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q');
    atable text := pgmq.format_table_name(queue_name, 'a');
    by_id boolean;
    existing pgmq.meta;
    cfg pgmq.partition_config;
BEGIN
    PERFORM pgmq._check_partition_args(partition_interval, retention_interval, premake, 'premake');
    PERFORM pgmq.acquire_queue_lock(queue_name);
    existing := pgmq._same_name_queue(queue_name);
    IF existing.queue_name IS NOT NULL THEN
        IF NOT existing.is_partitioned THEN
            RAISE EXCEPTION 'queue "%" already exists and is not partitioned', queue_name
                USING ERRCODE = 'PQ003',
                      HINT = 'Drop it first, or use another name.';
        END IF;
        RETURN;
    END IF;

    by_id := pgmq._partition_by_id(partition_interval);
    PERFORM pgmq._create_queue_tables(
        queue_name, false,
        CASE WHEN by_id THEN 'msg_id' ELSE 'enqueued_at' END,
        CASE WHEN by_id THEN 'msg_id' ELSE 'archived_at' END
    );
    EXECUTE format('CREATE TABLE pgmq.%I PARTITION OF pgmq.%I DEFAULT', qtable || '_default', qtable);
    PERFORM pgmq._tune_live_table(qtable || '_default');
    EXECUTE format('CREATE TABLE pgmq.%I PARTITION OF pgmq.%I DEFAULT', atable || '_default', atable);
    INSERT INTO pgmq.meta (queue_name, is_partitioned, is_unlogged) VALUES (queue_name, true, false);

    FOR cfg IN
        INSERT INTO pgmq.partition_config AS c
            (table_name, queue_name, partition_column, partition_interval, retention_interval, premake)
        VALUES
            (qtable, queue_name, CASE WHEN by_id THEN 'msg_id' ELSE 'enqueued_at' END,
             btrim(partition_interval), btrim(retention_interval), premake),
            (atable, queue_name, CASE WHEN by_id THEN 'msg_id' ELSE 'archived_at' END,
             btrim(partition_interval), btrim(retention_interval), premake)
        RETURNING c.*
    LOOP
        PERFORM pgmq._maintain_table(cfg);
    END LOOP;
END
$fn$;

-- pgmq.convert_archive_partitioned, natively: a_<name> becomes a partitioned table.
-- Its rows stay where they are: the old table becomes the first partition
-- (MINVALUE up to the end of the bucket of its newest row), dropped by retention
-- like any other. leading_partition is how many partitions to keep ahead.
CREATE FUNCTION pgmq.convert_archive_partitioned(
    table_name text,
    partition_interval text DEFAULT '10000',
    retention_interval text DEFAULT '100000',
    leading_partition integer DEFAULT 10
)
RETURNS void
LANGUAGE plpgsql
AS $fn$
DECLARE
    stored text;
    atable text := pgmq.format_table_name(table_name, 'a');
    history text := pgmq._fit_name(atable, '_history');
    index_name text := 'archived_at_idx_' || lower(table_name);
    by_id boolean;
    acol text;
    pkey text;
    quiet text;
    newest numeric;
    cfg pgmq.partition_config;
BEGIN
    stored := pgmq._require_queue(table_name);
    PERFORM pgmq.acquire_queue_lock(stored);
    IF (SELECT c.relkind FROM pg_class c WHERE c.oid = to_regclass(format('pgmq.%I', atable))) = 'p' THEN
        RAISE NOTICE 'Table % is already partitioned', atable;
        RETURN;
    END IF;
    PERFORM pgmq._check_partition_args(
        partition_interval, retention_interval, leading_partition, 'leading_partition');

    by_id := pgmq._partition_by_id(partition_interval);
    acol := CASE WHEN by_id THEN 'msg_id' ELSE 'archived_at' END;
    -- Free the names the new table takes: the table, its primary key and its index.
    EXECUTE format('ALTER TABLE pgmq.%I RENAME TO %I', atable, history);
    SELECT k.conname INTO pkey FROM pg_constraint k
    WHERE k.conrelid = format('pgmq.%I', history)::regclass AND k.contype = 'p';
    IF pkey IS NOT NULL AND by_id THEN
        EXECUTE format('ALTER TABLE pgmq.%I RENAME CONSTRAINT %I TO %I',
                       history, pkey, pgmq._fit_name(history, '_pkey'));
    ELSIF pkey IS NOT NULL THEN
        -- The new key is (msg_id, archived_at); attaching builds it on the old rows.
        EXECUTE format('ALTER TABLE pgmq.%I DROP CONSTRAINT %I', history, pkey);
    END IF;
    EXECUTE format('ALTER INDEX IF EXISTS pgmq.%I RENAME TO %I',
                   index_name, pgmq._fit_name(history, '_archived_at_idx'));
    quiet := current_setting('client_min_messages');
    PERFORM set_config('client_min_messages', 'warning', true);  -- "q_<name> already exists"
    PERFORM pgmq._create_queue_tables(stored, false, NULL, acol);
    PERFORM set_config('client_min_messages', quiet, true);
    EXECUTE format('CREATE TABLE pgmq.%I PARTITION OF pgmq.%I DEFAULT', atable || '_default', atable);

    EXECUTE format(
        'SELECT max(%s) FROM pgmq.%I',
        CASE WHEN by_id THEN format('%I::numeric', acol) ELSE format('extract(epoch FROM %I)', acol) END,
        history
    ) INTO newest;
    IF newest IS NULL THEN
        EXECUTE format('DROP TABLE pgmq.%I', history);
    ELSE
        EXECUTE format(
            'ALTER TABLE pgmq.%I ATTACH PARTITION pgmq.%I FOR VALUES FROM (MINVALUE) TO (%s)',
            atable, history,
            pgmq._partition_literal(by_id, pgmq._partition_next(
                by_id, partition_interval, pgmq._partition_floor(by_id, partition_interval, newest)))
        );
    END IF;

    INSERT INTO pgmq.partition_config AS c
        (table_name, queue_name, partition_column, partition_interval, retention_interval, premake)
    VALUES (atable, stored, acol, btrim(partition_interval), btrim(retention_interval), leading_partition)
    RETURNING c.* INTO cfg;
    PERFORM pgmq._maintain_table(cfg);
END
$fn$;

-- Rows in the default partitions of a queue's tables, or NULL when it has none.
-- Exact up to 10000 rows per table, the planner's estimate beyond (a non-zero value
-- means maintenance is not keeping up: run pgmq.maintain_partitions).
CREATE FUNCTION pgmq._default_partition_length(queue_name text)
RETURNS bigint
LANGUAGE plpgsql STABLE
AS $fn$
DECLARE
    spill regclass;
    n bigint;
    total bigint;
BEGIN
    FOR spill IN
        SELECT d FROM unnest(ARRAY[pgmq.format_table_name(queue_name, 'q'),
                                   pgmq.format_table_name(queue_name, 'a')]) AS t,
                      pgmq._default_partition(t) AS d
        WHERE d IS NOT NULL
    LOOP
        EXECUTE format('SELECT count(*) FROM (SELECT FROM %s LIMIT 10000) s', spill) INTO n;
        IF n = 10000 THEN
            SELECT greatest(n, c.reltuples::bigint) INTO n FROM pg_class c WHERE c.oid = spill;
        END IF;
        total := coalesce(total, 0) + n;
    END LOOP;
    RETURN total;
END
$fn$;

-- FIFO groups: ordered reads per message group.
--
-- A message's group is its header "x-pgmq-group" (else '_default_fifo_group').
-- Within a group, messages are handed out in msg_id order, and only from the
-- front: a group can be read up to its first invisible message (in flight or
-- delayed), so one group is never processed by two consumers at once or out of
-- order. Readers take a transaction-level advisory lock per group, then look at
-- the group again with a fresh snapshot, so two concurrent readers never share a
-- group and a reader never acts on a snapshot older than another's commit.

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
    qtable text := pgmq.format_table_name(queue_name, 'q');
    lock_space integer := hashtext(qtable);
    grp text;
    groups text[] := '{}';
    ready bigint;
    budget integer := qty;
BEGIN
    IF qty IS NULL OR qty < 0 THEN
        RAISE EXCEPTION 'qty must be zero or more, got: %', coalesce(qty::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    IF qty = 0 THEN
        RETURN;
    END IF;

    -- Groups whose first message looks visible, oldest first. Only a hint: each
    -- is checked again below, after its lock is held.
    FOR grp IN EXECUTE format(
        $q$
        SELECT h.grp
        FROM (
            SELECT DISTINCT ON (pgmq._fifo_group(headers))
                   pgmq._fifo_group(headers) AS grp, msg_id, vt
            FROM pgmq.%I
            ORDER BY pgmq._fifo_group(headers), msg_id
        ) h
        WHERE h.vt <= clock_timestamp()
        ORDER BY h.msg_id
        $q$,
        qtable
    )
    LOOP
        -- Another reader holds this group until it commits: leave it alone.
        CONTINUE WHEN NOT pg_try_advisory_xact_lock(lock_space, hashtext(grp));
        -- A new statement, so a new snapshot: it sees what the last holder committed.
        EXECUTE format(
            $q$
            SELECT count(*) FILTER (WHERE ok)
            FROM (
                SELECT bool_and(vt <= clock_timestamp()) OVER (ORDER BY msg_id) AS ok
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

    IF cardinality(groups) = 0 THEN
        RETURN;
    END IF;

    RETURN QUERY EXECUTE format(
        $q$
        WITH wanted AS MATERIALIZED (
            -- The readable front of each locked group, ranked, then chosen by mode.
            SELECT g.prio, r.msg_id, r.rnk
            FROM unnest($1::text[]) WITH ORDINALITY AS g(grp, prio)
            CROSS JOIN LATERAL (
                SELECT f.msg_id,
                       row_number() OVER w AS rnk,
                       bool_and(f.vt <= clock_timestamp()) OVER w AS ok
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
            WHERE m.msg_id IN (SELECT msg_id FROM wanted) AND m.vt <= clock_timestamp()
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
            UPDATE pgmq.%1$I m
            SET vt = clock_timestamp() + $3,
                read_ct = m.read_ct + 1,
                last_read_at = clock_timestamp()
            FROM usable u
            WHERE m.msg_id = u.msg_id
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message,
                      m.headers, u.prio, u.rnk
        )
        SELECT msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers
        FROM claimed
        -- Round-robin keeps its rounds (as pgmq does); the others come in msg_id order.
        ORDER BY CASE WHEN $4 = 'rr' THEN rnk ELSE 0 END,
                 CASE WHEN $4 = 'rr' THEN prio ELSE 0 END,
                 msg_id
        $q$,
        qtable
    ) USING groups, qty, make_interval(secs => coalesce(vt, 0)), mode,
        -- The most one group can contribute: every other group gives at least one.
        CASE WHEN mode = 'head' THEN 1 ELSE qty - cardinality(groups) + 1 END;
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
        'SELECT * FROM pgmq._read_grouped($1, $2, $3, $4)',
        queue_name, vt, qty, mode, max_poll_seconds, poll_interval_ms);
$fn$;

CREATE FUNCTION pgmq.read_grouped(queue_name text, vt integer, qty integer)
RETURNS SETOF pgmq.message_record LANGUAGE sql
AS $fn$ SELECT * FROM pgmq._read_grouped(queue_name, vt, qty, 'fill'); $fn$;

CREATE FUNCTION pgmq.read_grouped_rr(queue_name text, vt integer, qty integer)
RETURNS SETOF pgmq.message_record LANGUAGE sql
AS $fn$ SELECT * FROM pgmq._read_grouped(queue_name, vt, qty, 'rr'); $fn$;

CREATE FUNCTION pgmq.read_grouped_head(queue_name text, vt integer, qty integer)
RETURNS SETOF pgmq.message_record LANGUAGE sql
AS $fn$ SELECT * FROM pgmq._read_grouped(queue_name, vt, qty, 'head'); $fn$;

CREATE FUNCTION pgmq.read_grouped_with_poll(
    queue_name text, vt integer, qty integer,
    max_poll_seconds integer DEFAULT 5, poll_interval_ms integer DEFAULT 100
)
RETURNS SETOF pgmq.message_record LANGUAGE sql
AS $fn$
    SELECT * FROM pgmq._read_grouped_poll(queue_name, vt, qty, max_poll_seconds, poll_interval_ms, 'fill');
$fn$;

CREATE FUNCTION pgmq.read_grouped_rr_with_poll(
    queue_name text, vt integer, qty integer,
    max_poll_seconds integer DEFAULT 5, poll_interval_ms integer DEFAULT 100
)
RETURNS SETOF pgmq.message_record LANGUAGE sql
AS $fn$
    SELECT * FROM pgmq._read_grouped_poll(queue_name, vt, qty, max_poll_seconds, poll_interval_ms, 'rr');
$fn$;

CREATE FUNCTION pgmq.read_grouped_head_with_poll(
    queue_name text, vt integer, qty integer,
    max_poll_seconds integer DEFAULT 5, poll_interval_ms integer DEFAULT 100
)
RETURNS SETOF pgmq.message_record LANGUAGE sql
AS $fn$
    SELECT * FROM pgmq._read_grouped_poll(queue_name, vt, qty, max_poll_seconds, poll_interval_ms, 'head');
$fn$;

-- A btree on (group, msg_id): each group's front is an index range, and the
-- group heads come out in index order.
CREATE FUNCTION pgmq.create_fifo_index(queue_name text)
RETURNS void
LANGUAGE plpgsql
AS $fn$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q');
BEGIN
    PERFORM pgmq._require_queue(queue_name);
    EXECUTE format(
        'CREATE INDEX IF NOT EXISTS %I ON pgmq.%I (pgmq._fifo_group(headers), msg_id)',
        qtable || '_fifo_idx', qtable
    );
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
        || replace(
               replace(regexp_replace(pattern, '([^[:alnum:]_*#-])', '\\\1', 'g'), '*', '[^.]+'),
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
    IF length(value) > 255 THEN
        RAISE EXCEPTION '% length cannot exceed 255 characters, got % characters', what, length(value)
            USING ERRCODE = 'PQ004';
    END IF;
    IF value !~ ('^[' || allowed || ']+$') THEN
        RAISE EXCEPTION '% contains invalid characters. Only %. Got: %', what, allowed_text, value
            USING ERRCODE = 'PQ004';
    END IF;
    IF left(value, 1) = '.' THEN
        RAISE EXCEPTION '% cannot start with a dot. Got: %', what, value USING ERRCODE = 'PQ004';
    END IF;
    IF right(value, 1) = '.' THEN
        RAISE EXCEPTION '% cannot end with a dot. Got: %', what, value USING ERRCODE = 'PQ004';
    END IF;
    IF strpos(value, '..') > 0 THEN
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
        'routing_key', routing_key, 'a-zA-Z0-9._-',
        'alphanumeric, dots, hyphens, and underscores are allowed');
    RETURN true;
END
$fn$;

CREATE FUNCTION pgmq.validate_topic_pattern(pattern text)
RETURNS boolean
LANGUAGE plpgsql IMMUTABLE
AS $fn$
BEGIN
    PERFORM pgmq._check_topic_text(
        'pattern', pattern, 'a-zA-Z0-9._*#-',
        'alphanumeric, dots, hyphens, underscores, *, and # are allowed');
    IF strpos(pattern, '**') > 0 THEN
        RAISE EXCEPTION 'pattern cannot contain consecutive stars (**). '
            'Use # for multi-segment matching. Got: %', pattern
            USING ERRCODE = 'PQ004';
    END IF;
    IF strpos(pattern, '##') > 0 THEN
        RAISE EXCEPTION 'pattern cannot contain consecutive hashes (##). '
            'A single # already matches zero or more segments. Got: %', pattern
            USING ERRCODE = 'PQ004';
    END IF;
    IF strpos(pattern, '*#') > 0 OR strpos(pattern, '#*') > 0 THEN
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
CREATE FUNCTION pgmq.bind_topic(pattern text, queue_name text)
RETURNS void
LANGUAGE plpgsql
AS $fn$
BEGIN
    PERFORM pgmq.validate_topic_pattern(pattern);
    PERFORM pgmq._check_topic_queue_arg(queue_name);
    INSERT INTO pgmq.topic_bindings (pattern, queue_name)
    VALUES (pattern, pgmq._existing_queue(queue_name, 'the queue'))
    ON CONFLICT ON CONSTRAINT topic_bindings_unique_pattern_queue DO NOTHING;
END
$fn$;

-- Remove a binding; false when there was none.
CREATE FUNCTION pgmq.unbind_topic(pattern text, queue_name text)
RETURNS boolean
LANGUAGE plpgsql
AS $fn$
BEGIN
    IF pattern IS NULL OR pattern = '' THEN
        RAISE EXCEPTION 'pattern cannot be NULL or empty' USING ERRCODE = 'PQ004';
    END IF;
    PERFORM pgmq._check_topic_queue_arg(queue_name);
    DELETE FROM pgmq.topic_bindings b
    WHERE b.pattern = $1 AND lower(b.queue_name) = lower($2);
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
    WHERE lower(b.queue_name) = lower($1)
    ORDER BY b.bound_at DESC, b.pattern;
$fn$;

-- send_topic ------------------------------------------------------------------

-- Send one message to every matching queue; returns how many queues got it.
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
AS $fn$ SELECT * FROM pgmq.send_batch_topic(routing_key, msgs, NULL::jsonb[], clock_timestamp()); $fn$;

CREATE FUNCTION pgmq.send_batch_topic(routing_key text, msgs jsonb[], headers jsonb[])
RETURNS TABLE (queue_name text, msg_id bigint) LANGUAGE sql
AS $fn$ SELECT * FROM pgmq.send_batch_topic(routing_key, msgs, headers, clock_timestamp()); $fn$;

CREATE FUNCTION pgmq.send_batch_topic(routing_key text, msgs jsonb[], delay integer)
RETURNS TABLE (queue_name text, msg_id bigint) LANGUAGE sql
AS $fn$ SELECT * FROM pgmq.send_batch_topic(routing_key, msgs, NULL::jsonb[], pgmq._delay_to_vt(delay)); $fn$;

CREATE FUNCTION pgmq.send_batch_topic(routing_key text, msgs jsonb[], delay timestamptz)
RETURNS TABLE (queue_name text, msg_id bigint) LANGUAGE sql
AS $fn$ SELECT * FROM pgmq.send_batch_topic(routing_key, msgs, NULL::jsonb[], delay); $fn$;

CREATE FUNCTION pgmq.send_batch_topic(routing_key text, msgs jsonb[], headers jsonb[], delay integer)
RETURNS TABLE (queue_name text, msg_id bigint) LANGUAGE sql
AS $fn$ SELECT * FROM pgmq.send_batch_topic(routing_key, msgs, headers, pgmq._delay_to_vt(delay)); $fn$;
