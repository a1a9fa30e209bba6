-- Per-queue indexes (priorities, task queues, FIFO groups) built CONCURRENTLY, outside
-- the caller's transaction, so that no send to the queue ever waits for a build.
--
-- Where a plain CREATE INDEX blocks no writer (a small table, a call that is its own
-- transaction, under a short lock_timeout) pgmq._want_queue_index builds it at once.
-- Otherwise: CREATE INDEX CONCURRENTLY cannot run inside a function or a transaction
-- block, so the SQL records which index a queue wants (pgmq.queue_index_wanted); a client
-- runs the statements pgmq.pending_indexes() gives, each on its own, in autocommit:
--   * django-pgmq's manager right after the commit that wanted one (its own connection,
--     in the background), every worker now and then, and manage.py pgmq_maintain;
--   * any other client: SELECT statement FROM pgmq.pending_indexes() and run each
--     (in psql: SELECT statement FROM pgmq.pending_indexes() \gexec).
-- Until an index exists the readers work without it (a sort instead of an index walk).
-- The statements come from a fixed set of kinds, never from stored SQL text.

CREATE TABLE pgmq.queue_index_wanted (
    index_name text PRIMARY KEY,
    queue_name text NOT NULL,
    kind text NOT NULL CHECK (kind IN ('priority', 'fifo')),
    wanted_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE pgmq.queue_index_wanted IS
    'Per-queue indexes wanted and not yet built CONCURRENTLY (see pgmq.pending_indexes())';

-- How long one maintenance step (a partition created or dropped, an index built at
-- once) waits for a lock (an interval's text): the session's
-- lock_timeout capped at 1 s, or 200 ms when the session sets none. A step waiting for a
-- table lock makes every reader and writer of the queue queue behind it, so this is
-- also the longest a queue's traffic waits for maintenance.
CREATE FUNCTION pgmq._maintenance_lock_timeout()
RETURNS text
LANGUAGE sql STABLE
AS $fn$
    SELECT CASE WHEN s.ms <= 0 THEN '200ms'
                ELSE (LEAST(s.ms, 1000)::bigint)::text || 'ms' END
    FROM (SELECT EXTRACT(epoch FROM pg_catalog.current_setting('lock_timeout')::interval) * 1000
                 AS ms) AS s;
$fn$;

-- The name of a queue's index of a kind: <table>_priority, <table>_fifo_idx.
CREATE FUNCTION pgmq._queue_index_name(queue_name text, kind text)
RETURNS text
LANGUAGE sql IMMUTABLE
AS $fn$
    SELECT pgmq.format_table_name(queue_name, 'q'::text)
           || CASE kind WHEN 'priority' THEN '_priority' WHEN 'fifo' THEN '_fifo_idx' END;
$fn$;

-- The indexed columns of a queue's index of a kind: a fixed set, never stored SQL text.
-- The expressions call only pgmq's own functions, qualified.
CREATE FUNCTION pgmq._queue_index_columns(kind text)
RETURNS text
LANGUAGE sql IMMUTABLE
AS $fn$
    SELECT CASE kind WHEN 'priority' THEN 'pgmq._task_priority(headers) DESC, msg_id'
                     WHEN 'fifo' THEN 'pgmq._fifo_group(headers), msg_id' END;
$fn$;

-- Give queue_name its index of this kind. Returns true when the index exists and is valid
-- (already, or built now), false when its build is deferred.
--
-- Built at once (a plain CREATE INDEX, a few milliseconds) when that blocks no writer for
-- longer than pgmq._maintenance_lock_timeout(): the queue's table holds at most 1 MB,
-- and either this transaction created the table (e.g. pgmq.create then
-- pgmq.create_fifo_index in one transaction: nobody else sees it yet) or it has written
-- nothing yet (a client in autocommit, as pgmq's clients call it; the SHARE lock then
-- ends with the call; a transaction block that goes on after such a call holds writers
-- until it ends, as on pgmq) and the session has not set pgmq.defer_index_builds to
-- 'on' (django-pgmq's manager sets it inside a transaction); the lock is waited for at
-- most pgmq._maintenance_lock_timeout(). Otherwise (a larger table, a transaction that
-- has written, a consumer holding the table) the wish is recorded, a
-- NOTICE says so, and the index is built CONCURRENTLY outside any transaction: by the
-- manager and the management commands before they return, by every django-pgmq worker,
-- by manage.py pgmq_maintain, or by any client running pgmq.pending_indexes()' statements.
--
-- SECURITY DEFINER (the owner owns the queue tables; an application role may neither
-- create an index on them nor write pgmq.queue_index_wanted): it builds only the fixed
-- definitions of pgmq._queue_index_columns on an existing queue's table, for a session
-- whose login role may send to that queue (INSERT on its table) or is a superuser.
CREATE FUNCTION pgmq._want_queue_index(queue_name text, kind text)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    stored text;
    wanted text;
    tbl regclass;
    state boolean;
    small boolean;
    alone boolean;
    bound text;
    saved text;
    reason text;
BEGIN
    IF kind IS NULL OR kind NOT IN ('priority', 'fifo') THEN
        RAISE EXCEPTION 'index kind must be priority or fifo, got %', coalesce(kind, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    stored := pgmq._require_queue(queue_name);
    wanted := pgmq._queue_index_name(stored, kind);
    tbl := pg_catalog.to_regclass(
        pg_catalog.format('pgmq.%I', pgmq.format_table_name(stored, 'q'::text)));
    IF tbl IS NULL THEN
        RAISE EXCEPTION 'queue "%" does not exist', queue_name
            USING ERRCODE = 'PQ002', HINT = 'Create it first with pgmq.create().';
    END IF;
    IF NOT (pg_catalog.has_table_privilege(SESSION_USER, tbl, 'INSERT'::text)
            OR pg_catalog.has_table_privilege(SESSION_USER, tbl, 'UPDATE'::text)) THEN
        RAISE EXCEPTION 'role "%" may not use queue "%", so it may not index it', SESSION_USER, stored
            USING ERRCODE = '42501',
                  HINT = 'The owner grants message rights with manage.py pgmq_grant.';
    END IF;
    SELECT i.indisvalid INTO state FROM pg_catalog.pg_index i WHERE i.indexrelid = pg_catalog.to_regclass(
        pg_catalog.format('pgmq.%I', wanted));
    IF state THEN
        RETURN true;
    END IF;

    -- Its partitions' heaps (pg_partition_tree has no row for a table not partitioned).
    SELECT coalesce(pg_catalog.sum(pg_catalog.pg_relation_size(t.relid)),
                    pg_catalog.pg_relation_size(tbl)) <= 1048576 INTO small
    FROM pg_catalog.pg_partition_tree(tbl) AS t;
    -- A transaction that has written nothing yet: the call is most likely its only
    -- statement (a client in autocommit); one that has (a longer transaction) would hold
    -- the build's SHARE lock, and every writer, until it ends. A table this transaction
    -- created (it holds it ACCESS EXCLUSIVE) is nobody else's yet.
    alone := (pg_catalog.pg_current_xact_id_if_assigned() IS NULL
              AND pg_catalog.current_setting('pgmq.defer_index_builds', true)
                  IS DISTINCT FROM 'on')
             OR EXISTS (SELECT 1 FROM pg_catalog.pg_locks l
                        WHERE l.locktype = 'relation' AND l.relation = tbl::oid
                          AND l.pid = pg_catalog.pg_backend_pid()
                          AND l.mode = 'AccessExclusiveLock' AND l.granted);
    IF state IS NOT NULL THEN  -- left invalid by a failed build, or being built concurrently
        reason := 'an invalid or unfinished index of that name exists (a concurrent build failed '
                  'or is running)';
    ELSIF NOT small THEN
        reason := 'the queue''s table holds more than 1 MB (a plain build would hold its writers)';
    ELSIF NOT alone THEN
        reason := 'the call is inside a transaction that has written (a plain build would hold '
                  'the queue''s writers until it ends)';
    ELSE
        bound := pgmq._maintenance_lock_timeout();
        saved := pg_catalog.current_setting('lock_timeout');
        PERFORM pg_catalog.set_config('lock_timeout', bound, true);
        BEGIN
            EXECUTE pg_catalog.format('CREATE INDEX IF NOT EXISTS %I ON %s (%s)',
                                      wanted, tbl, pgmq._queue_index_columns(kind));
            reason := NULL;
        EXCEPTION
            WHEN lock_not_available THEN
                reason := pg_catalog.format('the queue''s table lock was not granted within %s '
                                            '(a transaction using the queue is open)', bound);
            WHEN insufficient_privilege THEN
                reason := 'the owner of this function does not own the queue''s table';
        END;
        PERFORM pg_catalog.set_config('lock_timeout', saved, true);
        IF reason IS NULL THEN
            DELETE FROM pgmq.queue_index_wanted w WHERE w.index_name = wanted;
            RETURN true;
        END IF;
    END IF;
    INSERT INTO pgmq.queue_index_wanted (index_name, queue_name, kind)
    VALUES (wanted, stored, kind)
    ON CONFLICT (index_name) DO NOTHING;
    RAISE NOTICE 'index pgmq.% of queue "%" deferred: %; it is built CONCURRENTLY by django-pgmq '
                 '(the manager, its commands and workers, manage.py pgmq_maintain), or run '
                 'each statement of pgmq.pending_indexes() outside a transaction block',
                 wanted, stored, reason;
    RETURN false;
END
$fn$;

-- The indexes wanted and not built (missing, or left invalid by a failed build), each
-- with the statements that build it: drop_statement (DROP INDEX CONCURRENTLY IF EXISTS;
-- run it first when invalid is true and no other session is building it) and statement
-- (CREATE INDEX CONCURRENTLY IF NOT EXISTS). Run each outside a transaction block.
-- Rows of dropped queues, and of indexes now valid, are cleared first (SECURITY DEFINER:
-- only the owner writes pgmq.queue_index_wanted).
CREATE FUNCTION pgmq.pending_indexes()
RETURNS TABLE(queue_name text, index_name text, kind text, invalid boolean,
              drop_statement text, statement text)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
    DELETE FROM pgmq.queue_index_wanted w
    WHERE NOT EXISTS (SELECT 1 FROM pgmq.meta m WHERE m.queue_name::text = w.queue_name::text)
       OR EXISTS (SELECT 1 FROM pg_catalog.pg_index i
                  WHERE i.indexrelid = pg_catalog.to_regclass(
                            pg_catalog.format('pgmq.%I', w.index_name))
                    AND i.indisvalid);
    RETURN QUERY
    SELECT w.queue_name, w.index_name, w.kind,
           pg_catalog.to_regclass(pg_catalog.format('pgmq.%I', w.index_name)) IS NOT NULL,
           pg_catalog.format('DROP INDEX CONCURRENTLY IF EXISTS pgmq.%I', w.index_name),
           pg_catalog.format('CREATE INDEX CONCURRENTLY IF NOT EXISTS %I ON pgmq.%I (%s)',
                             w.index_name, pgmq.format_table_name(w.queue_name, 'q'::text),
                             pgmq._queue_index_columns(w.kind))
    FROM pgmq.queue_index_wanted w
    ORDER BY w.wanted_at, w.index_name;
END
$fn$;
