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
    IF NOT EXISTS (SELECT 1 FROM pgmq.meta m WHERE lower(m.queue_name) = lower($1)) THEN
        PERFORM pgmq."create"(queue_name);
    END IF;
    built := pgmq._want_queue_index(queue_name, 'priority');
    -- age(xmin) is 0 for a row this transaction wrote.
    RETURN (SELECT age(m.xmin) > 0 FROM pgmq.meta m WHERE lower(m.queue_name) = lower($1))
       AND (built OR (SELECT age(w.xmin) > 0 FROM pgmq.queue_index_wanted w
                      WHERE w.index_name = pgmq._queue_index_name($1, 'priority')));
END
$fn$;

-- Claim up to qty visible messages of a task queue, highest priority first, then
-- oldest first, hidden for vt seconds: pgmq.read's way for the queue's attributes
-- (sql/25_attributes.sql) with "priorities" on, through the claim filter, so a paused
-- task queue hands out nothing and a message read past max_receive_count goes to the
-- dead-letter queue, as pgmq.read does. The queue itself need not have the attribute
-- (which would refuse other senders' non-integer "priority" headers). The scan walks
-- the priority index and skips rows that are invisible or locked.
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
        stored, attrs || '{"priorities": true}'::jsonb, 'r', qty, vt, NULL::timestamptz,
        NULL::bigint[], NULL::jsonb[], NULL::jsonb[], '{}'::jsonb, pgmq._low_water_mark(stored));
END
$fn$;
