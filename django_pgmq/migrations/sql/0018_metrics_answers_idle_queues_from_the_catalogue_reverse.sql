-- 0017_metrics_answers_idle_queues_from_the: metrics answers idle queues from the catalogue
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._metrics_counted(text[],text[],oid[],boolean[]);
DROP FUNCTION IF EXISTS pgmq._metrics_facts(text[]);
DROP FUNCTION IF EXISTS pgmq._metrics_idle(text,oid);
CREATE OR REPLACE FUNCTION pgmq._metrics_query(names text[])
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    WITH queue AS (
        SELECT u.n, u.o, pgmq.format_table_name(u.n, 'q') AS qtable, c.oid AS qoid,
               c.relkind = 'r' AND pg_relation_size(c.oid) = 0 AS empty,
               -- partitioned with a default partition (45_partitions.sql)
               EXISTS (SELECT 1 FROM pg_partitioned_table p
                       WHERE p.partdefid <> 0 AND p.partrelid IN (c.oid, a.oid)) AS spill,
               -- the sequence by oid: the statement names it as a number, no name lookup
               owned.seq
        FROM unnest(names) WITH ORDINALITY AS u(n, o)
        LEFT JOIN pg_class c
            ON c.relnamespace = 'pgmq'::regnamespace AND c.relname = pgmq.format_table_name(u.n, 'q')
        LEFT JOIN pg_class a
            ON a.relnamespace = 'pgmq'::regnamespace AND a.relname = pgmq.format_table_name(u.n, 'a')
        LEFT JOIN (
            SELECT d.refobjid AS qoid, d.objid AS seq
            FROM pg_depend d JOIN pg_sequence s ON s.seqrelid = d.objid
            WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass
              AND d.deptype IN ('a', 'i')
        ) owned ON owned.qoid = c.oid
    )
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
         FROM queue q WHERE q.empty AND NOT q.spill
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
         FROM queue q WHERE q.qoid IS NULL OR NOT q.empty OR q.spill)
    ) || ') AS m(queue_name, queue_length, newest_msg_age_sec, oldest_msg_age_sec, '
      || 'total_messages, scrape_time, queue_visible_length, default_partition_length, o) '
      || 'ORDER BY m.o'
    FROM (SELECT 1) one;
$function$
;
COMMENT ON FUNCTION pgmq._metrics_query(text[]) IS NULL;

CREATE OR REPLACE FUNCTION pgmq.metrics(queue_name text)
 RETURNS pgmq.metrics_result
 LANGUAGE plpgsql
AS $function$
DECLARE
    result pgmq.metrics_result;
BEGIN
    EXECUTE pgmq._metrics_query(ARRAY[pgmq._require_queue(queue_name)]) INTO result;
    RETURN result;
END
$function$
;
COMMENT ON FUNCTION pgmq.metrics(text) IS NULL;

CREATE OR REPLACE FUNCTION pgmq.metrics_all()
 RETURNS SETOF pgmq.metrics_result
 LANGUAGE plpgsql
AS $function$
DECLARE
    names text[] := ARRAY(SELECT m.queue_name FROM pgmq.meta m ORDER BY m.queue_name);
    chunk constant integer := 1000;
    first integer := 1;
BEGIN
    WHILE first <= coalesce(cardinality(names), 0) LOOP
        RETURN QUERY EXECUTE pgmq._metrics_query(names[first:first + chunk - 1]);
        first := first + chunk;
    END LOOP;
END
$function$
;
COMMENT ON FUNCTION pgmq.metrics_all() IS NULL;

