-- 0017_metrics_all_answers_idle_queues_from_one: metrics_all answers idle queues from one catalogue pass
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
CREATE OR REPLACE FUNCTION pgmq._metrics_facts(names text[])
 RETURNS TABLE(n text, o bigint, qtable text, qoid oid, seq oid, spill boolean, idle boolean)
 LANGUAGE sql
 STABLE
AS $function$
    SELECT f.n, f.o, f.qtable, f.qoid, f.seq, f.spill,
           coalesce(f.relkind = 'r' AND NOT f.spill AND pg_relation_size(f.qoid) = 0, false)
    FROM (
        SELECT u.n, u.o, pgmq.format_table_name(u.n, 'q') AS qtable, c.oid AS qoid,
               c.relkind,
               EXISTS (SELECT 1 FROM pg_partitioned_table p
                       WHERE p.partdefid <> 0 AND p.partrelid IN (c.oid, a.oid)) AS spill,
               (SELECT d.objid FROM pg_depend d JOIN pg_sequence s ON s.seqrelid = d.objid
                WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass
                  AND d.refobjid = c.oid AND d.deptype IN ('a', 'i')
                LIMIT 1) AS seq
        FROM unnest(names) WITH ORDINALITY AS u(n, o)
        LEFT JOIN pg_class c
            ON c.relnamespace = 'pgmq'::regnamespace AND c.relname = pgmq.format_table_name(u.n, 'q')
        LEFT JOIN pg_class a
            ON a.relnamespace = 'pgmq'::regnamespace AND a.relname = pgmq.format_table_name(u.n, 'a')
    ) f;
$function$
;
COMMENT ON FUNCTION pgmq._metrics_facts(text[]) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._metrics_query(names text[])
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    WITH queue AS (SELECT * FROM pgmq._metrics_facts(names))
    SELECT 'SELECT m.queue_name, m.queue_length, m.newest_msg_age_sec, m.oldest_msg_age_sec, '
      || 'm.total_messages, m.scrape_time, m.queue_visible_length, m.default_partition_length '
      || 'FROM (' || concat_ws(' UNION ALL ',
        (SELECT format(
             $q$
             SELECT u.n, 0::bigint, NULL::integer, NULL::integer,
                    coalesce(pg_sequence_last_value(u.seq::regclass), 0), now(), 0::bigint, NULL::bigint,
                    u.o
             FROM unnest(%L::text[], %L::oid[], %L::integer[]) AS u(n, seq, o)
             $q$,
             array_agg(q.n), array_agg(q.seq), array_agg(q.o))
         FROM queue q WHERE q.idle
         HAVING count(*) > 0),
        (SELECT string_agg(format(
             $q$
             SELECT
                 %1$L::text,
                 count(*),
                 extract(epoch FROM now() - max(enqueued_at))::integer,
                 extract(epoch FROM now() - min(enqueued_at))::integer,
                 coalesce(pg_sequence_last_value(%2$L::regclass), 0),
                 now(),
                 count(*) FILTER (WHERE vt <= now()),
                 %4$s,
                 %5$s
             FROM pgmq.%3$I
             $q$,
             q.n, q.seq, q.qtable,
             CASE WHEN q.spill THEN format('pgmq._default_partition_length(%L)', q.n)
                  ELSE 'NULL::bigint' END,
             q.o), ' UNION ALL ')
         FROM queue q WHERE NOT q.idle)
    ) || ') AS m(queue_name, queue_length, newest_msg_age_sec, oldest_msg_age_sec, '
      || 'total_messages, scrape_time, queue_visible_length, default_partition_length, o) '
      || 'ORDER BY m.o'
    FROM (SELECT 1) one;
$function$
;
COMMENT ON FUNCTION pgmq._metrics_query(text[]) IS NULL;

CREATE OR REPLACE FUNCTION pgmq.metrics_all()
 RETURNS SETOF pgmq.metrics_result
 LANGUAGE plpgsql
AS $function$
DECLARE
    idle pgmq.metrics_result[];
    busy text[];
    counted pgmq.metrics_result[];
    chunk constant integer := 200;
    first integer := 1;
BEGIN
    SELECT coalesce(array_agg(ROW(f.n, 0, NULL, NULL, coalesce(pg_sequence_last_value(f.seq), 0),
                                  now(), 0, NULL)::pgmq.metrics_result) FILTER (WHERE f.idle), '{}'),
           coalesce(array_agg(f.n ORDER BY f.o) FILTER (WHERE NOT f.idle), '{}')
    INTO idle, busy
    FROM pgmq._metrics_facts(ARRAY(SELECT m.queue_name FROM pgmq.meta m ORDER BY m.queue_name)) f;
    WHILE first <= cardinality(busy) LOOP
        EXECUTE format('SELECT array_agg(ROW(m.*)::pgmq.metrics_result) FROM (%s) m',
                       pgmq._metrics_query(busy[first:first + chunk - 1]))
        INTO counted;
        idle := idle || counted;
        first := first + chunk;
    END LOOP;
    RETURN QUERY SELECT * FROM unnest(idle) r ORDER BY r.queue_name;
END
$function$
;
COMMENT ON FUNCTION pgmq.metrics_all() IS NULL;

