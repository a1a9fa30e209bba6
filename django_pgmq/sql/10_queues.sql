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
    SELECT m.* INTO existing FROM pgmq.meta m WHERE pg_catalog.lower(m.queue_name::text) = pg_catalog.lower($1);
    IF existing.queue_name IS NOT NULL AND existing.queue_name::text <> queue_name THEN
        RAISE EXCEPTION 'queue name "%" maps to table pgmq.%, which queue "%" already uses',
            queue_name, pgmq.format_table_name(queue_name, 'q'::text), existing.queue_name
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
    EXECUTE pg_catalog.format('ALTER TABLE pgmq.%I SET (fillfactor = 80)', tbl);
END
$fn$;

-- Refuse to build a queue on tables someone else made: a relation that bears the name of
-- one of the queue's tables (or of its archive index) and is not owned by the owner of
-- schema pgmq was planted there (by a role that had CREATE on pgmq, or by a superuser),
-- and adopting it would serve the queue from a table whose owner controls its triggers,
-- rules and policies. The owner's own half-made queue (tables, no catalogue row) is fine.
CREATE OR REPLACE FUNCTION pgmq._refuse_foreign_tables(queue_name text)
RETURNS void
LANGUAGE plpgsql
AS $fn$
DECLARE
    squatter record;
BEGIN
    SELECT c.relname, pg_catalog.pg_get_userbyid(c.relowner) AS owner INTO squatter
    FROM pg_catalog.pg_class c
    JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'pgmq'::name AND c.relowner <> n.nspowner
      AND c.relname IN (pgmq.format_table_name(queue_name, 'q'::text)::name,
                        pgmq.format_table_name(queue_name, 'a'::text)::name,
                        ('archived_at_idx_'::text || pg_catalog.lower(queue_name))::name)
    ORDER BY c.relname
    LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'queue "%": relation pgmq.% already exists and is owned by role "%", not by the owner of schema pgmq',
            queue_name, squatter.relname, squatter.owner
            USING ERRCODE = 'PQ003',
                  HINT = 'A queue is never built on a table another role made. Drop that relation, '
                         'or, if it is a queue of an older install, have a DBA run '
                         'ALTER TABLE ... OWNER TO the owner of schema pgmq.';
    END IF;
END
$fn$;

CREATE OR REPLACE FUNCTION pgmq._create_queue_tables(queue_name text, unlogged boolean, q_key text, a_key text)
RETURNS void
LANGUAGE plpgsql
AS $fn$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q'::text);
    atable text := pgmq.format_table_name(queue_name, 'a'::text);
BEGIN
    PERFORM pgmq._refuse_foreign_tables(queue_name);
    EXECUTE pg_catalog.format(
        $ddl$
        CREATE %s TABLE IF NOT EXISTS pgmq.%I (
            msg_id bigint GENERATED ALWAYS AS IDENTITY,
            read_ct integer NOT NULL DEFAULT 0,
            enqueued_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
            last_read_at timestamptz,
            vt timestamptz NOT NULL,
            message jsonb,
            headers jsonb,
            PRIMARY KEY (%s)
        ) %s
        $ddl$,
        CASE WHEN unlogged THEN 'UNLOGGED' ELSE '' END, qtable,
        CASE WHEN coalesce(q_key, 'msg_id') = 'msg_id' THEN 'msg_id' ELSE pg_catalog.format('msg_id, %I', q_key) END,
        CASE WHEN q_key IS NULL THEN '' ELSE pg_catalog.format('PARTITION BY RANGE (%I)', q_key) END
    );
    IF q_key IS NULL THEN
        PERFORM pgmq._tune_live_table(qtable);
    END IF;
    PERFORM pgmq._workflow_trigger(queue_name);  -- workflow steps advance on delete
    IF unlogged THEN
        -- The ids go on into the (logged) archive: an id sequence reset by a crash would
        -- hand out ids the archive holds already. Only the messages are unlogged.
        EXECUTE pg_catalog.format('ALTER SEQUENCE %s SET LOGGED',
                       pg_catalog.pg_get_serial_sequence(pg_catalog.format('pgmq.%I', qtable), 'msg_id'));
    END IF;

    EXECUTE pg_catalog.format(
        $ddl$
        CREATE TABLE IF NOT EXISTS pgmq.%I (
            msg_id bigint NOT NULL,
            read_ct integer NOT NULL DEFAULT 0,
            enqueued_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
            last_read_at timestamptz,
            archived_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
            vt timestamptz NOT NULL,
            message jsonb,
            headers jsonb,
            PRIMARY KEY (%s)
        ) %s
        $ddl$,
        atable,
        CASE WHEN coalesce(a_key, 'msg_id') = 'msg_id' THEN 'msg_id' ELSE pg_catalog.format('msg_id, %I', a_key) END,
        CASE WHEN a_key IS NULL THEN '' ELSE pg_catalog.format('PARTITION BY RANGE (%I)', a_key) END
    );
    -- pgmq's index name; '<atable>_archived_at_idx' would pass 63 bytes for a 47-char name.
    EXECUTE pg_catalog.format(
        'CREATE INDEX IF NOT EXISTS %I ON pgmq.%I (archived_at)',
        'archived_at_idx_' || pg_catalog.lower(queue_name), atable
    );
    PERFORM pgmq._grant_queue(queue_name);
END
$fn$;

-- Create the live and archive tables of a queue and record it. A queue that exists
-- (plain, unlogged, partitioned, with attributes) is left as it is, as pgmq's create,
-- create_unlogged and create_non_partitioned do (kombu's pgmq transport calls create on
-- every declare): nothing is altered, whatever kind was asked for, and nothing is
-- checked beyond the name.
-- An owner function (SECURITY DEFINER): the queue's tables, sequence and index are the
-- owner's whoever asks, so no application role ever owns what the owner's code touches.
-- Making a new queue needs the create_queues privilege (pgmq._require_privilege: the
-- owner, a superuser or a role granted --create-queues); the creator is recorded
-- (pgmq.queue_creator) and every registered application role is granted the new tables.
-- Locks: an existing queue is recognised before any lock is taken, so a transaction
-- that sent to the queue (holding its table) and declares it again never waits for the
-- queue lock a concurrent drop_queue holds while it waits for that table (docs/internals/locks.md,
-- "Locks: how each is bounded"). A new queue takes the queue lock, then looks again.
CREATE OR REPLACE FUNCTION pgmq._create_queue(queue_name text, unlogged boolean)
RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
    PERFORM pgmq.validate_queue_name(queue_name);
    IF (pgmq._same_name_queue(queue_name)).queue_name IS NOT NULL
       AND pg_catalog.to_regclass(pg_catalog.format(
               'pgmq.%I', pgmq.format_table_name(queue_name, 'q'::text))) IS NOT NULL THEN
        RETURN;
    END IF;
    PERFORM pgmq._require_privilege('create_queues'::text);
    PERFORM pgmq.acquire_queue_lock(queue_name);
    IF (pgmq._same_name_queue(queue_name)).queue_name IS NOT NULL
       AND pg_catalog.to_regclass(pg_catalog.format(
               'pgmq.%I', pgmq.format_table_name(queue_name, 'q'::text))) IS NOT NULL THEN
        RETURN;
    END IF;
    PERFORM pgmq._create_queue_tables(queue_name, unlogged, NULL::text, NULL::text);
    INSERT INTO pgmq.meta (queue_name, is_partitioned, is_unlogged)
    VALUES (queue_name, false, unlogged)
    ON CONFLICT DO NOTHING;
    PERFORM pgmq._record_creator(queue_name);
END
$fn$;

-- Record the session's login role as the creator of queue_name (as stored in pgmq.meta).
CREATE OR REPLACE FUNCTION pgmq._record_creator(queue_name text)
RETURNS void
LANGUAGE sql
AS $fn$
    INSERT INTO pgmq.queue_creator AS c (queue_name, created_by)
    SELECT m.queue_name::text, SESSION_USER FROM pgmq.meta m
    WHERE pg_catalog.lower(m.queue_name::text) = pg_catalog.lower($1)
    ON CONFLICT (queue_name) DO NOTHING;
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
-- An owner function (SECURITY DEFINER, the tables are the owner's): the owner and
-- superusers may drop any queue; a role granted --create-queues only the queues its
-- login role created (pgmq.queue_creator); anyone else gets 42501.
-- Locks, in the one order every queue DDL takes them: the queue lock, the queue's table
-- lock (an index build gives way), then the tables themselves.
CREATE OR REPLACE FUNCTION pgmq._drop_queue(queue_name text)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q'::text);
    atable text := pgmq.format_table_name(queue_name, 'a'::text);
    owner_session boolean := pgmq._session_is_owner();
    creator name;
BEGIN
    IF NOT owner_session THEN
        PERFORM pgmq._require_privilege('create_queues'::text);
    END IF;
    PERFORM pgmq.acquire_queue_lock(queue_name);
    PERFORM pgmq._lock_queue_table(queue_name);  -- waits for an index build to give way
    IF pg_catalog.to_regclass(pg_catalog.format('pgmq.%I', qtable)) IS NULL
       AND NOT EXISTS (SELECT FROM pgmq.meta m
                       WHERE pg_catalog.lower(m.queue_name::text) = pg_catalog.lower($1)) THEN
        RAISE NOTICE 'pgmq queue `%` does not exist', queue_name;
        RETURN false;
    END IF;
    IF NOT owner_session THEN
        SELECT c.created_by INTO creator FROM pgmq.queue_creator c
        WHERE pg_catalog.lower(c.queue_name::text) = pg_catalog.lower($1);
        IF creator IS NULL OR NOT EXISTS (
            SELECT FROM pg_catalog.pg_roles r
            WHERE r.rolname = creator AND pg_catalog.pg_has_role(SESSION_USER, r.oid, 'MEMBER'::text)
        ) THEN
            -- PostgreSQL's text, as a pgmq install where the role does not own the table says
            RAISE EXCEPTION 'must be owner of table %', qtable
                USING ERRCODE = '42501',
                      DETAIL = pg_catalog.format('Queue "%s" was created by %s.', queue_name,
                                                 coalesce(pg_catalog.quote_ident(creator::text),
                                                          'the owner of schema pgmq')),
                      HINT = 'A role granted --create-queues may drop only the queues it created; '
                             'the owner of schema pgmq may drop any.';
        END IF;
    END IF;
    EXECUTE pg_catalog.format('DROP TABLE IF EXISTS pgmq.%I', qtable);
    EXECUTE pg_catalog.format('DROP TABLE IF EXISTS pgmq.%I', atable);
    DELETE FROM pgmq.meta m WHERE pg_catalog.lower(m.queue_name::text) = pg_catalog.lower($1);
    DELETE FROM pgmq.queue_creator c WHERE pg_catalog.lower(c.queue_name::text) = pg_catalog.lower($1);
    -- the workflow steps sent to it fail (their messages went without a delete)
    PERFORM pgmq._workflow_queue_lost(queue_name, pg_catalog.format('queue "%s" was dropped', queue_name));
    RETURN true;
END
$fn$;

CREATE OR REPLACE FUNCTION pgmq.drop_queue(queue_name text)
RETURNS boolean
LANGUAGE sql
AS $fn$
    SELECT pgmq._drop_queue(queue_name);
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
    qtable text := pgmq.format_table_name(queue_name, 'q'::text);
    removed bigint;
    stored text;
BEGIN
    stored := pgmq._require_queue(queue_name);
    PERFORM pgmq._lock_queue_table(queue_name);  -- waits for an index build to give way
    -- Lock first so the count and the truncate see the same rows.
    EXECUTE pg_catalog.format('LOCK TABLE pgmq.%I IN ACCESS EXCLUSIVE MODE', qtable);
    EXECUTE pg_catalog.format('SELECT pg_catalog.count(*) FROM pgmq.%I', qtable) INTO removed;
    EXECUTE pg_catalog.format('TRUNCATE TABLE pgmq.%I', qtable);
    -- a truncate fires no delete trigger: the workflow steps it took fail
    PERFORM pgmq._workflow_queue_lost(stored, pg_catalog.format('queue "%s" was purged', stored));
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
