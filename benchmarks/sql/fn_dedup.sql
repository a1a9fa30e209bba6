-- The sends of the "ours-dedup" target: fn.sql's, each message with its own
-- "deduplication_id" header (made by the server, so the client's work is the same).

-- name: send
SELECT * FROM pgmq.send(
    queue_name => %(queue)s, msg => %(msg)s::jsonb,
    headers => jsonb_build_object('deduplication_id', gen_random_uuid()::text));

-- name: send_batch
SELECT * FROM pgmq.send_batch(
    queue_name => %(queue)s, msgs => %(msgs)s::jsonb[],
    headers => ARRAY(SELECT jsonb_build_object('deduplication_id', gen_random_uuid()::text)
                     FROM generate_series(1, cardinality(%(msgs)s::jsonb[]))));
