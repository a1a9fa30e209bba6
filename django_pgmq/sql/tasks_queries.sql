-- Named statements of the Django Tasks backend (django_pgmq/internal/task_ops.py);
-- the functions are in sql/75_tasks.sql.

-- name: enable_task_queue
SELECT pgmq._enable_task_queue(queue_name => %(queue)s);

-- name: read_by_priority
SELECT msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers
FROM pgmq._read_by_priority(queue_name => %(queue)s, vt => %(vt)s::integer, qty => %(qty)s::integer);

-- name: task_start
-- The worker marks a READY result RUNNING for a new attempt, in one round trip; no
-- row back (running before, finished or gone) takes the slower path in Python.
UPDATE {results}
SET status = 'RUNNING',
    started_at = coalesce(started_at, %(now)s),
    last_attempted_at = %(now)s,
    worker_ids = worker_ids || jsonb_build_array(%(worker)s::text)
WHERE id = %(id)s AND status = 'READY'
RETURNING *;

-- name: task_finish
-- The worker writes a task's verdict and deletes its message, in one statement (one
-- transaction, one round trip). No result row: the message stays (a retry will see).
WITH done AS (
    UPDATE {results}
    SET status = %(status)s, finished_at = %(finished_at)s,
        return_value = %(return_value)s::jsonb, errors = %(errors)s::jsonb
    WHERE id = %(id)s
    RETURNING id
)
SELECT pgmq.delete(queue_name => %(queue)s, msg_id => %(msg_id)s::bigint) FROM done;

-- name: task_enqueue
-- enqueue: send the task's message and insert its result row in one statement, on
-- the caller's connection (so in the caller's transaction). Returns the msg_id.
WITH sent AS (
    SELECT * FROM pgmq.send(
        queue_name => %(queue)s, msg => %(msg)s::jsonb, headers => %(headers)s::jsonb,
        delay => %(delay)s::integer) AS s(msg_id)
)
INSERT INTO {results} (
    id, backend, queue_name, task_path, priority, status, args, kwargs, run_after,
    enqueued_at, errors, worker_ids, max_attempts, msg_id)
SELECT %(id)s, %(backend)s, %(queue)s, %(task_path)s, %(priority)s, 'READY',
       %(args)s::jsonb, %(kwargs)s::jsonb, %(run_after)s, %(enqueued_at)s, '[]', '[]',
       %(max_attempts)s, sent.msg_id
FROM sent
RETURNING msg_id;

-- name: task_enqueue_at
WITH sent AS (
    SELECT * FROM pgmq.send(
        queue_name => %(queue)s, msg => %(msg)s::jsonb, headers => %(headers)s::jsonb,
        delay => %(delay)s::timestamptz) AS s(msg_id)
)
INSERT INTO {results} (
    id, backend, queue_name, task_path, priority, status, args, kwargs, run_after,
    enqueued_at, errors, worker_ids, max_attempts, msg_id)
SELECT %(id)s, %(backend)s, %(queue)s, %(task_path)s, %(priority)s, 'READY',
       %(args)s::jsonb, %(kwargs)s::jsonb, %(run_after)s, %(enqueued_at)s, '[]', '[]',
       %(max_attempts)s, sent.msg_id
FROM sent
RETURNING msg_id;

-- name: task_finish_and_start
-- The worker stores a finished task's verdict, deletes its message and marks the next
-- task's result RUNNING: one statement, one commit, which need not wait for its WAL
-- flush (set_config: only a server crash can undo it, and then all of it, so the
-- finished task runs again, as at-least-once allows). The row comes back with every
-- column NULL when the next result was not READY (the caller takes the slower path).
WITH finished AS (
    UPDATE {results}
    SET status = %(done_status)s, finished_at = %(done_finished_at)s,
        return_value = %(done_return_value)s::jsonb, errors = %(done_errors)s::jsonb
    WHERE id = %(done_id)s
    RETURNING %(done_msg_id)s::bigint AS msg_id
), deleted AS (
    SELECT count(*) AS n, set_config('synchronous_commit', 'off', true) AS quick
    FROM pgmq.delete(queue_name => %(queue)s, msg_ids => ARRAY(SELECT msg_id FROM finished))
), started AS (
    UPDATE {results}
    SET status = 'RUNNING',
        started_at = coalesce(started_at, %(now)s),
        last_attempted_at = %(now)s,
        worker_ids = worker_ids || jsonb_build_array(%(worker)s::text)
    WHERE id = %(id)s AND status = 'READY'
    RETURNING *
)
SELECT started.* FROM deleted LEFT JOIN started ON true;
