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

-- Make queue_name a task queue: create it when missing, and want its priority index
-- (priority descending, then msg_id), built CONCURRENTLY outside this transaction
-- (sql/22_index_builds.sql; the priority read works without it, more slowly). The
-- index leaves vt, read_ct and last_read_at unindexed, so the updates of a read stay
-- HOT. Returns true when the queue and its index (built, or wanted) were made by a
-- committed transaction (the caller may then remember the queue as ready), false when
-- this transaction made either (a rollback would take it away again).
CREATE OR REPLACE FUNCTION pgmq._enable_task_queue(queue_name text)
RETURNS boolean
LANGUAGE plpgsql
AS $fn$
DECLARE
    built boolean;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pgmq.meta m WHERE pg_catalog.lower(m.queue_name::text) = pg_catalog.lower($1)) THEN
        PERFORM pgmq."create"(queue_name);
    END IF;
    built := pgmq._want_queue_index(queue_name, 'priority'::text);
    -- age(xmin) is 0 for a row this transaction wrote.
    RETURN (SELECT pg_catalog.age(m.xmin) > 0 FROM pgmq.meta m WHERE pg_catalog.lower(m.queue_name::text) = pg_catalog.lower($1))
       AND (built OR (SELECT pg_catalog.age(w.xmin) > 0 FROM pgmq.queue_index_wanted w
                      WHERE w.index_name = pgmq._queue_index_name($1, 'priority'::text)));
END
$fn$;

-- Claim up to qty visible messages of a task queue, highest priority first, then
-- oldest first, hidden for vt seconds: pgmq.read's way for the queue's attributes
-- (sql/25_attributes.sql) with "priorities" on, through the claim filter, so a paused
-- task queue hands out nothing and a message read past max_receive_count goes to the
-- dead-letter queue, as pgmq.read does. The queue itself need not have the attribute
-- (which would refuse other senders' non-integer "priority" headers). The scan walks
-- the priority index and skips rows that are invisible or locked. Its commit is as
-- durable as the caller's setting makes it: the Tasks backend's OPTIONS
-- "synchronous_commit": False turns it off for the read's transaction only (the
-- statement read_by_priority_async_commit in sql/queries.sql), never this function.
CREATE OR REPLACE FUNCTION pgmq._read_by_priority(queue_name text, vt integer, qty integer)
RETURNS SETOF pgmq.message_record
LANGUAGE plpgsql
AS $fn$
DECLARE
    stored text := pgmq._require_queue(queue_name);
    attrs jsonb := coalesce(pgmq._queue_attributes(stored), '{}'::jsonb);
BEGIN
    IF vt IS NULL OR vt < 0 OR qty IS NULL OR qty < 1 THEN
        RAISE EXCEPTION 'vt must be 0 or more and qty 1 or more, got vt % and qty %',
            coalesce(vt::text, 'NULL'), coalesce(qty::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    RETURN QUERY SELECT * FROM pgmq._queue_ops_with_attributes(
        stored, attrs || '{"priorities": true}'::jsonb, 'r'::"char", qty, vt, NULL::timestamptz,
        NULL::bigint[], NULL::jsonb[], NULL::jsonb[], '{}'::jsonb, pgmq._low_water_mark(stored));
END
$fn$;

-- The statements of a task's life in one place each, as PL/pgSQL functions so that each
-- session plans them once (PL/pgSQL keeps the plans of its static statements; a client
-- statement sent by Django's client-side binding is parsed and planned on every call,
-- which cost an enqueue more than its writes). The results table is the Django model's
-- (django_pgmq.models.TaskResultRecord, table django_pgmq_taskresultrecord), found through
-- the caller's search_path as Django's own queries find it.

-- Enqueue a task: send its message (pgmq.send's way, through its router, so the queue's
-- attributes apply; delay NULL: none given) and insert its READY result row pointing at
-- it, in the caller's transaction. Returns the msg_id.
CREATE OR REPLACE FUNCTION pgmq._task_enqueue(
    queue_name text, msg jsonb, headers jsonb, delay timestamptz, result_id uuid,
    backend text, task_path text, priority integer, args jsonb, kwargs jsonb,
    run_after timestamptz, enqueued_at timestamptz, max_attempts integer
)
RETURNS bigint
LANGUAGE plpgsql
AS $fn$
DECLARE
    sent bigint;
BEGIN
    SELECT r.id INTO sent FROM pgmq._queue_ops_route_ids(
        queue_name, 's'::"char", delay, NULL::bigint[], ARRAY[msg], ARRAY[headers]) AS r(id);
    INSERT INTO django_pgmq_taskresultrecord AS t (
        id, backend, queue_name, task_path, priority, status, args, kwargs, run_after,
        enqueued_at, errors, worker_ids, max_attempts, msg_id)
    VALUES ($5, $6, $1, $7, $8, 'READY', $9, $10, $11, $12, '[]', '[]', $13, sent);
    RETURN sent;
END
$fn$;

-- The worker's step between two tasks, in one transaction: store a finished task's
-- verdict and delete its message from task_queue (done_id; the message stays when the result row is
-- gone, so a retry sees it), then mark the next task's result RUNNING for a new attempt
-- by worker (next_id) and return it; no row when it was not READY (running before,
-- finished or gone: the caller takes the slower path). Either part may be NULL. The
-- commit is durable unless the caller turned synchronous_commit off for its own
-- transaction (the Tasks backend's OPTIONS "synchronous_commit": False, through the
-- statement task_finish_and_start_async_commit): a verdict a client has read stays.
CREATE OR REPLACE FUNCTION pgmq._task_finish_and_start(
    task_queue text, done_id uuid, done_msg_id bigint, done_status text,
    done_finished_at timestamptz, done_return_value jsonb, done_errors jsonb,
    next_id uuid, started timestamptz, worker text
)
RETURNS TABLE (
    id uuid, backend text, queue_name text, task_path text, priority integer,
    status text, args jsonb, kwargs jsonb, run_after timestamptz, enqueued_at timestamptz,
    started_at timestamptz, finished_at timestamptz, last_attempted_at timestamptz,
    return_value jsonb, errors jsonb, worker_ids jsonb, max_attempts integer, msg_id bigint
)
LANGUAGE plpgsql
AS $fn$
#variable_conflict use_variable
BEGIN
    IF done_id IS NOT NULL THEN
        UPDATE django_pgmq_taskresultrecord AS t
        SET status = done_status, finished_at = done_finished_at,
            return_value = done_return_value, errors = done_errors
        WHERE t.id = done_id;
        IF FOUND THEN
            PERFORM pgmq.delete(task_queue, ARRAY[done_msg_id]);
        END IF;
    END IF;
    IF next_id IS NULL THEN
        RETURN;
    END IF;
    RETURN QUERY
    UPDATE django_pgmq_taskresultrecord AS t
    SET status = 'RUNNING',
        started_at = coalesce(t.started_at, started),
        last_attempted_at = started,
        worker_ids = t.worker_ids || pg_catalog.jsonb_build_array(worker)
    WHERE t.id = next_id AND t.status = 'READY'
    RETURNING t.id, t.backend::text, t.queue_name::text, t.task_path::text,
              t.priority::integer, t.status::text, t.args, t.kwargs, t.run_after,
              t.enqueued_at, t.started_at, t.finished_at, t.last_attempted_at,
              t.return_value, t.errors, t.worker_ids, t.max_attempts::integer, t.msg_id;
END
$fn$;
