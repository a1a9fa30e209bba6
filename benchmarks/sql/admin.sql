-- Statements the harness itself sends: setup, prefill and measurements.
-- {schema}, {queue_table} and {archive_table} are composed in with psycopg.sql.

-- name: prefill
INSERT INTO {schema}.{queue_table} (vt, message)
SELECT clock_timestamp(), %(msg)s::jsonb FROM generate_series(1, %(n)s::integer);

-- name: vacuum
VACUUM (ANALYZE) {schema}.{queue_table};

-- name: depth
SELECT count(*) FROM {schema}.{queue_table};

-- name: archived_between
-- Messages archived in a window, and their enqueue-to-archive latency in seconds.
SELECT count(*),
       percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM archived_at - enqueued_at)),
       percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM archived_at - enqueued_at))
FROM {schema}.{archive_table}
WHERE archived_at >= to_timestamp(%(start)s) AND archived_at < to_timestamp(%(stop)s);

-- name: archived_all
SELECT count(*),
       percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM archived_at - enqueued_at)),
       percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM archived_at - enqueued_at))
FROM {schema}.{archive_table};

-- name: clear_stats_snapshot
SELECT pg_stat_clear_snapshot();

-- name: table_stats
SELECT relname, n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del, n_live_tup, n_dead_tup,
       pg_table_size(relid), pg_indexes_size(relid), autovacuum_count, vacuum_count
FROM pg_stat_user_tables
WHERE schemaname = %(schema)s AND relname = ANY(%(tables)s::text[])
ORDER BY relname;

-- name: wal_lsn
SELECT pg_current_wal_lsn()::text;

-- name: server_settings
SELECT name, current_setting(name) FROM pg_settings WHERE name = ANY(%(names)s::text[]) ORDER BY name;

-- name: server_version
SELECT current_setting('server_version'), version();

-- name: server_pids
-- Backends of the benchmark's clients (application_name bench...) and the server's own processes.
SELECT pid, backend_type, coalesce(application_name, '') FROM pg_stat_activity
WHERE application_name LIKE 'bench%%' OR backend_type <> 'client backend';

-- name: bench_backends
SELECT count(*) FROM pg_stat_activity
WHERE datname = current_database() AND application_name LIKE %(name)s;

-- name: stat_statements_available
SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_stat_statements');

-- name: stat_statements_reset
SELECT pg_stat_statements_reset(0, (SELECT oid FROM pg_database WHERE datname = current_database()), 0);

-- name: stat_statements_top
SELECT calls, total_exec_time, mean_exec_time, rows, left(regexp_replace(query, '\s+', ' ', 'g'), 160)
FROM pg_stat_statements
WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
ORDER BY total_exec_time DESC
LIMIT %(limit)s::integer;

-- name: database_exists
SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = %(name)s);
