-- Statements of benchmarks/admin_overview.py: the overview's candidate sort keys over all
-- queues, timed beside the page itself (the choice is recorded in the README).

-- name: pgstat_depth_order
-- Depth order from the statistics collector's live-tuple estimates: no sampler needed.
SELECT m.queue_name
FROM pgmq.meta m
ORDER BY pg_stat_get_live_tuples(format('pgmq.%I', pgmq.format_table_name(m.queue_name, 'q'))::regclass) DESC,
         m.queue_name
LIMIT 50

-- name: per_queue_stats
-- What the overview did before: every figure of each queue, one function call per queue
-- (here the first 2,000 queues by name, to stay within the lock table).
SELECT count(*) FROM (SELECT m.queue_name::text AS n FROM pgmq.meta m ORDER BY 1 LIMIT 2000) q,
    LATERAL pgmq._dashboard_queue_stats(q.n) s
