-- Workflows, how they advance (sql/55_workflows.sql has the tables, the header comment
-- on exactly-once and lock order, and create_workflow): the trigger on every queue's live
-- table, the striped countdown, and sending the steps whose parents have finished.

-- Advancing --------------------------------------------------------------------------------

-- The step a message's headers name: the workflow id of the header "workflow"
-- {"id": <digits>, "step": "<name>"}, NULL for any other header (the step's name is then
-- headers -> 'workflow' ->> 'step'). The acknowledgement's trigger and pgmq._workflow_record
-- both match a message to its step with it: the sent step of that id and name whose queue
-- and msg_id are the message's. Inlined into its callers' plans.
CREATE FUNCTION pgmq._workflow_header_id(headers jsonb)
RETURNS bigint
LANGUAGE sql IMMUTABLE
AS $fn$
    SELECT CASE WHEN pg_catalog.jsonb_typeof(($1 -> 'workflow'::text) -> 'step'::text) = 'string'::text
                     AND (($1 -> 'workflow'::text) ->> 'id'::text) ~ '^[0-9]{1,18}$'::text
                THEN (($1 -> 'workflow'::text) ->> 'id'::text)::bigint END;
$fn$;

-- Deliver step step_no of workflow wid, just marked sent: its message msg with headers
-- hdr (the header "workflow" included) to its queue qname; first: a first step, sent by
-- create_workflow, else one sent by an acknowledgement. A step whose queue is gone fails
-- instead. To a queue without attributes the message goes through the send builder's
-- one-message insert (pgmq._send_sql, what pgmq.send runs for such a queue) with no
-- subtransaction: nothing there can refuse it. A queue with attributes may (PQ004, e.g.
-- its max_message_size): pgmq.send runs, and for a step sent by an acknowledgement in a
-- subtransaction, so that the refusal fails the step instead of the acknowledgement
-- (which would otherwise fail on every retry); for a first step it refuses the workflow.
-- Called by the owner functions only (pgmq._workflow_send, pgmq._workflow_advance),
-- under their pinned search_path; not SECURITY DEFINER itself. Returns true: its callers
-- assign the call instead of PERFORMing it (an assignment of a call is a simple
-- expression, evaluated without a statement's executor start; a PERFORM is a SELECT).
CREATE FUNCTION pgmq._workflow_deliver(wid bigint, step_no integer, qname text, msg jsonb, hdr jsonb, first boolean)
RETURNS boolean
LANGUAGE plpgsql
AS $fn$
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
        RETURN true;
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
            RETURN true;
        END;
    END IF;
    UPDATE pgmq.workflow_step s SET msg_id = sent WHERE s.workflow_id = wid AND s.step_no = $2;
    RETURN true;
END
$fn$;

-- Send a first step (one without parents: create_workflow sends them), waiting -> sent,
-- guarded; its header "workflow" is {"id", "step"}.
CREATE FUNCTION pgmq._workflow_send(wid bigint, step_no integer)
RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    qname text;
    msg jsonb;
    hdr jsonb;
    done boolean;
BEGIN
    UPDATE pgmq.workflow_step s SET status = 'sent', sent_at = pg_catalog.clock_timestamp()
    WHERE s.workflow_id = wid AND s.step_no = $2 AND s.status = 'waiting'::text
    RETURNING s.queue_name, s.message,
              coalesce(s.headers, '{}'::jsonb) || pg_catalog.jsonb_build_object('workflow',
                  pg_catalog.jsonb_build_object('id', wid, 'step', s.step))
    INTO qname, msg, hdr;
    IF FOUND THEN
        done := pgmq._workflow_deliver(wid, $2, qname, msg, hdr, true);
    END IF;
END
$fn$;

-- A step of workflow wid has finished (done, or failed when failed), its children kids
-- counting it down in their stripes kid_stripes (its row's children and child_stripes):
-- count it down and send the children whose every parent has finished; under on_failure
-- 'cancel' a failure cancels every step that depends on it instead (they are all
-- waiting). One statement per child: its stripe counted down, and when that reached 0 its
-- stripes_left; when that reaches 0 the same update marks it sent (guarded: it was
-- waiting) and returns what its message needs; its header "workflow" then gets its
-- parents' results ({"error": ...} for a failed parent, under on_failure 'continue').
-- A child whose one parent is the step that finished (a chain's next step, a fan-out's
-- branch) gets its results from parent_no, parent_step and parent_result (what the
-- header shows for that step), given by the trigger, which has just updated that step in
-- this transaction: no statement reads them (that statement cost about 86,000
-- instructions; the chain step's acknowledgement as a whole went 1.49 M -> 1.45 M,
-- docs/benchmarks.md "A chain step's results without a statement"); no other session's
-- parent can be missed, there is none.
-- Called by the owner functions only (the trigger, pgmq._workflow_finished), under their
-- pinned search_path; not SECURITY DEFINER itself, so a role that calls it directly
-- writes nothing it may not write. Returns true (see pgmq._workflow_deliver).
CREATE FUNCTION pgmq._workflow_advance(
    wid bigint, failed boolean, kids integer[], kid_stripes integer[],
    parent_no integer DEFAULT NULL, parent_step text DEFAULT NULL, parent_result jsonb DEFAULT NULL
)
RETURNS boolean
LANGUAGE plpgsql
AS $fn$
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
        WHERE (kid_stripes[i] < 0 OR (SELECT t.pending FROM t) = 0)
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
$fn$;

-- A step has finished (done, or failed when failed): pgmq._workflow_advance with its
-- children read from its row.
CREATE FUNCTION pgmq._workflow_finished(wid bigint, step_no integer, failed boolean)
RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    kids integer[];
    kid_stripes integer[];
    done boolean;
BEGIN
    SELECT s.children, s.child_stripes INTO kids, kid_stripes
    FROM pgmq.workflow_step s WHERE s.workflow_id = wid AND s.step_no = $2;
    done := pgmq._workflow_advance(wid, failed, kids, kid_stripes);
END
$fn$;

-- The trigger on every queue's live table (TG_ARGV[0]: the queue's name): a deleted
-- message that is a sent step's own (pgmq._workflow_header_id) finishes the step, done,
-- or failed when an error was recorded for it first (pgmq.fail, a dead-letter move);
-- one statement, which also reads the children to count down (none: nothing more) and
-- what the step's children's header shows for it (its result, or {"error": ...}). A
-- chain's step (one child, whose one parent it is; done, not failed) sends that child
-- itself in two more statements (migration 0009: a chain step's acknowledgement went
-- from 2.60x a plain one to 1.99x in instructions, docs/benchmarks.md "Migration 0009";
-- 2.15x since 0010 made the plain one 15% cheaper, "Single-id acknowledgements"); any
-- other step goes pgmq._workflow_advance's way.
CREATE FUNCTION pgmq._workflow_ack()
RETURNS trigger
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
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
$fn$;

-- Give queue_name's live table the trigger (a partitioned one's clones to its partitions).
CREATE FUNCTION pgmq._workflow_trigger(queue_name text)
RETURNS void
LANGUAGE plpgsql
AS $fn$
BEGIN
    EXECUTE pg_catalog.format(
        'CREATE OR REPLACE TRIGGER pgmq_workflow_ack AFTER DELETE ON pgmq.%I FOR EACH ROW '
        'WHEN (OLD.headers OPERATOR(pg_catalog.?) ''workflow''::text) '
        'EXECUTE FUNCTION pgmq._workflow_ack(%L)',
        pgmq.format_table_name(queue_name, 'q'::text), queue_name);
END
$fn$;
