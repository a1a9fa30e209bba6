-- 0052_sql_api_fast_paths_limit_slots_by_key: SQL API fast paths, limit slots by key, chain steps sent directly
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
ALTER TABLE pgmq.workflow_step DROP CONSTRAINT IF EXISTS workflow_step_status_check;
DROP INDEX IF EXISTS pgmq.queue_limit_slots_free;
DROP INDEX IF EXISTS pgmq.workflow_step_sent_idx;
-- BY HAND: a step's status checked by a domain in place of the table's CHECK (which every
-- statement that writes a row read back from its text and prepared again)
CREATE DOMAIN pgmq.workflow_step_status AS text
    CONSTRAINT workflow_step_status_check CHECK (VALUE IN ('waiting', 'sent', 'done', 'failed', 'cancelled'));
ALTER TABLE pgmq.workflow_step ALTER COLUMN status TYPE pgmq.workflow_step_status;
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

CREATE OR REPLACE FUNCTION pgmq._low_water_mark_for(qtable text)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    -- '-' may not appear in a setting's name, '$' may, and never appears in a queue name
    kept text := pg_catalog.current_setting('pgmq.low_' || pg_catalog.replace(qtable, '-', '$'), true);
    -- a value of another shape than this function writes (set by hand) counts as none:
    -- never an error (80 characters keep the times within float8; the msg_id is checked
    -- for bigint below; a regular expression with counted repeats costs 15 us a call)
    mark text[] := CASE
        WHEN pg_catalog.octet_length(kept) <= 80
             AND kept ~ '^[0-9]+ [0-9]+(\.[0-9]+)? [0-9]+ [0-9]+(\.[0-9]+)?$'
        THEN pg_catalog.string_to_array(kept, ' ') END;
    now_s float8 := pg_catalog.date_part('epoch', pg_catalog.clock_timestamp());
    key text;
    rel oid;
    full_look boolean;
    low bigint;
    given bigint;  -- the id sequence's last value
BEGIN
    -- the common case first, in one test (each PL/pgSQL expression is set up again in
    -- every transaction): a mark of this table whose next look is not due
    IF mark[2]::float8 >= now_s AND mark[2]::float8 <= now_s + 0.05
       AND mark[4]::float8 >= now_s AND mark[4]::float8 <= now_s + 1
       AND pg_catalog.octet_length(mark[3]) <= 18
       AND mark[1] = pg_catalog.to_regclass(pg_catalog.format('pgmq.%I', qtable))::oid::text THEN
        RETURN mark[3]::bigint;
    END IF;
    key := 'pgmq.low_' || pg_catalog.replace(qtable, '-', '$');
    rel := pg_catalog.to_regclass(pg_catalog.format('pgmq.%I', qtable));
    IF rel IS NULL THEN
        RETURN 0;
    END IF;
    IF pg_catalog.octet_length(mark[3]) > 18 THEN  -- past bigint
        mark := NULL;
    END IF;
    -- a full look when there is no mark, another table's, one past its full look's time,
    -- or one whose times lie further ahead than this function ever writes them
    full_look := mark IS NULL OR mark[1] <> rel::text OR mark[4]::float8 < now_s
        OR mark[4]::float8 > now_s + 1 OR mark[2]::float8 > now_s + 0.05;
    IF NOT full_look THEN
        EXECUTE pg_catalog.format('SELECT q.msg_id FROM pgmq.%I q WHERE q.msg_id >= $1 ORDER BY q.msg_id LIMIT 1', qtable)
            INTO low USING mark[3]::bigint;
        IF low IS NULL THEN
            given := pg_catalog.pg_sequence_last_value(
                pg_catalog.pg_get_serial_sequence(pg_catalog.format('pgmq.%I', qtable), 'msg_id')::regclass);
            -- a mark past every id the sequence gave was not written by this function (or
            -- the sequence was restarted): look from the start
            full_look := mark[3]::bigint > coalesce(given, 0);
        END IF;
    END IF;
    IF full_look THEN
        EXECUTE pg_catalog.format('SELECT q.msg_id FROM pgmq.%I q ORDER BY q.msg_id LIMIT 1', qtable) INTO low;
    END IF;
    IF low IS NULL AND given IS NULL THEN
        given := pg_catalog.pg_sequence_last_value(
            pg_catalog.pg_get_serial_sequence(pg_catalog.format('pgmq.%I', qtable), 'msg_id')::regclass);
    END IF;
    low := coalesce(low, given, 0);
    PERFORM pg_catalog.set_config(key, pg_catalog.concat_ws(' ', rel, now_s + 0.05, low,
                                      CASE WHEN full_look THEN (now_s + 1)::text ELSE mark[4] END), false);
    RETURN low;
END
$function$
;
COMMENT ON FUNCTION pgmq._low_water_mark_for(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._low_water_mark_for(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_kept_stmt(qtable text, op "char")
 RETURNS SETOF text
 LANGUAGE sql
 STABLE ROWS 1
AS $function$
    SELECT CASE WHEN (SELECT s.statement FROM pg_catalog.pg_prepared_statements s
                      WHERE s.name = pgmq._queue_ops_kept_name(qtable, op))
                     = pgmq._queue_ops_kept_prepare_sql(qtable, op)
                THEN pgmq._queue_ops_kept_name(qtable, op)
                ELSE pgmq._queue_ops_kept_ready(qtable, op) END;
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_kept_stmt(text,"char") IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_kept_stmt(text,"char") FROM PUBLIC;

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
            stmt := (SELECT k FROM pgmq._queue_ops_kept_stmt(qtable, op) k);
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
BEGIN
    UPDATE pgmq.workflow_step s
    SET status = CASE WHEN s.error IS NULL THEN 'done' ELSE 'failed' END,
        finished_at = pg_catalog.clock_timestamp()
    WHERE s.workflow_id = pgmq._workflow_header_id(OLD.headers)
      AND s.step = ((OLD.headers -> 'workflow'::text) ->> 'step'::text)
      AND s.status = 'sent'::text AND s.msg_id = OLD.msg_id
      AND pg_catalog.lower(s.queue_name) = pg_catalog.lower(TG_ARGV[0]::text)
    RETURNING s.workflow_id, s.status = 'failed'::text AS failed, s.children, s.child_stripes INTO finished;
    IF FOUND AND pg_catalog.cardinality(finished.children) > 0 THEN
        PERFORM pgmq._workflow_advance(finished.workflow_id, finished.failed,
                                       finished.children, finished.child_stripes);
    END IF;
    RETURN NULL;
END
$function$
;
COMMENT ON FUNCTION pgmq._workflow_ack() IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._workflow_ack() FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._workflow_advance(wid bigint, failed boolean, kids integer[], kid_stripes integer[])
 RETURNS void
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
BEGIN
    IF coalesce(pg_catalog.cardinality(kids), 0) = 0 THEN
        RETURN;
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
        RETURN;
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
        IF left_ = 0 THEN
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
            PERFORM pgmq._workflow_deliver(wid, kids[i], qname, msg, hdr, false);
        END IF;
    END LOOP;
END
$function$
;
COMMENT ON FUNCTION pgmq._workflow_advance(bigint,boolean,integer[],integer[]) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._workflow_advance(bigint,boolean,integer[],integer[]) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._workflow_deliver(wid bigint, step_no integer, qname text, msg jsonb, hdr jsonb, first boolean)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    stored text;
    attrs jsonb;
    sent bigint;
BEGIN
    SELECT m.queue_name, a.attributes INTO stored, attrs
    FROM pgmq.meta m
    LEFT JOIN pgmq.queue_attributes a ON pg_catalog.lower(a.queue_name::text) = pg_catalog.lower(m.queue_name::text)
    WHERE pg_catalog.lower(m.queue_name::text) = pg_catalog.lower(qname);
    IF stored IS NULL THEN
        UPDATE pgmq.workflow_step s
        SET status = 'failed', finished_at = pg_catalog.clock_timestamp(),
            error = pg_catalog.jsonb_build_object(
                'error', pg_catalog.format('queue "%s" does not exist', qname))
        WHERE s.workflow_id = wid AND s.step_no = $2;
        PERFORM pgmq._workflow_finished(wid, $2, true);
        RETURN;
    END IF;
    IF attrs IS NULL THEN
        EXECUTE pgmq._send_sql(pgmq.format_table_name(stored, 'q'::text), true, ''::text,
                               'NULL::timestamptz'::text, '$1'::text, '$2'::text)
            INTO sent USING ARRAY[msg], ARRAY[hdr];
    ELSIF first THEN
        sent := pgmq.send(stored, msg, hdr);
    ELSE
        BEGIN
            sent := pgmq.send(stored, msg, hdr);
        EXCEPTION WHEN SQLSTATE 'PQ004' THEN
            UPDATE pgmq.workflow_step s
            SET status = 'failed', finished_at = pg_catalog.clock_timestamp(),
                error = pg_catalog.jsonb_build_object('error', SQLERRM)
            WHERE s.workflow_id = wid AND s.step_no = $2;
            PERFORM pgmq._workflow_finished(wid, $2, true);
            RETURN;
        END;
    END IF;
    UPDATE pgmq.workflow_step s SET msg_id = sent WHERE s.workflow_id = wid AND s.step_no = $2;
END
$function$
;
COMMENT ON FUNCTION pgmq._workflow_deliver(bigint,integer,text,jsonb,jsonb,boolean) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._workflow_deliver(bigint,integer,text,jsonb,jsonb,boolean) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._workflow_finished(wid bigint, step_no integer, failed boolean)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    kids integer[];
    kid_stripes integer[];
BEGIN
    SELECT s.children, s.child_stripes INTO kids, kid_stripes
    FROM pgmq.workflow_step s WHERE s.workflow_id = wid AND s.step_no = $2;
    PERFORM pgmq._workflow_advance(wid, failed, kids, kid_stripes);
END
$function$
;
COMMENT ON FUNCTION pgmq._workflow_finished(bigint,integer,boolean) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._workflow_finished(bigint,integer,boolean) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._workflow_graph(workflow_id bigint)
 RETURNS TABLE(step text, queue_name text, msg_id bigint, status text, message jsonb, headers jsonb, after text[], result jsonb, error jsonb, sent_at timestamp with time zone, finished_at timestamp with time zone)
 LANGUAGE plpgsql
 STABLE
AS $function$
BEGIN
    PERFORM pgmq._workflow_require($1);
    RETURN QUERY
        SELECT s.step, s.queue_name, s.msg_id, s.status::text, s.message, s.headers,
               ARRAY(SELECT p.step FROM pg_catalog.unnest(s.parents) WITH ORDINALITY u(n, k)
                     JOIN pgmq.workflow_step p ON p.workflow_id = s.workflow_id AND p.step_no = u.n
                     ORDER BY u.k),
               s.result, s.error, s.sent_at, s.finished_at
        FROM pgmq.workflow_step s WHERE s.workflow_id = $1 ORDER BY s.position;
END
$function$
;
COMMENT ON FUNCTION pgmq._workflow_graph(bigint) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._workflow_graph(bigint) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._workflow_header_id(headers jsonb)
 RETURNS bigint
 LANGUAGE sql
 IMMUTABLE
AS $function$
    SELECT CASE WHEN pg_catalog.jsonb_typeof(($1 -> 'workflow'::text) -> 'step'::text) = 'string'::text
                     AND (($1 -> 'workflow'::text) ->> 'id'::text) ~ '^[0-9]{1,18}$'::text
                THEN (($1 -> 'workflow'::text) ->> 'id'::text)::bigint END;
$function$
;
COMMENT ON FUNCTION pgmq._workflow_header_id(jsonb) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._workflow_header_id(jsonb) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._workflow_record(stored text, msg_id bigint, headers jsonb, result jsonb, error jsonb)
 RETURNS void
 LANGUAGE sql
AS $function$
    UPDATE pgmq.workflow_step s SET result = $4, error = $5
    WHERE s.workflow_id = pgmq._workflow_header_id($3)
      AND s.step = (($3 -> 'workflow'::text) ->> 'step'::text)
      AND s.status = 'sent'::text AND s.msg_id = $2
      AND pg_catalog.lower(s.queue_name) = pg_catalog.lower($1);
$function$
;
COMMENT ON FUNCTION pgmq._workflow_record(text,bigint,jsonb,jsonb,jsonb) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._workflow_record(text,bigint,jsonb,jsonb,jsonb) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._workflow_send(wid bigint, step_no integer)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    qname text;
    msg jsonb;
    hdr jsonb;
BEGIN
    UPDATE pgmq.workflow_step s SET status = 'sent', sent_at = pg_catalog.clock_timestamp()
    WHERE s.workflow_id = wid AND s.step_no = $2 AND s.status = 'waiting'::text
    RETURNING s.queue_name, s.message,
              coalesce(s.headers, '{}'::jsonb) || pg_catalog.jsonb_build_object('workflow',
                  pg_catalog.jsonb_build_object('id', wid, 'step', s.step))
    INTO qname, msg, hdr;
    IF FOUND THEN
        PERFORM pgmq._workflow_deliver(wid, $2, qname, msg, hdr, true);
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._workflow_send(bigint,integer) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._workflow_send(bigint,integer) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.archive(queue_name text, msg_ids bigint[])
 RETURNS SETOF bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    -- checks the name first, as pgmq's per-message functions do (sql/05_names.sql)
    qtable text := pgmq._message_table_name(queue_name, 'q'::text);
BEGIN
    -- the fast path (see read): the router's, without its layer
    IF pg_catalog.current_setting(pgmq._queue_ops_kept_key(qtable, 'a'), true) = 'p' THEN
        RETURN QUERY SELECT * FROM pgmq._queue_ops_run_prepared_ids(
            (SELECT k FROM pgmq._queue_ops_kept_stmt(qtable, 'a') k), msg_ids);
        RETURN;
    END IF;
    RETURN QUERY SELECT * FROM pgmq._queue_ops_route_ids(
        queue_name, 'a'::"char", NULL::timestamptz, msg_ids, NULL::jsonb[], NULL::jsonb[]);
END
$function$
;
COMMENT ON FUNCTION pgmq.archive(text,bigint[]) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.archive(text,bigint[]) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.delete(queue_name text, msg_ids bigint[])
 RETURNS SETOF bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    -- checks the name first, as pgmq's per-message functions do (sql/05_names.sql)
    qtable text := pgmq._message_table_name(queue_name, 'q'::text);
BEGIN
    -- the fast path (see read): the router's, without its layer
    IF pg_catalog.current_setting(pgmq._queue_ops_kept_key(qtable, 'd'), true) = 'p' THEN
        RETURN QUERY SELECT * FROM pgmq._queue_ops_run_prepared_ids(
            (SELECT k FROM pgmq._queue_ops_kept_stmt(qtable, 'd') k), msg_ids);
        RETURN;
    END IF;
    RETURN QUERY SELECT * FROM pgmq._queue_ops_route_ids(
        queue_name, 'd'::"char", NULL::timestamptz, msg_ids, NULL::jsonb[], NULL::jsonb[]);
END
$function$
;
COMMENT ON FUNCTION pgmq.delete(text,bigint[]) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.delete(text,bigint[]) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.pop(queue_name text, qty integer DEFAULT 1)
 RETURNS SETOF pgmq.message_record
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text;
    n bigint;
BEGIN
    IF qty IS NULL OR qty < 0 THEN
        RAISE EXCEPTION 'qty must be zero or more, got: %', coalesce(qty::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    qtable := pgmq._message_table_name(queue_name, 'q'::text);
    IF pg_catalog.current_setting(pgmq._queue_ops_kept_key(qtable, 'p'), true) = 'p' THEN
        RETURN QUERY SELECT * FROM pgmq._queue_ops_run_prepared(
            (SELECT k FROM pgmq._queue_ops_kept_stmt(qtable, 'p') k), qty, NULL, NULL, NULL,
            pgmq._low_water_mark_for(qtable));
        GET DIAGNOSTICS n = ROW_COUNT;
        IF n > 0 OR pgmq._queue_ops_kept_missed(queue_name, qtable, 'p') THEN
            RETURN;
        END IF;
    END IF;
    RETURN QUERY SELECT * FROM pgmq._queue_ops_route(
        queue_name, 'p'::"char", qty, NULL::integer, NULL::timestamptz, NULL::bigint[], NULL::jsonb[],
        NULL::jsonb[], NULL::jsonb);
END
$function$
;
COMMENT ON FUNCTION pgmq.pop(text,integer) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.pop(text,integer) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.read(queue_name text, vt integer, qty integer, conditional jsonb DEFAULT '{}'::jsonb)
 RETURNS SETOF pgmq.message_record
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text;
    n bigint;
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
    RETURN QUERY SELECT * FROM pgmq._queue_ops_route(
        queue_name, 'r'::"char", qty, coalesce(vt, 0), NULL::timestamptz, NULL::bigint[], NULL::jsonb[],
        NULL::jsonb[], coalesce(conditional, '{}'::jsonb));
END
$function$
;
COMMENT ON FUNCTION pgmq.read(text,integer,integer,jsonb) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.read(text,integer,integer,jsonb) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[])
 RETURNS SETOF bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text;
BEGIN
    IF msgs IS NULL OR pg_catalog.cardinality(msgs) = 0 THEN
        PERFORM pgmq._validate_batch_params(msgs, NULL::jsonb[]);
    END IF;
    qtable := pgmq._message_table_name(queue_name, 'q'::text);
    IF NOT EXISTS (SELECT FROM pgmq.queue_attributes a WHERE pg_catalog.lower(a.queue_name::text) = pg_catalog.lower($1)) THEN
        RETURN QUERY EXECUTE pgmq._queue_ops_ids_sql(
            qtable, CASE WHEN pg_catalog.cardinality(msgs) = 1 THEN '1' ELSE 's' END::"char")
            USING NULL::"char", NULL::integer, NULL::integer, NULL::timestamptz, NULL::bigint[],
                  msgs, NULL::jsonb[], NULL::jsonb, 0::bigint;
        RETURN;
    END IF;
    RETURN QUERY SELECT * FROM pgmq._queue_ops_route_ids(
        queue_name, 's'::"char", NULL::timestamptz, NULL::bigint[], msgs, NULL::jsonb[]);
END
$function$
;
COMMENT ON FUNCTION pgmq.send_batch(text,jsonb[]) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.send_batch(text,jsonb[]) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.workflow_status(workflow_id bigint)
 RETURNS TABLE(step text, queue_name text, msg_id bigint, status text, result jsonb, error jsonb, sent_at timestamp with time zone, finished_at timestamp with time zone)
 LANGUAGE plpgsql
 STABLE
AS $function$
BEGIN
    PERFORM pgmq._workflow_require($1);
    RETURN QUERY
        SELECT s.step, s.queue_name, s.msg_id, s.status::text, s.result, s.error, s.sent_at, s.finished_at
        FROM pgmq.workflow_step s WHERE s.workflow_id = $1 ORDER BY s.position;
END
$function$
;
COMMENT ON FUNCTION pgmq.workflow_status(bigint) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.workflow_status(bigint) TO PUBLIC;

CREATE INDEX queue_limit_slots_free ON pgmq.queue_limit_slots USING btree (queue_name, kind, t) WHERE (kind = 'r'::"char");

CREATE INDEX workflow_step_sent_idx ON pgmq.workflow_step USING btree (queue_name) WHERE ((status)::text = 'sent'::text);

-- BY HAND (done above): table pgmq.workflow_step
-- BY HAND (done above): type pgmq.workflow_step_status
