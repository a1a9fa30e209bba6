-- Named statements of the Django Tasks backend (django_pgmq/manager/tasks.py);
-- the functions are in sql/75_tasks.sql.

-- name: enable_task_queue
SELECT pgmq._enable_task_queue(queue_name => %(queue)s);

-- name: read_by_priority
SELECT msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers
FROM pgmq._read_by_priority(queue_name => %(queue)s, vt => %(vt)s::integer, qty => %(qty)s::integer);
