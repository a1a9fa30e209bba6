-- 0031_worker_hide_failed_named_once: worker_hide_failed_named_once
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._hide_failed(text,bigint,double precision,text,integer);
CREATE OR REPLACE FUNCTION pgmq._retry_later(queue_name text, msg_id bigint, seconds double precision, error text, keep integer DEFAULT 20)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    done bigint;
BEGIN
    IF seconds IS NULL OR seconds < 0 OR seconds = 'Infinity' THEN
        RAISE EXCEPTION 'seconds must be zero or more, got: %', coalesce(seconds::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    EXECUTE format(
        $q$
        WITH free AS (
            SELECT msg_id FROM pgmq.%1$I WHERE msg_id = $1 FOR UPDATE SKIP LOCKED
        )
        UPDATE pgmq.%1$I m
        SET vt = clock_timestamp() + make_interval(secs => $2),
            headers = CASE
                WHEN m.headers IS NOT NULL AND jsonb_typeof(m.headers) <> 'object' THEN m.headers
                WHEN jsonb_typeof(coalesce(m.headers -> 'attempt_errors', '[]')) <> 'array'
                    THEN m.headers
                ELSE coalesce(m.headers, '{}') || jsonb_build_object('attempt_errors', (
                    SELECT coalesce(jsonb_agg(e.value ORDER BY e.n), '[]')
                    FROM jsonb_array_elements(
                        coalesce(m.headers -> 'attempt_errors', '[]') || jsonb_build_array(
                            jsonb_build_object(
                                'attempt', m.read_ct, 'at', clock_timestamp(), 'error', $3
                            )
                        )
                    ) WITH ORDINALITY AS e(value, n)
                    WHERE e.n > jsonb_array_length(coalesce(m.headers -> 'attempt_errors', '[]'))
                                + 1 - greatest($4, 1)
                ))
            END
        FROM free
        WHERE m.msg_id = free.msg_id
        RETURNING m.msg_id
        $q$,
        pgmq.format_table_name(pgmq._require_queue(queue_name), 'q')
    ) INTO done USING msg_id, seconds, error, keep;
    RETURN done;
END
$function$
;
COMMENT ON FUNCTION pgmq._retry_later(text,bigint,double precision,text,integer) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._retry_later(text,bigint,double precision,text,integer) FROM PUBLIC;

