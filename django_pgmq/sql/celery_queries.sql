-- Named statements of the Celery transport (django_pgmq/contrib/celery).
-- The pgmq API statements it shares with the queue manager are in queries.sql;
-- the functions called here are installed by 80_celery.sql.

-- name: celery_open_session
SELECT pgmq.celery_open_session();

-- name: celery_declare_queue
SELECT pgmq.celery_declare_queue(
    queue => %(queue)s, original_name => %(celery_name)s, durable => %(durable)s,
    is_auto_delete => %(auto_delete)s, expires_ms => %(expires_ms)s::bigint,
    ttl_ms => %(ttl_ms)s::bigint);

-- name: celery_enable_priorities
SELECT pgmq.set_queue_attributes(queue_name => %(queue)s, attributes => '{"priorities": true}')
WHERE pgmq.get_queue_attributes(queue_name => %(queue)s) -> 'priorities'
      IS DISTINCT FROM 'true'::jsonb;

-- name: celery_queue_exists
SELECT EXISTS (SELECT 1 FROM pgmq.meta m WHERE m.queue_name = %(queue)s);

-- name: celery_queue_length
SELECT queue_visible_length FROM pgmq.metrics(queue_name => %(queue)s);

-- name: celery_consumer_count
SELECT count(*) FROM pgmq.celery_consumer k
WHERE k.queue_name = %(queue)s AND pgmq._celery_session_alive(k.session_id);

-- name: celery_send
SELECT pgmq.celery_send(
    queue => %(queue)s, msg => %(msg)s::jsonb, headers => %(headers)s::jsonb,
    deliver_at => %(deliver_at)s::timestamptz, notify => %(notify)s);

-- name: celery_publish
SELECT pgmq.celery_publish(
    exchange => %(exchange)s, routing_key => %(routing_key)s, msg => %(msg)s::jsonb,
    headers => %(headers)s::jsonb, deliver_at => %(deliver_at)s::timestamptz,
    notify => %(notify)s);

-- name: celery_bind
SELECT pgmq.celery_bind(
    exchange => %(exchange)s, exchange_type => %(exchange_type)s,
    routing_key => %(routing_key)s, queue => %(queue)s);

-- name: celery_unbind
SELECT pgmq.celery_unbind(
    exchange => %(exchange)s, routing_key => %(routing_key)s, queue => %(queue)s);

-- name: celery_delete_exchange
SELECT pgmq.celery_delete_exchange(exchange => %(exchange)s);

-- name: celery_read
SELECT msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers
FROM pgmq.celery_read(queue => %(queue)s, vt => %(vt)s, qty => %(qty)s);

-- name: celery_pop
SELECT msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers
FROM pgmq.celery_pop(queue => %(queue)s, qty => %(qty)s);

-- name: celery_ack
SELECT pgmq.celery_ack(
    queue => %(queue)s, msg_ids => %(ids)s::bigint[], archive => %(archive)s);

-- name: celery_release
SELECT pgmq.celery_release(
    queue => %(queue)s, msg_ids => %(ids)s::bigint[], notify => %(notify)s);

-- name: celery_extend
SELECT pgmq.celery_extend(
    queue => %(queue)s, msg_ids => %(ids)s::bigint[], vt => %(vt)s);

-- name: celery_next_visible
SELECT extract(epoch FROM pgmq.celery_next_visible(queues => %(queues)s::text[]) - clock_timestamp());

-- name: celery_consume
SELECT pgmq.celery_consume(queue => %(queue)s, session => %(session)s);

-- name: celery_cancel
SELECT pgmq.celery_cancel(queue => %(queue)s, session => %(session)s);

-- name: celery_cleanup
SELECT pgmq.celery_cleanup();
