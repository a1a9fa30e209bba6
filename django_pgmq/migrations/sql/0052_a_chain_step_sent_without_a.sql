-- 0052_a_chain_step_sent_without_a: a chain step sent without a subtransaction
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
ALTER TABLE pgmq.workflow_step DROP CONSTRAINT IF EXISTS workflow_step_status_check;
DROP INDEX IF EXISTS pgmq.workflow_step_sent_idx;
-- BY HAND: a step's status checked by a domain in place of the table's CHECK (which every
-- statement that writes a row read back from its text and prepared again)
CREATE DOMAIN pgmq.workflow_step_status AS text
    CONSTRAINT workflow_step_status_check CHECK (VALUE IN ('waiting', 'sent', 'done', 'failed', 'cancelled'));
ALTER TABLE pgmq.workflow_step ALTER COLUMN status TYPE pgmq.workflow_step_status;
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

CREATE INDEX workflow_step_sent_idx ON pgmq.workflow_step USING btree (queue_name) WHERE ((status)::text = 'sent'::text);

-- BY HAND (done above): table pgmq.workflow_step
-- BY HAND (done above): type pgmq.workflow_step_status
