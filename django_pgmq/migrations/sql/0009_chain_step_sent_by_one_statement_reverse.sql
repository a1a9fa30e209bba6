-- 0009_chain_step_sent_by_one_statement: chain step sent by one statement
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP INDEX IF EXISTS pgmq.workflow_step_queue_msg_idx;
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
