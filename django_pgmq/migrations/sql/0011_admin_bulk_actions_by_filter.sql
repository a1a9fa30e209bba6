-- 0011_admin_bulk_actions_by_filter: admin bulk actions by filter and the worker's record of failed attempts
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
CREATE OR REPLACE FUNCTION pgmq._dashboard_match_batch(queue_name text, from_archive boolean, min_read_ct integer, header_key text, header_value text, contains jsonb, after_id bigint, up_to_id bigint, max_rows integer DEFAULT 1000)
 RETURNS SETOF bigint
 LANGUAGE plpgsql
AS $function$
BEGIN
    PERFORM pgmq._require_queue(queue_name);
    IF max_rows IS NULL OR max_rows < 1 OR max_rows > 10000 THEN
        RAISE EXCEPTION 'max_rows must be between 1 and 10000, got %', max_rows
            USING ERRCODE = 'PQ004';
    END IF;
    RETURN QUERY EXECUTE format(
        $q$
        SELECT t.msg_id
        FROM pgmq.%I t
        WHERE t.msg_id > $5 AND t.msg_id <= $6
          AND ($1::integer IS NULL OR t.read_ct >= $1)
          AND ($2::text IS NULL OR ($3::text IS NULL AND t.headers ? $2) OR t.headers ->> $2 = $3)
          AND ($4::jsonb IS NULL OR t.message @> $4)
        ORDER BY t.msg_id
        LIMIT $7
        $q$,
        pgmq.format_table_name(queue_name, CASE WHEN from_archive THEN 'a' ELSE 'q' END)
    ) USING min_read_ct, header_key, header_value, contains,
            coalesce(after_id, 0), coalesce(up_to_id, 0), max_rows;
END
$function$
;
COMMENT ON FUNCTION pgmq._dashboard_match_batch(text,boolean,integer,text,text,jsonb,bigint,bigint,integer) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._dashboard_match_count(queue_name text, from_archive boolean DEFAULT false, min_read_ct integer DEFAULT NULL::integer, header_key text DEFAULT NULL::text, header_value text DEFAULT NULL::text, contains jsonb DEFAULT NULL::jsonb)
 RETURNS TABLE(matched bigint, last_id bigint)
 LANGUAGE plpgsql
AS $function$
BEGIN
    PERFORM pgmq._require_queue(queue_name);
    RETURN QUERY EXECUTE format(
        $q$
        SELECT count(*), max(t.msg_id)
        FROM pgmq.%I t
        WHERE ($1::integer IS NULL OR t.read_ct >= $1)
          AND ($2::text IS NULL OR ($3::text IS NULL AND t.headers ? $2) OR t.headers ->> $2 = $3)
          AND ($4::jsonb IS NULL OR t.message @> $4)
        $q$,
        pgmq.format_table_name(queue_name, CASE WHEN from_archive THEN 'a' ELSE 'q' END)
    ) USING min_read_ct, header_key, header_value, contains;
END
$function$
;
COMMENT ON FUNCTION pgmq._dashboard_match_count(text,boolean,integer,text,text,jsonb) IS NULL;

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

