-- Workflows: steps (messages) that run after other steps, advanced by the acknowledgement
-- itself (docs/guide/workflows.md). A step's message carries the header "workflow"
-- {"id", "step"[, "results"]}; deleting or archiving it (pgmq.delete, pgmq.archive,
-- pgmq.pop, any client, single or array forms) finishes the step in that same
-- transaction, through one AFTER DELETE trigger on every queue's live table
-- (pgmq_workflow_ack, made with the queue by pgmq._workflow_trigger). A message without
-- the header pays only the trigger's WHEN test.
--
-- Exactly once: a step goes sent -> done/failed in one guarded UPDATE (status = 'sent'
-- and the step's own queue and msg_id, so a second acknowledgement, a copy of the
-- message or a forged header does nothing). A step with parents waits on counters
-- striped over up to 64 rows (parent at position i of its "after" -> stripe i % S): an
-- acknowledgement decrements its stripe (a row lock, re-checked under READ COMMITTED;
-- a serialization failure under REPEATABLE READ, which the client retries), the one that
-- brings a stripe to 0 decrements the step's stripes_left, and the one that brings that
-- to 0 sends the step (guarded waiting -> sent). No counter row every acknowledgement
-- waits on.
--
-- Lock order: step numbers (step_no) are a topological order of the workflow (parents
-- before children), and everything that locks several steps locks them in that order
-- (an acknowledgement: its own step, then its children ascending; a cancellation: every
-- step ascending), so they never deadlock.
--
-- Privileges: the tables are written only by the owner functions here (SECURITY DEFINER,
-- search_path pinned); application roles read them (SELECT, as the other side tables)
-- and call the functions. Creating a workflow needs INSERT on every queue it sends to,
-- cancelling one DELETE on the queues of its sent steps, completing or failing a step
-- DELETE on its queue: what the same role needs to send and acknowledge by hand.

CREATE TABLE pgmq.workflow (
    workflow_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    on_failure text NOT NULL,
    step_count integer NOT NULL,
    created_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    cancelled_at timestamptz,
    CONSTRAINT workflow_on_failure_check CHECK (on_failure IN ('cancel', 'continue'))
);

-- A step's status. A domain rather than a CHECK on the table: a table's CHECK is read
-- back from its stored text and prepared again by every statement that writes a row
-- (about 45,000 instructions an UPDATE of a step on PostgreSQL 15), a domain's once per
-- session, and only a statement that assigns the status checks it.
CREATE DOMAIN pgmq.workflow_step_status AS text
    CONSTRAINT workflow_step_status_check CHECK (VALUE IN ('waiting', 'sent', 'done', 'failed', 'cancelled'));

-- One row per step. step_no: its place in a topological order (the lock order);
-- position: its place in the spec (the order workflow_status lists). parents / children:
-- step_nos; child_stripes[i]: the stripe of children[i] this step counts down, -1 when
-- this step is that child's only parent (no stripe row: the child is sent by the
-- acknowledgement that finishes this step; workflows made before migration 0009 have
-- stripe 0 and a row for such a child, which works as well).
CREATE TABLE pgmq.workflow_step (
    workflow_id bigint NOT NULL,
    step_no integer NOT NULL,
    position integer NOT NULL,
    step text NOT NULL,
    queue_name text NOT NULL,
    message jsonb,
    headers jsonb,
    parents integer[] NOT NULL,
    children integer[] NOT NULL,
    child_stripes integer[] NOT NULL,
    stripes_left integer NOT NULL,
    status pgmq.workflow_step_status NOT NULL,
    msg_id bigint,
    result jsonb,
    error jsonb,
    sent_at timestamptz,
    finished_at timestamptz,
    PRIMARY KEY (workflow_id, step_no),
    CONSTRAINT workflow_step_name_key UNIQUE (workflow_id, step)
);
-- A queue's steps by message: what a purge or a drop of the queue fails (its sent steps),
-- and a dropped partition's steps by their msg_ids. No predicate on status: a column in
-- an index's predicate makes every change of it a non-HOT update (new entries in every
-- index of the table), and an acknowledgement changes a step's status (sent -> done:
-- about 34,000 instructions a step, docs/benchmarks.md "Migration 0009"). A purge or a
-- drop walks the queue's kept steps (the finished ones until retention removes them).
CREATE INDEX workflow_step_queue_msg_idx ON pgmq.workflow_step (queue_name, msg_id);

-- The striped counters of the steps with parents: pending parents per stripe.
CREATE TABLE pgmq.workflow_stripe (
    workflow_id bigint NOT NULL,
    step_no integer NOT NULL,
    stripe integer NOT NULL,
    pending integer NOT NULL,
    PRIMARY KEY (workflow_id, step_no, stripe)
);

-- Spec checks ----------------------------------------------------------------------------

-- What is wrong with one step object of a spec (NULL: nothing): its shape alone.
CREATE FUNCTION pgmq._workflow_step_problem(spec jsonb)
RETURNS text
LANGUAGE sql STABLE
AS $fn$
    SELECT CASE
        WHEN pg_catalog.jsonb_typeof(spec) IS DISTINCT FROM 'object'::text
            THEN 'must be a JSON object with "step", "queue" and "message"'
        WHEN pg_catalog.jsonb_typeof(spec -> 'step'::text) IS DISTINCT FROM 'string'::text
             OR (spec ->> 'step'::text) = ''::text
            THEN '"step" must be a non-empty string'
        WHEN EXISTS (SELECT FROM pg_catalog.jsonb_object_keys(spec) k
                     WHERE k NOT IN ('step'::text, 'queue'::text, 'message'::text, 'headers'::text, 'after'::text))
            THEN pg_catalog.format('unknown key "%s" (a step has step, queue, message, headers, after)',
                                   (SELECT pg_catalog.min(k) FROM pg_catalog.jsonb_object_keys(spec) k
                                    WHERE k NOT IN ('step'::text, 'queue'::text, 'message'::text,
                                                    'headers'::text, 'after'::text)))
        WHEN pg_catalog.jsonb_typeof(spec -> 'queue'::text) IS DISTINCT FROM 'string'::text
            THEN '"queue" must be a queue name (a string)'
        WHEN NOT spec ? 'message'::text
            THEN '"message" is missing'
        WHEN coalesce(pg_catalog.jsonb_typeof(spec -> 'headers'::text), 'null'::text) NOT IN ('object'::text, 'null'::text)
            THEN '"headers" must be a JSON object'
        WHEN (spec -> 'headers'::text) ? 'workflow'::text
            THEN '"headers" must not hold "workflow": every step''s message gets its own'
        WHEN coalesce(pg_catalog.jsonb_typeof(spec -> 'after'::text), 'null'::text) NOT IN ('array'::text, 'null'::text)
             OR EXISTS (SELECT FROM pg_catalog.jsonb_array_elements(
                                CASE WHEN pg_catalog.jsonb_typeof(spec -> 'after'::text) = 'array'::text
                                     THEN spec -> 'after'::text ELSE '[]'::jsonb END) a
                        WHERE pg_catalog.jsonb_typeof(a) IS DISTINCT FROM 'string'::text)
            THEN '"after" must be an array of step names'
    END;
$fn$;

-- How an error names a step: "name", or #n (its place in the spec) when it has none.
CREATE FUNCTION pgmq._workflow_step_label(spec jsonb, pos bigint)
RETURNS text
LANGUAGE sql STABLE
AS $fn$
    SELECT CASE WHEN pg_catalog.jsonb_typeof(spec -> 'step'::text) = 'string'::text
                     AND (spec ->> 'step'::text) <> ''::text
                THEN pg_catalog.format('"%s"', spec ->> 'step'::text)
                ELSE pg_catalog.format('#%s', pos) END;
$fn$;

-- Raise PQ004 "workflow step <label>: <problem>".
CREATE FUNCTION pgmq._workflow_refuse(label text, problem text, code text DEFAULT 'PQ004')
RETURNS void
LANGUAGE plpgsql
AS $fn$
BEGIN
    RAISE EXCEPTION 'workflow step %: %', label, problem
        USING ERRCODE = code, HINT = 'Nothing of the workflow was written.';
END
$fn$;

-- The checks of a whole spec that need no graph: shapes, unique names, "after" names.
-- Returns the name -> position map.
CREATE FUNCTION pgmq._workflow_check_spec(steps jsonb)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    n integer;
    bad record;
    names jsonb;
BEGIN
    IF pg_catalog.jsonb_typeof(steps) IS DISTINCT FROM 'array'::text THEN
        RAISE EXCEPTION 'workflow steps must be a JSON array of step objects, got %',
            coalesce(pg_catalog.jsonb_typeof(steps), 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    n := pg_catalog.jsonb_array_length(steps);
    IF n = 0 OR n > 10000 THEN
        RAISE EXCEPTION 'a workflow has 1 to 10000 steps, got %', n USING ERRCODE = 'PQ004';
    END IF;
    SELECT pgmq._workflow_step_label(e.spec, e.pos) AS label, p.problem INTO bad
    FROM pg_catalog.jsonb_array_elements(steps) WITH ORDINALITY e(spec, pos)
    CROSS JOIN LATERAL (SELECT pgmq._workflow_step_problem(e.spec) AS problem) p
    WHERE p.problem IS NOT NULL
    ORDER BY e.pos LIMIT 1;
    IF FOUND THEN
        PERFORM pgmq._workflow_refuse(bad.label, bad.problem);
    END IF;
    SELECT e.spec ->> 'step'::text AS name INTO bad
    FROM pg_catalog.jsonb_array_elements(steps) WITH ORDINALITY e(spec, pos)
    GROUP BY 1 HAVING pg_catalog.count(*) > 1
    ORDER BY pg_catalog.min(e.pos) LIMIT 1;
    IF FOUND THEN
        PERFORM pgmq._workflow_refuse(pg_catalog.format('"%s"', bad.name),
                                      'the name is used by more than one step');
    END IF;
    names := (SELECT pg_catalog.jsonb_object_agg(e.spec ->> 'step'::text, e.pos)
              FROM pg_catalog.jsonb_array_elements(steps) WITH ORDINALITY e(spec, pos));
    SELECT c.spec ->> 'step'::text AS child, a.parent,
           CASE WHEN a.parent = (c.spec ->> 'step'::text) THEN 'names the step itself'
                WHEN NOT names ? a.parent THEN 'is not a step of this workflow'
                ELSE 'is listed twice' END AS problem
    INTO bad
    FROM pg_catalog.jsonb_array_elements(steps) WITH ORDINALITY c(spec, pos)
    CROSS JOIN LATERAL pg_catalog.jsonb_array_elements_text(
        CASE WHEN pg_catalog.jsonb_typeof(c.spec -> 'after'::text) = 'array'::text
             THEN c.spec -> 'after'::text ELSE '[]'::jsonb END) WITH ORDINALITY a(parent, k)
    WHERE a.parent = (c.spec ->> 'step'::text) OR NOT names ? a.parent
       OR EXISTS (SELECT FROM pg_catalog.jsonb_array_elements_text(c.spec -> 'after'::text)
                  WITH ORDINALITY b(parent, k) WHERE b.parent = a.parent AND b.k < a.k)
    ORDER BY c.pos, a.k LIMIT 1;
    IF FOUND THEN
        PERFORM pgmq._workflow_refuse(pg_catalog.format('"%s"', bad.child),
                                      pg_catalog.format('"after" names "%s", which %s', bad.parent, bad.problem));
    END IF;
    RETURN names;
END
$fn$;

-- The queues of a spec as stored (spec's spelling -> stored name), each checked: it
-- exists and the session's login role may send to it.
CREATE FUNCTION pgmq._workflow_check_queues(steps jsonb)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    q record;
    stored text;
    found jsonb := '{}'::jsonb;
    owner_session boolean := pgmq._session_is_owner();
BEGIN
    FOR q IN
        SELECT e.spec ->> 'queue'::text AS queue, pg_catalog.min(e.pos) AS pos
        FROM pg_catalog.jsonb_array_elements(steps) WITH ORDINALITY e(spec, pos)
        GROUP BY 1 ORDER BY 2
    LOOP
        BEGIN
            stored := pgmq._stored_queue_name(q.queue);
        EXCEPTION WHEN SQLSTATE 'PQ001' THEN
            PERFORM pgmq._workflow_refuse(pgmq._workflow_step_label(steps -> (q.pos::integer - 1), q.pos),
                                          SQLERRM, 'PQ001');
        END;
        IF stored IS NULL THEN
            PERFORM pgmq._workflow_refuse(pgmq._workflow_step_label(steps -> (q.pos::integer - 1), q.pos),
                                          pg_catalog.format('queue "%s" does not exist', q.queue), 'PQ002');
        END IF;
        IF NOT EXISTS (
            SELECT FROM pg_catalog.pg_trigger t
            WHERE t.tgrelid = pg_catalog.to_regclass(pg_catalog.format('pgmq.%I', pgmq.format_table_name(stored, 'q'::text)))
              AND t.tgname = 'pgmq_workflow_ack'::name
        ) THEN
            -- an old install's table another role owns (see migration 0046)
            PERFORM pgmq._workflow_refuse(pgmq._workflow_step_label(steps -> (q.pos::integer - 1), q.pos),
                pg_catalog.format('queue "%s" has no workflow trigger: a DBA gives its table to the owner '
                                  'of schema pgmq and runs SELECT pgmq._workflow_trigger(%L)', stored, stored),
                'PQ000');
        END IF;
        IF NOT owner_session AND NOT pg_catalog.has_table_privilege(
                SESSION_USER, pg_catalog.format('pgmq.%I', pgmq.format_table_name(stored, 'q'::text)), 'INSERT'::text) THEN
            PERFORM pgmq._workflow_refuse(pgmq._workflow_step_label(steps -> (q.pos::integer - 1), q.pos),
                                          pg_catalog.format('role "%s" may not send to queue "%s"', SESSION_USER, stored),
                                          '42501');
        END IF;
        found := found || pg_catalog.jsonb_build_object(q.queue, stored);
    END LOOP;
    RETURN found;
END
$fn$;

-- A topological order of the spec's steps (positions, parents first), or the error
-- naming a step on a cycle. Kahn's algorithm over the edges (parent, child) given as
-- two arrays.
CREATE FUNCTION pgmq._workflow_order(steps jsonb, edge_parent integer[], edge_child integer[])
RETURNS integer[]
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    n integer := pg_catalog.jsonb_array_length(steps);
    m integer := coalesce(pg_catalog.cardinality(edge_parent), 0);
    indeg integer[] := pg_catalog.array_fill(0, ARRAY[n]);
    head integer[] := pg_catalog.array_fill(0, ARRAY[n + 1]);
    out_edges integer[] := pg_catalog.array_fill(0, ARRAY[greatest(m, 1)]);
    fill integer[];
    ready integer[] := '{}';
    top integer := 0;
    ordered integer[] := '{}';
    p integer;
    c integer;
    seen boolean[];
BEGIN
    FOR i IN 1 .. m LOOP
        indeg[edge_child[i]] := indeg[edge_child[i]] + 1;
        head[edge_parent[i] + 1] := head[edge_parent[i] + 1] + 1;
    END LOOP;
    head[1] := 1;
    FOR i IN 2 .. n + 1 LOOP
        head[i] := head[i] + head[i - 1];
    END LOOP;
    fill := head;
    FOR i IN 1 .. m LOOP
        out_edges[fill[edge_parent[i]]] := edge_child[i];
        fill[edge_parent[i]] := fill[edge_parent[i]] + 1;
    END LOOP;
    FOR i IN REVERSE n .. 1 LOOP
        IF indeg[i] = 0 THEN
            top := top + 1;
            ready[top] := i;
        END IF;
    END LOOP;
    WHILE top > 0 LOOP
        p := ready[top];
        top := top - 1;
        ordered := ordered || p;
        FOR i IN head[p] .. head[p + 1] - 1 LOOP
            c := out_edges[i];
            indeg[c] := indeg[c] - 1;
            IF indeg[c] = 0 THEN
                top := top + 1;
                ready[top] := c;
            END IF;
        END LOOP;
    END LOOP;
    IF pg_catalog.cardinality(ordered) < n THEN
        -- a step left over has a parent left over; walking up those ends on a cycle
        seen := pg_catalog.array_fill(false, ARRAY[n]);
        c := (SELECT pg_catalog.min(i) FROM pg_catalog.generate_subscripts(indeg, 1) i WHERE indeg[i] > 0);
        WHILE NOT seen[c] LOOP
            seen[c] := true;
            c := (SELECT edge_parent[i] FROM pg_catalog.generate_subscripts(edge_child, 1) i
                  WHERE edge_child[i] = c AND indeg[edge_parent[i]] > 0 LIMIT 1);
        END LOOP;
        PERFORM pgmq._workflow_refuse(pgmq._workflow_step_label(steps -> (c - 1), c),
                                      'its "after" steps form a cycle');
    END IF;
    RETURN ordered;
END
$fn$;

-- Creating ---------------------------------------------------------------------------------

-- Create a workflow from steps [{"step", "queue", "message", "headers", "after"}] and send
-- the steps without "after" now, in the caller's transaction. Everything is checked
-- before anything is written; one error names the step and the problem.
CREATE FUNCTION pgmq.create_workflow(steps jsonb, on_failure text DEFAULT 'cancel')
RETURNS bigint
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
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
        -- a child with one parent has no stripe row (-1): its parent's own guarded
        -- sent -> done is the only thing that can count it down
        SELECT e.parent, e.child,
               CASE WHEN e.parents = 1 THEN -1 ELSE (e.k % least(e.parents, 64))::integer END AS stripe, e.k
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
        FROM striped s WHERE s.stripe >= 0 GROUP BY s.child, s.stripe
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
$fn$;
