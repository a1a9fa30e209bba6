-- 0029_queue_attributes_declared_once: queue attributes declared once
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

CREATE OR REPLACE FUNCTION pgmq._queue_attribute_declaration()
 RETURNS TABLE(key text, kind text, minimum integer, side text, option text, allowed text, help text)
 LANGUAGE sql
 IMMUTABLE
AS $function$
    VALUES
        ('delivery_delay', 'seconds', 0, 'send', '--delay',
         'an integer number of seconds, 0 or more',
         'Delay every send that gives no delay of its own.'),
        ('deduplication_window', 'seconds', 0, 'send', '--dedup-window',
         'an integer number of seconds, 0 (off) or more',
         'Drop a send whose deduplication_id was sent within this duration.'),
        ('max_receive_count', 'count', 1, 'read', '--max-receives',
         'an integer, 1 or more, set together with dead_letter_queue',
         'Move a message to the dead-letter queue instead of delivering it more often than this.'),
        ('dead_letter_queue', 'queue', NULL, 'read', '--dead-letter',
         'the name of another queue, set together with max_receive_count',
         'The dead-letter queue (with max_receive_count).'),
        ('message_retention', 'seconds', 1, 'retention', '--retention',
         'an integer number of seconds, 1 or more',
         'Delete live messages enqueued longer ago (by pgmq_maintain and the workers).'),
        ('archive_retention', 'seconds', 1, 'retention', '--archive-retention',
         'an integer number of seconds, 1 or more',
         'Delete archived messages archived longer ago (by pgmq_maintain and the workers).'),
        ('max_message_size', 'bytes', 1, 'send', '--max-size',
         'an integer number of bytes, 1 or more',
         'Refuse messages whose JSON text is larger.'),
        ('priorities', 'switch', NULL, 'both', '--priorities',
         'true or false',
         'Read messages with a higher "priority" header (-100..100) first.'),
        ('paused', 'switch', NULL, 'read', NULL,
         'true or false',
         'Readers return no messages; sends go on.'),
        ('max_in_flight', 'count', 1, 'read', '--max-in-flight',
         'an integer, 1 or more',
         'Hand out at most N messages at once (read, not yet deleted, archived or visible again).'),
        ('rate_limit', 'rate', NULL, 'read', '--rate-limit',
         'an object {"count": N, "seconds": S}, N an integer 1 or more, S a number of seconds more than 0',
         'Hand out at most COUNT messages in any window of DURATION.')
$function$
;
COMMENT ON FUNCTION pgmq._queue_attribute_declaration() IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_attribute_declaration() FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_attribute_rules()
 RETURNS TABLE(key text, allowed text)
 LANGUAGE sql
 IMMUTABLE
AS $function$
    SELECT d.key, d.allowed FROM pgmq._queue_attribute_declaration() d;
$function$
;
COMMENT ON FUNCTION pgmq._queue_attribute_rules() IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_attribute_rules() FROM PUBLIC;

