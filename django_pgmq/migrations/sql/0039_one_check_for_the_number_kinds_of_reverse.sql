-- 0039_one_check_for_the_number_kinds_of: one check for the number kinds of attributes
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
CREATE OR REPLACE FUNCTION pgmq._check_queue_attributes(queue_name text, attrs jsonb)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    k text;
    v jsonb;
    ok boolean;
    kind text;
    minimum integer;
BEGIN
    FOR k, v IN SELECT e.key, e.value FROM jsonb_each(attrs) e ORDER BY e.key LOOP
        SELECT d.kind, d.minimum INTO kind, minimum
        FROM pgmq._queue_attribute_declaration() d WHERE d.key = k;
        ok := CASE kind
            WHEN 'seconds' THEN pgmq._json_int_at_least(v, minimum)
            WHEN 'bytes' THEN pgmq._json_int_at_least(v, minimum)
            WHEN 'count' THEN pgmq._json_int_at_least(v, minimum)
            WHEN 'switch' THEN jsonb_typeof(v) = 'boolean'
            WHEN 'queue' THEN jsonb_typeof(v) = 'string'
            -- CASE, not AND: each test may only run once the one before it held.
            WHEN 'rate' THEN CASE
                WHEN jsonb_typeof(v) <> 'object' THEN false
                WHEN (SELECT array_agg(x ORDER BY x) FROM jsonb_object_keys(v) x)
                     <> '{count,seconds}' THEN false
                WHEN jsonb_typeof(v -> 'seconds') <> 'number' THEN false
                ELSE pgmq._json_int_at_least(v -> 'count', 1)
                     AND (v ->> 'seconds')::numeric > 0 AND (v ->> 'seconds')::numeric <= 31536000
                END
            ELSE false  -- unknown key (no row): the error says so
        END;
        IF NOT ok THEN
            PERFORM pgmq._bad_queue_attribute(queue_name, k, v);
        END IF;
    END LOOP;
    IF attrs ? 'dead_letter_queue' THEN
        BEGIN
            PERFORM pgmq.validate_queue_name(attrs ->> 'dead_letter_queue');
        EXCEPTION WHEN SQLSTATE 'PQ001' THEN
            PERFORM pgmq._bad_queue_attribute(queue_name, 'dead_letter_queue', attrs -> 'dead_letter_queue');
        END;
        IF lower(attrs ->> 'dead_letter_queue') = lower(queue_name) THEN
            RAISE EXCEPTION 'queue "%": queue attribute "dead_letter_queue" must be another queue, '
                'not the queue itself', queue_name
                USING ERRCODE = 'PQ004';
        END IF;
    END IF;
    IF (attrs ? 'max_receive_count') <> (attrs ? 'dead_letter_queue') THEN
        RAISE EXCEPTION 'queue "%": queue attributes "max_receive_count" and "dead_letter_queue" '
            'go together: set both, or remove both', queue_name
            USING ERRCODE = 'PQ004';
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._check_queue_attributes(text,jsonb) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._check_queue_attributes(text,jsonb) FROM PUBLIC;

