-- Metrics: lengths, ages and the all-time message count of a queue.

-- What the catalogue says of the queues in names (as stored in pgmq.meta), one row
-- each with its place o in names: the table's oid (NULL when it is missing), its
-- identity sequence's oid, whether a default partition may hold rows (spill,
-- 45_partitions.sql) and whether the queue is idle: a plain table with no pages holds
-- no row any snapshot can see, so an idle queue's figures need no scan and no plan
-- over its table (most of 10,000 queues are idle). pg_relation_size opens the table:
-- that, and reading the sequence, are all an idle queue costs.
CREATE OR REPLACE FUNCTION pgmq._metrics_facts(names text[])
RETURNS TABLE (n text, o bigint, qtable text, qoid oid, seq oid, spill boolean, idle boolean)
LANGUAGE sql STABLE
AS $fn$
    SELECT f.n, f.o, f.qtable, f.qoid, f.seq, f.spill,
           coalesce(f.relkind = 'r' AND NOT f.spill AND pg_relation_size(f.qoid) = 0, false)
    FROM (
        SELECT u.n, u.o, t.qtable, c.oid AS qoid, c.relkind,
               coalesce(c.oid = ANY (spilling.oids) OR a.oid = ANY (spilling.oids), false) AS spill,
               (SELECT d.objid FROM pg_depend d JOIN pg_sequence s ON s.seqrelid = d.objid
                WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass
                  AND d.refobjid = c.oid AND d.deptype IN ('a', 'i')
                LIMIT 1) AS seq
        FROM unnest(names) WITH ORDINALITY AS u(n, o)
        CROSS JOIN LATERAL (SELECT pgmq.format_table_name(u.n, 'q') AS qtable) t
        CROSS JOIN (SELECT array_agg(p.partrelid) AS oids FROM pg_partitioned_table p
                    WHERE p.partdefid <> 0) spilling
        LEFT JOIN pg_class c ON c.relnamespace = 'pgmq'::regnamespace AND c.relname = t.qtable
        LEFT JOIN pg_class a
            ON a.relnamespace = 'pgmq'::regnamespace AND a.relname = 'a' || substr(t.qtable, 2)
    ) f;
$fn$;

-- An idle queue's metrics: nothing in it, the total from its sequence.
CREATE OR REPLACE FUNCTION pgmq._metrics_idle(n text, seq oid)
RETURNS pgmq.metrics_result
LANGUAGE sql STABLE
AS $fn$
    SELECT ROW(n, 0, NULL, NULL, coalesce(pg_sequence_last_value(seq), 0), now(), 0,
               NULL)::pgmq.metrics_result;
$fn$;

-- The metrics of queues that are not idle, counted by one statement: a UNION ALL of one
-- small aggregate per table, names as literals. The figures around the counts (ages,
-- the sequence, default partitions) are computed once over its rows rather than parsed
-- and planned per table, which halves the cost of a statement over many tables. A
-- missing table fails as pgmq's does (relation "pgmq.q_<name>" does not exist).
CREATE OR REPLACE FUNCTION pgmq._metrics_counted(
    names text[], tables text[], seqs oid[], spills boolean[]
)
RETURNS SETOF pgmq.metrics_result
LANGUAGE plpgsql
AS $fn$
BEGIN
    RETURN QUERY EXECUTE
        'SELECT $1[b.i], b.len, extract(epoch FROM now() - b.newest)::integer, '
        || 'extract(epoch FROM now() - b.oldest)::integer, '
        || 'coalesce(pg_sequence_last_value($2[b.i]), 0), now(), b.visible, '
        || 'CASE WHEN $3[b.i] THEN pgmq._default_partition_length($1[b.i]) END FROM ('
        || (SELECT string_agg(format('SELECT %s, count(*), max(enqueued_at), min(enqueued_at), '
                                     'count(*) FILTER (WHERE vt <= now()) FROM pgmq.%I',
                                     u.i, u.t), ' UNION ALL ')
            FROM unnest(tables) WITH ORDINALITY AS u(t, i))
        || ') AS b(i, len, newest, oldest, visible)'
    USING names, seqs, spills;
END
$fn$;

CREATE OR REPLACE FUNCTION pgmq.metrics(queue_name text)
RETURNS pgmq.metrics_result
LANGUAGE plpgsql
AS $fn$
DECLARE
    f record;
    result pgmq.metrics_result;
BEGIN
    SELECT * INTO f FROM pgmq._metrics_facts(ARRAY[pgmq._require_queue(queue_name)]);
    IF f.idle THEN
        RETURN pgmq._metrics_idle(f.n, f.seq);
    END IF;
    SELECT * INTO result
    FROM pgmq._metrics_counted(ARRAY[f.n], ARRAY[f.qtable], ARRAY[f.seq], ARRAY[f.spill]);
    RETURN result;
END
$fn$;

-- Every queue's metrics, ordered by name. One pass over the catalogue answers the idle
-- queues; the others are counted 200 queues to a statement (a statement per queue
-- would parse and plan 10,000 times).
CREATE OR REPLACE FUNCTION pgmq.metrics_all()
RETURNS SETOF pgmq.metrics_result
LANGUAGE plpgsql
AS $fn$
DECLARE
    answered pgmq.metrics_result[];
    names text[];
    tables text[];
    seqs oid[];
    spills boolean[];
    chunk constant integer := 200;
    first integer := 1;
BEGIN
    SELECT coalesce(array_agg(pgmq._metrics_idle(f.n, f.seq)) FILTER (WHERE f.idle), '{}'),
           array_agg(f.n ORDER BY f.o) FILTER (WHERE NOT f.idle),
           array_agg(f.qtable ORDER BY f.o) FILTER (WHERE NOT f.idle),
           array_agg(f.seq ORDER BY f.o) FILTER (WHERE NOT f.idle),
           array_agg(f.spill ORDER BY f.o) FILTER (WHERE NOT f.idle)
    INTO answered, names, tables, seqs, spills
    FROM pgmq._metrics_facts(ARRAY(SELECT m.queue_name FROM pgmq.meta m)) f;
    WHILE first <= coalesce(cardinality(names), 0) LOOP
        answered := answered || ARRAY(
            SELECT c FROM pgmq._metrics_counted(names[first:first + chunk - 1],
                                                tables[first:first + chunk - 1],
                                                seqs[first:first + chunk - 1],
                                                spills[first:first + chunk - 1]) c);
        first := first + chunk;
    END LOOP;
    RETURN QUERY SELECT * FROM unnest(answered) r ORDER BY r.queue_name;
END
$fn$;
