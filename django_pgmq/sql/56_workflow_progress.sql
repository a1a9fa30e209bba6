-- Workflows, how they advance (sql/55_workflows.sql has the tables, the header comment
-- on exactly-once and lock order, and create_workflow): the trigger on every queue's live
-- table, the striped countdown, and sending the steps whose parents have finished.

-- Advancing --------------------------------------------------------------------------------

-- Send a waiting step (waiting -> sent, guarded), its header "workflow" holding its
-- parents' results ({"error": ...} for a failed parent, under on_failure 'continue').
-- A step whose queue is gone fails instead.
CREATE FUNCTION pgmq._workflow_send(wid bigint, step_no integer)
RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    st pgmq.workflow_step;
    results jsonb;
    header jsonb;
    sent bigint;
BEGIN
    UPDATE pgmq.workflow_step s SET status = 'sent', sent_at = pg_catalog.clock_timestamp()
    WHERE s.workflow_id = wid AND s.step_no = $2 AND s.status = 'waiting'::text
    RETURNING s.* INTO st;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    IF pgmq._stored_queue_name(st.queue_name) IS NULL THEN
        UPDATE pgmq.workflow_step s
        SET status = 'failed', finished_at = pg_catalog.clock_timestamp(),
            error = pg_catalog.jsonb_build_object(
                'error', pg_catalog.format('queue "%s" does not exist', st.queue_name))
        WHERE s.workflow_id = wid AND s.step_no = $2;
        PERFORM pgmq._workflow_finished(wid, $2, true);
        RETURN;
    END IF;
    header := pg_catalog.jsonb_build_object('id', wid, 'step', st.step);
    IF pg_catalog.cardinality(st.parents) > 0 THEN
        results := (SELECT pg_catalog.jsonb_object_agg(
                               p.step, CASE WHEN p.status = 'failed'::text
                                            THEN pg_catalog.jsonb_build_object('error', p.error)
                                            ELSE p.result END)
                    FROM pgmq.workflow_step p
                    WHERE p.workflow_id = wid AND p.step_no = ANY(st.parents));
        header := header || pg_catalog.jsonb_build_object('results', results);
    END IF;
    IF st.parents = '{}'::integer[] THEN
        -- a first step, sent by create_workflow: a refusal refuses the workflow
        sent := pgmq.send(st.queue_name::text, st.message,
                          coalesce(st.headers, '{}'::jsonb) || pg_catalog.jsonb_build_object('workflow', header));
    ELSE
        -- sent by an acknowledgement: a queue that refuses the message (PQ004, e.g. its
        -- max_message_size) fails the step instead of the acknowledgement, which would
        -- otherwise fail on every retry (a subtransaction, only when a step is sent)
        BEGIN
            sent := pgmq.send(st.queue_name::text, st.message,
                              coalesce(st.headers, '{}'::jsonb) || pg_catalog.jsonb_build_object('workflow', header));
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
$fn$;

-- A step has finished (done, or failed when failed): count it down in its children's
-- stripes and send those whose every parent has finished; under on_failure 'cancel' a
-- failure cancels every step that depends on it instead (they are all waiting).
CREATE FUNCTION pgmq._workflow_finished(wid bigint, step_no integer, failed boolean)
RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    kids integer[];
    kid_stripes integer[];
    left_ integer;
    cancelled integer[];
BEGIN
    SELECT s.children, s.child_stripes INTO kids, kid_stripes
    FROM pgmq.workflow_step s WHERE s.workflow_id = wid AND s.step_no = $2;
    IF coalesce(pg_catalog.cardinality(kids), 0) = 0 THEN
        RETURN;
    END IF;
    IF failed AND (SELECT w.on_failure FROM pgmq.workflow w WHERE w.workflow_id = wid) = 'cancel'::text THEN
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
        UPDATE pgmq.workflow_stripe t SET pending = t.pending - 1
        WHERE t.workflow_id = wid AND t.step_no = kids[i] AND t.stripe = kid_stripes[i]
        RETURNING t.pending INTO left_;
        IF left_ = 0 THEN
            UPDATE pgmq.workflow_step s SET stripes_left = s.stripes_left - 1
            WHERE s.workflow_id = wid AND s.step_no = kids[i] AND s.status = 'waiting'::text
            RETURNING s.stripes_left INTO left_;
            IF left_ = 0 THEN
                PERFORM pgmq._workflow_send(wid, kids[i]);
            END IF;
        END IF;
    END LOOP;
END
$fn$;

-- The trigger on every queue's live table (TG_ARGV[0]: the queue's name): a deleted
-- message that is a sent step's own finishes the step, done, or failed when an error was
-- recorded for it first (pgmq.fail, a dead-letter move).
CREATE FUNCTION pgmq._workflow_ack()
RETURNS trigger
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    wf jsonb := OLD.headers -> 'workflow'::text;
    finished record;
BEGIN
    IF pg_catalog.jsonb_typeof(wf -> 'step'::text) IS DISTINCT FROM 'string'::text
       OR (wf ->> 'id'::text) !~ '^[0-9]{1,18}$'::text THEN
        RETURN NULL;
    END IF;
    UPDATE pgmq.workflow_step s
    SET status = CASE WHEN s.error IS NULL THEN 'done' ELSE 'failed' END,
        finished_at = pg_catalog.clock_timestamp()
    WHERE s.workflow_id = (wf ->> 'id'::text)::bigint AND s.step = (wf ->> 'step'::text)
      AND s.status = 'sent'::text AND s.msg_id = OLD.msg_id
      AND pg_catalog.lower(s.queue_name) = pg_catalog.lower(TG_ARGV[0]::text)
    RETURNING s.workflow_id, s.step_no, s.status INTO finished;
    IF FOUND THEN
        PERFORM pgmq._workflow_finished(finished.workflow_id, finished.step_no, finished.status = 'failed'::text);
    END IF;
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
