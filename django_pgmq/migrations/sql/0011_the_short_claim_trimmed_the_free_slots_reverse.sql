-- 0011_the_short_claim_trimmed_the_free_slots: the short claim trimmed: the free slots one array, the cursor checked without a regular expression
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
CREATE OR REPLACE FUNCTION pgmq._limit_lock(queue_name text, want integer)
 RETURNS tid[]
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
DECLARE
    lq text := pg_catalog.lower(queue_name);
    at_key text := 'pgmq.limit_at_' || pg_catalog.replace(lq, '-', '$');
    at_ text := pg_catalog.current_setting(at_key, true);
    at bigint := CASE WHEN at_ ~ '^[0-9]{1,9}$' THEN at_::bigint ELSE 1 END;
    tids tid[];
BEGIN
    -- One statement (each costs its own set-up): the window (want slots from the
    -- cursor, from the ring's start when fewer are left before its end; none while a
    -- slot above the limit still holds a message: a lowered limit) locked, and when it is
    -- whole, the cursor moved past it.
    SELECT CASE WHEN want > 0 AND pg_catalog.count(*) = want
                     AND pg_catalog.set_config(at_key, (pg_catalog.max(x.slot) + 1)::text, false) IS NOT NULL
                THEN pg_catalog.array_agg(x.ctid) END
    INTO tids
    FROM pgmq.queue_limit_state s
    CROSS JOIN LATERAL (
        SELECT l.ctid, l.slot FROM pgmq.queue_limit_slots l
        WHERE l.queue_name::text = lq AND l.kind = 'f'
          AND l.slot >= CASE WHEN at + want - 1 > LEAST(s.max_in_flight, s.slots_made) THEN 1 ELSE at END
          AND l.slot <= LEAST(s.max_in_flight, s.slots_made,
                              CASE WHEN at + want - 1 > LEAST(s.max_in_flight, s.slots_made) THEN 1 ELSE at END
                              + 2 * want::bigint + 8)
          AND NOT EXISTS (SELECT 1 FROM pgmq.queue_limit_slots o
                          WHERE o.queue_name::text = lq AND o.kind = 'f' AND o.slot > s.max_in_flight
                            AND o.msg_id IS NOT NULL)
        ORDER BY l.slot
        LIMIT GREATEST(want, 0)
        FOR UPDATE OF l SKIP LOCKED) x
    WHERE s.queue_name::text = lq AND s.max_in_flight IS NOT NULL;
    RETURN tids;
END
$function$
;
COMMENT ON FUNCTION pgmq._limit_lock(text,integer) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._limit_lock(text,integer) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._read_sql(qtable text, pops boolean, low text, qty text DEFAULT '$2'::text, secs text DEFAULT '$3'::text, cond text DEFAULT '$8'::text, by_priority boolean DEFAULT false, max_receive_count integer DEFAULT NULL::integer, dead_move text DEFAULT NULL::text, slots text DEFAULT NULL::text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT pg_catalog.format(
        CASE WHEN slots IS NOT NULL THEN $free$
        WITH free AS MATERIALIZED (
            SELECT l.ctid AS tid FROM pgmq.queue_limit_slots l
            WHERE l.ctid = ANY ($10::tid[])
              AND (l.msg_id IS NULL OR l.read_ct = -1 OR NOT EXISTS (
                   SELECT FROM pgmq.%1$I f
                   WHERE f.msg_id = l.msg_id AND f.read_ct = l.read_ct AND f.vt > pg_catalog.clock_timestamp()))
        ),
        $free$ WHEN dead_move IS NULL THEN $sql$
        WITH $sql$ ELSE $dead$
        WITH picked AS MATERIALIZED (%3$s),
        dead AS (
            DELETE FROM pgmq.%1$I m
            WHERE m.msg_id = ANY(ARRAY(%5$s))
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.message, m.headers,
                      NULL::text AS error
        ),
        %6$s,
        $dead$ END
        || $sql$claimed AS (
            %2$s
        )
        SELECT * FROM claimed c$sql$
        || CASE WHEN slots IS NOT NULL THEN $rec$
        WHERE (SELECT pgmq._limit_record(%7$L::text, $2, ARRAY(SELECT f.tid FROM free f),
                                         pg_catalog.array_agg(x.msg_id), pg_catalog.array_agg(x.read_ct))
               FROM claimed x) IS NOT NULL$rec$ ELSE '' END
        || $sql$ ORDER BY %4$s
        $sql$,
        qtable,
        pgmq._read_claim_sql(qtable, pops, secs,
            CASE WHEN dead_move IS NULL THEN pgmq._read_pick_sql(
                qtable, low,
                CASE WHEN slots IS NOT NULL
                     THEN 'LEAST(' || qty || ', (SELECT pg_catalog.count(*) FROM free))' ELSE qty END,
                cond, '',
                CASE WHEN by_priority THEN 'pgmq._task_priority(q.headers) DESC, q.msg_id' ELSE 'q.msg_id' END)
            ELSE 'SELECT p.msg_id FROM picked p' END),
        CASE WHEN dead_move IS NOT NULL THEN pgmq._read_pick_sql(
            qtable, low, qty, cond, ' AND q.read_ct < ' || max_receive_count::text,
            CASE WHEN by_priority THEN 'pgmq._task_priority(q.headers) DESC, q.msg_id' ELSE 'q.msg_id' END) END,
        CASE WHEN by_priority THEN 'pgmq._task_priority(c.headers) DESC, c.msg_id' ELSE 'c.msg_id' END,
        CASE WHEN dead_move IS NOT NULL THEN pgmq._read_pick_sql(
            qtable, low, 'greatest(' || qty || ', 100)', cond,
            pg_catalog.format(
                $x$ AND q.read_ct >= %s
                  AND ((SELECT pg_catalog.count(*) FROM picked) < %s
                       OR q.msg_id < (SELECT pg_catalog.max(p.msg_id) FROM picked p))$x$,
                max_receive_count, qty)) END,
        dead_move, slots);
$function$
;
COMMENT ON FUNCTION pgmq._read_sql(text,boolean,text,text,text,text,boolean,integer,text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._read_sql(text,boolean,text,text,text,text,boolean,integer,text,text) FROM PUBLIC;

