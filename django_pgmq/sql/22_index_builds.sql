-- Per-queue indexes (priorities, task queues, FIFO groups) built CONCURRENTLY, outside
-- the caller's transaction, so that no send to the queue ever waits for a build.
--
-- CREATE INDEX CONCURRENTLY cannot run inside a function or a transaction block, so the
-- SQL only records which index a queue wants (pgmq.queue_index_wanted); a client runs
-- the statements pgmq.pending_indexes() gives, each on its own, in autocommit:
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

-- The name of a queue's index of a kind: <table>_priority, <table>_fifo_idx.
CREATE FUNCTION pgmq._queue_index_name(queue_name text, kind text)
RETURNS text
LANGUAGE sql IMMUTABLE
AS $fn$
    SELECT pgmq.format_table_name(queue_name, 'q'::text)
           || CASE kind WHEN 'priority' THEN '_priority' WHEN 'fifo' THEN '_fifo_idx' END;
$fn$;

-- Record that queue_name wants its index of this kind, unless it has a valid one.
-- Returns true when the index exists and is valid already.
CREATE FUNCTION pgmq._want_queue_index(queue_name text, kind text)
RETURNS boolean
LANGUAGE plpgsql
AS $fn$
DECLARE
    stored text := pgmq._require_queue(queue_name);
    wanted text := pgmq._queue_index_name(stored, kind);
BEGIN
    IF kind IS NULL OR kind NOT IN ('priority', 'fifo') THEN
        RAISE EXCEPTION 'index kind must be priority or fifo, got %', coalesce(kind, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    IF EXISTS (SELECT 1 FROM pg_catalog.pg_index i WHERE i.indexrelid = pg_catalog.to_regclass(pg_catalog.format('pgmq.%I', wanted))
               AND i.indisvalid) THEN
        RETURN true;
    END IF;
    INSERT INTO pgmq.queue_index_wanted (index_name, queue_name, kind)
    VALUES (wanted, stored, kind)
    ON CONFLICT (index_name) DO NOTHING;
    RETURN false;
END
$fn$;

-- The indexes wanted and not built (missing, or left invalid by a failed build), each
-- with the statements that build it: drop_statement (DROP INDEX CONCURRENTLY IF EXISTS;
-- run it first when invalid is true and no other session is building it) and statement
-- (CREATE INDEX CONCURRENTLY IF NOT EXISTS). Run each outside a transaction block.
-- Rows of dropped queues, and of indexes now valid, are cleared first.
CREATE FUNCTION pgmq.pending_indexes()
RETURNS TABLE(queue_name text, index_name text, kind text, invalid boolean,
              drop_statement text, statement text)
LANGUAGE plpgsql
AS $fn$
BEGIN
    DELETE FROM pgmq.queue_index_wanted w
    WHERE NOT EXISTS (SELECT 1 FROM pgmq.meta m WHERE m.queue_name::text = w.queue_name::text)
       OR EXISTS (SELECT 1 FROM pg_catalog.pg_index i
                  WHERE i.indexrelid = pg_catalog.to_regclass(pg_catalog.format('pgmq.%I', w.index_name))
                    AND i.indisvalid);
    RETURN QUERY
    SELECT w.queue_name, w.index_name, w.kind,
           pg_catalog.to_regclass(pg_catalog.format('pgmq.%I', w.index_name)) IS NOT NULL,
           pg_catalog.format('DROP INDEX CONCURRENTLY IF EXISTS pgmq.%I', w.index_name),
           pg_catalog.format('CREATE INDEX CONCURRENTLY IF NOT EXISTS %I ON pgmq.%I (%s)',
                  w.index_name, pgmq.format_table_name(w.queue_name::text, 'q'::text),
                  CASE w.kind WHEN 'priority' THEN 'pgmq._task_priority(headers) DESC, msg_id'
                              WHEN 'fifo' THEN 'pgmq._fifo_group(headers), msg_id' END)
    FROM pgmq.queue_index_wanted w
    ORDER BY w.wanted_at, w.index_name;
END
$fn$;
