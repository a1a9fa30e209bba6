-- Statements of the many-queues benchmark (benchmarks/many_queues.py); the same
-- pgmq SQL API calls on both databases.

-- name: create_queue
SELECT pgmq.create(%(name)s)

-- name: drop_queue
SELECT pgmq.drop_queue(%(name)s)

-- name: send
SELECT * FROM pgmq.send(%(name)s, '{"hello": "world"}'::jsonb)

-- name: read
SELECT msg_id FROM pgmq.read(%(name)s, 30, 1)

-- name: list_queues
SELECT count(*) FROM pgmq.list_queues()

-- name: metrics_all
SELECT count(*) FROM pgmq.metrics_all()

-- name: queue_count
SELECT count(*) FROM pgmq.meta

-- name: backend_memory
SELECT sum(total_bytes)::bigint FROM pg_backend_memory_contexts

-- name: send_everywhere
-- One message into every queue: no queue is idle any more.
SELECT count(*) FROM pgmq.meta m, pgmq.send(m.queue_name::text, '{"hello": "world"}'::jsonb)
