-- 0052_a_chain_step_sent_without_a: a chain step sent without a subtransaction
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._workflow_advance(bigint,boolean,integer[],integer[]);
DROP FUNCTION IF EXISTS pgmq._workflow_deliver(bigint,integer,text,jsonb,jsonb,boolean);
DROP FUNCTION IF EXISTS pgmq._workflow_header_id(jsonb);
DROP INDEX IF EXISTS pgmq.workflow_step_sent_idx;
-- BY HAND: the status back to text, with the table's CHECK (next)
ALTER TABLE pgmq.workflow_step ALTER COLUMN status TYPE text;
DROP DOMAIN pgmq.workflow_step_status;
ALTER TABLE pgmq.workflow_step ADD CONSTRAINT workflow_step_status_check CHECK ((status = ANY (ARRAY['waiting'::text, 'sent'::text, 'done'::text, 'failed'::text, 'cancelled'::text])));

CREATE OR REPLACE FUNCTION pgmq._workflow_ack()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
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
$function$
;
COMMENT ON FUNCTION pgmq._workflow_ack() IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._workflow_ack() FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._workflow_finished(wid bigint, step_no integer, failed boolean)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
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
        SELECT s.step, s.queue_name, s.msg_id, s.status, s.message, s.headers,
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

CREATE OR REPLACE FUNCTION pgmq._workflow_record(stored text, msg_id bigint, headers jsonb, result jsonb, error jsonb)
 RETURNS void
 LANGUAGE sql
AS $function$
    UPDATE pgmq.workflow_step s SET result = $4, error = $5
    WHERE pg_catalog.jsonb_typeof($3 -> 'workflow'::text) = 'object'::text
      AND (($3 -> 'workflow'::text) ->> 'id'::text) ~ '^[0-9]{1,18}$'::text
      AND s.workflow_id = (($3 -> 'workflow'::text) ->> 'id'::text)::bigint
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
$function$
;
COMMENT ON FUNCTION pgmq._workflow_send(bigint,integer) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._workflow_send(bigint,integer) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.workflow_status(workflow_id bigint)
 RETURNS TABLE(step text, queue_name text, msg_id bigint, status text, result jsonb, error jsonb, sent_at timestamp with time zone, finished_at timestamp with time zone)
 LANGUAGE plpgsql
 STABLE
AS $function$
BEGIN
    PERFORM pgmq._workflow_require($1);
    RETURN QUERY
        SELECT s.step, s.queue_name, s.msg_id, s.status, s.result, s.error, s.sent_at, s.finished_at
        FROM pgmq.workflow_step s WHERE s.workflow_id = $1 ORDER BY s.position;
END
$function$
;
COMMENT ON FUNCTION pgmq.workflow_status(bigint) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.workflow_status(bigint) TO PUBLIC;

CREATE INDEX workflow_step_sent_idx ON pgmq.workflow_step USING btree (queue_name) WHERE (status = 'sent'::text);

-- BY HAND (done above): table pgmq.workflow_step
-- BY HAND (done above): type pgmq.workflow_step_status
