-- Bulk actions of the Django admin: every message of a queue (or its archive)
-- matching the queue page's filters, taken in bounded batches by msg_id so that
-- each batch is its own short transaction (no long lock, whatever the count).
-- Filters as pgmq._browse_messages: read_ct at least `min_read_ct`; a header
-- `header_key` present (or equal to `header_value`); the message containing `contains`.

-- How many messages match now, and the highest matching msg_id: the confirmation
-- page shows the count, and the action then stops at that id (later messages are
-- not part of what the operator confirmed).
CREATE FUNCTION pgmq._dashboard_match_count(
    queue_name text,
    from_archive boolean DEFAULT false,
    min_read_ct integer DEFAULT NULL,
    header_key text DEFAULT NULL,
    header_value text DEFAULT NULL,
    contains jsonb DEFAULT NULL
)
RETURNS TABLE (matched bigint, last_id bigint)
LANGUAGE plpgsql
AS $fn$
BEGIN
    PERFORM pgmq._require_queue(queue_name);
    RETURN QUERY EXECUTE pg_catalog.format(
        $q$
        SELECT pg_catalog.count(*), pg_catalog.max(t.msg_id)
        FROM pgmq.%I t
        WHERE ($1::integer IS NULL OR t.read_ct >= $1)
          AND ($2::text IS NULL OR ($3::text IS NULL AND t.headers ? $2) OR t.headers ->> $2 = $3)
          AND ($4::jsonb IS NULL OR t.message @> $4)
        $q$,
        pgmq.format_table_name(queue_name, CASE WHEN from_archive THEN 'a' ELSE 'q' END)
    ) USING min_read_ct, header_key, header_value, contains;
END
$fn$;

-- The next batch of matching ids: above `after_id`, at most `up_to_id`, lowest
-- first, at most `max_rows` (1 to 10000). Walks the primary key, so a batch
-- costs the rows between two ids, never a scan of the whole table.
CREATE FUNCTION pgmq._dashboard_match_batch(
    queue_name text,
    from_archive boolean,
    min_read_ct integer,
    header_key text,
    header_value text,
    contains jsonb,
    after_id bigint,
    up_to_id bigint,
    max_rows integer DEFAULT 1000
)
RETURNS SETOF bigint
LANGUAGE plpgsql
AS $fn$
BEGIN
    PERFORM pgmq._require_queue(queue_name);
    IF max_rows IS NULL OR max_rows < 1 OR max_rows > 10000 THEN
        RAISE EXCEPTION 'max_rows must be between 1 and 10000, got %', max_rows
            USING ERRCODE = 'PQ004';
    END IF;
    RETURN QUERY EXECUTE pg_catalog.format(
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
$fn$;
