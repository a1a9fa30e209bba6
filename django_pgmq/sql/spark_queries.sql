-- Named statements of the Spark data source and pipeline (django_pgmq/contrib/spark).
-- Each starts with "-- name: <name>". Parameters are psycopg's %(name)s; {braces} are
-- filled by psycopg.sql (identifiers, literals, composed lists), never by string gluing.
-- COPY cannot take parameters, so its values come in as psycopg.sql.Literal.

-- name: spark_checked_send
-- A writing task's time, and whether its rows must go through pgmq.send_batch's checks.
SELECT now() AS now, pgmq._spark_checked_send(%(queue)s) AS checked;

-- name: temp_stage
-- A task's rows bound for a queue with send-side attributes (see send_staged).
CREATE TEMP TABLE pgmq_spark_rows (
    part integer NOT NULL, attempt bigint NOT NULL, seq bigint GENERATED ALWAYS AS IDENTITY,
    vt timestamptz, message jsonb, headers jsonb
) ON COMMIT DROP;

-- name: spark_send_staged
SELECT pgmq._spark_send_staged(%(queue)s, %(stage)s::regclass, NULL);

-- name: utc_session
SET LOCAL TIME ZONE 'UTC';

-- name: msg_id_bounds
SELECT min(msg_id) AS lo, max(msg_id) AS hi FROM {table} WHERE {where};

-- name: max_msg_id
SELECT coalesce(max(msg_id), 0) FROM {table};

-- name: copy_out
COPY (SELECT {columns} FROM {table} WHERE {where} ORDER BY msg_id) TO STDOUT (FORMAT csv);

-- name: copy_out_claimed
COPY (
    SELECT {columns} FROM {table} q
    JOIN pgmq.spark_stream_batch b
      ON b.queue_name = {queue} AND b.consumer = {consumer}
     AND b.batch > {after} AND b.batch <= {upto}
     AND q.msg_id = ANY (b.msg_ids) AND q.last_read_at = b.claimed_at
    WHERE q.msg_id = ANY ({ids})
    ORDER BY q.msg_id
) TO STDOUT (FORMAT csv);

-- name: epoch_us
(extract(epoch FROM {column}) * 1000000)::bigint

-- name: copy_in
COPY {table} ({columns}) FROM STDIN (FORMAT csv);

-- name: stream_initial
SELECT coalesce(max(batch), 0) FROM pgmq.spark_stream_batch
WHERE queue_name = %(queue)s AND consumer = %(consumer)s AND acked_at IS NOT NULL;

-- name: stream_pending
SELECT max(batch) FROM pgmq.spark_stream_batch
WHERE queue_name = %(queue)s AND consumer = %(consumer)s AND batch > %(after)s
  AND acked_at IS NULL;

-- name: stream_batches
SELECT batch, msg_ids FROM pgmq.spark_stream_batch
WHERE queue_name = %(queue)s AND consumer = %(consumer)s
  AND batch > %(after)s AND batch <= %(upto)s
ORDER BY batch;

-- name: spark_claim
SELECT pgmq.spark_claim(%(queue)s, %(consumer)s, %(vt)s, %(qty)s, %(max_msg_id)s, %(min_batch)s);

-- name: spark_hold
SELECT pgmq.spark_hold(%(queue)s, %(consumer)s, %(after)s, %(upto)s, %(vt)s);

-- name: spark_ack
SELECT pgmq.spark_ack(%(queue)s, %(consumer)s, %(upto)s, %(mode)s);

-- name: consumer_try_lock
SELECT pg_try_advisory_lock(hashtext('pgmq.spark.run.' || lower(%(queue)s) || '.' || %(consumer)s));

-- name: spark_stage_create
SELECT pgmq.spark_stage_create(%(queue)s, %(writer_id)s);

-- name: spark_stage_commit
SELECT pgmq.spark_stage_commit(%(stage)s, %(attempts)s::bigint[], %(batch_id)s);

-- name: spark_stage_abort
SELECT pgmq.spark_stage_abort(%(stage)s);

-- name: spark_stage_drop_stale
SELECT pgmq.spark_stage_drop_stale(make_interval(hours => %(hours)s));

-- name: export_open_run
SELECT run_id, cutoff, max_msg_id, exported, stage FROM pgmq.spark_export_run
WHERE queue_name = %(queue)s AND path = %(path)s AND stage <> 'done'
ORDER BY created_at LIMIT 1;

-- name: spark_export_run
INSERT INTO pgmq.spark_export_run (run_id, queue_name, path, cutoff, max_msg_id)
SELECT gen_random_uuid(), %(queue)s, %(path)s, now() - make_interval(secs => %(older_than)s),
       coalesce(max(msg_id), 0)
FROM {table}
RETURNING run_id, cutoff, max_msg_id, exported, stage;

-- name: export_set_stage
UPDATE pgmq.spark_export_run
SET stage = %(stage)s, exported = coalesce(%(exported)s, exported),
    removed = coalesce(%(removed)s, removed),
    finished_at = CASE WHEN %(stage)s = 'done' THEN now() END
WHERE run_id = %(run_id)s;

-- name: export_remove
DELETE FROM {table} WHERE archived_at < %(cutoff)s AND msg_id <= %(max_msg_id)s;

-- name: stats_since
SELECT max(minute) FROM pgmq.spark_stats WHERE queue_name = %(queue)s;

-- name: stats_upsert
INSERT INTO pgmq.spark_stats AS s
    (queue_name, minute, archived, wait_p50, wait_p95, wait_p99, retries, computed_at)
VALUES (%(queue)s, %(minute)s, %(archived)s, %(p50)s, %(p95)s, %(p99)s, %(retries)s, now())
ON CONFLICT (queue_name, minute) DO UPDATE
SET archived = excluded.archived, wait_p50 = excluded.wait_p50, wait_p95 = excluded.wait_p95,
    wait_p99 = excluded.wait_p99, retries = excluded.retries, computed_at = excluded.computed_at;
