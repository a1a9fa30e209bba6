-- Dashboard support for the Django admin: statistics that stay cheap on large queues,
-- message browsing with keyset pagination, and requeueing.
--
-- The queue's own figures (lengths, ages, total) come from pgmq._queue_figures
-- (30_metrics.sql), the one source pgmq.metrics() reads too; this file adds the
-- archive's figures; the dashboard says the source's names, no other.
--
-- Counting rule: a table is counted exactly while it holds at most `exact_limit` rows
-- (checked with a LIMITed scan, so the check itself is bounded). Past that, figures
-- come from the planner's row estimate or a TABLESAMPLE, and their names are listed in
-- the `estimated` column so the admin can mark them.

CREATE TYPE pgmq._dashboard_stats AS (
    queue_name text,
    queue_length bigint,
    queue_visible_length bigint,
    in_flight_length bigint,
    delayed_length bigint,
    oldest_msg_age_sec integer,
    newest_msg_age_sec integer,
    oldest_visible_age_sec integer,
    archive_size bigint,
    archived_hour bigint,
    archived_day bigint,
    poison_length bigint,
    total_messages bigint,
    estimated text[]
);

-- A pgmq._dashboard_stats row by column name (see pgmq._require_row_builder).
CREATE FUNCTION pgmq._dashboard_stats_row(
    queue_name text DEFAULT NULL, queue_length bigint DEFAULT NULL,
    queue_visible_length bigint DEFAULT NULL, in_flight_length bigint DEFAULT NULL,
    delayed_length bigint DEFAULT NULL, oldest_msg_age_sec integer DEFAULT NULL,
    newest_msg_age_sec integer DEFAULT NULL, oldest_visible_age_sec integer DEFAULT NULL,
    archive_size bigint DEFAULT NULL, archived_hour bigint DEFAULT NULL,
    archived_day bigint DEFAULT NULL, poison_length bigint DEFAULT NULL,
    total_messages bigint DEFAULT NULL, estimated text[] DEFAULT NULL
)
RETURNS pgmq._dashboard_stats
LANGUAGE sql IMMUTABLE
AS $fn$
    SELECT ROW(queue_name, queue_length, queue_visible_length, in_flight_length, delayed_length,
               oldest_msg_age_sec, newest_msg_age_sec, oldest_visible_age_sec, archive_size,
               archived_hour, archived_day, poison_length, total_messages,
               estimated)::pgmq._dashboard_stats
$fn$;

DO $check$ BEGIN PERFORM pgmq._require_row_builder('pgmq._dashboard_stats_row'::regproc); END $check$;

-- The live ('q') or archive ('a') table of a queue in pgmq.meta; PQ001/PQ002/PQ004
-- otherwise. The dashboard's counters take a queue name, never a table: no caller can
-- make them read a table that is not a queue's.
CREATE FUNCTION pgmq._dashboard_table(queue_name text, kind "char")
RETURNS regclass
LANGUAGE plpgsql STABLE
AS $fn$
BEGIN
    IF kind IS NULL OR kind NOT IN ('q', 'a') THEN
        RAISE EXCEPTION 'table kind must be q (live) or a (archive), got %', coalesce(kind::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    RETURN pg_catalog.format('pgmq.%I', pgmq.format_table_name(pgmq._require_queue(queue_name), kind::text))::regclass;
END
$fn$;

-- The planner's row estimate for a queue's live ('q') or archive ('a') table, or for
-- its rows archived after `since`. It scales pg_class.reltuples to the table's current
-- size and reads the archived_at index bounds, so it costs a plan, not a scan.
CREATE FUNCTION pgmq._dashboard_estimate(queue_name text, kind "char", since timestamptz DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql
AS $fn$
DECLARE
    tbl regclass := pgmq._dashboard_table(queue_name, kind);
    plan json;
BEGIN
    IF since IS NULL THEN
        EXECUTE pg_catalog.format('EXPLAIN (FORMAT JSON) SELECT 1 FROM %s', tbl) INTO plan;
    ELSE
        EXECUTE pg_catalog.format('EXPLAIN (FORMAT JSON) SELECT 1 FROM %s WHERE archived_at > %L', tbl, since)
            INTO plan;
    END IF;
    RETURN (plan -> 0 -> 'Plan' ->> 'Plan Rows')::numeric::bigint;
END
$fn$;

-- Rows of a queue's live ('q') or archive ('a') table (archived after `since` when
-- given), exact up to `exact_limit`, else estimated; `estimated` says which.
CREATE FUNCTION pgmq._dashboard_count(
    queue_name text, kind "char", exact_limit bigint, since timestamptz DEFAULT NULL,
    OUT n bigint, OUT estimated boolean
)
LANGUAGE plpgsql
AS $fn$
DECLARE
    tbl regclass := pgmq._dashboard_table(queue_name, kind);
BEGIN
    IF since IS NULL THEN
        EXECUTE pg_catalog.format('SELECT pg_catalog.count(*) FROM (SELECT 1 FROM %s LIMIT $1) s', tbl)
            INTO n USING exact_limit + 1;
    ELSE
        EXECUTE pg_catalog.format(
            'SELECT pg_catalog.count(*) FROM (SELECT 1 FROM %s WHERE archived_at > $2 LIMIT $1) s', tbl
        ) INTO n USING exact_limit + 1, since;
    END IF;
    estimated := n > exact_limit;
    IF estimated THEN
        n := greatest(n, pgmq._dashboard_estimate(queue_name, kind, since));
    END IF;
END
$fn$;

-- Whether a queue's archive is a plain table with no pages (so holds no row any
-- snapshot can see): the idle rule of 30_metrics.sql, applied to the archive.
CREATE FUNCTION pgmq._archive_idle(queue_name text)
RETURNS boolean
LANGUAGE sql STABLE
AS $fn$
    SELECT coalesce(c.relkind = 'r' AND pg_catalog.pg_relation_size(c.oid) = 0, false)
    FROM (SELECT pg_catalog.to_regclass(pg_catalog.format('pgmq.%I', pgmq.format_table_name(queue_name, 'a'::text))) AS a) t
    LEFT JOIN pg_catalog.pg_class c ON c.oid = t.a
$fn$;

-- The archive's figures of one queue, as of `at`: its size and the messages archived in
-- the last hour and day, each exact up to `exact_limit` rows, else estimated (named in
-- `estimated`); zeros without a look at an idle archive.
CREATE FUNCTION pgmq._dashboard_archive_figures(
    queue_name text, exact_limit bigint, at timestamptz,
    OUT archive_size bigint, OUT archived_hour bigint, OUT archived_day bigint,
    OUT estimated text[]
)
LANGUAGE plpgsql
AS $fn$
DECLARE
    est boolean;
BEGIN
    archive_size := 0;
    archived_hour := 0;
    archived_day := 0;
    estimated := '{}';
    IF pgmq._archive_idle(queue_name) THEN
        RETURN;
    END IF;
    SELECT c.n, c.estimated INTO archive_size, est FROM pgmq._dashboard_count(queue_name, 'a', exact_limit) c;
    IF est THEN
        estimated := estimated || 'archive_size'::text;
    END IF;
    SELECT c.n, c.estimated INTO archived_hour, est
    FROM pgmq._dashboard_count(queue_name, 'a', exact_limit, at - interval '1 hour') c;
    IF est THEN
        estimated := estimated || 'archived_hour'::text;
    END IF;
    SELECT c.n, c.estimated INTO archived_day, est
    FROM pgmq._dashboard_count(queue_name, 'a', exact_limit, at - interval '1 day') c;
    IF est THEN
        estimated := estimated || 'archived_day'::text;
    END IF;
END
$fn$;

-- Which of the queues in `names` are idle: their live table (the rule of
-- pgmq._metrics_facts) and their archive both hold no page. One catalogue pass;
-- partitioned queues never count as idle. Unknown names are left out; rows in the order
-- of `names`.
CREATE FUNCTION pgmq._dashboard_idle_queues(names text[])
RETURNS TABLE (queue_name text, idle boolean)
LANGUAGE sql STABLE
AS $fn$
    SELECT m.queue_name::text, f.idle AND pgmq._archive_idle(m.queue_name::text)
    FROM pgmq._metrics_facts(names) f
    JOIN pgmq.meta m ON m.queue_name::text = f.n
    ORDER BY f.o
$fn$;

-- Dashboard figures of the queues in `names`, in that order: the queue figures
-- (pgmq._queue_figures, bounded by exact_limit, poison counted against
-- max_receive_count ->> queue_name) under their own names, beside the archive's
-- (pgmq._dashboard_archive_figures). Idle queues cost a catalogue row; unknown queues,
-- and a queue dropped while this runs, are left out rather than failing the whole page.
CREATE FUNCTION pgmq._dashboard_stats_of(
    names text[], exact_limit bigint DEFAULT 50000, max_receive_count jsonb DEFAULT '{}'
)
RETURNS SETOF pgmq._dashboard_stats
LANGUAGE plpgsql
AS $fn$
BEGIN
    IF exact_limit IS NULL OR exact_limit < 1 THEN
        RAISE EXCEPTION 'exact_limit must be a positive number of rows, got %', exact_limit
            USING ERRCODE = 'PQ004';
    END IF;
    -- Each row by column name (pgmq._dashboard_stats_row); the builder inlines and (r).*
    -- flattens, so the plan selects the plain columns.
    RETURN QUERY
    SELECT (r).* FROM (
        SELECT pgmq._dashboard_stats_row(
                   queue_name => f.queue_name,
                   queue_length => f.queue_length,
                   queue_visible_length => f.queue_visible_length,
                   in_flight_length => f.in_flight_length,
                   delayed_length => f.delayed_length,
                   oldest_msg_age_sec => f.oldest_msg_age_sec,
                   newest_msg_age_sec => f.newest_msg_age_sec,
                   oldest_visible_age_sec => f.oldest_visible_age_sec,
                   archive_size => a.archive_size,
                   archived_hour => a.archived_hour,
                   archived_day => a.archived_day,
                   poison_length => f.poison_length,
                   total_messages => f.total_messages,
                   estimated => f.estimated || a.estimated
               ) AS r, u.o
        FROM pg_catalog.unnest(names) WITH ORDINALITY AS u(n, o)
        -- The real time, not the transaction's start (see the top of 30_metrics.sql).
        JOIN pgmq._queue_figures(names, exact_limit, max_receive_count, pg_catalog.clock_timestamp()) f
            ON f.queue_name::text = u.n
        CROSS JOIN LATERAL pgmq._dashboard_archive_figures(f.queue_name::text, exact_limit, f.scrape_time) a
    ) s
    ORDER BY s.o;
END
$fn$;

-- Every dashboard figure of one queue (see pgmq._dashboard_stats_of); `max_receive_count`
-- (from the queue's consumer settings) defines poison messages; NULL leaves poison NULL.
CREATE FUNCTION pgmq._dashboard_queue_stats(
    queue_name text, exact_limit bigint DEFAULT 50000, max_receive_count integer DEFAULT NULL
)
RETURNS pgmq._dashboard_stats
LANGUAGE sql
AS $fn$
    SELECT * FROM pgmq._dashboard_stats_of(
        ARRAY[pgmq._require_queue(queue_name)], exact_limit,
        CASE WHEN max_receive_count IS NULL THEN '{}'::jsonb
             ELSE pg_catalog.jsonb_build_object(pgmq._require_queue(queue_name), max_receive_count) END
    )
$fn$;

-- Dashboard figures of every queue, by name (see pgmq._dashboard_stats_of).
CREATE FUNCTION pgmq._dashboard_all_stats(
    exact_limit bigint DEFAULT 50000, max_receive_count jsonb DEFAULT '{}'
)
RETURNS SETOF pgmq._dashboard_stats
LANGUAGE sql
AS $fn$
    SELECT * FROM pgmq._dashboard_stats_of(
        ARRAY(SELECT m.queue_name::text FROM pgmq.meta m ORDER BY m.queue_name), exact_limit,
        max_receive_count
    )
$fn$;

-- Messages archived per bucket over the last `window_size`, with enqueue-to-archive
-- latency percentiles (seconds). Counts read at most `row_limit` archive rows, the
-- newest, through the archived_at index; percentiles read at most `latency_limit`
-- rows (whole rows, so far fewer). `truncated` / `latency_truncated` (the same on
-- every row) say when a limit cut the window short: older buckets are then missing.
CREATE FUNCTION pgmq._dashboard_throughput(
    queue_name text, window_size interval, bucket_size interval,
    row_limit bigint DEFAULT 200000, latency_limit bigint DEFAULT 20000
)
RETURNS TABLE (
    bucket_start timestamptz, archived bigint,
    p50_sec double precision, p95_sec double precision, p99_sec double precision,
    truncated boolean, latency_truncated boolean
)
LANGUAGE plpgsql
AS $fn$
DECLARE
    atable regclass;
BEGIN
    PERFORM pgmq._require_queue(queue_name);
    IF bucket_size IS NULL OR bucket_size <= interval '0' OR window_size IS NULL
       OR window_size < bucket_size THEN
        RAISE EXCEPTION 'window_size must be at least bucket_size and bucket_size positive, got % and %',
            window_size, bucket_size
            USING ERRCODE = 'PQ004';
    END IF;
    IF row_limit IS NULL OR row_limit < 1 OR latency_limit IS NULL OR latency_limit < 1 THEN
        RAISE EXCEPTION 'row_limit and latency_limit must be positive, got % and %',
            row_limit, latency_limit
            USING ERRCODE = 'PQ004';
    END IF;
    atable := pg_catalog.format('pgmq.%I', pgmq.format_table_name(queue_name, 'a'::text))::regclass;
    RETURN QUERY EXECUTE pg_catalog.format(
        $q$
        WITH counted AS (
            SELECT pg_catalog.date_bin($2, archived_at, timestamptz '2000-01-01 00:00+00') AS b
            FROM (SELECT archived_at FROM %1$s WHERE archived_at > $4 - $1
                  ORDER BY archived_at DESC LIMIT $3) newest
        ), counts AS (
            SELECT b, pg_catalog.count(*) AS n FROM counted GROUP BY b
        ), timed AS (
            SELECT pg_catalog.date_bin($2, archived_at, timestamptz '2000-01-01 00:00+00') AS b,
                   extract(epoch FROM archived_at - enqueued_at)::float8 AS latency
            FROM %1$s WHERE archived_at > $4 - $1
            ORDER BY archived_at DESC LIMIT $5
        ), latencies AS (
            SELECT b,
                   pg_catalog.percentile_cont(0.5) WITHIN GROUP (ORDER BY latency) AS p50,
                   pg_catalog.percentile_cont(0.95) WITHIN GROUP (ORDER BY latency) AS p95,
                   pg_catalog.percentile_cont(0.99) WITHIN GROUP (ORDER BY latency) AS p99
            FROM timed GROUP BY b
        )
        SELECT counts.b, counts.n, latencies.p50, latencies.p95, latencies.p99,
               (SELECT pg_catalog.count(*) FROM counted) >= $3,
               (SELECT pg_catalog.count(*) FROM timed) >= $5
        FROM counts LEFT JOIN latencies USING (b)
        ORDER BY 1
        $q$, atable
    ) USING window_size, bucket_size, row_limit, pg_catalog.clock_timestamp(), latency_limit;
END
$fn$;

-- One page of a queue's live messages (or its archive), keyset-paginated on msg_id.
-- Filters: read_ct at least `min_read_ct`; a header `header_key` present (or equal to
-- `header_value`); the message containing `contains`. `after_id` continues past the
-- last row shown; `before_id` goes back from the first row shown.
CREATE FUNCTION pgmq._browse_messages(
    queue_name text,
    from_archive boolean DEFAULT false,
    newest_first boolean DEFAULT true,
    min_read_ct integer DEFAULT NULL,
    header_key text DEFAULT NULL,
    header_value text DEFAULT NULL,
    contains jsonb DEFAULT NULL,
    after_id bigint DEFAULT NULL,
    before_id bigint DEFAULT NULL,
    page_size integer DEFAULT 50
)
RETURNS TABLE (
    msg_id bigint, read_ct integer, enqueued_at timestamptz, last_read_at timestamptz,
    vt timestamptz, archived_at timestamptz, message jsonb, headers jsonb
)
LANGUAGE plpgsql
AS $fn$
DECLARE
    tbl regclass;
    backwards boolean := before_id IS NOT NULL;
    -- Scan direction: reversed when paging back, then put right by the outer ORDER BY.
    scan_desc boolean := newest_first <> backwards;
    cursor_id bigint := coalesce(before_id, after_id);
BEGIN
    PERFORM pgmq._require_queue(queue_name);
    IF page_size IS NULL OR page_size < 1 OR page_size > 1000 THEN
        RAISE EXCEPTION 'page_size must be between 1 and 1000, got %', page_size
            USING ERRCODE = 'PQ004';
    END IF;
    IF after_id IS NOT NULL AND before_id IS NOT NULL THEN
        RAISE EXCEPTION 'give after_id or before_id, not both' USING ERRCODE = 'PQ004';
    END IF;
    tbl := pg_catalog.format(
        'pgmq.%I', pgmq.format_table_name(queue_name, CASE WHEN from_archive THEN 'a' ELSE 'q' END)
    )::regclass;
    RETURN QUERY EXECUTE pg_catalog.format(
        $q$
        SELECT * FROM (
            SELECT t.msg_id, t.read_ct, t.enqueued_at, t.last_read_at, t.vt, %s, t.message, t.headers
            FROM %s t
            WHERE ($1::integer IS NULL OR t.read_ct >= $1)
              AND ($2::text IS NULL OR ($3::text IS NULL AND t.headers ? $2)
                   OR t.headers ->> $2 = $3)
              AND ($4::jsonb IS NULL OR t.message @> $4)
              AND ($5::bigint IS NULL OR t.msg_id %s $5)
            ORDER BY t.msg_id %s
            LIMIT $6
        ) page
        ORDER BY msg_id %s
        $q$,
        CASE WHEN from_archive THEN 't.archived_at' ELSE 'NULL::timestamptz' END,
        tbl,
        CASE WHEN scan_desc THEN '<' ELSE '>' END,
        CASE WHEN scan_desc THEN 'DESC' ELSE 'ASC' END,
        CASE WHEN newest_first THEN 'DESC' ELSE 'ASC' END
    ) USING min_read_ct, header_key, header_value, contains, cursor_id, page_size;
END
$fn$;

-- Move messages from a queue's live table (or its archive) into the live table of
-- `target_queue`, visible at once, with a fresh msg_id and read_ct 0, in one statement.
-- Requeues archived messages (source = target, from_archive) and dead letters
-- (source = the dead-letter queue). Returns the new ids, in the old ids' order.
CREATE FUNCTION pgmq._dashboard_requeue(
    source_queue text, target_queue text, msg_ids bigint[], from_archive boolean DEFAULT false
)
RETURNS SETOF bigint
LANGUAGE plpgsql
AS $fn$
DECLARE
    source_table text;
    target_table text;
BEGIN
    PERFORM pgmq._require_queue(source_queue);
    PERFORM pgmq._require_queue(target_queue);
    source_table := pgmq.format_table_name(source_queue, CASE WHEN from_archive THEN 'a' ELSE 'q' END);
    target_table := pgmq.format_table_name(target_queue, 'q'::text);
    IF source_table = target_table THEN
        RAISE EXCEPTION 'requeue needs two different tables, got % twice', source_table
            USING ERRCODE = 'PQ004';
    END IF;
    RETURN QUERY EXECUTE pg_catalog.format(
        $q$
        WITH moved AS (
            DELETE FROM pgmq.%I WHERE msg_id = ANY($1) RETURNING msg_id, message, headers
        )
        INSERT INTO pgmq.%I (vt, message, headers)
        SELECT pg_catalog.clock_timestamp(), message, headers FROM moved ORDER BY msg_id
        RETURNING msg_id
        $q$,
        source_table, target_table
    ) USING msg_ids;
END
$fn$;
