-- Client statements of the pgmq SQL API, the same text for django-pgmq's and
-- pgmq's own functions (they share names, arguments and results).
-- Each starts with "-- name: <name>"; parameters are psycopg's %(name)s.

-- name: send
SELECT * FROM pgmq.send(queue_name => %(queue)s, msg => %(msg)s::jsonb);

-- name: send_batch
SELECT * FROM pgmq.send_batch(queue_name => %(queue)s, msgs => %(msgs)s::jsonb[]);

-- name: read
SELECT * FROM pgmq.read(queue_name => %(queue)s, vt => %(vt)s::integer, qty => %(qty)s::integer);

-- name: archive_one
SELECT pgmq.archive(queue_name => %(queue)s, msg_id => %(id)s::bigint);

-- name: archive
SELECT * FROM pgmq.archive(queue_name => %(queue)s, msg_ids => %(ids)s::bigint[]);

-- name: delete_one
SELECT pgmq.delete(queue_name => %(queue)s, msg_id => %(id)s::bigint);

-- name: delete
SELECT * FROM pgmq.delete(queue_name => %(queue)s, msg_ids => %(ids)s::bigint[]);

-- name: drop
SELECT pgmq.drop_queue(queue_name => q.queue_name)
FROM pgmq.list_queues() AS q WHERE q.queue_name = %(queue)s;

-- name: create
SELECT pgmq.create(queue_name => %(queue)s);

-- name: enable_notify
SELECT pgmq.enable_notify_insert(queue_name => %(queue)s, throttle_interval_ms => 0);

-- name: set_attributes
SELECT pgmq.set_queue_attributes(queue_name => %(queue)s, attributes => %(attributes)s::jsonb);
