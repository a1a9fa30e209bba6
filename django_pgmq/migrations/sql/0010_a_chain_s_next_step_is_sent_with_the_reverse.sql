-- 0010_a_chain_s_next_step_is_sent_with_the: a chain's next step is sent with the send's one builder's text, its tables named by format_table_name
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._send_sql(text,boolean,text,text,text,text,text,text,text,text);
CREATE OR REPLACE FUNCTION pgmq._send_sql(qtable text, one boolean DEFAULT false, cond text DEFAULT ''::text, vt text DEFAULT '$4'::text, msgs text DEFAULT '$6'::text, hdrs text DEFAULT '$7'::text, delay text DEFAULT ''::text, cols text DEFAULT 'q.msg_id'::text, rows text DEFAULT NULL::text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT pg_catalog.format(
        CASE WHEN one THEN $sql$
        INSERT INTO pgmq.%1$I AS q (vt, message, headers)
        VALUES (coalesce(%2$s, pg_catalog.clock_timestamp()%6$s), (%3$s)[1], (%4$s)[1])
        RETURNING %7$s$sql$
        WHEN rows IS NULL THEN $sql$
        INSERT INTO pgmq.%1$I AS q (vt, message, headers)
        SELECT coalesce(%2$s, pg_catalog.clock_timestamp()%6$s), u.msg, u.hdr
        FROM unnest(%3$s, %4$s) AS u(msg, hdr)%5$s
        RETURNING %7$s$sql$
        ELSE $sql$
        INSERT INTO pgmq.%1$I AS q (msg_id, vt, message, headers) OVERRIDING SYSTEM VALUE
        SELECT u.id, coalesce(%2$s, pg_catalog.clock_timestamp()%6$s), u.msg, u.hdr
        FROM %8$s%5$s
        RETURNING %7$s$sql$ END,
        qtable, vt, msgs, hdrs, cond, delay, cols, rows);
$function$
;
COMMENT ON FUNCTION pgmq._send_sql(text,boolean,text,text,text,text,text,text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._send_sql(text,boolean,text,text,text,text,text,text,text) FROM PUBLIC;

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
    UPDATE pgmq.workflow_step c
    SET status = 'sent', stripes_left = 0, sent_at = pg_catalog.clock_timestamp(),
        msg_id = CASE WHEN pg_catalog.to_regclass(
                              'pgmq.' || pg_catalog.quote_ident('a_' || pg_catalog.lower(c.queue_name) || '_msg_id_seq')) IS NULL
                      THEN pg_catalog.nextval(pg_catalog.to_regclass(
                              'pgmq.' || pg_catalog.quote_ident('q_' || pg_catalog.lower(c.queue_name) || '_msg_id_seq'))) END
    WHERE c.workflow_id = finished.workflow_id AND c.step_no = finished.children[1]
      AND c.status = 'waiting'::text
    RETURNING c.queue_name, c.msg_id, c.message, c.sent_at,
              CASE WHEN c.headers IS NULL
                   THEN pg_catalog.jsonb_build_object('workflow', pg_catalog.jsonb_build_object(
                            'id', c.workflow_id, 'step', c.step, 'results',
                            pg_catalog.jsonb_build_object(finished.step, finished.outcome)))
                   ELSE c.headers || pg_catalog.jsonb_build_object('workflow', pg_catalog.jsonb_build_object(
                            'id', c.workflow_id, 'step', c.step, 'results',
                            pg_catalog.jsonb_build_object(finished.step, finished.outcome))) END AS hdr,
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

