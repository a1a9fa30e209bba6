-- Long-range charts for the Django admin from pgmq.spark_stats (written by
-- manage.py pgmq_spark_stats): the archive may be exported or too big to scan for a
-- week, while the stats table holds one small row per queue and minute.

-- Spark stats of one queue over the last `window_size`, summed per `bucket_size`
-- (buckets binned from 2000-01-01 UTC, like pgmq._dashboard_throughput). Minute
-- percentiles cannot be merged exactly: p50 is the archived-weighted mean of the
-- minutes' medians, p95 and p99 the worst minute's figure. `last_minute` (the same on
-- every row) is the newest minute stored for the queue, so the page can say how fresh
-- the figures are. No rows when the table is missing (its migration reversed, or the
-- schema restored without it) or holds nothing for the queue in the window.
CREATE FUNCTION pgmq._dashboard_spark_stats(
    queue_name text, window_size interval, bucket_size interval
)
RETURNS TABLE (
    bucket_start timestamptz, archived bigint,
    p50_sec double precision, p95_sec double precision, p99_sec double precision,
    retries bigint, last_minute timestamptz
)
LANGUAGE plpgsql
AS $fn$
DECLARE
    stored text;
    stats regclass := pg_catalog.to_regclass('pgmq.spark_stats');
BEGIN
    stored := pgmq._require_queue(queue_name);
    IF bucket_size IS NULL OR bucket_size <= interval '0' OR window_size IS NULL
       OR window_size < bucket_size THEN
        RAISE EXCEPTION 'window_size must be at least bucket_size and bucket_size positive, got % and %',
            window_size, bucket_size
            USING ERRCODE = 'PQ004';
    END IF;
    IF stats IS NULL THEN
        RETURN;
    END IF;
    -- The stats job stores the name as typed on its command line: match it and the
    -- queue's own spelling, both through the primary key.
    RETURN QUERY EXECUTE pg_catalog.format(
        $q$
        WITH picked AS (
            SELECT minute, s.archived, wait_p50, wait_p95, wait_p99, s.retries
            FROM %I.%I s
            WHERE s.queue_name::text IN ($1, $2) AND minute > $5 - $3
        )
        SELECT pg_catalog.date_bin($4, minute, timestamptz '2000-01-01 00:00+00'),
               pg_catalog.sum(r.archived)::bigint,
               (pg_catalog.sum(wait_p50 * r.archived) FILTER (WHERE wait_p50 IS NOT NULL)
                / nullif(pg_catalog.sum(r.archived) FILTER (WHERE wait_p50 IS NOT NULL), 0))::float8,
               pg_catalog.max(wait_p95), pg_catalog.max(wait_p99),
               pg_catalog.sum(r.retries)::bigint,
               (SELECT pg_catalog.max(minute) FROM %I.%I WHERE queue_name IN ($1, $2))
        FROM picked r
        GROUP BY 1
        ORDER BY 1
        $q$,
        'pgmq', 'spark_stats', 'pgmq', 'spark_stats'
    ) USING stored, queue_name, window_size, bucket_size, pg_catalog.clock_timestamp();
END
$fn$;
