-- 0008_attributes_limits_schedules_tasks_workflows_and_roles: attributes limits schedules tasks workflows and roles
-- Frozen when written; never edit a released migration.
-- 0008_task_results
-- Django Tasks on pgmq queues (django_pgmq/tasks/): a task queue is a plain pgmq
-- queue whose messages carry their priority in the header "priority" (-100..100,
-- higher first). Task queues get an index on that priority, and the worker reads
-- them highest priority first, oldest first within a priority, so a priority 50
-- task enqueued behind thousands of priority 0 tasks is the next one to run.
-- Not part of pgmq's API; the leading underscore says so.

-- The priority of a message: its header "priority" when that is a whole number
-- in -100..100, else 0. Never fails (a send with any headers must still work),
-- and IMMUTABLE, so an index can hold it.
CREATE OR REPLACE FUNCTION pgmq._task_priority(headers jsonb)
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $fn$
    SELECT CASE
        WHEN jsonb_typeof(headers -> 'priority') = 'number'
             AND (headers ->> 'priority') ~ '^-?[0-9]{1,3}$'
             AND abs((headers ->> 'priority')::integer) <= 100
        THEN (headers ->> 'priority')::integer
        ELSE 0
    END
$fn$;

-- Make queue_name a task queue: create it when missing, then give its live table
-- the priority index (priority descending, then msg_id). The index leaves vt,
-- read_ct and last_read_at unindexed, so the updates of a read stay HOT. Returns
-- true when the index was there already, made by a committed transaction (the
-- caller may then remember the queue as ready), false when this transaction made
-- it (a rollback would take it away again). An existing index is never touched:
-- CREATE INDEX, even IF NOT EXISTS, fails on a table with pending trigger events
-- (a send earlier in this transaction fired the deferred notify trigger).
CREATE OR REPLACE FUNCTION pgmq._enable_task_queue(queue_name text)
RETURNS boolean
LANGUAGE plpgsql
AS $fn$
DECLARE
    stored text;
    qtable text;
    made_by_xid xid;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pgmq.meta m WHERE lower(m.queue_name) = lower($1)) THEN
        PERFORM pgmq."create"(queue_name);
    END IF;
    stored := pgmq._require_queue(queue_name);
    qtable := pgmq.format_table_name(stored, 'q');
    SELECT c.xmin INTO made_by_xid
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'pgmq' AND c.relname = qtable || '_priority';
    IF made_by_xid IS NOT NULL THEN
        RETURN age(made_by_xid) > 0;  -- 0: made by this transaction
    END IF;
    EXECUTE format(
        'CREATE INDEX %I ON pgmq.%I (pgmq._task_priority(headers) DESC, msg_id)',
        qtable || '_priority',
        qtable
    );
    RETURN false;
END
$fn$;

-- Claim up to qty visible messages of a task queue, highest priority first, then
-- oldest first, hidden for vt seconds (like pgmq.read, ordered by priority). The
-- scan walks the priority index and skips rows that are invisible or locked.
CREATE OR REPLACE FUNCTION pgmq._read_by_priority(queue_name text, vt integer, qty integer)
RETURNS SETOF pgmq.message_record
LANGUAGE plpgsql
AS $fn$
DECLARE
    qtable text := pgmq.format_table_name(pgmq._require_queue(queue_name), 'q');
BEGIN
    IF vt IS NULL OR vt < 0 OR qty IS NULL OR qty < 1 THEN
        RAISE EXCEPTION 'vt must be 0 or more and qty 1 or more, got vt % and qty %',
            coalesce(vt::text, 'NULL'), coalesce(qty::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    RETURN QUERY EXECUTE format(
        $q$
        WITH claimed AS (
            SELECT msg_id FROM pgmq.%1$I
            WHERE vt <= clock_timestamp()
            ORDER BY pgmq._task_priority(headers) DESC, msg_id
            LIMIT $1
            FOR UPDATE SKIP LOCKED
        ), updated AS (
            UPDATE pgmq.%1$I m
            SET vt = clock_timestamp() + make_interval(secs => $2),
                read_ct = m.read_ct + 1,
                last_read_at = clock_timestamp()
            FROM claimed
            WHERE m.msg_id = claimed.msg_id
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message,
                      m.headers
        )
        SELECT msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers
        FROM updated
        ORDER BY pgmq._task_priority(headers) DESC, msg_id
        $q$,
        qtable
    ) USING qty, vt;
END
$fn$;
