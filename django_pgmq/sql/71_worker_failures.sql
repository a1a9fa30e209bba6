-- The worker's record of failed attempts, kept on the message itself so that it
-- travels with it (into the archive, or a dead-letter queue) and any client sees it.

-- Hide a failed message for its retry backoff and remember why: vt moves `seconds` from now and
-- the headers' "attempt_errors" list gains {"attempt": read_ct, "at": now, "error":
-- error}, oldest first, the newest `keep` entries kept. Headers that are not a JSON
-- object (or whose "attempt_errors" is not a list) are left as they are. Rows locked
-- by another transaction are skipped, as pgmq._set_vt_seconds does. Returns the id,
-- or NULL when the message was not updated.
CREATE FUNCTION pgmq._hide_failed(
    queue_name text, msg_id bigint, seconds double precision, error text, keep integer DEFAULT 20
)
RETURNS bigint
LANGUAGE plpgsql
AS $fn$
DECLARE
    done bigint;
BEGIN
    IF seconds IS NULL OR seconds < 0 OR seconds = 'Infinity' THEN
        RAISE EXCEPTION 'seconds must be zero or more, got: %', coalesce(seconds::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    EXECUTE pg_catalog.format(
        $q$
        WITH free AS (
            SELECT msg_id FROM pgmq.%1$I WHERE msg_id = $1 FOR UPDATE SKIP LOCKED
        )
        UPDATE pgmq.%1$I m
        SET vt = pg_catalog.clock_timestamp() + pg_catalog.make_interval(secs => $2),
            headers = CASE
                WHEN m.headers IS NOT NULL AND pg_catalog.jsonb_typeof(m.headers) <> 'object' THEN m.headers
                WHEN pg_catalog.jsonb_typeof(coalesce(m.headers -> 'attempt_errors', '[]')) <> 'array'
                    THEN m.headers
                ELSE coalesce(m.headers, '{}') || pg_catalog.jsonb_build_object('attempt_errors', (
                    SELECT coalesce(pg_catalog.jsonb_agg(e.value ORDER BY e.n), '[]')
                    FROM pg_catalog.jsonb_array_elements(
                        coalesce(m.headers -> 'attempt_errors', '[]') || pg_catalog.jsonb_build_array(
                            pg_catalog.jsonb_build_object(
                                'attempt', m.read_ct, 'at', pg_catalog.clock_timestamp(), 'error', $3
                            )
                        )
                    ) WITH ORDINALITY AS e(value, n)
                    WHERE e.n > pg_catalog.jsonb_array_length(coalesce(m.headers -> 'attempt_errors', '[]'))
                                + 1 - greatest($4, 1)
                ))
            END
        FROM free
        WHERE m.msg_id = free.msg_id
        RETURNING m.msg_id
        $q$,
        pgmq.format_table_name(pgmq._require_queue(queue_name), 'q'::text)
    ) INTO done USING msg_id, seconds, error, keep;
    RETURN done;
END
$fn$;
