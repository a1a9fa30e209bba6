-- Helpers of the worker (django_pgmq/worker/): visibility in fractions of a
-- second, and moving a failed message to a dead-letter queue in one step.
-- Not part of pgmq's API; the leading underscore says so.

-- Hide messages for `seconds` from now (fractions allowed): the worker's
-- heartbeat (vt extension), retry backoff and shutdown release. Rows locked by
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
    qtable text := pgmq.format_table_name(queue_name, 'q');
BEGIN
    IF seconds IS NULL OR seconds < 0 OR seconds = 'Infinity' THEN
        RAISE EXCEPTION 'seconds must be zero or more, got: %', coalesce(seconds::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    RETURN QUERY EXECUTE format(
        $q$
        WITH free AS (
            SELECT msg_id FROM pgmq.%1$I WHERE msg_id = ANY($1) FOR UPDATE SKIP LOCKED
        )
        UPDATE pgmq.%1$I m
        SET vt = clock_timestamp() + make_interval(secs => $2),
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
-- in one transaction. Its headers gain "dead_letter": where it came from, how
-- often it was read, and the last error. Returns its id in the dead-letter
-- queue, or NULL when the message is no longer in the source queue.
CREATE FUNCTION pgmq._dead_letter(
    queue_name text, msg_id bigint, dead_letter_queue text, error text DEFAULT NULL
)
RETURNS bigint
LANGUAGE plpgsql
AS $fn$
DECLARE
    source text := pgmq._require_queue(queue_name);
    v_read_ct integer;
    v_enqueued_at timestamptz;
    v_message jsonb;
    v_headers jsonb;
    new_id bigint;
BEGIN
    PERFORM pgmq.validate_queue_name(dead_letter_queue);
    IF lower(dead_letter_queue) = lower(source) THEN
        RAISE EXCEPTION 'queue "%" cannot be its own dead-letter queue', source
            USING ERRCODE = 'PQ004';
    END IF;
    EXECUTE format(
        'DELETE FROM pgmq.%I WHERE msg_id = $1 RETURNING read_ct, enqueued_at, message, headers',
        pgmq.format_table_name(source, 'q')
    ) INTO v_read_ct, v_enqueued_at, v_message, v_headers USING msg_id;
    IF v_enqueued_at IS NULL THEN
        RETURN NULL;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pgmq.meta m WHERE lower(m.queue_name) = lower(dead_letter_queue)) THEN
        PERFORM pgmq."create"(dead_letter_queue);
    END IF;
    -- The header a read past the queue's max_receive_count writes (sql/25_attributes.sql).
    SELECT s.id INTO new_id
    FROM pgmq.send(
        queue_name => dead_letter_queue,
        msg => v_message,
        headers => pgmq._dead_letter_headers(v_headers, source, msg_id, v_read_ct, v_enqueued_at, error),
        delay => 0
    ) AS s(id);
    RETURN new_id;
END
$fn$;
