-- Workflows: results and failures recorded before a message leaves (complete, fail,
-- dead letters, retention, purge, drop), reading, cancelling and retention
-- (sql/55_workflows.sql has the tables and the design notes).

-- Results and failures -----------------------------------------------------------------------

-- Raise 42501 unless the session's login role may delete from queue_name's live table
-- (stored name): who may acknowledge its messages may settle its steps.
CREATE FUNCTION pgmq._workflow_require_delete(stored text)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
    IF NOT pgmq._session_is_owner() AND NOT pg_catalog.has_table_privilege(
            SESSION_USER, pg_catalog.format('pgmq.%I', pgmq.format_table_name(stored, 'q'::text)), 'DELETE'::text) THEN
        RAISE EXCEPTION 'permission denied: role "%" may not acknowledge messages of queue "%"', SESSION_USER, stored
            USING ERRCODE = '42501';
    END IF;
END
$fn$;

-- Record a result or an error on the sent step whose message (queue_name, msg_id,
-- headers) is about to be deleted; the trigger then finishes it. Nothing for another
-- message. The step is matched as the trigger matches it (pgmq._workflow_header_id).
CREATE FUNCTION pgmq._workflow_record(stored text, msg_id bigint, headers jsonb, result jsonb, error jsonb)
RETURNS void
LANGUAGE sql
AS $fn$
    UPDATE pgmq.workflow_step s SET result = $4, error = $5
    WHERE s.workflow_id = pgmq._workflow_header_id($3)
      AND s.step = (($3 -> 'workflow'::text) ->> 'step'::text)
      AND s.status = 'sent'::text AND s.msg_id = $2
      AND pg_catalog.lower(s.queue_name) = pg_catalog.lower($1);
$fn$;

-- pgmq.complete's and pgmq.fail's first half: lock the message and record result or
-- error on its step. PQ002 for a queue that does not exist.
CREATE FUNCTION pgmq._workflow_settle(queue_name text, msg_id bigint, result jsonb, error jsonb)
RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    stored text := pgmq._require_queue(queue_name);
    hdr jsonb;
BEGIN
    PERFORM pgmq._workflow_require_delete(stored);
    EXECUTE pg_catalog.format('SELECT m.headers FROM pgmq.%I m WHERE m.msg_id = $1 FOR UPDATE',
                              pgmq.format_table_name(stored, 'q'::text))
        INTO hdr USING msg_id;
    IF hdr ? 'workflow'::text THEN
        PERFORM pgmq._workflow_record(stored, msg_id, hdr, result, error);
    END IF;
END
$fn$;

-- Finish a workflow step with a result: archive its message (any message: then only
-- archived). True when the message was there.
CREATE FUNCTION pgmq.complete(queue_name text, msg_id bigint, result jsonb)
RETURNS boolean
LANGUAGE plpgsql
AS $fn$
BEGIN
    PERFORM pgmq._workflow_settle(queue_name, msg_id, result, NULL::jsonb);
    RETURN pgmq.archive(queue_name, msg_id);
END
$fn$;

-- Fail a workflow step with an error (JSON null when none is given): archive its message.
-- True when the message was there.
CREATE FUNCTION pgmq.fail(queue_name text, msg_id bigint, error jsonb)
RETURNS boolean
LANGUAGE plpgsql
AS $fn$
BEGIN
    PERFORM pgmq._workflow_settle(queue_name, msg_id, NULL::jsonb, coalesce(error, 'null'::jsonb));
    RETURN pgmq.archive(queue_name, msg_id);
END
$fn$;

-- Called for each message that leaves its queue by a delete that is no acknowledgement,
-- before that delete's trigger runs: the dead-letter move (sql/25_attributes.sql,
-- pgmq._dead_letter_move_sql) and message_retention (pgmq._retention_batch). A workflow
-- step's message gets error recorded, so the delete fails the step instead of finishing
-- it. Returns headers as they are.
CREATE FUNCTION pgmq._workflow_message_failed(headers jsonb, queue_name text, msg_id bigint, error jsonb)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
    IF headers ? 'workflow'::text THEN
        PERFORM pgmq._workflow_require_delete(queue_name);
        PERFORM pgmq._workflow_record(queue_name, msg_id, headers, NULL::jsonb, error);
    END IF;
    RETURN headers;
END
$fn$;

-- The sent steps of a queue whose messages went without a delete (purge_queue truncates,
-- drop_queue drops; with msg_ids, only those messages': a partition dropped by
-- retention): failed, with reason as their error. The caller holds the queue.
CREATE FUNCTION pgmq._workflow_queue_lost(queue_name text, reason text, msg_ids bigint[] DEFAULT NULL)
RETURNS integer
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    st record;
    n integer := 0;
BEGIN
    IF NOT pgmq._session_is_owner() AND NOT EXISTS (
        SELECT FROM pgmq.app_role a JOIN pg_catalog.pg_roles r ON r.rolname = a.role_name
        WHERE pg_catalog.pg_has_role(SESSION_USER, r.oid, 'MEMBER'::text)
    ) THEN
        RAISE EXCEPTION 'permission denied: role "%" is not an application role of pgmq', SESSION_USER
            USING ERRCODE = '42501';
    END IF;
    FOR st IN
        SELECT s.workflow_id, s.step_no FROM pgmq.workflow_step s
        WHERE s.queue_name = $1 AND s.status = 'sent'::text AND ($3 IS NULL OR s.msg_id = ANY($3))
        ORDER BY s.workflow_id, s.step_no FOR UPDATE
    LOOP
        UPDATE pgmq.workflow_step s
        SET status = 'failed', finished_at = pg_catalog.clock_timestamp(),
            error = pg_catalog.jsonb_build_object('error', reason)
        WHERE s.workflow_id = st.workflow_id AND s.step_no = st.step_no;
        PERFORM pgmq._workflow_finished(st.workflow_id, st.step_no, true);
        n := n + 1;
    END LOOP;
    RETURN n;
END
$fn$;

-- Reading and cancelling -------------------------------------------------------------------

-- Raise PQ006 unless workflow wid exists.
CREATE FUNCTION pgmq._workflow_require(wid bigint)
RETURNS void
LANGUAGE plpgsql STABLE
AS $fn$
BEGIN
    IF NOT EXISTS (SELECT FROM pgmq.workflow w WHERE w.workflow_id = wid) THEN
        RAISE EXCEPTION 'workflow % does not exist', coalesce(wid::text, 'NULL')
            USING ERRCODE = 'PQ006', HINT = 'Finished workflows are removed after PGMQ["WORKFLOW_RETENTION"].';
    END IF;
END
$fn$;

-- Every step of a workflow, in the spec's order.
CREATE FUNCTION pgmq.workflow_status(workflow_id bigint)
RETURNS TABLE(step text, queue_name text, msg_id bigint, status text, result jsonb, error jsonb,
              sent_at timestamptz, finished_at timestamptz)
LANGUAGE plpgsql STABLE
AS $fn$
BEGIN
    PERFORM pgmq._workflow_require($1);
    RETURN QUERY
        SELECT s.step, s.queue_name, s.msg_id, s.status::text, s.result, s.error, s.sent_at, s.finished_at
        FROM pgmq.workflow_step s WHERE s.workflow_id = $1 ORDER BY s.position;
END
$fn$;

-- Every step of a workflow with what the admin's page draws: its message and headers,
-- and the names of the steps it runs after (the dependency graph), in the spec's order.
CREATE FUNCTION pgmq._workflow_graph(workflow_id bigint)
RETURNS TABLE(step text, queue_name text, msg_id bigint, status text, message jsonb, headers jsonb,
              after text[], result jsonb, error jsonb, sent_at timestamptz, finished_at timestamptz)
LANGUAGE plpgsql STABLE
AS $fn$
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
$fn$;

-- Workflows, newest first (below before_id when given), with their status: running
-- (a step waiting or sent), cancelled (pgmq.cancel_workflow), failed (a step failed),
-- else done; only those of status when given.
CREATE FUNCTION pgmq.list_workflows(status text DEFAULT NULL, max_rows integer DEFAULT 100, before_id bigint DEFAULT NULL)
RETURNS TABLE(workflow_id bigint, status text, on_failure text, steps_done integer, steps_total integer,
              created_at timestamptz, finished_at timestamptz)
LANGUAGE sql STABLE
AS $fn$
    SELECT x.* FROM (
        SELECT w.workflow_id,
               CASE WHEN w.cancelled_at IS NOT NULL THEN 'cancelled'
                    WHEN c.running > 0 THEN 'running'
                    WHEN c.failed > 0 THEN 'failed'
                    ELSE 'done' END::text,
               w.on_failure, c.done, w.step_count, w.created_at,
               CASE WHEN c.running = 0 THEN c.last END
        FROM pgmq.workflow w
        CROSS JOIN LATERAL (
            SELECT pg_catalog.count(*) FILTER (WHERE s.status IN ('waiting'::text, 'sent'::text))::integer AS running,
                   pg_catalog.count(*) FILTER (WHERE s.status = 'failed'::text)::integer AS failed,
                   pg_catalog.count(*) FILTER (WHERE s.status = 'done'::text)::integer AS done,
                   pg_catalog.max(s.finished_at) AS last
            FROM pgmq.workflow_step s WHERE s.workflow_id = w.workflow_id
        ) c
        WHERE $3 IS NULL OR w.workflow_id < $3
        ORDER BY w.workflow_id DESC
    ) x(workflow_id, status, on_failure, steps_done, steps_total, created_at, finished_at)
    WHERE $1 IS NULL OR x.status = $1
    LIMIT greatest(coalesce($2, 100), 0);
$fn$;

-- Cancel a workflow: its waiting and sent steps become cancelled, and the sent ones'
-- messages are deleted from their queues, except those another transaction holds (a
-- consumer acknowledging or handling them: their acknowledgement finds the step cancelled
-- and does nothing; a message handed back stays, and its acknowledgement does nothing).
-- Returns how many steps were cancelled.
CREATE FUNCTION pgmq.cancel_workflow(workflow_id bigint)
RETURNS integer
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    q record;
    n integer;
BEGIN
    PERFORM pgmq._workflow_require($1);
    FOR q IN
        SELECT DISTINCT s.queue_name FROM pgmq.workflow_step s
        WHERE s.workflow_id = $1 AND s.status = 'sent'::text ORDER BY 1
    LOOP
        PERFORM pgmq._workflow_require_delete(q.queue_name);
    END LOOP;
    UPDATE pgmq.workflow w SET cancelled_at = coalesce(w.cancelled_at, pg_catalog.clock_timestamp())
    WHERE w.workflow_id = $1;
    -- in step order, as acknowledgements lock (see the top of this file)
    PERFORM FROM (SELECT s.step_no FROM pgmq.workflow_step s
                  WHERE s.workflow_id = $1 AND s.status IN ('waiting'::text, 'sent'::text)
                  ORDER BY s.step_no FOR UPDATE) x;
    n := 0;
    FOR q IN
        WITH gone AS (
            UPDATE pgmq.workflow_step s
            SET status = 'cancelled', finished_at = pg_catalog.clock_timestamp()
            WHERE s.workflow_id = $1 AND s.status IN ('waiting'::text, 'sent'::text)
            RETURNING s.queue_name, s.msg_id
        )
        SELECT g.queue_name, pg_catalog.array_agg(g.msg_id) FILTER (WHERE g.msg_id IS NOT NULL) AS ids,
               pg_catalog.count(*)::integer AS steps
        FROM gone g GROUP BY g.queue_name ORDER BY 1
    LOOP
        n := n + q.steps;
        IF q.ids IS NOT NULL AND pgmq._stored_queue_name(q.queue_name) IS NOT NULL THEN
            -- a message another transaction holds is skipped, never waited for: its
            -- acknowledgement (which waits for these steps) then finds them cancelled
            EXECUTE pg_catalog.format(
                'DELETE FROM pgmq.%1$I m WHERE m.msg_id = ANY(ARRAY('
                'SELECT x.msg_id FROM pgmq.%1$I x WHERE x.msg_id = ANY($1) FOR UPDATE SKIP LOCKED))',
                pgmq.format_table_name(q.queue_name, 'q'::text))
                USING q.ids;
        END IF;
    END LOOP;
    RETURN n;
END
$fn$;

-- Retention: remove the workflows that finished (no step waiting or sent) longer than
-- keep_seconds ago, at most batch of them; returns how many went.
CREATE FUNCTION pgmq._workflow_retention(keep_seconds double precision, batch integer DEFAULT 1000)
RETURNS integer
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    gone bigint[];
BEGIN
    IF NOT pgmq._session_is_owner() AND NOT EXISTS (
        SELECT FROM pgmq.app_role a JOIN pg_catalog.pg_roles r ON r.rolname = a.role_name
        WHERE pg_catalog.pg_has_role(SESSION_USER, r.oid, 'MEMBER'::text)
    ) THEN
        RAISE EXCEPTION 'permission denied: role "%" is not an application role of pgmq', SESSION_USER
            USING ERRCODE = '42501';
    END IF;
    IF keep_seconds IS NULL OR keep_seconds < 0 OR batch IS NULL OR batch < 1 THEN
        RAISE EXCEPTION 'workflow retention needs keep_seconds >= 0 and batch >= 1, got % and %',
            keep_seconds, batch USING ERRCODE = 'PQ004';
    END IF;
    gone := ARRAY(
        SELECT w.workflow_id FROM pgmq.workflow w
        WHERE w.created_at < pg_catalog.clock_timestamp() - pg_catalog.make_interval(secs => keep_seconds)
          AND NOT EXISTS (SELECT FROM pgmq.workflow_step s
                          WHERE s.workflow_id = w.workflow_id
                            AND (s.status IN ('waiting'::text, 'sent'::text)
                                 OR s.finished_at >= pg_catalog.clock_timestamp()
                                                     - pg_catalog.make_interval(secs => keep_seconds)))
        ORDER BY w.workflow_id LIMIT batch
        FOR UPDATE SKIP LOCKED);
    DELETE FROM pgmq.workflow_stripe t WHERE t.workflow_id = ANY(gone);
    DELETE FROM pgmq.workflow_step s WHERE s.workflow_id = ANY(gone);
    DELETE FROM pgmq.workflow w WHERE w.workflow_id = ANY(gone);
    RETURN pg_catalog.cardinality(gone);
END
$fn$;
