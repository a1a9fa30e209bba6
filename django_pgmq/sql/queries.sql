-- Named statements the queue manager sends (django_pgmq/manager.py).
-- Each starts with "-- name: <name>"; parameters are psycopg's %(name)s.

-- name: create
SELECT pgmq.create(queue_name => %(queue)s);

-- name: create_unlogged
SELECT pgmq.create_unlogged(queue_name => %(queue)s);

-- name: drop_queue
SELECT pgmq.drop_queue(queue_name => %(queue)s);

-- name: purge_queue
SELECT pgmq.purge_queue(queue_name => %(queue)s);

-- name: list_queues
SELECT queue_name, is_partitioned, is_unlogged, created_at FROM pgmq.list_queues();

-- name: send
SELECT * FROM pgmq.send(
    queue_name => %(queue)s, msg => %(msg)s::jsonb, headers => %(headers)s::jsonb,
    delay => %(delay)s::integer);

-- name: send_at
SELECT * FROM pgmq.send(
    queue_name => %(queue)s, msg => %(msg)s::jsonb, headers => %(headers)s::jsonb,
    delay => %(delay)s::timestamptz);

-- name: send_batch
SELECT * FROM pgmq.send_batch(
    queue_name => %(queue)s, msgs => %(msgs)s::jsonb[], headers => %(headers)s::jsonb[],
    delay => %(delay)s::integer);

-- name: send_batch_at
SELECT * FROM pgmq.send_batch(
    queue_name => %(queue)s, msgs => %(msgs)s::jsonb[], headers => %(headers)s::jsonb[],
    delay => %(delay)s::timestamptz);

-- name: read
SELECT msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers
FROM pgmq.read(queue_name => %(queue)s, vt => %(vt)s, qty => %(qty)s,
               conditional => %(conditional)s::jsonb);

-- name: read_with_poll
SELECT msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers
FROM pgmq.read_with_poll(queue_name => %(queue)s, vt => %(vt)s, qty => %(qty)s,
                         max_poll_seconds => %(max_poll_seconds)s,
                         poll_interval_ms => %(poll_interval_ms)s,
                         conditional => %(conditional)s::jsonb);

-- name: pop
SELECT msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers
FROM pgmq.pop(queue_name => %(queue)s, qty => %(qty)s);

-- name: archive
SELECT * FROM pgmq.archive(queue_name => %(queue)s, msg_ids => %(ids)s::bigint[]);

-- name: delete
SELECT * FROM pgmq.delete(queue_name => %(queue)s, msg_ids => %(ids)s::bigint[]);

-- name: set_vt
SELECT msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers
FROM pgmq.set_vt(queue_name => %(queue)s, msg_ids => %(ids)s::bigint[], vt => %(vt)s::integer);

-- name: set_vt_at
SELECT msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers
FROM pgmq.set_vt(queue_name => %(queue)s, msg_ids => %(ids)s::bigint[],
                 vt => %(vt)s::timestamptz);

-- name: metrics
SELECT * FROM pgmq.metrics(queue_name => %(queue)s);

-- name: metrics_all
SELECT * FROM pgmq.metrics_all();

-- name: archive_count
-- Rows in a queue's archive. The table name is composed in with psycopg.sql.
SELECT count(*) FROM pgmq.{archive};
