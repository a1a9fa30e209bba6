-- Named statements of the Django Tasks backend (django_pgmq/internal/task_ops.py);
-- the functions are in sql/75_tasks.sql.

-- name: enable_task_queue
SELECT pgmq._enable_task_queue(queue_name => %(queue)s);

-- name: read_by_priority
SELECT msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers
FROM pgmq._read_by_priority(queue_name => %(queue)s, vt => %(vt)s::integer, qty => %(qty)s::integer);

-- name: task_enqueue
-- enqueue: the task's message and its result row in one call, on the caller's connection
-- (so in the caller's transaction). Returns the msg_id.
SELECT pgmq._task_enqueue(
    %(queue)s, %(msg)s::jsonb, %(headers)s::jsonb, %(delay)s::timestamptz, %(id)s::uuid,
    %(backend)s, %(task_path)s, %(priority)s::integer, %(args)s::jsonb, %(kwargs)s::jsonb,
    %(run_after)s::timestamptz, %(enqueued_at)s::timestamptz, %(max_attempts)s::integer);

-- name: task_finish_and_start
-- The worker: a finished task's verdict and its message's delete, and/or the next task's
-- result RUNNING (its row back; none when it was not READY). Either half may be NULL.
SELECT * FROM pgmq._task_finish_and_start(
    %(queue)s, %(done_id)s::uuid, %(done_msg_id)s::bigint, %(done_status)s::text,
    %(done_finished_at)s::timestamptz, %(done_return_value)s::jsonb, %(done_errors)s::jsonb,
    %(id)s::uuid, %(now)s::timestamptz, %(worker)s::text);
