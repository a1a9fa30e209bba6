-- 0009_limit_claims_walk_a_window_a_chain_step: limit claims walk a window, a chain step sends its next step
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP INDEX IF EXISTS pgmq.workflow_step_queue_msg_idx;
CREATE OR REPLACE FUNCTION pgmq._limit_take(lq text, kind "char", want integer, cap integer, made integer, free_before timestamp with time zone, qtable text)
 RETURNS tid[]
 LANGUAGE plpgsql
AS $function$
DECLARE
    got tid[] := '{}';
    seen integer[] := '{}';
    c_tids tid[];
    c_slots integer[];
    c_ids bigint[];
    c_held boolean;
    c_free tid[];
    freed tid[];
    n integer;
    rounds integer := 0;
    -- 'f' with no want (all there are): every free slot, found by the walk at once
    walk boolean := kind = 'f' AND want IS NULL;
    at_key text := 'pgmq.limit_at_' || pg_catalog.replace(lq, '-', '$');
    at_ text := pg_catalog.current_setting(at_key, true);
    at integer := CASE WHEN at_ ~ '^[0-9]{1,9}$' THEN at_::integer ELSE 1 END;
    wrapped boolean := false;
    had integer;
BEGIN
    IF want <= 0 THEN
        RETURN got;
    END IF;
    IF kind = 'r' THEN
        -- (an IF of its own: a condition with a subquery runs as a statement, also for 'f')
        IF EXISTS (SELECT 1 FROM pgmq.queue_limit_slots l
                   WHERE l.queue_name::text = lq AND l.kind = 'r' AND l.slot > cap
                     AND l.t > free_before) THEN
            RETURN got;
        END IF;
        SELECT pg_catalog.array_agg(x.ctid) INTO c_tids
        FROM (SELECT l.ctid FROM pgmq.queue_limit_slots l
              WHERE l.queue_name::text = lq AND l.kind = 'r' AND l.slot <= cap AND l.t <= free_before
              ORDER BY l.t
              LIMIT want
              FOR UPDATE SKIP LOCKED) x;
        got := coalesce(c_tids, '{}');
    ELSE
        IF EXISTS (SELECT 1 FROM pgmq.queue_limit_slots l
                   WHERE l.queue_name::text = lq AND l.kind = 'f' AND l.slot > cap
                     AND l.msg_id IS NOT NULL) THEN
            EXECUTE pg_catalog.format(
                'SELECT EXISTS (SELECT 1 FROM pgmq.queue_limit_slots l JOIN pgmq.%I q '
                '  ON q.msg_id = l.msg_id AND q.read_ct = l.read_ct AND q.vt > pg_catalog.clock_timestamp() '
                '  WHERE l.queue_name::text = $1 AND l.kind = ''f'' AND l.slot > $2)', qtable)
                INTO c_held USING lq, cap;
            IF c_held THEN
                RETURN got;
            END IF;
        END IF;
        IF at > LEAST(cap, made) THEN
            at := 1;
        END IF;
        LOOP
            rounds := rounds + 1;
            -- The rows locked, as locked (the latest version of each: what the claim
            -- checks after its lock).
            IF NOT walk THEN
                SELECT pg_catalog.array_agg(x.ctid), pg_catalog.array_agg(x.slot),
                       pg_catalog.array_agg(x.msg_id),
                       pg_catalog.bool_or(x.msg_id IS NOT NULL AND x.read_ct <> -1),
                       pg_catalog.array_agg(x.ctid) FILTER (WHERE x.msg_id IS NULL OR x.read_ct = -1)
                INTO c_tids, c_slots, c_ids, c_held, c_free
                FROM (SELECT l.ctid, l.slot, l.msg_id, l.read_ct FROM pgmq.queue_limit_slots l
                      WHERE l.queue_name::text = lq AND l.kind = 'f' AND l.slot >= at
                        AND l.slot <= cap AND l.slot <> ALL (seen)
                      ORDER BY l.slot
                      LIMIT want - pg_catalog.cardinality(got)
                      FOR UPDATE SKIP LOCKED) x;
            ELSE
                EXECUTE pg_catalog.format(
                    'SELECT pg_catalog.array_agg(x.ctid), pg_catalog.array_agg(x.slot), '
                    '       pg_catalog.array_agg(x.msg_id), '
                    '       pg_catalog.bool_or(x.msg_id IS NOT NULL AND x.read_ct <> -1), '
                    '       pg_catalog.array_agg(x.ctid) FILTER (WHERE x.msg_id IS NULL OR x.read_ct = -1) '
                    'FROM (SELECT l.ctid, l.slot, l.msg_id, l.read_ct FROM pgmq.queue_limit_slots l '
                    '      WHERE l.queue_name::text = $1 AND l.kind = ''f'' AND l.slot >= $5 '
                    '        AND l.slot <= $2 AND l.slot <> ALL ($3) '
                    '        AND NOT EXISTS (SELECT 1 FROM pgmq.%I q WHERE q.msg_id = l.msg_id '
                    '            AND q.read_ct = l.read_ct AND q.vt > pg_catalog.clock_timestamp()) '
                    '      ORDER BY l.slot LIMIT $4 FOR UPDATE SKIP LOCKED) x', qtable)
                INTO c_tids, c_slots, c_ids, c_held, c_free
                USING lq, cap, seen, want - pg_catalog.cardinality(got), at;
            END IF;
            IF c_tids IS NULL THEN
                -- the end of the ring: once round from its start
                EXIT WHEN wrapped OR at = 1;
                wrapped := true;
                at := 1;
                CONTINUE;
            END IF;
            seen := seen || c_slots;
            -- by slot number: the last is the highest (a hint only, whatever it is)
            at := c_slots[pg_catalog.cardinality(c_slots)] + 1;
            -- the slots free as locked (no message, or reclaimed already), and those
            -- whose message is no longer in flight under the read that took them
            freed := CASE WHEN c_held
                          THEN coalesce(c_free, '{}') || pgmq._limit_reclaim(lq, c_tids, c_ids, qtable)
                          ELSE c_tids END;
            got := got || freed;
            EXIT WHEN want IS NULL OR pg_catalog.cardinality(got) >= want OR rounds >= 6;
            IF NOT walk AND pg_catalog.cardinality(freed) < pg_catalog.cardinality(c_tids) THEN
                -- Some slots tried still hold messages in flight: walk past them (the
                -- cursor then starts this session's next claim after them), unless every
                -- slot is made and the queue was found full within the last second.
                walk := made < cap OR NOT EXISTS (
                    SELECT 1 FROM pgmq.queue_limit_slots w
                    WHERE w.queue_name::text = lq AND w.kind = 'w' AND w.slot = 0
                      AND w.t > pg_catalog.clock_timestamp() - interval '1 second');
                EXIT WHEN NOT walk;
            END IF;
        END LOOP;
        PERFORM pg_catalog.set_config(at_key, at::text, false);
    END IF;
    IF (want IS NULL OR pg_catalog.cardinality(got) < want) AND made < cap THEN
        -- Make more rows, under the state row (SKIP LOCKED: a claim making rows now, or
        -- idle after it, leaves this one with what it has).
        SELECT CASE WHEN $2 = 'f' THEN l.slots_made ELSE l.tokens_made END INTO made
        FROM pgmq.queue_limit_state l WHERE l.queue_name::text = lq
        FOR NO KEY UPDATE SKIP LOCKED;
        IF made < cap THEN
            n := LEAST(cap - made,
                       GREATEST(coalesce(want - pg_catalog.cardinality(got), cap - made),
                                LEAST(made, pgmq._limit_prefill())));
            had := pg_catalog.cardinality(got);
            -- Rows above made may exist (kept while taken when the limit was lowered).
            WITH m AS (
                INSERT INTO pgmq.queue_limit_slots AS l (queue_name, kind, slot)
                SELECT lq, $2, g FROM pg_catalog.generate_series(made + 1, made + n) g
                ON CONFLICT DO NOTHING
                RETURNING l.ctid, l.slot
            )
            SELECT got || coalesce(ARRAY(
                SELECT m.ctid FROM m ORDER BY m.slot
                LIMIT coalesce(want - pg_catalog.cardinality(got), n)), '{}')
            INTO got;
            IF kind = 'f' THEN
                UPDATE pgmq.queue_limit_state l SET slots_made = made + n WHERE l.queue_name::text = lq;
                -- this session's next claim starts after the new rows it took
                PERFORM pg_catalog.set_config(
                    at_key, (made + 1 + pg_catalog.cardinality(got) - had)::text, false);
            ELSE
                UPDATE pgmq.queue_limit_state l SET tokens_made = made + n WHERE l.queue_name::text = lq;
            END IF;
        END IF;
    END IF;
    RETURN got;
END
$function$
;
COMMENT ON FUNCTION pgmq._limit_take(text,"char",integer,integer,integer,timestamp with time zone,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._limit_take(text,"char",integer,integer,integer,timestamp with time zone,text) FROM PUBLIC;

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
        f := pgmq._claim_filter(queue_name, attrs, p_qty, p_op = 'p');
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
                    stmt := pgmq._queue_ops_kept_ready(qtable, 'l');
                ELSE
                    stmt := pgmq._queue_ops_prepared(qtable, 'l');
                END IF;
            END IF;
            IF stmt IS NOT NULL THEN
                OPEN rows FOR SELECT * FROM pgmq._queue_ops_run_prepared(stmt, qty, p_secs, p_ids, p_cond, low);
            ELSE
                OPEN rows FOR EXECUTE pgmq._queue_ops_attr_sql(queue_name, p_op, '$9'::text, attrs)
                    USING p_op, qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond, low;
            END IF;
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

CREATE OR REPLACE FUNCTION pgmq._workflow_ack()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    finished record;
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
    IF FOUND AND pg_catalog.cardinality(finished.children) > 0 THEN
        done := pgmq._workflow_advance(finished.workflow_id, finished.failed,
                                       finished.children, finished.child_stripes,
                                       finished.step_no, finished.step, finished.outcome);
    END IF;
    RETURN NULL;
END
$function$
;
COMMENT ON FUNCTION pgmq._workflow_ack() IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._workflow_ack() FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._workflow_advance(wid bigint, failed boolean, kids integer[], kid_stripes integer[], parent_no integer DEFAULT NULL::integer, parent_step text DEFAULT NULL::text, parent_result jsonb DEFAULT NULL::jsonb)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
DECLARE
    left_ integer;
    qname text;
    msg jsonb;
    step_ text;
    hdr jsonb;
    parent_nos integer[];
    cancelled integer[];
    done boolean;
BEGIN
    IF coalesce(pg_catalog.cardinality(kids), 0) = 0 THEN
        RETURN true;
    END IF;
    -- the policy is looked up only for a failure (a test with a subquery costs its
    -- executor start even when the test before it is false)
    IF failed THEN
        failed := (SELECT w.on_failure FROM pgmq.workflow w WHERE w.workflow_id = wid) = 'cancel'::text;
    END IF;
    IF failed THEN
        WITH RECURSIVE below(n) AS (
            SELECT k.n FROM pg_catalog.unnest(kids) k(n)
            UNION
            SELECT k.n FROM below b
            JOIN pgmq.workflow_step s ON s.workflow_id = wid AND s.step_no = b.n
            CROSS JOIN LATERAL pg_catalog.unnest(s.children) k(n)
        )
        SELECT pg_catalog.array_agg(x.step_no ORDER BY x.step_no) INTO cancelled
        FROM (SELECT s.step_no FROM pgmq.workflow_step s
              WHERE s.workflow_id = wid AND s.step_no IN (SELECT b.n FROM below b)
                AND s.status = 'waiting'::text
              ORDER BY s.step_no FOR UPDATE) x;
        UPDATE pgmq.workflow_step s
        SET status = 'cancelled', finished_at = pg_catalog.clock_timestamp()
        WHERE s.workflow_id = wid AND s.step_no = ANY(cancelled) AND s.status = 'waiting'::text;
        RETURN true;
    END IF;
    FOR i IN 1 .. pg_catalog.cardinality(kids) LOOP
        WITH t AS (
            UPDATE pgmq.workflow_stripe t SET pending = t.pending - 1
            WHERE t.workflow_id = wid AND t.step_no = kids[i] AND t.stripe = kid_stripes[i]
            RETURNING t.pending
        )
        UPDATE pgmq.workflow_step s
        SET stripes_left = s.stripes_left - 1,
            status = CASE WHEN s.stripes_left = 1 THEN 'sent'::text ELSE s.status END,
            sent_at = CASE WHEN s.stripes_left = 1 THEN pg_catalog.clock_timestamp() ELSE s.sent_at END
        WHERE (SELECT t.pending FROM t) = 0
          AND s.workflow_id = wid AND s.step_no = kids[i] AND s.status = 'waiting'::text
        RETURNING s.stripes_left, s.queue_name, s.message, s.step, s.headers, s.parents
        INTO left_, qname, msg, step_, hdr, parent_nos;
        IF left_ = 0 AND parent_no IS NOT NULL AND parent_nos = ARRAY[parent_no] THEN
            hdr := coalesce(hdr, '{}'::jsonb) || pg_catalog.jsonb_build_object('workflow',
                pg_catalog.jsonb_build_object('id', wid, 'step', step_, 'results',
                    pg_catalog.jsonb_build_object(parent_step, parent_result)));
            done := pgmq._workflow_deliver(wid, kids[i], qname, msg, hdr, false);
        ELSIF left_ = 0 THEN
            -- a statement of its own, so under READ COMMITTED a snapshot of its own: a
            -- parent acknowledged in another session committed before the update above
            -- made this step sent (the update waited for it, on the stripe or the step's
            -- row) but perhaps after that update's snapshot was taken
            hdr := coalesce(hdr, '{}'::jsonb) || pg_catalog.jsonb_build_object('workflow',
                pg_catalog.jsonb_build_object('id', wid, 'step', step_, 'results', (
                    SELECT pg_catalog.jsonb_object_agg(
                               p.step, CASE WHEN p.status = 'failed'::text
                                            THEN pg_catalog.jsonb_build_object('error', p.error)
                                            ELSE p.result END)
                    FROM pgmq.workflow_step p
                    WHERE p.workflow_id = wid AND p.step_no = ANY(parent_nos))));
            done := pgmq._workflow_deliver(wid, kids[i], qname, msg, hdr, false);
        END IF;
    END LOOP;
    RETURN true;
END
$function$
;
COMMENT ON FUNCTION pgmq._workflow_advance(bigint,boolean,integer[],integer[],integer,text,jsonb) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._workflow_advance(bigint,boolean,integer[],integer[],integer,text,jsonb) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.create_workflow(steps jsonb, on_failure text DEFAULT 'cancel'::text)
 RETURNS bigint
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    names jsonb;
    queues jsonb;
    edge_parent integer[];
    edge_child integer[];
    ordered integer[];
    step_of integer[];
    wid bigint;
    root integer;
BEGIN
    IF on_failure IS NULL OR on_failure NOT IN ('cancel'::text, 'continue'::text) THEN
        RAISE EXCEPTION 'workflow on_failure must be ''cancel'' or ''continue'', got %',
            coalesce(pg_catalog.quote_literal(on_failure), 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    names := pgmq._workflow_check_spec(steps);
    queues := pgmq._workflow_check_queues(steps);
    SELECT pg_catalog.array_agg((names ->> a.parent)::integer ORDER BY c.pos, a.k),
           pg_catalog.array_agg(c.pos::integer ORDER BY c.pos, a.k)
    INTO edge_parent, edge_child
    FROM pg_catalog.jsonb_array_elements(steps) WITH ORDINALITY c(spec, pos)
    CROSS JOIN LATERAL pg_catalog.jsonb_array_elements_text(
        CASE WHEN pg_catalog.jsonb_typeof(c.spec -> 'after'::text) = 'array'::text
             THEN c.spec -> 'after'::text ELSE '[]'::jsonb END) WITH ORDINALITY a(parent, k);
    ordered := pgmq._workflow_order(steps, edge_parent, edge_child);
    step_of := pg_catalog.array_fill(0, ARRAY[pg_catalog.cardinality(ordered)]);
    FOR i IN 1 .. pg_catalog.cardinality(ordered) LOOP
        step_of[ordered[i]] := i;
    END LOOP;

    INSERT INTO pgmq.workflow (on_failure, step_count)
    VALUES (on_failure, pg_catalog.cardinality(ordered))
    RETURNING workflow_id INTO wid;

    -- edges by step_no: the parent's k-th place among the child's parents picks its stripe
    WITH edge AS (
        SELECT step_of[e.parent] AS parent, step_of[e.child] AS child,
               pg_catalog.row_number() OVER (PARTITION BY e.child ORDER BY e.ord) - 1 AS k,
               pg_catalog.count(*) OVER (PARTITION BY e.child) AS parents
        FROM unnest(edge_parent, edge_child) WITH ORDINALITY e(parent, child, ord)
    ), striped AS (
        SELECT e.parent, e.child, (e.k % least(e.parents, 64))::integer AS stripe, e.k
        FROM edge e
    ), down AS (
        SELECT s.parent, pg_catalog.array_agg(s.child ORDER BY s.child) AS children,
               pg_catalog.array_agg(s.stripe ORDER BY s.child) AS stripes
        FROM striped s GROUP BY s.parent
    ), up AS (
        SELECT s.child, pg_catalog.array_agg(s.parent ORDER BY s.k) AS parents,
               pg_catalog.count(DISTINCT s.stripe)::integer AS stripes
        FROM striped s GROUP BY s.child
    ), counters AS (
        INSERT INTO pgmq.workflow_stripe (workflow_id, step_no, stripe, pending)
        SELECT wid, s.child, s.stripe, pg_catalog.count(*)::integer
        FROM striped s GROUP BY s.child, s.stripe
    )
    INSERT INTO pgmq.workflow_step (
        workflow_id, step_no, position, step, queue_name, message, headers, parents,
        children, child_stripes, stripes_left, status)
    SELECT wid, step_of[e.pos], e.pos, e.spec ->> 'step'::text, queues ->> (e.spec ->> 'queue'::text),
           e.spec -> 'message'::text, nullif(e.spec -> 'headers'::text, 'null'::jsonb),
           coalesce(u.parents, '{}'), coalesce(d.children, '{}'), coalesce(d.stripes, '{}'),
           coalesce(u.stripes, 0), 'waiting'
    FROM pg_catalog.jsonb_array_elements(steps) WITH ORDINALITY e(spec, pos)
    LEFT JOIN up u ON u.child = step_of[e.pos]
    LEFT JOIN down d ON d.parent = step_of[e.pos];

    FOR root IN
        SELECT s.step_no FROM pgmq.workflow_step s
        WHERE s.workflow_id = wid AND s.stripes_left = 0 ORDER BY s.step_no
    LOOP
        PERFORM pgmq._workflow_send(wid, root);
    END LOOP;
    RETURN wid;
END
$function$
;
COMMENT ON FUNCTION pgmq.create_workflow(jsonb,text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.create_workflow(jsonb,text) TO PUBLIC;

CREATE INDEX workflow_step_sent_idx ON pgmq.workflow_step USING btree (queue_name) WHERE ((status)::text = 'sent'::text);


-- BY HAND: a workflow made after 0009 gives a child with one parent no stripe row (its
-- parent's child_stripes says -1); the functions restored above count every child down
-- in a row: give the waiting ones their row (pending 1: their parent has not finished)
-- and their parents stripe 0, as 0008 made them.
INSERT INTO pgmq.workflow_stripe (workflow_id, step_no, stripe, pending)
SELECT c.workflow_id, c.step_no, 0, 1 FROM pgmq.workflow_step c
WHERE c.status = 'waiting' AND pg_catalog.cardinality(c.parents) = 1
ON CONFLICT DO NOTHING;
UPDATE pgmq.workflow_step p
SET child_stripes = ARRAY(SELECT GREATEST(x.s, 0) FROM pg_catalog.unnest(p.child_stripes) WITH ORDINALITY x(s, k)
                          ORDER BY x.k)
WHERE -1 = ANY(p.child_stripes);
