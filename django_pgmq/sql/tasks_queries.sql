-- Named statements of the Django Tasks backend (django_pgmq/manager/tasks.py);
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
