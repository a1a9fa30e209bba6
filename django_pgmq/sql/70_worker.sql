-- Helpers of the worker (django_pgmq/worker/): visibility in fractions of a
-- second, and moving a failed message to a dead-letter queue in one step.
-- Not part of pgmq's API; the leading underscore says so.

-- Hide messages for `seconds` from now (fractions allowed): the worker's
-- heartbeat (vt extension) and shutdown release (a failed message's retry
-- backoff is pgmq._hide_failed, sql/71_worker_failures.sql). Rows locked by
-- another transaction are being acknowledged or dead-lettered: they are
-- skipped, never waited for. With `unread`, read_ct is taken back by one, for
-- messages handed back without their handler having run.
CREATE FUNCTION pgmq._set_vt_seconds(
    queue_name text, msg_ids bigint[], seconds double precision, unread boolean DEFAULT false
)
RETURNS SETOF bigint
LANGUAGE plpgsql
AS $fn$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q'::text);
BEGIN
    IF seconds IS NULL OR seconds < 0 OR seconds = 'Infinity' THEN
        RAISE EXCEPTION 'seconds must be zero or more, got: %', coalesce(seconds::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    RETURN QUERY EXECUTE pg_catalog.format(
        $q$
        WITH free AS (
            SELECT msg_id FROM pgmq.%1$I WHERE msg_id = ANY($1) FOR UPDATE SKIP LOCKED
        )
        UPDATE pgmq.%1$I m
        SET vt = pg_catalog.clock_timestamp() + pg_catalog.make_interval(secs => $2),
            read_ct = CASE WHEN $3 THEN greatest(m.read_ct - 1, 0) ELSE m.read_ct END
        FROM free
        WHERE m.msg_id = free.msg_id
        RETURNING m.msg_id
        $q$,
        qtable
    ) USING msg_ids, seconds, coalesce(unread, false);
END
$fn$;

-- Move one message from its queue to a dead-letter queue (created on demand),
-- in one transaction, by the statement the read-time redrive uses
-- (pgmq._dead_letter_move_sql): the same row and the same "dead_letter" header
-- (where it came from, how often it was read, and the last error), the dead-letter
-- queue's send-side attributes not applied. Returns its id in the dead-letter
-- queue, or NULL when the message is no longer in the source queue.
CREATE FUNCTION pgmq._dead_letter(
    queue_name text, msg_id bigint, dead_letter_queue text, error text DEFAULT NULL
)
RETURNS bigint
LANGUAGE plpgsql
AS $fn$
DECLARE
    source text := pgmq._require_queue(queue_name);
    qtable text := pgmq.format_table_name(source, 'q'::text);
    there bigint;
    new_id bigint;
BEGIN
    PERFORM pgmq.validate_queue_name(dead_letter_queue);
    IF pg_catalog.lower(dead_letter_queue) = pg_catalog.lower(source) THEN
        RAISE EXCEPTION 'queue "%" cannot be its own dead-letter queue', source
            USING ERRCODE = 'PQ004';
    END IF;
    -- Locked first, so that a message already gone creates no dead-letter queue.
    EXECUTE pg_catalog.format('SELECT msg_id FROM pgmq.%I WHERE msg_id = $1 FOR UPDATE', qtable)
        INTO there USING msg_id;
    IF there IS NULL THEN
        RETURN NULL;
    END IF;
    PERFORM pgmq._ensure_dead_letter_queue(dead_letter_queue);
    EXECUTE pg_catalog.format(
        $q$
        WITH dead AS (
            DELETE FROM pgmq.%1$I m WHERE m.msg_id = $1
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.message, m.headers,
                      $2::text AS error
        ), %2$s
        SELECT msg_id FROM moved
        $q$,
        qtable, pgmq._dead_letter_move_sql(source, dead_letter_queue)
    ) INTO new_id USING msg_id, error;
    IF pgmq._queue_attributes(source) ? 'max_in_flight' THEN
        -- Its max_in_flight slot is free now (the next claim finds it, sql/26_limits.sql):
        -- wake a worker waiting at the limit.
        PERFORM pgmq._limit_wake(pg_catalog.lower(source));
    END IF;
    RETURN new_id;
END
$fn$;
