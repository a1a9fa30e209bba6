-- 0029_queue_attributes_declared_once: queue attributes declared once
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._queue_attribute_declaration();
CREATE OR REPLACE FUNCTION pgmq._check_queue_attributes(queue_name text, attrs jsonb)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    k text;
    v jsonb;
    ok boolean;
BEGIN
    FOR k, v IN SELECT e.key, e.value FROM jsonb_each(attrs) e ORDER BY e.key LOOP
        ok := CASE k
            WHEN 'delivery_delay' THEN pgmq._json_int_at_least(v, 0)
            WHEN 'deduplication_window' THEN pgmq._json_int_at_least(v, 0)
            WHEN 'max_receive_count' THEN pgmq._json_int_at_least(v, 1)
            WHEN 'message_retention' THEN pgmq._json_int_at_least(v, 1)
            WHEN 'archive_retention' THEN pgmq._json_int_at_least(v, 1)
            WHEN 'max_message_size' THEN pgmq._json_int_at_least(v, 1)
            WHEN 'priorities' THEN jsonb_typeof(v) = 'boolean'
            WHEN 'paused' THEN jsonb_typeof(v) = 'boolean'
            WHEN 'dead_letter_queue' THEN jsonb_typeof(v) = 'string'
            WHEN 'max_in_flight' THEN pgmq._json_int_at_least(v, 1)
            -- CASE, not AND: each test may only run once the one before it held.
            WHEN 'rate_limit' THEN CASE
                WHEN jsonb_typeof(v) <> 'object' THEN false
                WHEN (SELECT array_agg(x ORDER BY x) FROM jsonb_object_keys(v) x)
                     <> '{count,seconds}' THEN false
                WHEN jsonb_typeof(v -> 'seconds') <> 'number' THEN false
                ELSE pgmq._json_int_at_least(v -> 'count', 1)
                     AND (v ->> 'seconds')::numeric > 0 AND (v ->> 'seconds')::numeric <= 31536000
                END
            ELSE false
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

CREATE OR REPLACE FUNCTION pgmq._queue_attribute_rules()
 RETURNS TABLE(key text, allowed text)
 LANGUAGE sql
 IMMUTABLE
AS $function$
    VALUES
        ('delivery_delay', 'an integer number of seconds, 0 or more'),
        ('deduplication_window', 'an integer number of seconds, 0 (off) or more'),
        ('max_receive_count', 'an integer, 1 or more, set together with dead_letter_queue'),
        ('dead_letter_queue', 'the name of another queue, set together with max_receive_count'),
        ('message_retention', 'an integer number of seconds, 1 or more'),
        ('archive_retention', 'an integer number of seconds, 1 or more'),
        ('max_message_size', 'an integer number of bytes, 1 or more'),
        ('priorities', 'true or false'),
        ('paused', 'true or false'),
        ('max_in_flight', 'an integer, 1 or more'),
        ('rate_limit', 'an object {"count": N, "seconds": S}, N an integer 1 or more, S a number of seconds more than 0')
$function$
;
COMMENT ON FUNCTION pgmq._queue_attribute_rules() IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_attribute_rules() FROM PUBLIC;

