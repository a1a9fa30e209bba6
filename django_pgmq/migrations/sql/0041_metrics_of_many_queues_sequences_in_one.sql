-- 0041_metrics_of_many_queues_sequences_in_one: metrics of many queues: sequences in one pass, names checked once
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
        SELECT u.n, u.o, u.qtable, c.oid AS qoid, c.relkind,
               coalesce(c.oid = ANY (spilling.oids) OR a.oid = ANY (spilling.oids), false) AS spill,
               CASE WHEN cardinality(names) > 64
               THEN ((SELECT jsonb_object_agg(d.refobjid::text, d.objid)
                      FROM pg_sequence s
                      JOIN pg_depend d ON d.classid = 'pg_class'::regclass
                                      AND d.objid = s.seqrelid AND d.objsubid = 0
                      WHERE d.refclassid = 'pg_class'::regclass AND d.deptype IN ('a', 'i'))
                     ->> c.oid::text)::oid
               ELSE (SELECT d.objid FROM pg_depend d JOIN pg_sequence s ON s.seqrelid = d.objid
                     WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass
                       AND d.refobjid = c.oid AND d.deptype IN ('a', 'i')
                     LIMIT 1)
               END AS seq
        -- OFFSET 0 keeps the name check to once per name: flattened, format_table_name's
        -- regular expression went into the joins' hash keys and was run again for every
        -- probe (a tenth of metrics_all's time at 10,000 queues)
        FROM (SELECT x.n, x.o, pgmq.format_table_name(x.n, 'q') AS qtable
              FROM unnest(names) WITH ORDINALITY AS x(n, o) OFFSET 0) u
        CROSS JOIN (SELECT array_agg(p.partrelid) AS oids FROM pg_partitioned_table p
                    WHERE p.partdefid <> 0) spilling
        LEFT JOIN pg_class c ON c.relnamespace = 'pgmq'::regnamespace AND c.relname = u.qtable
        LEFT JOIN pg_class a
            ON a.relnamespace = 'pgmq'::regnamespace AND a.relname = 'a' || substr(u.qtable, 2)
    ) f;
$function$
;
COMMENT ON FUNCTION pgmq._metrics_facts(text[]) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._metrics_facts(text[]) FROM PUBLIC;

