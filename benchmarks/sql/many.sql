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
-- One message into each of up to %(limit)s queues from %(after)s on (by name), in one
-- transaction; the caller goes on until every queue holds one (no queue idle). A
-- transaction keeps a lock per table it sends to, so one over 10,000 queues would
-- overflow PostgreSQL's default lock table (max_locks_per_transaction).
SELECT max(m.queue_name::text), count(s.*)
FROM (SELECT queue_name FROM pgmq.meta WHERE queue_name::text > %(after)s
      ORDER BY queue_name LIMIT %(limit)s) m,
     pgmq.send(m.queue_name::text, '{"hello": "world"}'::jsonb) s
