-- 0010_limited_reads_on_a_short_claim_single_id: limited reads on a short claim; single-id acknowledgements check their own statement's text only
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._read_sql(text,boolean,text,text,text,text,boolean,integer,text);
CREATE OR REPLACE FUNCTION pgmq._claim_keys_but_slots()
 RETURNS text[]
 LANGUAGE sql
 IMMUTABLE
AS $function$
    SELECT pg_catalog.array_agg(d.key ORDER BY d.key) FROM pgmq._queue_attribute_declaration() d
    WHERE d.side IN ('read', 'both', 'limit') AND d.key <> 'max_in_flight';
$function$
;
COMMENT ON FUNCTION pgmq._claim_keys_but_slots() IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._claim_keys_but_slots() FROM PUBLIC;

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
    -- up to nine digits (as '^[0-9]{1,9}$' would say: a regular expression with counted
    -- repeats cost about 7,000 instructions a read), else from slot 1
    at bigint := CASE WHEN pg_catalog.octet_length(at_) BETWEEN 1 AND 9
                           AND pg_catalog.ltrim(at_, '0123456789') = '' THEN at_::bigint ELSE 1 END;
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

CREATE OR REPLACE FUNCTION pgmq._limit_record(queue_name text, qty integer, free tid[], ids bigint[], read_cts integer[])
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
 SET lock_timeout TO '1ms'
AS $function$
DECLARE
    n integer;
BEGIN
    IF coalesce(pg_catalog.cardinality(ids), 0) >= coalesce(pg_catalog.cardinality(free), 0)
       AND coalesce(pg_catalog.cardinality(free), 0) < qty THEN
        PERFORM pg_catalog.set_config('pgmq.limit_short', '1', false);
    END IF;
    -- Each row by its ctid (of the first as many as there are messages), its message
    -- found by the ctid's place in free (no join with a function scan of the arrays:
    -- 54,000 instructions a claim of 10 less); every other condition is no index
    -- condition (IS NOT DISTINCT FROM), so the plan stays a TID scan of the rows given
    -- (with kind = 'f' PostgreSQL's generic plan scanned every slot of the index).
    -- The caller's own claim holds these rows (pgmq._limit_lock), so the update waits
    -- for nothing; a made-up ctid of a row another transaction holds would wait, which
    -- lock_timeout turns into an error at once (55P03, as NOWAIT: a re-lock SKIP LOCKED
    -- cost 48,000 instructions a claim of 10).
    UPDATE pgmq.queue_limit_slots l
    SET msg_id = ids[pg_catalog.array_position(free, l.ctid)],
        read_ct = read_cts[pg_catalog.array_position(free, l.ctid)]
    WHERE l.ctid = ANY (free[1:LEAST(pg_catalog.cardinality(ids), pg_catalog.cardinality(read_cts))])
      AND l.queue_name IS NOT DISTINCT FROM pg_catalog.lower($1)
      AND l.kind IS NOT DISTINCT FROM 'f'::"char";
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$function$
;
COMMENT ON FUNCTION pgmq._limit_record(text,integer,tid[],bigint[],integer[]) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._limit_record(text,integer,tid[],bigint[],integer[]) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_kept_prepare_sql(qtable text, op "char")
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT pg_catalog.format(
        'PREPARE %I ("char", integer, integer, timestamptz, bigint[], jsonb[], jsonb[], jsonb, bigint%s) AS %s',
        pgmq._queue_ops_kept_name(qtable, op),
        CASE WHEN op = 'm' THEN ', tid[]' ELSE '' END,
        pgmq._queue_ops_kept_sql(qtable, op));
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_kept_prepare_sql(text,"char") IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_kept_prepare_sql(text,"char") FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_kept_sql(qtable text, op "char", low text DEFAULT '$9'::text, qty text DEFAULT '$2'::text, secs text DEFAULT '$3'::text, cond text DEFAULT '$8'::text, ids text DEFAULT '$5'::text, vt text DEFAULT '$4'::text, msgs text DEFAULT '$6'::text, hdrs text DEFAULT '$7'::text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT CASE WHEN op IN ('a', 'd')
                THEN pgmq._queue_ops_ids_sql(qtable, op, ' AND ' || pgmq._limit_wake_sql(qtable), ids)
                -- 'l': a limited queue's read, run by the router after the claim filter
                -- capped its quantity (sql/25_attributes.sql): the plain read, no guard
                WHEN op = 'l'
                THEN pgmq._queue_ops_sql_for(qtable, 'r', low, qty, secs, cond)
                -- 'm': a max_in_flight queue's read on its short claim's slots ($10,
                -- pgmq._limit_lock): the plain read, at most as many as are free, recorded
                WHEN op = 'm'
                THEN pgmq._read_sql(qtable, false, low, qty, secs, cond, false, NULL::integer, NULL::text,
                                    pg_catalog.substr(qtable, 3))
                WHEN op = 's'
                THEN pgmq._queue_ops_ids_sql(qtable, op, ' WHERE ' || pgmq._kept_guard_sql(qtable), ids, vt, msgs, hdrs)
                ELSE pgmq._queue_ops_sql_for(qtable, op, low || ' AND ' || pgmq._kept_guard_sql(qtable), qty, secs, cond)
           END;
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_kept_sql(text,"char",text,text,text,text,text,text,text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_kept_sql(text,"char",text,text,text,text,text,text,text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_route_ids(queue_name text, p_op "char", p_vt timestamp with time zone, p_ids bigint[], p_msgs jsonb[], p_headers jsonb[])
 RETURNS SETOF bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    -- checks the name first, as pgmq's per-message functions do (sql/05_names.sql)
    qtable text := pgmq._message_table_name(queue_name, 'q'::text);
    attrs jsonb;
    op "char" := CASE WHEN p_op = 's' AND pg_catalog.cardinality(p_msgs) = 1 THEN '1' ELSE p_op END;
    stmt text;
BEGIN
    -- archive and delete: one statement for every queue, attributes or not (see "Kept
    -- plans"); in a session that keeps it, the fast path (migration 0042)
    IF op = 'a' OR op = 'd' THEN
        IF pg_catalog.current_setting(pgmq._queue_ops_kept_key(qtable, op), true) = 'p' THEN
            -- op written as a constant in each: the check's text is then built from its
            -- own branch only (pgmq._queue_ops_kept_sql's CASE folds when planned)
            IF op = 'a' THEN
                stmt := (SELECT k FROM pgmq._queue_ops_kept_stmt(qtable, 'a'::"char") k);
            ELSE
                stmt := (SELECT k FROM pgmq._queue_ops_kept_stmt(qtable, 'd'::"char") k);
            END IF;
        ELSE
            stmt := pgmq._queue_ops_prepared(qtable, op);
        END IF;
        IF stmt IS NOT NULL THEN
            RETURN QUERY SELECT * FROM pgmq._queue_ops_run_prepared_ids(stmt, p_ids);
        ELSE
            RETURN QUERY EXECUTE pgmq._queue_ops_kept_sql(qtable, op)
                USING p_op, NULL::integer, NULL::integer, p_vt, p_ids, p_msgs, p_headers,
                      NULL::jsonb, 0::bigint;
        END IF;
        RETURN;
    END IF;
    SELECT a.attributes INTO attrs
    FROM pgmq.queue_attributes a WHERE pg_catalog.lower(a.queue_name::text) = pg_catalog.lower($1);
    IF attrs IS NOT NULL THEN
        RETURN QUERY SELECT r.msg_id FROM pgmq._queue_ops_with_attributes(
            queue_name, attrs, p_op, NULL::integer, NULL::integer, p_vt, p_ids, p_msgs, p_headers,
            NULL::jsonb, 0::bigint) r;
        RETURN;
    END IF;
    RETURN QUERY EXECUTE pgmq._queue_ops_ids_sql(qtable, op)
        USING p_op, NULL::integer, NULL::integer, p_vt, p_ids, p_msgs, p_headers, NULL::jsonb, 0::bigint;
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_route_ids(text,"char",timestamp with time zone,bigint[],jsonb[],jsonb[]) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_route_ids(text,"char",timestamp with time zone,bigint[],jsonb[],jsonb[]) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_run_limited(stmt text, p_qty integer, p_secs integer, p_cond jsonb, low bigint, tids tid[])
 RETURNS SETOF pgmq.message_record
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
 SET enable_bitmapscan TO 'off'
AS $function$
BEGIN
    RETURN QUERY EXECUTE pg_catalog.format(
        'EXECUTE %I(NULL, %L, %L, NULL, NULL, NULL, NULL, %L, %L, %L)', stmt, p_qty, p_secs, p_cond, low, tids);
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_run_limited(text,integer,integer,jsonb,bigint,tid[]) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_run_limited(text,integer,integer,jsonb,bigint,tid[]) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_with_attributes(queue_name text, attrs jsonb, p_op "char", p_qty integer, p_secs integer, p_vt timestamp with time zone, p_ids bigint[], p_msgs jsonb[], p_headers jsonb[], p_cond jsonb, low bigint)
 RETURNS SETOF pgmq.message_record
 LANGUAGE plpgsql
AS $function$
DECLARE
    f record;
    qty integer := p_qty;
    rec pgmq.message_record;
    claimed bigint[] := '{}';
    claimed_rcs integer[] := '{}';
    claimed_vts timestamptz[] := '{}';
    n bigint;
    stmt text;
    qtable text;
    rows refcursor;
BEGIN
    IF p_op = 's' AND coalesce((attrs ->> 'deduplication_window')::integer, 0) > 0 THEN
        RETURN QUERY SELECT * FROM pgmq._send_deduplicated(queue_name, attrs, p_vt, p_msgs, p_headers);
        RETURN;
    END IF;
    IF p_op = 'r' OR p_op = 'p' THEN
        f := pgmq._claim_filter(queue_name, attrs, qty, p_op = 'p');
        qty := f.allowed;
        IF qty = 0 THEN
            RETURN;
        END IF;
        IF f.dead_letter_queue IS NOT NULL THEN
            PERFORM pgmq._ensure_dead_letter_queue(f.dead_letter_queue);
        END IF;
        IF f.held IS NOT NULL OR f.stamps IS NOT NULL THEN
            -- A limited queue: note what was claimed, for pgmq._claim_record. A read that
            -- the limits only cap (no priorities, no redrive) is the plain read of the
            -- quantity allowed: kept in the session as 'l' (sql/15_queue_ops.sql).
            IF p_op = 'r' AND NOT f.by_priority AND f.dead_letter_queue IS NULL THEN
                qtable := pgmq.format_table_name(queue_name, 'q'::text);
                -- once kept, straight to the check of its text (as archive and delete do)
                IF pg_catalog.current_setting(pgmq._queue_ops_kept_key(qtable, 'l'), true) = 'p' THEN
                    stmt := (SELECT k FROM pgmq._queue_ops_kept_stmt(qtable, 'l'::"char") k);
                ELSE
                    stmt := pgmq._queue_ops_prepared(qtable, 'l');
                END IF;
            END IF;
            IF stmt IS NOT NULL THEN
                RETURN QUERY
                    WITH r AS MATERIALIZED (
                        SELECT * FROM pgmq._queue_ops_run_prepared(stmt, qty, p_secs, p_ids, p_cond, low))
                    SELECT r.* FROM r
                    WHERE (SELECT pgmq._claim_record(
                                      queue_name, f.held, f.stamps, f.counts,
                                      pg_catalog.array_agg(x.msg_id), p_op = 'p',
                                      pg_catalog.array_agg(x.read_ct), pg_catalog.array_agg(x.vt)) IS NULL
                           FROM r x) IS NOT NULL;
                RETURN;
            END IF;
            OPEN rows FOR EXECUTE pgmq._queue_ops_attr_sql(queue_name, p_op, '$9'::text, attrs)
                USING p_op, qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond, low;
            LOOP
                FETCH rows INTO rec;
                EXIT WHEN NOT FOUND;
                claimed := claimed || rec.msg_id;
                claimed_rcs := claimed_rcs || rec.read_ct;
                claimed_vts := claimed_vts || rec.vt;
                RETURN NEXT rec;
            END LOOP;
            CLOSE rows;
            PERFORM pgmq._claim_record(queue_name, f.held, f.stamps, f.counts, claimed, p_op = 'p',
                                       claimed_rcs, claimed_vts);
            RETURN;
        END IF;
    END IF;
    IF p_op = 'a' OR p_op = 'd' OR p_op = 'v' THEN
        -- The plain statements, whatever the attributes: not worth writing them anew.
        RETURN QUERY EXECUTE pgmq._queue_ops_sql(queue_name, p_op, '$9')
            USING p_op, qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond, low;
    ELSE
        RETURN QUERY EXECUTE pgmq._queue_ops_attr_sql(queue_name, p_op, '$9', attrs)
            USING p_op, qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond, low;
    END IF;
    IF (p_op = 'a' OR p_op = 'd' OR (p_op = 'v' AND p_vt <= pg_catalog.clock_timestamp()))
       AND attrs ? 'max_in_flight' THEN
        -- A slot may have freed (not by a heartbeat's set_vt into the future): wake a
        -- worker waiting at the limit (at commit) if a claim found the queue full. The
        -- slot itself frees lazily (sql/26_limits.sql).
        GET DIAGNOSTICS n = ROW_COUNT;
        IF n > 0 THEN
            PERFORM pgmq._limit_wake(pg_catalog.lower(queue_name));
        END IF;
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_with_attributes(text,jsonb,"char",integer,integer,timestamp with time zone,bigint[],jsonb[],jsonb[],jsonb,bigint) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_with_attributes(text,jsonb,"char",integer,integer,timestamp with time zone,bigint[],jsonb[],jsonb[],jsonb,bigint) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._read_sql(qtable text, pops boolean, low text, qty text DEFAULT '$2'::text, secs text DEFAULT '$3'::text, cond text DEFAULT '$8'::text, by_priority boolean DEFAULT false, max_receive_count integer DEFAULT NULL::integer, dead_move text DEFAULT NULL::text, slots text DEFAULT NULL::text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT pg_catalog.format(
        CASE WHEN slots IS NOT NULL THEN $free$
        WITH free AS MATERIALIZED (
            SELECT ARRAY(
                SELECT l.ctid FROM pgmq.queue_limit_slots l
                WHERE l.ctid = ANY ($10::tid[])
                  AND (l.msg_id IS NULL OR l.read_ct = -1 OR NOT EXISTS (
                       SELECT FROM pgmq.%1$I f
                       WHERE f.msg_id = l.msg_id AND f.read_ct = l.read_ct AND f.vt > pg_catalog.clock_timestamp()))
            ) AS tids
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
        WHERE (SELECT pgmq._limit_record(%7$L::text, $2, (SELECT f.tids FROM free f),
                                         pg_catalog.array_agg(x.msg_id), pg_catalog.array_agg(x.read_ct))
               FROM claimed x) IS NOT NULL$rec$ ELSE '' END
        || $sql$ ORDER BY %4$s
        $sql$,
        qtable,
        pgmq._read_claim_sql(qtable, pops, secs,
            CASE WHEN dead_move IS NULL THEN pgmq._read_pick_sql(
                qtable, low,
                CASE WHEN slots IS NOT NULL
                     THEN 'LEAST(' || qty || ', (SELECT pg_catalog.cardinality(f.tids) FROM free f))' ELSE qty END,
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

CREATE OR REPLACE FUNCTION pgmq._workflow_ack()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    finished record;
    kid record;
    done boolean;
BEGIN
    UPDATE pgmq.workflow_step s
    SET status = CASE WHEN s.error IS NULL THEN 'done' ELSE 'failed' END,
        finished_at = pg_catalog.clock_timestamp()
    WHERE s.workflow_id = pgmq._workflow_header_id(OLD.headers)
      AND s.step = ((OLD.headers -> 'workflow'::text) ->> 'step'::text)
      AND s.status = 'sent'::text AND s.msg_id = OLD.msg_id
      AND pg_catalog.lower(s.queue_name) = pg_catalog.lower(TG_ARGV[0]::text)
    RETURNING s.workflow_id, s.status = 'failed'::text AS failed, s.children, s.child_stripes,
              s.step_no, s.step,
              CASE WHEN s.error IS NULL THEN s.result
                   ELSE pg_catalog.jsonb_build_object('error', s.error) END AS outcome
    INTO finished;
    IF NOT FOUND OR pg_catalog.cardinality(finished.children) = 0 THEN
        RETURN NULL;
    END IF;
    IF finished.failed OR finished.child_stripes[1] >= 0 OR pg_catalog.cardinality(finished.children) > 1 THEN
        done := pgmq._workflow_advance(finished.workflow_id, finished.failed,
                                       finished.children, finished.child_stripes,
                                       finished.step_no, finished.step, finished.outcome);
        RETURN NULL;
    END IF;
    -- The one child, whose one parent is this step (a chain's next step): one statement
    -- marks it sent (guarded), takes its msg_id from its queue's sequence and tells
    -- whether the queue has attributes; its message is then inserted with that id. The
    -- sequence is found by its name, q_<queue>_msg_id_seq (what PostgreSQL names a queue
    -- table's identity; pg_get_serial_sequence costs about 24,000 instructions more):
    -- that name is another queue's live table only when a queue "<queue>_msg_id_seq"
    -- exists (made before this one, whose sequence then got another name), told by that
    -- queue's archive table. msg_id NULL (that case, a sequence of another name, the queue
    -- gone) and a queue with attributes go pgmq._workflow_deliver's way (the queue looked
    -- up, pgmq.send for attributes, the step failed when the queue is gone). A stored
    -- queue name is valid, its tables are '<q|a>_' || lower(name) (pgmq.format_table_name).
    -- The insert is the one message statement written outside its builder
    -- (pgmq._send_sql): through the builder, and the names through format_table_name, a
    -- chain step cost 105,000 instructions more (docs/benchmarks.md, "Single-id
    -- acknowledgements"); tests/integration/test_statement_builders.py holds its columns
    -- to the builder's.
    UPDATE pgmq.workflow_step c
    SET status = 'sent', stripes_left = 0, sent_at = pg_catalog.clock_timestamp(),
        msg_id = CASE WHEN pg_catalog.to_regclass(
                              'pgmq.' || pg_catalog.quote_ident('a_' || pg_catalog.lower(c.queue_name) || '_msg_id_seq')) IS NULL
                      THEN pg_catalog.nextval(pg_catalog.to_regclass(
                              'pgmq.' || pg_catalog.quote_ident('q_' || pg_catalog.lower(c.queue_name) || '_msg_id_seq'))) END
    WHERE c.workflow_id = finished.workflow_id AND c.step_no = finished.children[1]
      AND c.status = 'waiting'::text
    RETURNING c.queue_name, c.msg_id, c.message, c.sent_at,
              coalesce(c.headers, '{}'::jsonb) || pg_catalog.jsonb_build_object('workflow', pg_catalog.jsonb_build_object(
                      'id', c.workflow_id, 'step', c.step, 'results',
                      pg_catalog.jsonb_build_object(finished.step, finished.outcome))) AS hdr,
              EXISTS (SELECT FROM pgmq.queue_attributes a
                      WHERE pg_catalog.lower(a.queue_name::text) = pg_catalog.lower(c.queue_name)) AS attrs
    INTO kid;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    IF kid.msg_id IS NULL OR kid.attrs THEN
        done := pgmq._workflow_deliver(finished.workflow_id, finished.children[1], kid.queue_name,
                                       kid.message, kid.hdr, false);
        RETURN NULL;
    END IF;
    EXECUTE 'INSERT INTO pgmq.' || pg_catalog.quote_ident('q_' || pg_catalog.lower(kid.queue_name))
            || '(msg_id,vt,message,headers)OVERRIDING SYSTEM VALUE VALUES($1,$2,$3,$4)'
        USING kid.msg_id, kid.sent_at, kid.message, kid.hdr;
    RETURN NULL;
END
$function$
;
COMMENT ON FUNCTION pgmq._workflow_ack() IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._workflow_ack() FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.read(queue_name text, vt integer, qty integer, conditional jsonb DEFAULT '{}'::jsonb)
 RETURNS SETOF pgmq.message_record
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text;
    n bigint;
    attrs jsonb;
    tids tid[];
    stmt text;
BEGIN
    IF qty IS NULL OR qty < 0 THEN
        RAISE EXCEPTION 'qty must be zero or more, got: %', coalesce(qty::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    qtable := pgmq._message_table_name(queue_name, 'q'::text);
    IF pg_catalog.current_setting(pgmq._queue_ops_kept_key(qtable, 'r'), true) = 'p' THEN
        RETURN QUERY SELECT * FROM pgmq._queue_ops_run_prepared(
            (SELECT k FROM pgmq._queue_ops_kept_stmt(qtable, 'r') k), qty, coalesce(vt, 0), NULL,
            coalesce(conditional, '{}'::jsonb), pgmq._low_water_mark_for(qtable));
        GET DIAGNOSTICS n = ROW_COUNT;
        IF n > 0 OR pgmq._queue_ops_kept_missed(queue_name, qtable, 'r') THEN
            RETURN;
        END IF;
    END IF;
    SELECT a.attributes INTO attrs
    FROM pgmq.queue_attributes a WHERE pg_catalog.lower(a.queue_name::text) = pg_catalog.lower($1);
    IF qty > 0 AND attrs ? 'max_in_flight' AND NOT attrs ?| pgmq._claim_keys_but_slots()
       AND pg_catalog.current_setting('transaction_isolation') = 'read committed' THEN
        -- The short claim (since migration 0010, docs/internals/attributes.md
        -- "Concurrency and rate limits"), here rather than in the router to spare its
        -- layer: a window of slots locked by the owner's pgmq._limit_lock, then the kept
        -- read 'm' (sql/15_queue_ops.sql) probes which are free, claims and records, in a
        -- statement of its own (its snapshot taken after the lock). When it used every
        -- free slot and that was fewer than asked, or no window was to be had, the rest
        -- goes the router's way, the checked claim (the ring walked, slots made, a full
        -- queue marked). At REPEATABLE READ and above the checked way only: it refuses a
        -- stale snapshot (pgmq._limit_reclaim).
        tids := pgmq._limit_lock(queue_name, qty);
        IF tids IS NOT NULL THEN
            IF pg_catalog.current_setting(pgmq._queue_ops_kept_key(qtable, 'm'), true) = 'p' THEN
                stmt := (SELECT k FROM pgmq._queue_ops_kept_stmt(qtable, 'm'::"char") k);
            ELSE
                stmt := pgmq._queue_ops_prepared(qtable, 'm');
            END IF;
            IF stmt IS NOT NULL THEN
                RETURN QUERY SELECT * FROM pgmq._queue_ops_run_limited(
                    stmt, qty, coalesce(vt, 0), coalesce(conditional, '{}'::jsonb),
                    pgmq._low_water_mark_for(qtable), tids);
            ELSE
                RETURN QUERY EXECUTE pgmq._queue_ops_kept_sql(qtable, 'm'::"char")
                    USING 'r'::"char", qty, coalesce(vt, 0), NULL::timestamptz, NULL::bigint[],
                          NULL::jsonb[], NULL::jsonb[], coalesce(conditional, '{}'::jsonb),
                          pgmq._low_water_mark_for(qtable), tids;
            END IF;
            GET DIAGNOSTICS n = ROW_COUNT;
            IF n >= qty OR pg_catalog.current_setting('pgmq.limit_short', true) IS DISTINCT FROM '1' THEN
                RETURN;
            END IF;
            PERFORM pg_catalog.set_config('pgmq.limit_short', '', false);
            qty := qty - n;
        END IF;
    END IF;
    RETURN QUERY SELECT * FROM pgmq._queue_ops_route(
        queue_name, 'r'::"char", qty, coalesce(vt, 0), NULL::timestamptz, NULL::bigint[], NULL::jsonb[],
        NULL::jsonb[], coalesce(conditional, '{}'::jsonb));
END
$function$
;
COMMENT ON FUNCTION pgmq.read(text,integer,integer,jsonb) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.read(text,integer,integer,jsonb) TO PUBLIC;

