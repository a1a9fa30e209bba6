-- 0008_attributes_limits_schedules_tasks_workflows_and_roles: attributes limits schedules tasks workflows and roles
-- Frozen when written; never edit a released migration.
-- 0039_one_check_for_the_number_kinds_of
-- 0039_one_check_for_the_number_kinds_of: one check for the number kinds of attributes
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
CREATE OR REPLACE FUNCTION pgmq._check_queue_attributes(queue_name text, attrs jsonb)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    k text;
    v jsonb;
    ok boolean;
    kind text;
    minimum integer;
BEGIN
    FOR k, v IN SELECT e.key, e.value FROM jsonb_each(attrs) e ORDER BY e.key LOOP
        SELECT d.kind, d.minimum INTO kind, minimum
        FROM pgmq._queue_attribute_declaration() d WHERE d.key = k;
        ok := CASE
            -- the number kinds: an integer at least the declared minimum
            WHEN kind IN ('seconds', 'bytes', 'count') THEN pgmq._json_int_at_least(v, minimum)
            WHEN kind = 'switch' THEN jsonb_typeof(v) = 'boolean'
            WHEN kind = 'queue' THEN jsonb_typeof(v) = 'string'
            -- CASE, not AND: each test may only run once the one before it held.
            WHEN kind = 'rate' THEN CASE
                WHEN jsonb_typeof(v) <> 'object' THEN false
                WHEN (SELECT array_agg(x ORDER BY x) FROM jsonb_object_keys(v) x)
                     <> '{count,seconds}' THEN false
                WHEN jsonb_typeof(v -> 'seconds') <> 'number' THEN false
                ELSE pgmq._json_int_at_least(v -> 'count', 1)
                     AND (v ->> 'seconds')::numeric > 0 AND (v ->> 'seconds')::numeric <= 31536000
                END
            ELSE false  -- unknown key (no row): the error says so
        END;
        IF NOT ok THEN
            PERFORM pgmq._bad_queue_attribute(queue_name, k, v);
        END IF;
    END LOOP;
    IF attrs ? 'dead_letter_queue' THEN
        BEGIN
            PERFORM pgmq.validate_queue_name(attrs ->> 'dead_letter_queue');
        EXCEPTION WHEN SQLSTATE 'PQ001' THEN
            PERFORM pgmq._bad_queue_attribute(queue_name, 'dead_letter_queue', attrs -> 'dead_letter_queue');
        END;
        IF lower(attrs ->> 'dead_letter_queue') = lower(queue_name) THEN
            RAISE EXCEPTION 'queue "%": queue attribute "dead_letter_queue" must be another queue, '
                'not the queue itself', queue_name
                USING ERRCODE = 'PQ004';
        END IF;
    END IF;
    IF (attrs ? 'max_receive_count') <> (attrs ? 'dead_letter_queue') THEN
        RAISE EXCEPTION 'queue "%": queue attributes "max_receive_count" and "dead_letter_queue" '
            'go together: set both, or remove both', queue_name
            USING ERRCODE = 'PQ004';
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._check_queue_attributes(text,jsonb) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._check_queue_attributes(text,jsonb) FROM PUBLIC;


-- 0040_sql_functions_declared_as_volatile_as
-- 0040_sql_functions_declared_as_volatile_as: SQL functions declared as volatile as their bodies, so PostgreSQL inlines the statement builders; send_batch(queue, msgs) calls the router itself
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
CREATE OR REPLACE FUNCTION pgmq._dead_letter_headers(headers jsonb, queue_name text, msg_id bigint, read_ct integer, enqueued_at timestamp with time zone, error text)
 RETURNS jsonb
 LANGUAGE sql
AS $function$
    SELECT CASE
               WHEN headers IS NULL THEN '{}'::jsonb
               WHEN jsonb_typeof(headers) = 'object' THEN headers
               ELSE jsonb_build_object('headers', headers)
           END
           || jsonb_build_object('dead_letter', jsonb_build_object(
                  'queue', queue_name,
                  'msg_id', msg_id,
                  'read_ct', read_ct,
                  'enqueued_at', enqueued_at,
                  'dead_lettered_at', clock_timestamp(),
                  'error', coalesce(error, CASE WHEN jsonb_typeof(headers -> 'attempt_errors') = 'array'
                                                THEN headers -> 'attempt_errors' -> -1 ->> 'error' END)));
$function$
;
COMMENT ON FUNCTION pgmq._dead_letter_headers(jsonb,text,bigint,integer,timestamp with time zone,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._dead_letter_headers(jsonb,text,bigint,integer,timestamp with time zone,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._fit_name(base text, suffix text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT CASE
        WHEN octet_length(base || suffix) <= 63 THEN base || suffix
        ELSE left(base, 63 - octet_length(suffix) - 9) || '_'
             || left(encode(sha256(convert_to(base, 'UTF8')), 'hex'), 8) || suffix
    END;
$function$
;
COMMENT ON FUNCTION pgmq._fit_name(text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._fit_name(text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._notify_trigger_name(queue_name text)
 RETURNS text
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$
    SELECT CASE
        WHEN lower(queue_name) ~ '^[a-z0-9_]+$' THEN 'q_' || lower(queue_name) || '_notify_insert'
        ELSE 'pgmq_notify_' || left(encode(sha256(convert_to(lower(queue_name), 'UTF8')), 'hex'), 20)
    END;
$function$
;
COMMENT ON FUNCTION pgmq._notify_trigger_name(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._notify_trigger_name(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._partition_bound(by_id boolean, pos numeric)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT CASE
        WHEN pos = '-Infinity'::numeric THEN 'MINVALUE'
        WHEN pos = 'Infinity'::numeric THEN 'MAXVALUE'
        WHEN by_id THEN (pos::bigint)::text
        ELSE to_char(to_timestamp(pos::double precision) AT TIME ZONE 'UTC',
                     CASE WHEN pos = trunc(pos) THEN 'YYYY-MM-DD"T"HH24:MI:SS"+00"'
                          ELSE 'YYYY-MM-DD"T"HH24:MI:SS.US"+00"' END)
    END;
$function$
;
COMMENT ON FUNCTION pgmq._partition_bound(boolean,numeric) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._partition_bound(boolean,numeric) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._partition_literal(by_id boolean, pos numeric)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT CASE WHEN abs(pos) = 'Infinity'::numeric THEN pgmq._partition_bound(by_id, pos)
                ELSE quote_literal(pgmq._partition_bound(by_id, pos)) END;
$function$
;
COMMENT ON FUNCTION pgmq._partition_literal(boolean,numeric) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._partition_literal(boolean,numeric) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._partition_name(parent text, by_id boolean, step text, lo numeric)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT pgmq._fit_name(parent, '_p' || CASE
        WHEN by_id THEN (lo::bigint)::text
        WHEN step::interval = date_trunc('day', step::interval)
            THEN to_char(to_timestamp(lo::double precision) AT TIME ZONE 'UTC', 'YYYYMMDD')
        ELSE to_char(to_timestamp(lo::double precision) AT TIME ZONE 'UTC', 'YYYYMMDD"_"HH24MISS')
    END);
$function$
;
COMMENT ON FUNCTION pgmq._partition_name(text,boolean,text,numeric) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._partition_name(text,boolean,text,numeric) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_ids_sql(qtable text, op "char")
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT format(
        CASE op
        -- A function scan yields the arrays in order and the insert numbers rows as they
        -- come, so ids follow the array order; unnest pads a NULL headers array with NULLs.
        WHEN 's' THEN $sql$
        INSERT INTO pgmq.%1$I AS q (vt, message, headers)
        SELECT coalesce($4, clock_timestamp()), u.msg, u.hdr FROM unnest($6, $7) AS u(msg, hdr)
        RETURNING q.msg_id$sql$
        -- one message: a VALUES row plans in less time than a function scan
        WHEN '1' THEN $sql$
        INSERT INTO pgmq.%1$I AS q (vt, message, headers)
        VALUES (coalesce($4, clock_timestamp()), $6[1], $7[1])
        RETURNING q.msg_id$sql$
        WHEN 'a' THEN $sql$
        WITH moved AS (
            DELETE FROM pgmq.%1$I q WHERE q.msg_id = ANY($5)
            RETURNING q.msg_id, q.read_ct, q.enqueued_at, q.last_read_at, q.vt, q.message, q.headers
        )
        INSERT INTO pgmq.%2$I AS a (msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers)
        SELECT * FROM moved
        RETURNING a.msg_id$sql$
        WHEN 'd' THEN $sql$
        DELETE FROM pgmq.%1$I q WHERE q.msg_id = ANY($5)
        RETURNING q.msg_id$sql$
        END,
        qtable,
        'a' || substr(qtable, 2));
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_ids_sql(text,"char") IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_ids_sql(text,"char") FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_sql(queue_name text, op "char", low text DEFAULT '0'::text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT pgmq._queue_ops_sql_for(pgmq.format_table_name(queue_name, 'q'), op, low);
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_sql(text,"char",text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_sql(text,"char",text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_sql_for(qtable text, op "char", low text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT CASE
        WHEN op IN ('s', '1', 'a', 'd') THEN
            -- the statement pgmq._queue_ops_ids_sql gives, with the record's other columns
            pgmq._queue_ops_ids_sql(qtable, op) || $cols$, NULL::integer, NULL::timestamptz,
                  NULL::timestamptz, NULL::timestamptz, NULL::jsonb, NULL::jsonb$cols$
        ELSE format(
        CASE op
        WHEN 'r' THEN $sql$
        WITH claimed AS (
            UPDATE pgmq.%1$I m
            SET vt = clock_timestamp() + make_interval(secs => $3),
                read_ct = m.read_ct + 1,
                last_read_at = clock_timestamp()
            WHERE m.msg_id = ANY(ARRAY(%2$s))
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message, m.headers
        )
        SELECT * FROM claimed c ORDER BY c.msg_id
        $sql$
        WHEN 'p' THEN $sql$
        WITH removed AS (
            DELETE FROM pgmq.%1$I m
            WHERE m.msg_id = ANY(ARRAY(%2$s))
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message, m.headers
        )
        SELECT * FROM removed r ORDER BY r.msg_id
        $sql$
        WHEN 'v' THEN $sql$
        WITH moved AS (
            UPDATE pgmq.%1$I q SET vt = $4 WHERE q.msg_id = ANY($5)
            RETURNING q.msg_id, q.read_ct, q.enqueued_at, q.last_read_at, q.vt, q.message, q.headers
        )
        SELECT * FROM moved m ORDER BY m.msg_id
        $sql$
        END,
        qtable,
        -- read's and pop's pick: the oldest visible messages from the mark up, locked; the
        -- rows are then claimed with "= ANY(ARRAY(pick))", so the update looks up exactly
        -- the picked rows by key, whatever the plan's row estimates (a join could walk
        -- the table)
        format(
            $pick$
                SELECT q.msg_id FROM pgmq.%I q
                WHERE q.msg_id >= %s AND q.vt <= clock_timestamp()
                  AND ($8 IS NULL OR $8 = '{}'::jsonb OR q.message @> $8)
                ORDER BY q.msg_id
                LIMIT $2
                FOR UPDATE SKIP LOCKED
            $pick$,
            qtable, low))
        END;
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_sql_for(text,"char",text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_sql_for(text,"char",text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._send_checks_sql(attrs jsonb)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT concat_ws(' AND ',
        CASE WHEN attrs ? 'max_message_size'
             THEN format('octet_length(u.msg::text) <= %s', (attrs ->> 'max_message_size')::integer) END,
        CASE WHEN (attrs -> 'priorities') = 'true'::jsonb THEN $t$
            CASE WHEN u.hdr -> 'priority' IS NULL OR jsonb_typeof(u.hdr) <> 'object' THEN true
                 WHEN jsonb_typeof(u.hdr -> 'priority') <> 'number'
                      OR (u.hdr ->> 'priority') !~ '^-?[0-9]{1,3}$' THEN false
                 ELSE abs((u.hdr ->> 'priority')::integer) <= 100 END$t$ END,
        CASE WHEN coalesce((attrs ->> 'deduplication_window')::integer, 0) > 0 THEN $t$
            CASE WHEN u.hdr -> 'deduplication_id' IS NULL OR jsonb_typeof(u.hdr) <> 'object' THEN true
                 WHEN jsonb_typeof(u.hdr -> 'deduplication_id') <> 'string' THEN false
                 ELSE char_length(u.hdr ->> 'deduplication_id') BETWEEN 1 AND 128 END$t$ END);
$function$
;
COMMENT ON FUNCTION pgmq._send_checks_sql(jsonb) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._send_checks_sql(jsonb) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[])
 RETURNS SETOF bigint
 LANGUAGE plpgsql
AS $function$
BEGIN
    PERFORM pgmq._validate_batch_params(msgs, NULL::jsonb[]);
    RETURN QUERY SELECT * FROM pgmq._queue_ops_route_ids(
        queue_name, 's'::"char", NULL::timestamptz, NULL::bigint[], msgs, NULL::jsonb[]);
END
$function$
;
COMMENT ON FUNCTION pgmq.send_batch(text,jsonb[]) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.send_batch(text,jsonb[]) TO PUBLIC;


-- 0041_metrics_of_many_queues_sequences_in_one
-- 0041_metrics_of_many_queues_sequences_in_one: metrics of many queues: sequences in one pass, names checked once
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
CREATE OR REPLACE FUNCTION pgmq._metrics_facts(names text[])
 RETURNS TABLE(n text, o bigint, qtable text, qoid oid, seq oid, spill boolean, idle boolean)
 LANGUAGE sql
 STABLE
AS $function$
    SELECT f.n, f.o, f.qtable, f.qoid, f.seq, f.spill,
           coalesce(f.relkind = 'r' AND NOT f.spill AND pg_relation_size(f.qoid) = 0, false)
    FROM (
        SELECT u.n, u.o, u.qtable, c.oid AS qoid, c.relkind,
               coalesce(c.oid = ANY (spilling.oids) OR a.oid = ANY (spilling.oids), false) AS spill,
               CASE WHEN cardinality(names) > 64
               THEN ((SELECT jsonb_object_agg(d.refobjid::text, d.objid)
                      FROM pg_sequence s
                      JOIN pg_depend d ON d.classid = 'pg_class'::regclass
                                      AND d.objid = s.seqrelid AND d.objsubid = 0
                      WHERE d.refclassid = 'pg_class'::regclass AND d.deptype IN ('a', 'i'))
                     ->> c.oid::text)::oid
               ELSE (SELECT d.objid FROM pg_depend d JOIN pg_sequence s ON s.seqrelid = d.objid
                     WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass
                       AND d.refobjid = c.oid AND d.deptype IN ('a', 'i')
                     LIMIT 1)
               END AS seq
        -- OFFSET 0 keeps the name check to once per name: flattened, format_table_name's
        -- regular expression went into the joins' hash keys and was run again for every
        -- probe (a tenth of metrics_all's time at 10,000 queues)
        FROM (SELECT x.n, x.o, pgmq.format_table_name(x.n, 'q') AS qtable
              FROM unnest(names) WITH ORDINALITY AS x(n, o) OFFSET 0) u
        CROSS JOIN (SELECT array_agg(p.partrelid) AS oids FROM pg_partitioned_table p
                    WHERE p.partdefid <> 0) spilling
        LEFT JOIN pg_class c ON c.relnamespace = 'pgmq'::regnamespace AND c.relname = u.qtable
        LEFT JOIN pg_class a
            ON a.relnamespace = 'pgmq'::regnamespace AND a.relname = 'a' || substr(u.qtable, 2)
    ) f;
$function$
;
COMMENT ON FUNCTION pgmq._metrics_facts(text[]) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._metrics_facts(text[]) FROM PUBLIC;


-- 0042_kept_statements_carry_the_attribute
-- 0042_kept_statements_carry_the_attribute: Kept statements carry the attribute guard; read, pop, archive, delete and a one-message send skip a layer
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._queue_ops_ids_sql(text,"char");
CREATE OR REPLACE FUNCTION pgmq._queue_ops_ids_sql(qtable text, op "char", cond text DEFAULT ''::text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT format(
        CASE op
        -- A function scan yields the arrays in order and the insert numbers rows as they
        -- come, so ids follow the array order; unnest pads a NULL headers array with NULLs.
        WHEN 's' THEN $sql$
        INSERT INTO pgmq.%1$I AS q (vt, message, headers)
        SELECT coalesce($4, clock_timestamp()), u.msg, u.hdr FROM unnest($6, $7) AS u(msg, hdr)
        RETURNING q.msg_id$sql$
        -- one message: a VALUES row plans in less time than a function scan
        WHEN '1' THEN $sql$
        INSERT INTO pgmq.%1$I AS q (vt, message, headers)
        VALUES (coalesce($4, clock_timestamp()), $6[1], $7[1])
        RETURNING q.msg_id$sql$
        WHEN 'a' THEN $sql$
        WITH moved AS (
            DELETE FROM pgmq.%1$I q WHERE q.msg_id = ANY($5)%3$s
            RETURNING q.msg_id, q.read_ct, q.enqueued_at, q.last_read_at, q.vt, q.message, q.headers
        )
        INSERT INTO pgmq.%2$I AS a (msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers)
        SELECT * FROM moved
        RETURNING a.msg_id$sql$
        WHEN 'd' THEN $sql$
        DELETE FROM pgmq.%1$I q WHERE q.msg_id = ANY($5)%3$s
        RETURNING q.msg_id$sql$
        END,
        qtable,
        'a' || substr(qtable, 2),
        cond);
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_ids_sql(text,"char",text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_ids_sql(text,"char",text) FROM PUBLIC;


CREATE OR REPLACE FUNCTION pgmq._queue_ops_kept_key(qtable text, op "char")
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$ SELECT 'pgmq.prep_' || replace(op::text || 'g_' || qtable, '-', '$'); $function$
;
COMMENT ON FUNCTION pgmq._queue_ops_kept_key(text,"char") IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_kept_key(text,"char") FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_kept_missed(queue_name text, qtable text, op "char")
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF pgmq._queue_attributes(queue_name) IS NULL THEN
        RETURN true;
    END IF;
    PERFORM set_config(pgmq._queue_ops_kept_key(qtable, op), '0', false);
    RETURN false;
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_kept_missed(text,text,"char") IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_kept_missed(text,text,"char") FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_kept_name(qtable text, op "char")
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$ SELECT 'pgmq_' || op::text || 'g_' || qtable; $function$
;
COMMENT ON FUNCTION pgmq._queue_ops_kept_name(text,"char") IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_kept_name(text,"char") FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_kept_ready(qtable text, op "char")
 RETURNS text
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_prepared_statements s
                   WHERE s.name = pgmq._queue_ops_kept_name(qtable, op)) THEN
        PERFORM pgmq._queue_ops_keep(qtable, op);
    END IF;
    RETURN pgmq._queue_ops_kept_name(qtable, op);
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_kept_ready(text,"char") IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_kept_ready(text,"char") FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_prepared(qtable text, op "char")
 RETURNS text
 LANGUAGE plpgsql
AS $function$
DECLARE
    stmt text := pgmq._queue_ops_kept_name(qtable, op);
    key text := pgmq._queue_ops_kept_key(qtable, op);
    state text := coalesce(current_setting(key, true), '');
BEGIN
    IF state = 'p' OR state = '3' THEN
        IF NOT EXISTS (SELECT FROM pg_prepared_statements s WHERE s.name = stmt) THEN
            IF octet_length(stmt) > 63
               OR (SELECT count(*) FROM pg_prepared_statements s WHERE s.name LIKE 'pgmq\_%') >= 32 THEN
                state := 'c';
            ELSE
                PERFORM pgmq._queue_ops_keep(qtable, op);
            END IF;
        END IF;
        IF state <> 'p' THEN
            PERFORM set_config(key, CASE state WHEN 'c' THEN 'c' ELSE 'p' END, false);
        END IF;
        IF state <> 'c' THEN
            RETURN stmt;
        END IF;
    ELSIF state IN ('', '0', '1', '2') THEN
        PERFORM set_config(key, (coalesce(nullif(state, ''), '0')::integer + 1)::text, false);
    ELSIF state <> 'c' THEN
        PERFORM set_config(key, '1', false);
    END IF;
    RETURN NULL;
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_prepared(text,"char") IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_prepared(text,"char") FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_route_ids(queue_name text, p_op "char", p_vt timestamp with time zone, p_ids bigint[], p_msgs jsonb[], p_headers jsonb[])
 RETURNS SETOF bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    -- checks the name first, as pgmq's per-message functions do (sql/05_names.sql)
    qtable text := pgmq._message_table_name(queue_name, 'q');
    attrs jsonb;
    op "char" := CASE WHEN p_op = 's' AND cardinality(p_msgs) = 1 THEN '1' ELSE p_op END;
    stmt text;
    n bigint;
BEGIN
    -- archive and delete in a session that keeps the statement: the fast path (migration
    -- 0042, see "Kept plans"), with no separate attribute lookup
    IF (op = 'a' OR op = 'd') AND current_setting(pgmq._queue_ops_kept_key(qtable, op), true) = 'p' THEN
        RETURN QUERY SELECT * FROM pgmq._queue_ops_run_prepared_ids(
            pgmq._queue_ops_kept_ready(qtable, op), p_ids);
        GET DIAGNOSTICS n = ROW_COUNT;
        IF n > 0 OR pgmq._queue_ops_kept_missed(queue_name, qtable, op) THEN
            RETURN;
        END IF;
    END IF;
    SELECT a.attributes INTO attrs
    FROM pgmq.queue_attributes a WHERE lower(a.queue_name) = lower($1);
    IF attrs IS NOT NULL THEN
        RETURN QUERY SELECT r.msg_id FROM pgmq._queue_ops_with_attributes(
            queue_name, attrs, p_op, NULL::integer, NULL::integer, p_vt, p_ids, p_msgs, p_headers,
            NULL::jsonb, 0::bigint) r;
        RETURN;
    END IF;
    IF op = 'a' OR op = 'd' THEN
        stmt := pgmq._queue_ops_prepared(qtable, op);
        IF stmt IS NOT NULL THEN
            RETURN QUERY SELECT * FROM pgmq._queue_ops_run_prepared_ids(stmt, p_ids);
            RETURN;
        END IF;
    END IF;
    RETURN QUERY EXECUTE pgmq._queue_ops_ids_sql(qtable, op)
        USING p_op, NULL::integer, NULL::integer, p_vt, p_ids, p_msgs, p_headers, NULL::jsonb, 0::bigint;
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_route_ids(text,"char",timestamp with time zone,bigint[],jsonb[],jsonb[]) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_route_ids(text,"char",timestamp with time zone,bigint[],jsonb[],jsonb[]) FROM PUBLIC;

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
    qtable := pgmq._message_table_name(queue_name, 'q');
    IF current_setting(pgmq._queue_ops_kept_key(qtable, 'p'), true) = 'p' THEN
        RETURN QUERY SELECT * FROM pgmq._queue_ops_run_prepared(
            pgmq._queue_ops_kept_ready(qtable, 'p'), qty, NULL, NULL, NULL, pgmq._low_water_mark_for(qtable));
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
    qtable := pgmq._message_table_name(queue_name, 'q');
    IF current_setting(pgmq._queue_ops_kept_key(qtable, 'r'), true) = 'p' THEN
        RETURN QUERY SELECT * FROM pgmq._queue_ops_run_prepared(
            pgmq._queue_ops_kept_ready(qtable, 'r'), qty, coalesce(vt, 0), NULL,
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

CREATE OR REPLACE FUNCTION pgmq.send(queue_name text, msg jsonb)
 RETURNS SETOF bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text := pgmq._message_table_name(queue_name, 'q');
BEGIN
    IF NOT EXISTS (SELECT FROM pgmq.queue_attributes a WHERE lower(a.queue_name) = lower($1)) THEN
        RETURN QUERY EXECUTE pgmq._queue_ops_ids_sql(qtable, '1')
            USING NULL::"char", NULL::integer, NULL::integer, NULL::timestamptz, NULL::bigint[],
                  ARRAY[msg], ARRAY[NULL::jsonb], NULL::jsonb, 0::bigint;
        RETURN;
    END IF;
    RETURN QUERY SELECT * FROM pgmq._queue_ops_route_ids(
        queue_name, 's'::"char", NULL::timestamptz, NULL::bigint[], ARRAY[msg], ARRAY[NULL::jsonb]);
END
$function$
;
COMMENT ON FUNCTION pgmq.send(text,jsonb) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.send(text,jsonb) TO PUBLIC;


-- 0043_the_per_message_name_check_without_a
-- 0043_the_per_message_name_check_without_a: The per-message name check without a bounded repetition: the length checked apart, first; the expression cost about 18,000 instructions a call, now about 3,000 (callgrind, PostgreSQL 15)
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
CREATE OR REPLACE FUNCTION pgmq._message_table_name(queue_name text, prefix text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$
    SELECT CASE
        WHEN length(queue_name) <= 47 AND queue_name ~ '^[A-Za-z0-9_][A-Za-z0-9_-]*$'
             AND strpos(queue_name, '--') = 0
        THEN lower(prefix || '_' || queue_name)
        ELSE pgmq._message_name_error(queue_name, prefix)
    END;
$function$
;
COMMENT ON FUNCTION pgmq._message_table_name(text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._message_table_name(text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.format_table_name(queue_name text, prefix text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$
    SELECT CASE
        WHEN length(queue_name) <= 47 AND queue_name ~ '^[A-Za-z0-9_][A-Za-z0-9_-]*$'
             AND strpos(queue_name, '--') = 0
        THEN lower(prefix || '_' || queue_name)
        ELSE pgmq._invalid_queue_name(queue_name, prefix)
    END;
$function$
;
COMMENT ON FUNCTION pgmq.format_table_name(text,text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.format_table_name(text,text) TO PUBLIC;


-- 0044_a_client_s_own_statements_of_read_pop
-- 0044_a_client_s_own_statements_of_read_pop: a client's own statements of read, pop, archive, delete and send (the manager with prepared statements on)
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._queue_ops_ids_sql(text,"char",text);
DROP FUNCTION IF EXISTS pgmq._queue_ops_sql_for(text,"char",text);
CREATE OR REPLACE FUNCTION pgmq._queue_ops_client_sql(queue_name text, op "char", qty integer DEFAULT 1)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT CASE WHEN op IN ('r', 'p', 'a', 'd', 's') AND qty BETWEEN 1 AND 100000 THEN
        pgmq._queue_ops_kept_sql(
            t.qtable, op, format('(SELECT pgmq._low_water_mark_for(%L))', t.qtable),
            qty::text, '$1', 'NULL::jsonb', '$1', 'NULL::timestamptz', '$1::jsonb[]', '$2::jsonb[]')
    END
    FROM (SELECT pgmq._message_table_name(queue_name, 'q') AS qtable) t;
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_client_sql(text,"char",integer) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_client_sql(text,"char",integer) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_ids_sql(qtable text, op "char", cond text DEFAULT ''::text, ids text DEFAULT '$5'::text, vt text DEFAULT '$4'::text, msgs text DEFAULT '$6'::text, hdrs text DEFAULT '$7'::text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT format(
        CASE op
        -- A function scan yields the arrays in order and the insert numbers rows as they
        -- come, so ids follow the array order; unnest pads a NULL headers array with NULLs.
        WHEN 's' THEN $sql$
        INSERT INTO pgmq.%1$I AS q (vt, message, headers)
        SELECT coalesce(%5$s, clock_timestamp()), u.msg, u.hdr
        FROM unnest(%6$s, %7$s) AS u(msg, hdr)%3$s
        RETURNING q.msg_id$sql$
        -- one message: a VALUES row plans in less time than a function scan
        WHEN '1' THEN $sql$
        INSERT INTO pgmq.%1$I AS q (vt, message, headers)
        VALUES (coalesce(%5$s, clock_timestamp()), (%6$s)[1], (%7$s)[1])
        RETURNING q.msg_id$sql$
        WHEN 'a' THEN $sql$
        WITH moved AS (
            DELETE FROM pgmq.%1$I q WHERE q.msg_id = ANY(%4$s)%3$s
            RETURNING q.msg_id, q.read_ct, q.enqueued_at, q.last_read_at, q.vt, q.message, q.headers
        )
        INSERT INTO pgmq.%2$I AS a (msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers)
        SELECT * FROM moved
        RETURNING a.msg_id$sql$
        WHEN 'd' THEN $sql$
        DELETE FROM pgmq.%1$I q WHERE q.msg_id = ANY(%4$s)%3$s
        RETURNING q.msg_id$sql$
        END,
        qtable,
        'a' || substr(qtable, 2),
        cond,
        ids,
        vt,
        msgs,
        hdrs);
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_ids_sql(text,"char",text,text,text,text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_ids_sql(text,"char",text,text,text,text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_keep(qtable text, op "char")
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
    EXECUTE format(
        'PREPARE %I ("char", integer, integer, timestamptz, bigint[], jsonb[], jsonb[], jsonb, bigint) AS %s',
        pgmq._queue_ops_kept_name(qtable, op), pgmq._queue_ops_kept_sql(qtable, op));
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_keep(text,"char") IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_keep(text,"char") FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_kept_sql(qtable text, op "char", low text DEFAULT '$9'::text, qty text DEFAULT '$2'::text, secs text DEFAULT '$3'::text, cond text DEFAULT '$8'::text, ids text DEFAULT '$5'::text, vt text DEFAULT '$4'::text, msgs text DEFAULT '$6'::text, hdrs text DEFAULT '$7'::text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT CASE WHEN op IN ('a', 'd')
                THEN pgmq._queue_ops_ids_sql(qtable, op, ' AND ' || g.guard, ids)
                WHEN op = 's'
                THEN pgmq._queue_ops_ids_sql(qtable, op, ' WHERE ' || g.guard, ids, vt, msgs, hdrs)
                ELSE pgmq._queue_ops_sql_for(qtable, op, low || ' AND ' || g.guard, qty, secs, cond)
           END
    FROM (SELECT format(
              'NOT EXISTS (SELECT FROM pgmq.queue_attributes x WHERE lower(x.queue_name) = %L)',
              substr(qtable, 3)) AS guard) g;
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_kept_sql(text,"char",text,text,text,text,text,text,text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_kept_sql(text,"char",text,text,text,text,text,text,text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_sql_for(qtable text, op "char", low text, qty text DEFAULT '$2'::text, secs text DEFAULT '$3'::text, cond text DEFAULT '$8'::text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT CASE
        WHEN op IN ('s', '1', 'a', 'd') THEN
            -- the statement pgmq._queue_ops_ids_sql gives, with the record's other columns
            pgmq._queue_ops_ids_sql(qtable, op) || $cols$, NULL::integer, NULL::timestamptz,
                  NULL::timestamptz, NULL::timestamptz, NULL::jsonb, NULL::jsonb$cols$
        ELSE format(
        CASE op
        WHEN 'r' THEN $sql$
        WITH claimed AS (
            UPDATE pgmq.%1$I m
            SET vt = clock_timestamp() + make_interval(secs => %3$s),
                read_ct = m.read_ct + 1,
                last_read_at = clock_timestamp()
            WHERE m.msg_id = ANY(ARRAY(%2$s))
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message, m.headers
        )
        SELECT * FROM claimed c ORDER BY c.msg_id
        $sql$
        WHEN 'p' THEN $sql$
        WITH removed AS (
            DELETE FROM pgmq.%1$I m
            WHERE m.msg_id = ANY(ARRAY(%2$s))
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message, m.headers
        )
        SELECT * FROM removed r ORDER BY r.msg_id
        $sql$
        WHEN 'v' THEN $sql$
        WITH moved AS (
            UPDATE pgmq.%1$I q SET vt = $4 WHERE q.msg_id = ANY($5)
            RETURNING q.msg_id, q.read_ct, q.enqueued_at, q.last_read_at, q.vt, q.message, q.headers
        )
        SELECT * FROM moved m ORDER BY m.msg_id
        $sql$
        END,
        qtable,
        -- read's and pop's pick: the oldest visible messages from the mark up, locked; the
        -- rows are then claimed with "= ANY(ARRAY(pick))", so the update looks up exactly
        -- the picked rows by key, whatever the plan's row estimates (a join could walk
        -- the table)
        format(
            $pick$
                SELECT q.msg_id FROM pgmq.%1$I q
                WHERE q.msg_id >= %2$s AND q.vt <= clock_timestamp()
                  AND (%3$s IS NULL OR %3$s = '{}'::jsonb OR q.message @> %3$s)
                ORDER BY q.msg_id
                LIMIT %4$s
                FOR UPDATE SKIP LOCKED
            $pick$,
            qtable, low, cond, qty),
        secs)
        END;
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_sql_for(text,"char",text,text,text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_sql_for(text,"char",text,text,text,text) FROM PUBLIC;


-- 0045_roles_that_hold_and_locks_that_never
-- 0045_roles_that_hold_and_locks_that_never: roles that hold and locks that never stall
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
-- BEGIN HAND limits
-- Limits by slots (sql/26_limits.sql): the state row keeps the limits and how many slot
-- and token rows exist; the ids in flight and the window's claims become rows of
-- pgmq.queue_limit_slots (its indexes are made below, with the others): a slot for each
-- id of the old list still in flight, free slots up to min(max_in_flight, 1024), a used
-- token per message of the window's claims, free tokens up to min(count, 1024).
ALTER TABLE pgmq.queue_limit_state RENAME TO queue_limit_state_old;
ALTER TABLE pgmq.queue_limit_state_old RENAME CONSTRAINT queue_limit_state_pkey TO queue_limit_state_old_pkey;
-- PostgreSQL 18 names NOT NULL constraints after the table: rename the renamed table's
-- too, so the new table's take their usual names.
DO $hand_limits_nn$
DECLARE
    c name;
BEGIN
    FOR c IN SELECT k.conname FROM pg_catalog.pg_constraint k
             WHERE k.conrelid = 'pgmq.queue_limit_state_old'::regclass AND k.contype = 'n'
               AND k.conname LIKE 'queue\_limit\_state\_%'
    LOOP
        EXECUTE pg_catalog.format('ALTER TABLE pgmq.queue_limit_state_old RENAME CONSTRAINT %I TO %I', c,
                                  pg_catalog.replace(c::text, 'queue_limit_state_', 'queue_limit_state_old_'));
    END LOOP;
END
$hand_limits_nn$;
CREATE TABLE pgmq.queue_limit_state (
    queue_name text PRIMARY KEY,
    max_in_flight integer,
    rate_count integer,
    rate_seconds double precision,
    slots_made integer NOT NULL DEFAULT 0,
    tokens_made integer NOT NULL DEFAULT 0
);
CREATE TABLE pgmq.queue_limit_slots (
    queue_name text NOT NULL,
    kind "char" NOT NULL,
    slot integer NOT NULL,
    t timestamptz NOT NULL DEFAULT '-infinity',
    msg_id bigint,
    read_ct integer
);
DO $hand_limits$
DECLARE
    r record;
    made integer;
    tokens integer;
BEGIN
    FOR r IN SELECT o.* FROM pgmq.queue_limit_state_old o
             WHERE EXISTS (SELECT 1 FROM pgmq.meta m WHERE pg_catalog.lower(m.queue_name::text) = o.queue_name)
    LOOP
        made := 0;
        tokens := 0;
        IF r.max_in_flight IS NOT NULL THEN
            EXECUTE pg_catalog.format(
                'INSERT INTO pgmq.queue_limit_slots (queue_name, kind, slot, t, msg_id, read_ct) '
                'SELECT $1, ''f'', pg_catalog.row_number() OVER (ORDER BY q.msg_id), q.vt, q.msg_id, q.read_ct '
                'FROM pgmq.%I q WHERE q.msg_id = ANY ($2) AND q.vt > pg_catalog.clock_timestamp()',
                pgmq.format_table_name(r.queue_name, 'q')) USING r.queue_name, r.in_flight;
            GET DIAGNOSTICS made = ROW_COUNT;
            INSERT INTO pgmq.queue_limit_slots (queue_name, kind, slot)
            SELECT r.queue_name, 'f', g FROM pg_catalog.generate_series(made + 1, least(r.max_in_flight, 1024)) g;
            made := greatest(made, least(r.max_in_flight, 1024));
        END IF;
        IF r.rate_count IS NOT NULL THEN
            INSERT INTO pgmq.queue_limit_slots (queue_name, kind, slot, t)
            SELECT r.queue_name, 'r', pg_catalog.row_number() OVER (ORDER BY h.t), h.t
            FROM unnest(r.handed_out_at, r.handed_out_n) AS h(t, n), pg_catalog.generate_series(1, h.n)
            WHERE h.t > pg_catalog.clock_timestamp() - pg_catalog.make_interval(secs => r.rate_seconds);
            GET DIAGNOSTICS tokens = ROW_COUNT;
            INSERT INTO pgmq.queue_limit_slots (queue_name, kind, slot)
            SELECT r.queue_name, 'r', g FROM pg_catalog.generate_series(tokens + 1, least(r.rate_count, 1024)) g;
            tokens := greatest(tokens, least(r.rate_count, 1024));
        END IF;
        INSERT INTO pgmq.queue_limit_state
            (queue_name, max_in_flight, rate_count, rate_seconds, slots_made, tokens_made)
        VALUES (r.queue_name, r.max_in_flight, r.rate_count, r.rate_seconds, made, tokens);
    END LOOP;
END
$hand_limits$;
DROP TABLE pgmq.queue_limit_state_old;
-- END HAND limits
-- BEGIN HAND sec
-- The owner owns every queue; application roles are recorded in pgmq.app_role and
-- granted by the new model (sql/02_privileges.sql, sql/99_roles.sql). For an installed
-- database: the registry tables (their primary keys are added below by the generated
-- part), every role the old grant gave rights registered (create_queues when it had
-- CREATE on pgmq), who created each queue recorded (its live table's owner), queue
-- tables another role owns given to the schema owner (or a WARNING with the command a
-- DBA runs), CREATE on pgmq taken from everyone but the owner, the old rules for every
-- table and sequence (default privileges) and the old writes on the side tables taken
-- back from every role, and every registered role granted every queue's tables.
CREATE TABLE pgmq.app_role (
    role_name name NOT NULL,
    create_queues boolean NOT NULL DEFAULT false,
    manage_queues boolean NOT NULL DEFAULT false
);
CREATE TABLE pgmq.queue_creator (
    queue_name text NOT NULL,
    created_by name NOT NULL
);
DO $sec$
DECLARE
    owner_oid oid := (SELECT n.nspowner FROM pg_catalog.pg_namespace n WHERE n.nspname = 'pgmq'::name);
    superuser boolean := (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = CURRENT_USER);
    rec record;
    grantee name;
    tbl regclass;
BEGIN
    -- 1. The roles the old grant gave rights: USAGE on pgmq and SELECT on pgmq.meta.
    INSERT INTO pgmq.app_role (role_name, create_queues)
    SELECT r.rolname,
           EXISTS (SELECT FROM pg_catalog.pg_namespace n, pg_catalog.aclexplode(n.nspacl) s
                   WHERE n.nspname = 'pgmq'::name AND s.grantee = r.oid AND s.privilege_type = 'CREATE')
    FROM pg_catalog.pg_roles r
    WHERE r.oid <> owner_oid
      AND EXISTS (SELECT FROM pg_catalog.pg_namespace n, pg_catalog.aclexplode(n.nspacl) s
                  WHERE n.nspname = 'pgmq'::name AND s.grantee = r.oid AND s.privilege_type = 'USAGE')
      AND EXISTS (SELECT FROM pg_catalog.pg_class c, pg_catalog.aclexplode(c.relacl) t
                  WHERE c.oid = 'pgmq.meta'::regclass AND t.grantee = r.oid AND t.privilege_type = 'SELECT');

    -- 2. Who created each queue: the owner of its live table (the schema owner when it has none).
    INSERT INTO pgmq.queue_creator (queue_name, created_by)
    SELECT m.queue_name::text, pg_catalog.pg_get_userbyid(coalesce(c.relowner, owner_oid))
    FROM pgmq.meta m
    LEFT JOIN pg_catalog.pg_class c
           ON c.relnamespace = 'pgmq'::regnamespace
          AND c.relname = ('q_'::text || pg_catalog.lower(m.queue_name::text))::name;

    -- 3. Queue tables (and their partitions) another role owns become the schema owner's.
    FOR rec IN
        WITH RECURSIVE queue_table(oid) AS (
            SELECT c.oid FROM pgmq.meta m
            JOIN pg_catalog.pg_class c ON c.relnamespace = 'pgmq'::regnamespace
             AND c.relname IN (('q_'::text || pg_catalog.lower(m.queue_name::text))::name,
                               ('a_'::text || pg_catalog.lower(m.queue_name::text))::name)
            UNION
            SELECT i.inhrelid FROM pg_catalog.pg_inherits i JOIN queue_table q ON i.inhparent = q.oid
        )
        SELECT c.oid::regclass AS tbl, c.relowner, pg_catalog.pg_get_userbyid(c.relowner) AS owner
        FROM queue_table q JOIN pg_catalog.pg_class c ON c.oid = q.oid
        WHERE c.relowner <> owner_oid
        ORDER BY 1
    LOOP
        IF superuser OR pg_catalog.pg_has_role(rec.relowner, 'MEMBER'::text) THEN
            EXECUTE pg_catalog.format('ALTER TABLE %s OWNER TO %I', rec.tbl,
                                      pg_catalog.pg_get_userbyid(owner_oid));
        ELSE
            RAISE WARNING 'django-pgmq: queue table % is owned by role "%", not by the owner of schema pgmq',
                rec.tbl, rec.owner
                USING HINT = pg_catalog.format(
                    'A superuser runs: ALTER TABLE %s OWNER TO %I; then the owner runs: '
                    'manage.py pgmq_grant for each application role (docs/guide/roles.md, "Upgrading").',
                    rec.tbl, pg_catalog.pg_get_userbyid(owner_oid));
        END IF;
    END LOOP;

    -- 4. CREATE on pgmq: the owner's only.
    FOR rec IN
        SELECT DISTINCT s.grantee FROM pg_catalog.pg_namespace n, pg_catalog.aclexplode(n.nspacl) s
        WHERE n.nspname = 'pgmq'::name AND s.privilege_type = 'CREATE' AND s.grantee <> owner_oid
    LOOP
        EXECUTE pg_catalog.format('REVOKE CREATE ON SCHEMA pgmq FROM %s',
            CASE WHEN rec.grantee = 0 THEN 'PUBLIC'
                 ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(rec.grantee)::text) END);
    END LOOP;

    -- 5. The old rules for every table and sequence to come (default privileges).
    FOR rec IN
        SELECT d.defaclrole, d.defaclobjtype, s.grantee
        FROM pg_catalog.pg_default_acl d, pg_catalog.aclexplode(d.defaclacl) s
        WHERE d.defaclnamespace = 'pgmq'::regnamespace AND d.defaclobjtype IN ('r', 'S')
        GROUP BY 1, 2, 3
    LOOP
        IF superuser OR pg_catalog.pg_has_role(rec.defaclrole, 'MEMBER'::text) THEN
            EXECUTE pg_catalog.format(
                'ALTER DEFAULT PRIVILEGES FOR ROLE %I IN SCHEMA pgmq REVOKE ALL ON %s FROM %s',
                pg_catalog.pg_get_userbyid(rec.defaclrole),
                CASE rec.defaclobjtype WHEN 'r' THEN 'TABLES' ELSE 'SEQUENCES' END,
                CASE WHEN rec.grantee = 0 THEN 'PUBLIC'
                     ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(rec.grantee)::text) END);
        ELSE
            RAISE WARNING 'django-pgmq: role "%" gives default privileges on new tables in pgmq',
                pg_catalog.pg_get_userbyid(rec.defaclrole)
                USING HINT = 'That role runs: ALTER DEFAULT PRIVILEGES IN SCHEMA pgmq REVOKE ALL ON TABLES FROM ...';
        END IF;
    END LOOP;

    -- 6. No role but the owner writes a side table (every table of pgmq that is not a
    -- queue's): the old grant gave every application role every table.
    FOR rec IN
        SELECT DISTINCT c.oid::regclass AS tbl, s.grantee
        FROM pg_catalog.pg_class c, pg_catalog.aclexplode(c.relacl) s
        WHERE c.relnamespace = 'pgmq'::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
          AND s.grantee <> owner_oid
          AND s.privilege_type IN ('INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'REFERENCES', 'TRIGGER')
          AND NOT EXISTS (
              SELECT FROM pgmq.meta m
              WHERE c.relname IN (('q_'::text || pg_catalog.lower(m.queue_name::text))::name,
                                  ('a_'::text || pg_catalog.lower(m.queue_name::text))::name))
          AND c.relname !~ '^spark_stage_[0-9a-f]{32}$'
        ORDER BY 1, 2
    LOOP
        EXECUTE pg_catalog.format(
            'REVOKE INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER ON TABLE %s FROM %s', rec.tbl,
            CASE WHEN rec.grantee = 0 THEN 'PUBLIC'
                 ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(rec.grantee)::text) END);
    END LOOP;

    -- 7. Every registered role: no write on the side tables (SELECT stays), and every
    -- queue's tables, partitions and sequences granted.
    FOR grantee IN SELECT a.role_name FROM pgmq.app_role a ORDER BY 1 LOOP
        FOR tbl IN
            SELECT c.oid::regclass FROM pg_catalog.pg_class c
            WHERE c.relnamespace = 'pgmq'::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
              AND NOT EXISTS (
                  SELECT FROM pgmq.meta m
                  WHERE c.relname IN (('q_'::text || pg_catalog.lower(m.queue_name::text))::name,
                                      ('a_'::text || pg_catalog.lower(m.queue_name::text))::name))
              AND c.relname !~ '^spark_stage_[0-9a-f]{32}$'
        LOOP
            EXECUTE pg_catalog.format(
                'REVOKE INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER ON TABLE %s FROM %I', tbl, grantee);
            IF tbl NOT IN ('pgmq.app_role'::regclass, 'pgmq.queue_creator'::regclass) THEN
                EXECUTE pg_catalog.format('GRANT SELECT ON TABLE %s TO %I', tbl, grantee);
            END IF;
        END LOOP;
        FOR tbl IN
            SELECT s.oid::regclass FROM pg_catalog.pg_class s
            WHERE s.relnamespace = 'pgmq'::regnamespace AND s.relkind = 'S'
              AND NOT EXISTS (
                  SELECT FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_class t ON t.oid = d.refobjid
                  JOIN pgmq.meta m ON t.relname = ('q_'::text || pg_catalog.lower(m.queue_name::text))::name
                  WHERE d.objid = s.oid AND d.classid = 'pg_catalog.pg_class'::regclass
                    AND d.refclassid = 'pg_catalog.pg_class'::regclass)
        LOOP
            EXECUTE pg_catalog.format('REVOKE ALL ON SEQUENCE %s FROM %I', tbl, grantee);
        END LOOP;
        -- Celery's consumer session numbers (as pgmq.grant_app_role gives them).
        EXECUTE pg_catalog.format('GRANT USAGE ON SEQUENCE pgmq.celery_session_seq TO %I', grantee);
        FOR tbl IN
            WITH RECURSIVE queue_table(oid) AS (
                SELECT c.oid FROM pgmq.meta m
                JOIN pg_catalog.pg_class c ON c.relnamespace = 'pgmq'::regnamespace
                 AND c.relname IN (('q_'::text || pg_catalog.lower(m.queue_name::text))::name,
                                   ('a_'::text || pg_catalog.lower(m.queue_name::text))::name)
                UNION
                SELECT i.inhrelid FROM pg_catalog.pg_inherits i JOIN queue_table q ON i.inhparent = q.oid
            )
            SELECT q.oid::regclass FROM queue_table q
        LOOP
            EXECUTE pg_catalog.format(
                'GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON TABLE %s TO %I', tbl, grantee);
        END LOOP;
        FOR tbl IN
            SELECT s.oid::regclass FROM pg_catalog.pg_class s
            JOIN pg_catalog.pg_depend d ON d.objid = s.oid AND d.classid = 'pg_catalog.pg_class'::regclass
             AND d.refclassid = 'pg_catalog.pg_class'::regclass AND d.deptype IN ('a', 'i')
            JOIN pg_catalog.pg_class t ON t.oid = d.refobjid
            JOIN pgmq.meta m ON t.relname = ('q_'::text || pg_catalog.lower(m.queue_name::text))::name
            WHERE s.relkind = 'S' AND t.relnamespace = 'pgmq'::regnamespace
        LOOP
            EXECUTE pg_catalog.format('GRANT USAGE, SELECT ON SEQUENCE %s TO %I', tbl, grantee);
        END LOOP;
    END LOOP;
END
$sec$;
-- END HAND sec
-- BEGIN HAND side
-- Celery's registry says which queues the transport itself created: only those are
-- ever dropped by its cleanup. Rows declared before this migration are not known to be
-- Celery's, so they stay false (such a queue is no longer auto-dropped; drop it by hand).
ALTER TABLE pgmq.celery_queue ADD COLUMN IF NOT EXISTS created_by_celery boolean NOT NULL DEFAULT false;
-- The role a Spark staging table was made for (NULL for a stage made before).
ALTER TABLE pgmq.spark_stage ADD COLUMN IF NOT EXISTS writer_role name;
-- END HAND side
DROP FUNCTION IF EXISTS pgmq._claim_filter(text,jsonb,integer,boolean,boolean);
DROP FUNCTION IF EXISTS pgmq._claim_limits(text,integer,boolean,boolean);
DROP FUNCTION IF EXISTS pgmq._claim_record(text,bigint[],timestamp with time zone[],integer[],bigint[],boolean);
DROP FUNCTION IF EXISTS pgmq._share_queue_with_owner(text);
DROP FUNCTION IF EXISTS pgmq.grant_app_role(name,boolean,regclass[]);
ALTER TABLE pgmq.app_role ADD CONSTRAINT app_role_pkey PRIMARY KEY (role_name);

ALTER TABLE pgmq.queue_creator ADD CONSTRAINT queue_creator_pkey PRIMARY KEY (queue_name);

CREATE OR REPLACE FUNCTION pgmq._apply_queue_attributes(queue_name text, attributes jsonb, privilege text)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
DECLARE
    stored text;
    old jsonb;
    merged jsonb;
    k text;
BEGIN
    stored := pgmq._require_queue(queue_name::text);
    IF attributes IS NULL OR pg_catalog.jsonb_typeof(attributes) <> 'object' THEN
        RAISE EXCEPTION 'queue "%": attributes must be a JSON object, got %', stored,
            coalesce(attributes::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    FOR k IN SELECT pg_catalog.jsonb_object_keys(attributes) LOOP
        IF NOT EXISTS (SELECT 1 FROM pgmq._queue_attribute_rules() r WHERE r.key = k) THEN
            PERFORM pgmq._bad_queue_attribute(stored, k, attributes -> k);
        END IF;
    END LOOP;
    PERFORM pgmq.acquire_queue_lock(stored);
    old := coalesce(pgmq._queue_attributes(stored), '{}'::jsonb);
    merged := pg_catalog.jsonb_strip_nulls(old || attributes);
    PERFORM pgmq._check_queue_attributes(stored, merged);
    IF merged = old THEN
        RETURN merged;
    END IF;
    IF privilege IS NOT NULL THEN
        PERFORM pgmq._require_privilege(privilege);
    END IF;

    IF merged ? 'dead_letter_queue'
       AND NOT EXISTS (SELECT 1 FROM pgmq.meta m
                       WHERE pg_catalog.lower(m.queue_name::text)
                             = pg_catalog.lower(merged ->> 'dead_letter_queue')) THEN
        PERFORM pgmq."create"(merged ->> 'dead_letter_queue');
    END IF;
    IF (merged -> 'priorities') = 'true'::jsonb THEN
        -- The tasks backend's index (sql/75_tasks.sql): priority descending, then msg_id,
        -- built CONCURRENTLY after the commit (sql/22_index_builds.sql).
        PERFORM pgmq._want_queue_index(stored, 'priority'::text);
    END IF;
    IF coalesce((merged ->> 'deduplication_window')::integer, 0) = 0 THEN
        DELETE FROM pgmq.queue_deduplication d WHERE d.queue_name::text = pg_catalog.lower(stored);
    END IF;

    IF (old -> 'max_in_flight', old -> 'rate_limit')
       IS DISTINCT FROM (merged -> 'max_in_flight', merged -> 'rate_limit') THEN
        -- as the owner: pgmq.queue_limit_state is the owner's (sql/26_limits.sql)
        PERFORM pgmq._sync_queue_limits(stored, merged);
    END IF;

    IF merged = '{}'::jsonb THEN
        DELETE FROM pgmq.queue_attributes a WHERE a.queue_name::text = stored;
    ELSE
        INSERT INTO pgmq.queue_attributes AS a (queue_name, attributes)
        VALUES (stored, merged)
        ON CONFLICT ON CONSTRAINT queue_attributes_pkey
        DO UPDATE SET attributes = excluded.attributes, updated_at = pg_catalog.now();
    END IF;
    RETURN merged;
END
$function$
;
COMMENT ON FUNCTION pgmq._apply_queue_attributes(text,jsonb,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._apply_queue_attributes(text,jsonb,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._archive_idle(queue_name text)
 RETURNS boolean
 LANGUAGE sql
 STABLE
AS $function$
    SELECT coalesce(c.relkind = 'r' AND pg_catalog.pg_relation_size(c.oid) = 0, false)
    FROM (SELECT pg_catalog.to_regclass(pg_catalog.format('pgmq.%I', pgmq.format_table_name(queue_name, 'a'::text))) AS a) t
    LEFT JOIN pg_catalog.pg_class c ON c.oid = t.a
$function$
;
COMMENT ON FUNCTION pgmq._archive_idle(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._archive_idle(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._bad_queue_attribute(queue_name text, key text, got jsonb)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    allowed text := (SELECT r.allowed FROM pgmq._queue_attribute_rules() r WHERE r.key = $2);
BEGIN
    IF allowed IS NULL THEN
        RAISE EXCEPTION 'queue "%": unknown queue attribute "%"', queue_name, key
            USING ERRCODE = 'PQ004',
                  HINT = 'Known attributes: ' || (SELECT pg_catalog.string_agg(r.key, ', ')
                                                  FROM pgmq._queue_attribute_rules() r) || '.';
    END IF;
    RAISE EXCEPTION 'queue "%": queue attribute "%" must be %, got %', queue_name, key, allowed, got
        USING ERRCODE = 'PQ004';
END
$function$
;
COMMENT ON FUNCTION pgmq._bad_queue_attribute(text,text,jsonb) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._bad_queue_attribute(text,text,jsonb) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._browse_messages(queue_name text, from_archive boolean DEFAULT false, newest_first boolean DEFAULT true, min_read_ct integer DEFAULT NULL::integer, header_key text DEFAULT NULL::text, header_value text DEFAULT NULL::text, contains jsonb DEFAULT NULL::jsonb, after_id bigint DEFAULT NULL::bigint, before_id bigint DEFAULT NULL::bigint, page_size integer DEFAULT 50)
 RETURNS TABLE(msg_id bigint, read_ct integer, enqueued_at timestamp with time zone, last_read_at timestamp with time zone, vt timestamp with time zone, archived_at timestamp with time zone, message jsonb, headers jsonb)
 LANGUAGE plpgsql
AS $function$
DECLARE
    tbl regclass;
    backwards boolean := before_id IS NOT NULL;
    -- Scan direction: reversed when paging back, then put right by the outer ORDER BY.
    scan_desc boolean := newest_first <> backwards;
    cursor_id bigint := coalesce(before_id, after_id);
BEGIN
    PERFORM pgmq._require_queue(queue_name);
    IF page_size IS NULL OR page_size < 1 OR page_size > 1000 THEN
        RAISE EXCEPTION 'page_size must be between 1 and 1000, got %', page_size
            USING ERRCODE = 'PQ004';
    END IF;
    IF after_id IS NOT NULL AND before_id IS NOT NULL THEN
        RAISE EXCEPTION 'give after_id or before_id, not both' USING ERRCODE = 'PQ004';
    END IF;
    tbl := pg_catalog.format(
        'pgmq.%I', pgmq.format_table_name(queue_name, CASE WHEN from_archive THEN 'a' ELSE 'q' END)
    )::regclass;
    RETURN QUERY EXECUTE pg_catalog.format(
        $q$
        SELECT * FROM (
            SELECT t.msg_id, t.read_ct, t.enqueued_at, t.last_read_at, t.vt, %s, t.message, t.headers
            FROM %s t
            WHERE ($1::integer IS NULL OR t.read_ct >= $1)
              AND ($2::text IS NULL OR ($3::text IS NULL AND t.headers ? $2)
                   OR t.headers ->> $2 = $3)
              AND ($4::jsonb IS NULL OR t.message @> $4)
              AND ($5::bigint IS NULL OR t.msg_id %s $5)
            ORDER BY t.msg_id %s
            LIMIT $6
        ) page
        ORDER BY msg_id %s
        $q$,
        CASE WHEN from_archive THEN 't.archived_at' ELSE 'NULL::timestamptz' END,
        tbl,
        CASE WHEN scan_desc THEN '<' ELSE '>' END,
        CASE WHEN scan_desc THEN 'DESC' ELSE 'ASC' END,
        CASE WHEN newest_first THEN 'DESC' ELSE 'ASC' END
    ) USING min_read_ct, header_key, header_value, contains, cursor_id, page_size;
END
$function$
;
COMMENT ON FUNCTION pgmq._browse_messages(text,boolean,boolean,integer,text,text,jsonb,bigint,bigint,integer) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._browse_messages(text,boolean,boolean,integer,text,text,jsonb,bigint,bigint,integer) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._celery_cleanup_queues()
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    q record;
    dropped integer := 0;
BEGIN
    PERFORM pgmq._require_app_role();
    DELETE FROM pgmq.celery_consumer k WHERE NOT pgmq._celery_session_alive(k.session_id);
    FOR q IN
        SELECT c.queue_name::text AS queue_name FROM pgmq.celery_queue c
        WHERE c.created_by_celery
          AND NOT EXISTS (SELECT 1 FROM pgmq.celery_consumer k WHERE k.queue_name::text = c.queue_name::text)
          AND (c.auto_delete AND c.ever_consumed
               OR c.expires IS NOT NULL AND c.last_used_at + c.expires < pg_catalog.now())
        ORDER BY c.queue_name
    LOOP
        BEGIN
            IF pgmq._celery_drop_if_unused(q.queue_name::text) THEN
                dropped := dropped + 1;
            END IF;
        EXCEPTION WHEN lock_not_available OR undefined_table THEN
            NULL;  -- in use right now, or dropped by someone else; next time
        END;
    END LOOP;
    RETURN dropped;
END
$function$
;
COMMENT ON FUNCTION pgmq._celery_cleanup_queues() IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._celery_cleanup_queues() FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._celery_drop_if_unused(queue text)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
DECLARE
    q pgmq.celery_queue;
BEGIN
    PERFORM pgmq.acquire_queue_lock(queue);
    SELECT * INTO q FROM pgmq.celery_queue c WHERE c.queue_name::text = queue FOR UPDATE;
    IF NOT FOUND OR NOT q.created_by_celery THEN
        RETURN false;
    END IF;
    DELETE FROM pgmq.celery_consumer k
    WHERE k.queue_name::text = queue AND NOT pgmq._celery_session_alive(k.session_id);
    IF EXISTS (SELECT 1 FROM pgmq.celery_consumer k WHERE k.queue_name::text = queue) THEN
        RETURN false;
    END IF;
    IF q.auto_delete AND q.ever_consumed
       OR q.expires IS NOT NULL AND q.last_used_at + q.expires < pg_catalog.now() THEN
        PERFORM pgmq.drop_queue(queue);
        RETURN true;
    END IF;
    RETURN false;
END
$function$
;
COMMENT ON FUNCTION pgmq._celery_drop_if_unused(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._celery_drop_if_unused(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._celery_own_session(sid integer)
 RETURNS boolean
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
    SELECT EXISTS (
        SELECT 1 FROM pg_catalog.pg_locks l
        JOIN pg_catalog.pg_stat_activity a ON a.pid = l.pid
        WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
          AND l.database = (SELECT d.oid FROM pg_catalog.pg_database d
                            WHERE d.datname = pg_catalog.current_database())
          AND l.classid = pgmq._celery_lock_space()::oid
          AND l.objid = sid::oid
          AND a.usename = SESSION_USER
    );
$function$
;
COMMENT ON FUNCTION pgmq._celery_own_session(integer) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._celery_own_session(integer) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._celery_session_alive(sid integer)
 RETURNS boolean
 LANGUAGE sql
 STABLE
AS $function$
    SELECT EXISTS (
        SELECT 1 FROM pg_catalog.pg_locks l
        WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
          AND l.database = (SELECT d.oid FROM pg_catalog.pg_database d WHERE d.datname = pg_catalog.current_database())
          AND l.classid = pgmq._celery_lock_space()::oid
          AND l.objid = sid::oid
    );
$function$
;
COMMENT ON FUNCTION pgmq._celery_session_alive(integer) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._celery_session_alive(integer) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._celery_topic_regex(pattern text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$
    SELECT CASE WHEN pattern = '' THEN '^\.$' ELSE
        '^' || pg_catalog.string_agg(
            CASE w.word
                WHEN '#' THEN '(\.[^.]*)*'
                WHEN '*' THEN '\.[^.]*'
                ELSE '\.' || pg_catalog.regexp_replace(w.word, '([^A-Za-z0-9_])', '\\\1', 'g')
            END, '' ORDER BY w.pos) || '$'
    END
    FROM pg_catalog.unnest(pg_catalog.string_to_array(pattern, '.')) WITH ORDINALITY AS w(word, pos);
$function$
;
COMMENT ON FUNCTION pgmq._celery_topic_regex(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._celery_topic_regex(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._check_partition_args(partition_interval text, retention_interval text, premake integer, premake_name text)
 RETURNS void
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
BEGIN
    IF premake IS NULL OR premake < 1 THEN
        RAISE EXCEPTION '% must be at least 1, got %', premake_name, coalesce(premake::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    IF partition_interval IS NULL OR pg_catalog.btrim(partition_interval) = '' THEN
        PERFORM pgmq._partition_arg_error('partition_interval'::text, 'given'::text, partition_interval);
    END IF;
    IF pgmq._partition_by_id(partition_interval) THEN
        IF partition_interval::integer < 1 THEN
            PERFORM pgmq._partition_arg_error(
                'partition_interval'::text, 'a positive integer for msg_id ranges'::text, partition_interval);
        END IF;
        IF retention_interval IS NOT NULL AND (retention_interval !~ '^\s*\d{1,18}\s*$'
                                               OR retention_interval::bigint < 1) THEN
            PERFORM pgmq._partition_arg_error(
                'retention_interval'::text, 'a positive integer (a number of msg_ids) when '
                'partition_interval is one', retention_interval);
        END IF;
    ELSE
        PERFORM pgmq._time_step('partition_interval'::text, partition_interval);
        IF retention_interval IS NOT NULL AND pgmq._partition_by_id(retention_interval) THEN
            PERFORM pgmq._partition_arg_error(
                'retention_interval'::text, 'a time interval such as ''7 days'' when partition_interval '
                'is one', retention_interval);
        ELSIF retention_interval IS NOT NULL THEN
            PERFORM pgmq._time_step('retention_interval'::text, retention_interval);
        END IF;
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._check_partition_args(text,text,integer,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._check_partition_args(text,text,integer,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._check_queue_attributes(queue_name text, attrs jsonb)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    k text;
    v jsonb;
    ok boolean;
    kind text;
    minimum integer;
BEGIN
    FOR k, v IN SELECT e.key, e.value FROM pg_catalog.jsonb_each(attrs) e ORDER BY e.key LOOP
        SELECT d.kind, d.minimum INTO kind, minimum
        FROM pgmq._queue_attribute_declaration() d WHERE d.key = k;
        ok := CASE
            -- the number kinds: an integer at least the declared minimum
            WHEN kind IN ('seconds', 'bytes', 'count') THEN pgmq._json_int_at_least(v, minimum)
            WHEN kind = 'switch' THEN pg_catalog.jsonb_typeof(v) = 'boolean'
            WHEN kind = 'queue' THEN pg_catalog.jsonb_typeof(v) = 'string'
            -- CASE, not AND: each test may only run once the one before it held.
            WHEN kind = 'rate' THEN CASE
                WHEN pg_catalog.jsonb_typeof(v) <> 'object' THEN false
                WHEN (SELECT pg_catalog.array_agg(x ORDER BY x) FROM pg_catalog.jsonb_object_keys(v) x)
                     <> '{count,seconds}' THEN false
                WHEN pg_catalog.jsonb_typeof(v -> 'seconds') <> 'number' THEN false
                ELSE pgmq._json_int_at_least(v -> 'count', 1)
                     AND (v ->> 'seconds')::numeric > 0 AND (v ->> 'seconds')::numeric <= 31536000
                END
            ELSE false  -- unknown key (no row): the error says so
        END;
        IF NOT ok THEN
            PERFORM pgmq._bad_queue_attribute(queue_name, k, v);
        END IF;
    END LOOP;
    IF attrs ? 'dead_letter_queue' THEN
        BEGIN
            PERFORM pgmq.validate_queue_name(attrs ->> 'dead_letter_queue');
        EXCEPTION WHEN SQLSTATE 'PQ001' THEN
            PERFORM pgmq._bad_queue_attribute(queue_name, 'dead_letter_queue'::text, attrs -> 'dead_letter_queue');
        END;
        IF pg_catalog.lower(attrs ->> 'dead_letter_queue') = pg_catalog.lower(queue_name) THEN
            RAISE EXCEPTION 'queue "%": queue attribute "dead_letter_queue" must be another queue, '
                'not the queue itself', queue_name
                USING ERRCODE = 'PQ004';
        END IF;
    END IF;
    IF (attrs ? 'max_receive_count') <> (attrs ? 'dead_letter_queue') THEN
        RAISE EXCEPTION 'queue "%": queue attributes "max_receive_count" and "dead_letter_queue" '
            'go together: set both, or remove both', queue_name
            USING ERRCODE = 'PQ004';
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._check_queue_attributes(text,jsonb) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._check_queue_attributes(text,jsonb) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._check_time_zone(time_zone text)
 RETURNS text
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
    known boolean;
BEGIN
    -- PostgreSQL also takes POSIX specs ("UTC+3") and abbreviations ("PST") after AT
    -- TIME ZONE; a schedule takes only names of the tz database. An Area/Location name
    -- PostgreSQL can load is one; a name without "/" is looked up in the (slow) list.
    BEGIN
        known := time_zone ~ '^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$'
                 AND (pg_catalog.now() AT TIME ZONE time_zone) IS NOT NULL
                 AND (time_zone IN ('UTC', 'GMT') OR position('/' IN time_zone) > 0
                      OR EXISTS (SELECT 1 FROM pg_catalog.pg_timezone_names z WHERE z.name = time_zone));
    EXCEPTION WHEN invalid_parameter_value THEN
        known := false;
    END;
    IF NOT coalesce(known, false) THEN
        RAISE EXCEPTION 'unknown time zone "%" (want an IANA name such as Europe/Berlin or UTC)',
            coalesce(time_zone, 'NULL') USING ERRCODE = 'PQ004';
    END IF;
    RETURN time_zone;
END
$function$
;
COMMENT ON FUNCTION pgmq._check_time_zone(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._check_time_zone(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._check_topic_text(what text, value text, allowed text, allowed_text text)
 RETURNS void
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
BEGIN
    IF value IS NULL OR value = '' THEN
        RAISE EXCEPTION '% cannot be NULL or empty', what USING ERRCODE = 'PQ004';
    END IF;
    IF pg_catalog.length(value) > 255 THEN
        RAISE EXCEPTION '% length cannot exceed 255 characters, got % characters', what, pg_catalog.length(value)
            USING ERRCODE = 'PQ004';
    END IF;
    IF value !~ ('^[' || allowed || ']+$') THEN
        RAISE EXCEPTION '% contains invalid characters. Only %. Got: %', what, allowed_text, value
            USING ERRCODE = 'PQ004';
    END IF;
    IF pg_catalog.left(value, 1) = '.' THEN
        RAISE EXCEPTION '% cannot start with a dot. Got: %', what, value USING ERRCODE = 'PQ004';
    END IF;
    IF pg_catalog.right(value, 1) = '.' THEN
        RAISE EXCEPTION '% cannot end with a dot. Got: %', what, value USING ERRCODE = 'PQ004';
    END IF;
    IF pg_catalog.strpos(value, '..') > 0 THEN
        RAISE EXCEPTION '% cannot contain consecutive dots. Got: %', what, value USING ERRCODE = 'PQ004';
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._check_topic_text(text,text,text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._check_topic_text(text,text,text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._checked_message(queue_name text, msg jsonb, headers jsonb, max_size integer, priorities boolean, dedup boolean)
 RETURNS jsonb
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
DECLARE
    size integer;
    v jsonb;
BEGIN
    IF max_size IS NOT NULL THEN
        size := pg_catalog.octet_length(msg::text);
        IF size > max_size THEN
            RAISE EXCEPTION 'queue "%": message of % bytes is larger than the queue''s '
                'max_message_size of % bytes', queue_name, size, max_size
                USING ERRCODE = 'PQ004';
        END IF;
    END IF;
    IF pg_catalog.jsonb_typeof(headers) = 'object' THEN
        v := headers -> 'priority';
        IF priorities AND v IS NOT NULL
           AND NOT (pg_catalog.jsonb_typeof(v) = 'number' AND v::text ~ '^-?[0-9]{1,3}$'
                    AND pg_catalog.abs(v::text::integer) <= 100) THEN
            RAISE EXCEPTION 'queue "%": header "priority" must be an integer from -100 to 100, got %',
                queue_name, v
                USING ERRCODE = 'PQ004';
        END IF;
        v := headers -> 'deduplication_id';
        IF dedup AND v IS NOT NULL
           AND NOT (pg_catalog.jsonb_typeof(v) = 'string' AND pg_catalog.char_length(v #>> '{}') BETWEEN 1 AND 128) THEN
            RAISE EXCEPTION 'queue "%": header "deduplication_id" must be a string of 1 to 128 '
                'characters, got %', queue_name, pg_catalog.left(v::text, 200)
                USING ERRCODE = 'PQ004';
        END IF;
    END IF;
    RETURN msg;
END
$function$
;
COMMENT ON FUNCTION pgmq._checked_message(text,jsonb,jsonb,integer,boolean,boolean) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._checked_message(text,jsonb,jsonb,integer,boolean,boolean) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._claim_filter(queue_name text, attrs jsonb, qty integer, pops boolean DEFAULT false, peek boolean DEFAULT false, OUT allowed integer, OUT max_receive_count integer, OUT dead_letter_queue text, OUT by_priority boolean, OUT held tid[], OUT stamps timestamp with time zone[], OUT counts tid[])
 RETURNS record
 LANGUAGE plpgsql
AS $function$
BEGIN
    allowed := CASE WHEN (attrs -> 'paused') = 'true'::jsonb THEN 0 ELSE qty END;
    max_receive_count := CASE WHEN attrs ? 'dead_letter_queue'
                              THEN (attrs ->> 'max_receive_count')::integer END;
    dead_letter_queue := attrs ->> 'dead_letter_queue';
    by_priority := coalesce((attrs -> 'priorities') = 'true'::jsonb, false);
    IF allowed IS DISTINCT FROM 0 AND (attrs ? 'max_in_flight' OR attrs ? 'rate_limit') THEN
        -- held: the max_in_flight slots taken for the claim; counts: the rate_limit
        -- tokens (their rows' ctids); stamps: '{}' when the queue has a rate limit
        -- (sql/26_limits.sql).
        SELECT l.allowed, l.slots,
               CASE WHEN l.tokens IS NOT NULL THEN '{}'::timestamptz[] END, l.tokens
        INTO allowed, held, stamps, counts
        FROM pgmq._claim_limits(queue_name, allowed, pops, NOT peek) l;
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._claim_filter(text,jsonb,integer,boolean,boolean) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._claim_filter(text,jsonb,integer,boolean,boolean) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._claim_limits(queue_name text, qty integer, pops boolean, take_lock boolean, OUT allowed integer, OUT slots tid[], OUT tokens tid[], OUT max_in_flight integer, OUT in_flight integer, OUT rate_count integer, OUT rate_seconds double precision, OUT handed_out integer, OUT next_free_at timestamp with time zone)
 RETURNS record
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    lq text := pg_catalog.lower(queue_name);
    s pgmq.queue_limit_state;
    qtable text;
    now_ timestamptz := pg_catalog.clock_timestamp();
    window_start timestamptz;
    free_ integer;
BEGIN
    allowed := qty;
    SELECT * INTO s FROM pgmq.queue_limit_state l WHERE l.queue_name::text = lq;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    qtable := pgmq.format_table_name(queue_name, 'q');
    max_in_flight := s.max_in_flight;
    rate_count := s.rate_count;
    rate_seconds := s.rate_seconds;
    IF s.rate_count IS NOT NULL THEN
        window_start := now_ - pg_catalog.make_interval(secs => s.rate_seconds);
    END IF;
    IF take_lock THEN
        IF s.rate_count IS NOT NULL AND allowed IS DISTINCT FROM 0 THEN
            tokens := pgmq._limit_take(lq, 'r', allowed, s.rate_count, s.tokens_made, window_start, qtable);
            allowed := pg_catalog.cardinality(tokens);
        END IF;
        IF s.max_in_flight IS NOT NULL AND NOT pops AND allowed IS DISTINCT FROM 0 THEN
            slots := pgmq._limit_take(lq, 'f', allowed, s.max_in_flight, s.slots_made, now_, qtable);
            allowed := pg_catalog.cardinality(slots);
        END IF;
        IF s.rate_count IS NOT NULL AND tokens IS NULL THEN
            tokens := '{}';
        END IF;
        IF s.max_in_flight IS NOT NULL AND NOT pops AND slots IS NULL THEN
            slots := '{}';
        END IF;
        RETURN;
    END IF;

    -- A look: nothing taken.
    IF s.rate_count IS NOT NULL THEN
        handed_out := (SELECT pg_catalog.count(*) FROM pgmq.queue_limit_slots l
                       WHERE l.queue_name::text = lq AND l.kind = 'r' AND l.t > window_start);
        IF EXISTS (SELECT 1 FROM pgmq.queue_limit_slots l WHERE l.queue_name::text = lq AND l.kind = 'r'
                   AND l.slot > s.rate_count AND l.t > window_start) THEN
            free_ := 0;
        ELSE
            free_ := GREATEST(s.rate_count - s.tokens_made, 0)
                     + (SELECT pg_catalog.count(*) FROM (
                            SELECT 1 FROM pgmq.queue_limit_slots l
                            WHERE l.queue_name::text = lq AND l.kind = 'r' AND l.t <= window_start
                              AND l.slot <= s.rate_count
                            LIMIT allowed) x);
        END IF;
        allowed := LEAST(allowed, free_);
        IF free_ = 0 THEN
            next_free_at := (SELECT pg_catalog.min(l.t) FROM pgmq.queue_limit_slots l
                             WHERE l.queue_name::text = lq AND l.kind = 'r' AND l.t > window_start)
                            + pg_catalog.make_interval(secs => s.rate_seconds);
        END IF;
    END IF;
    IF s.max_in_flight IS NOT NULL AND (qty IS NULL OR NOT pops) THEN
        IF qty IS NULL THEN
            -- Counted in full (metrics): taken is t in the future, or passed while the
            -- message is still in flight under the same read (a heartbeat).
            EXECUTE pg_catalog.format(
                'SELECT pg_catalog.count(*) FROM pgmq.queue_limit_slots l '
                'WHERE l.queue_name::text = $1 AND l.kind = ''f'' AND l.msg_id IS NOT NULL '
                '  AND (l.t > $2 OR EXISTS (SELECT 1 FROM pgmq.%I q WHERE q.msg_id = l.msg_id '
                '       AND q.read_ct = l.read_ct AND q.vt > $2))',
                qtable) INTO in_flight USING lq, now_;
        END IF;
        IF NOT pops THEN
            IF EXISTS (SELECT 1 FROM pgmq.queue_limit_slots l WHERE l.queue_name::text = lq AND l.kind = 'f'
                       AND l.slot > s.max_in_flight AND l.t > now_) THEN
                free_ := 0;
            ELSIF qty IS NULL THEN
                free_ := GREATEST(s.max_in_flight - in_flight, 0);
            ELSE
                -- Enough to answer: at most qty free slots counted (no heartbeat check).
                free_ := GREATEST(s.max_in_flight - s.slots_made, 0)
                         + (SELECT pg_catalog.count(*) FROM (
                                SELECT 1 FROM pgmq.queue_limit_slots l
                                WHERE l.queue_name::text = lq AND l.kind = 'f' AND l.t <= now_
                                  AND l.slot <= s.max_in_flight
                                LIMIT qty) x);
            END IF;
            allowed := LEAST(allowed, free_);
            IF free_ = 0 THEN
                next_free_at := GREATEST(next_free_at, (
                    SELECT pg_catalog.min(l.t) FROM pgmq.queue_limit_slots l
                    WHERE l.queue_name::text = lq AND l.kind = 'f' AND l.t > now_));
            END IF;
        END IF;
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._claim_limits(text,integer,boolean,boolean) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._claim_limits(text,integer,boolean,boolean) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._claim_record(queue_name text, held tid[], stamps timestamp with time zone[], counts tid[], claimed bigint[], pops boolean DEFAULT false, claimed_read_cts integer[] DEFAULT NULL::integer[], claimed_vts timestamp with time zone[] DEFAULT NULL::timestamp with time zone[])
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    lq text := pg_catalog.lower(queue_name);
    n integer := coalesce(pg_catalog.cardinality(claimed), 0);
    s pgmq.queue_limit_state;
    ids bigint[];
    rcs integer[];
    vts timestamptz[];
BEGIN
    IF n = 0 THEN
        RETURN;
    END IF;
    SELECT * INTO s FROM pgmq.queue_limit_state l WHERE l.queue_name::text = lq;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    -- Each row by its ctid (a plan that cannot turn into a scan of the queue's rows,
    -- whatever the table's statistics); the other conditions check it is a free row of
    -- this queue.
    IF counts IS NOT NULL AND s.rate_count IS NOT NULL THEN
        UPDATE pgmq.queue_limit_slots l SET t = pg_catalog.clock_timestamp()
        WHERE l.ctid = ANY (counts[1:n]) AND l.queue_name::text = lq AND l.kind = 'r'
          AND l.slot <= s.rate_count
          AND l.t <= pg_catalog.clock_timestamp() - pg_catalog.make_interval(secs => s.rate_seconds);
    END IF;
    IF held IS NOT NULL AND NOT pops AND s.max_in_flight IS NOT NULL
       AND pg_catalog.cardinality(claimed_read_cts) = n AND pg_catalog.cardinality(claimed_vts) = n THEN
        -- The claim's own rows (the router's): a slot whose message is not in flight
        -- under that read is taken again after its t passes (pgmq._limit_take checks).
        UPDATE pgmq.queue_limit_slots l
        SET t = claimed_vts[x.i], msg_id = claimed[x.i], read_ct = claimed_read_cts[x.i]
        FROM (SELECT h.tid, h.i FROM ROWS FROM (pg_catalog.unnest(held[1:n])) WITH ORDINALITY AS h(tid, i)) x
        WHERE l.ctid = ANY (held[1:n]) AND l.ctid = x.tid AND l.queue_name::text = lq AND l.kind = 'f'
          AND l.slot <= s.max_in_flight AND l.t <= pg_catalog.clock_timestamp()
          AND claimed_vts[x.i] > pg_catalog.clock_timestamp() AND claimed_read_cts[x.i] > 0;
    ELSIF held IS NOT NULL AND NOT pops AND s.max_in_flight IS NOT NULL THEN
        EXECUTE pg_catalog.format(
            'SELECT pg_catalog.array_agg(q.msg_id ORDER BY q.msg_id), '
            '       pg_catalog.array_agg(q.read_ct ORDER BY q.msg_id), '
            '       pg_catalog.array_agg(q.vt ORDER BY q.msg_id) '
            'FROM pgmq.%I q WHERE q.msg_id = ANY ($1) AND q.read_ct > 0 '
            '  AND q.vt > pg_catalog.clock_timestamp()',
            pgmq.format_table_name(queue_name, 'q'))
        INTO ids, rcs, vts USING claimed;
        FOR i IN 1 .. LEAST(coalesce(pg_catalog.cardinality(ids), 0), pg_catalog.cardinality(held)) LOOP
            UPDATE pgmq.queue_limit_slots l SET t = vts[i], msg_id = ids[i], read_ct = rcs[i]
            WHERE l.ctid = held[i] AND l.queue_name::text = lq AND l.kind = 'f'
              AND l.slot <= s.max_in_flight AND l.t <= pg_catalog.clock_timestamp();
        END LOOP;
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._claim_record(text,tid[],timestamp with time zone[],tid[],bigint[],boolean,integer[],timestamp with time zone[]) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._claim_record(text,tid[],timestamp with time zone[],tid[],bigint[],boolean,integer[],timestamp with time zone[]) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._create_partition(cfg pgmq.partition_config, lo numeric, hi numeric)
 RETURNS TABLE(partition_name text, rows_moved bigint)
 LANGUAGE plpgsql
AS $function$
DECLARE
    by_id boolean := cfg.partition_column = 'msg_id';
    key_type text := CASE WHEN by_id THEN 'bigint' ELSE 'timestamptz' END;
    part text := pgmq._partition_name(cfg.table_name, by_id, cfg.partition_interval, lo);
    lo_lit text := pgmq._partition_literal(by_id, lo);
    hi_lit text := pgmq._partition_literal(by_id, hi);
    spill regclass := pgmq._default_partition(cfg.table_name);
    moved bigint := 0;
BEGIN
    EXECUTE pg_catalog.format('CREATE TABLE pgmq.%I (LIKE pgmq.%I INCLUDING DEFAULTS)',
                              part, cfg.table_name);
    IF cfg.table_name = pgmq.format_table_name(cfg.queue_name::text, 'q') THEN
        PERFORM pgmq._tune_live_table(part);
    END IF;
    IF spill IS NOT NULL THEN
        EXECUTE pg_catalog.format(
            $q$
            WITH moved AS (
                DELETE FROM %1$s WHERE %2$I >= %3$s::%5$s AND %2$I < %4$s::%5$s RETURNING *
            )
            INSERT INTO pgmq.%6$I SELECT * FROM moved
            $q$,
            spill, cfg.partition_column, lo_lit, hi_lit, key_type, part
        );
        GET DIAGNOSTICS moved = ROW_COUNT;
    END IF;
    -- ATTACH (not CREATE ... PARTITION OF, which locks the parent exclusively) leaves
    -- readers and writers of the parent running; it locks the default partition.
    EXECUTE pg_catalog.format(
        'ALTER TABLE pgmq.%I ATTACH PARTITION pgmq.%I FOR VALUES FROM (%s) TO (%s)',
        cfg.table_name, part, lo_lit, hi_lit);
    PERFORM pgmq._grant_queue_table(pg_catalog.format('pgmq.%I', part)::regclass);  -- app roles' rights
    RETURN QUERY SELECT part, moved;
END
$function$
;
COMMENT ON FUNCTION pgmq._create_partition(pgmq.partition_config,numeric,numeric) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._create_partition(pgmq.partition_config,numeric,numeric) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._create_queue(queue_name text, unlogged boolean)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    PERFORM pgmq.validate_queue_name(queue_name);
    IF (pgmq._same_name_queue(queue_name)).queue_name IS NOT NULL
       AND pg_catalog.to_regclass(pg_catalog.format(
               'pgmq.%I', pgmq.format_table_name(queue_name, 'q'::text))) IS NOT NULL THEN
        RETURN;
    END IF;
    PERFORM pgmq._require_privilege('create_queues'::text);
    PERFORM pgmq.acquire_queue_lock(queue_name);
    IF (pgmq._same_name_queue(queue_name)).queue_name IS NOT NULL
       AND pg_catalog.to_regclass(pg_catalog.format(
               'pgmq.%I', pgmq.format_table_name(queue_name, 'q'::text))) IS NOT NULL THEN
        RETURN;
    END IF;
    PERFORM pgmq._create_queue_tables(queue_name, unlogged, NULL::text, NULL::text);
    INSERT INTO pgmq.meta (queue_name, is_partitioned, is_unlogged)
    VALUES (queue_name, false, unlogged)
    ON CONFLICT DO NOTHING;
    PERFORM pgmq._record_creator(queue_name);
END
$function$
;
COMMENT ON FUNCTION pgmq._create_queue(text,boolean) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._create_queue(text,boolean) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._create_queue_tables(queue_name text, unlogged boolean, q_key text, a_key text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q'::text);
    atable text := pgmq.format_table_name(queue_name, 'a'::text);
BEGIN
    PERFORM pgmq._refuse_foreign_tables(queue_name);
    EXECUTE pg_catalog.format(
        $ddl$
        CREATE %s TABLE IF NOT EXISTS pgmq.%I (
            msg_id bigint GENERATED ALWAYS AS IDENTITY,
            read_ct integer NOT NULL DEFAULT 0,
            enqueued_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
            last_read_at timestamptz,
            vt timestamptz NOT NULL,
            message jsonb,
            headers jsonb,
            PRIMARY KEY (%s)
        ) %s
        $ddl$,
        CASE WHEN unlogged THEN 'UNLOGGED' ELSE '' END, qtable,
        CASE WHEN coalesce(q_key, 'msg_id') = 'msg_id' THEN 'msg_id' ELSE pg_catalog.format('msg_id, %I', q_key) END,
        CASE WHEN q_key IS NULL THEN '' ELSE pg_catalog.format('PARTITION BY RANGE (%I)', q_key) END
    );
    IF q_key IS NULL THEN
        PERFORM pgmq._tune_live_table(qtable);
    END IF;
    IF unlogged THEN
        -- The ids go on into the (logged) archive: an id sequence reset by a crash would
        -- hand out ids the archive holds already. Only the messages are unlogged.
        EXECUTE pg_catalog.format('ALTER SEQUENCE %s SET LOGGED',
                       pg_catalog.pg_get_serial_sequence(pg_catalog.format('pgmq.%I', qtable), 'msg_id'));
    END IF;

    EXECUTE pg_catalog.format(
        $ddl$
        CREATE TABLE IF NOT EXISTS pgmq.%I (
            msg_id bigint NOT NULL,
            read_ct integer NOT NULL DEFAULT 0,
            enqueued_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
            last_read_at timestamptz,
            archived_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
            vt timestamptz NOT NULL,
            message jsonb,
            headers jsonb,
            PRIMARY KEY (%s)
        ) %s
        $ddl$,
        atable,
        CASE WHEN coalesce(a_key, 'msg_id') = 'msg_id' THEN 'msg_id' ELSE pg_catalog.format('msg_id, %I', a_key) END,
        CASE WHEN a_key IS NULL THEN '' ELSE pg_catalog.format('PARTITION BY RANGE (%I)', a_key) END
    );
    -- pgmq's index name; '<atable>_archived_at_idx' would pass 63 bytes for a 47-char name.
    EXECUTE pg_catalog.format(
        'CREATE INDEX IF NOT EXISTS %I ON pgmq.%I (archived_at)',
        'archived_at_idx_' || pg_catalog.lower(queue_name), atable
    );
    PERFORM pgmq._grant_queue(queue_name);
END
$function$
;
COMMENT ON FUNCTION pgmq._create_queue_tables(text,boolean,text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._create_queue_tables(text,boolean,text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._cron_count(spec pgmq._cron_spec, time_zone text, from_tick timestamp with time zone, before timestamp with time zone)
 RETURNS bigint
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
    n bigint := 0;
    t timestamptz := from_tick;
BEGIN
    IF from_tick IS NULL OR from_tick >= before THEN
        RETURN 0;
    END IF;
    IF spec.every_seconds IS NOT NULL THEN
        RETURN pg_catalog.ceil(extract(epoch FROM before - from_tick) / spec.every_seconds)::bigint;
    END IF;
    WHILE t IS NOT NULL AND t < before AND n < 10000 LOOP
        n := n + 1;
        t := pgmq._cron_next(spec, time_zone, t);
    END LOOP;
    RETURN n;
END
$function$
;
COMMENT ON FUNCTION pgmq._cron_count(pgmq._cron_spec,text,timestamp with time zone,timestamp with time zone) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._cron_count(pgmq._cron_spec,text,timestamp with time zone,timestamp with time zone) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._cron_field(field text, spec text, lo integer, hi integer, names text[] DEFAULT NULL::text[])
 RETURNS integer[]
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
DECLARE
    item text;
    span text;
    step integer;
    first_v integer;
    last_v integer;
    vals integer[] := '{}';
BEGIN
    FOREACH item IN ARRAY pg_catalog.string_to_array(spec, ',') LOOP
        IF item = '' THEN
            RAISE EXCEPTION 'cron field "%": empty item in "%"', field, spec USING ERRCODE = 'PQ004';
        END IF;
        span := item;
        step := NULL;
        IF position('/' IN item) > 0 THEN
            IF item !~ '^[^/]+/[0-9]{1,9}$' THEN
                RAISE EXCEPTION 'cron field "%": "%" has a bad step (want <range>/<number>)', field, item
                    USING ERRCODE = 'PQ004';
            END IF;
            span := pg_catalog.split_part(item, '/', 1);
            step := pg_catalog.split_part(item, '/', 2)::integer;
            IF step < 1 THEN
                RAISE EXCEPTION 'cron field "%": step % in "%" must be 1 or more', field, step, item
                    USING ERRCODE = 'PQ004';
            END IF;
        END IF;
        IF span = '*' THEN
            first_v := lo;
            last_v := hi;
        ELSIF position('-' IN span) > 0 THEN
            IF span !~ '^[^-]+-[^-]+$' THEN
                RAISE EXCEPTION 'cron field "%": "%" is not a range (want <from>-<to>)', field, span
                    USING ERRCODE = 'PQ004';
            END IF;
            first_v := pgmq._cron_value(field, pg_catalog.split_part(span, '-', 1), lo, hi, names);
            last_v := pgmq._cron_value(field, pg_catalog.split_part(span, '-', 2), lo, hi, names);
            IF last_v < first_v THEN
                RAISE EXCEPTION 'cron field "%": range "%" ends before it starts', field, span
                    USING ERRCODE = 'PQ004';
            END IF;
        ELSE
            first_v := pgmq._cron_value(field, span, lo, hi, names);
            last_v := CASE WHEN step IS NULL THEN first_v ELSE hi END;  -- "5/15": 5 to hi
        END IF;
        vals := vals || ARRAY(SELECT pg_catalog.generate_series(first_v, last_v, coalesce(step, 1)));
    END LOOP;
    RETURN ARRAY(SELECT DISTINCT v FROM pg_catalog.unnest(vals) v ORDER BY v);
END
$function$
;
COMMENT ON FUNCTION pgmq._cron_field(text,text,integer,integer,text[]) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._cron_field(text,text,integer,integer,text[]) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._cron_next(spec pgmq._cron_spec, time_zone text, after timestamp with time zone)
 RETURNS timestamp with time zone
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
    lt timestamp;
    t timestamptz;
BEGIN
    IF spec.every_seconds IS NOT NULL THEN
        RETURN pg_catalog.to_timestamp(
            ((pg_catalog.floor(extract(epoch FROM after) / spec.every_seconds) + 1) * spec.every_seconds)::double precision);
    END IF;
    IF NOT spec.wall_clock THEN
        RETURN pgmq._cron_next_elapsed(spec, time_zone, after);
    END IF;
    lt := after AT TIME ZONE time_zone;
    LOOP
        lt := pgmq._cron_next_local(spec, lt);
        IF lt IS NULL THEN
            RETURN NULL;
        END IF;
        t := pgmq._local_to_instant(lt, time_zone);
        -- a tick in a gap moves to its end, where others may land too: once
        IF t > after THEN
            RETURN t;
        END IF;
    END LOOP;
END
$function$
;
COMMENT ON FUNCTION pgmq._cron_next(pgmq._cron_spec,text,timestamp with time zone) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._cron_next(pgmq._cron_spec,text,timestamp with time zone) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._cron_next_elapsed(spec pgmq._cron_spec, time_zone text, after timestamp with time zone)
 RETURNS timestamp with time zone
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
    t timestamptz := pg_catalog.date_trunc('minute', after, 'UTC') + interval '1 minute';
    give_up CONSTANT timestamptz := after + interval '30 years';
    lt timestamp;
    v integer;
    nxt integer;
BEGIN
    WHILE t < give_up LOOP
        lt := t AT TIME ZONE time_zone;
        IF NOT extract(month FROM lt)::integer = ANY (spec.months) THEN
            t := pgmq._local_to_instant(pg_catalog.date_trunc('month', lt) + interval '1 month', time_zone);
            CONTINUE;
        END IF;
        IF NOT pgmq._cron_day_matches(spec, lt::date) THEN
            t := pgmq._local_to_instant(pg_catalog.date_trunc('day', lt) + interval '1 day', time_zone);
            CONTINUE;
        END IF;
        v := extract(minute FROM lt)::integer;
        IF NOT extract(hour FROM lt)::integer = ANY (spec.hours) THEN
            t := t + pg_catalog.make_interval(mins => 60 - v);  -- the next hour, in elapsed time
            CONTINUE;
        END IF;
        IF NOT v = ANY (spec.minutes) THEN
            SELECT pg_catalog.min(m) INTO nxt FROM pg_catalog.unnest(spec.minutes) m WHERE m > v;
            t := t + pg_catalog.make_interval(mins => coalesce(nxt, 60) - v);
            CONTINUE;
        END IF;
        RETURN t;
    END LOOP;
    RETURN NULL;
END
$function$
;
COMMENT ON FUNCTION pgmq._cron_next_elapsed(pgmq._cron_spec,text,timestamp with time zone) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._cron_next_elapsed(pgmq._cron_spec,text,timestamp with time zone) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._cron_next_local(spec pgmq._cron_spec, local_time timestamp without time zone)
 RETURNS timestamp without time zone
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
DECLARE
    t timestamp := pg_catalog.date_trunc('minute', local_time) + interval '1 minute';
    give_up CONSTANT timestamp := local_time + interval '30 years';
    v integer;
    nxt integer;
BEGIN
    WHILE t < give_up LOOP
        IF NOT extract(month FROM t)::integer = ANY (spec.months) THEN
            t := pg_catalog.date_trunc('month', t) + interval '1 month';
            CONTINUE;
        END IF;
        IF NOT pgmq._cron_day_matches(spec, t::date) THEN
            t := pg_catalog.date_trunc('day', t) + interval '1 day';
            CONTINUE;
        END IF;
        v := extract(hour FROM t)::integer;
        IF NOT v = ANY (spec.hours) THEN
            SELECT pg_catalog.min(h) INTO nxt FROM pg_catalog.unnest(spec.hours) h WHERE h > v;
            t := pg_catalog.date_trunc('day', t) + CASE WHEN nxt IS NULL THEN interval '1 day'
                                            ELSE pg_catalog.make_interval(hours => nxt) END;
            CONTINUE;
        END IF;
        v := extract(minute FROM t)::integer;
        IF NOT v = ANY (spec.minutes) THEN
            SELECT pg_catalog.min(m) INTO nxt FROM pg_catalog.unnest(spec.minutes) m WHERE m > v;
            t := pg_catalog.date_trunc('hour', t) + CASE WHEN nxt IS NULL THEN interval '1 hour'
                                             ELSE pg_catalog.make_interval(mins => nxt) END;
            CONTINUE;
        END IF;
        RETURN t;
    END LOOP;
    RETURN NULL;
END
$function$
;
COMMENT ON FUNCTION pgmq._cron_next_local(pgmq._cron_spec,timestamp without time zone) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._cron_next_local(pgmq._cron_spec,timestamp without time zone) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._cron_parse(cron text)
 RETURNS pgmq._cron_spec
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
DECLARE
    expr text := pg_catalog.lower(pg_catalog.btrim(pg_catalog.regexp_replace(coalesce(cron, ''), '\s+', ' ', 'g')));
    f text[];
    every text[];
    spec pgmq._cron_spec;
    month_days CONSTANT integer[] := '{31,29,31,30,31,30,31,31,30,31,30,31}';
BEGIN
    IF cron IS NULL THEN
        RAISE EXCEPTION 'cron must not be NULL' USING ERRCODE = 'PQ004';
    END IF;
    expr := CASE expr
        WHEN '@yearly' THEN '0 0 1 1 *'
        WHEN '@annually' THEN '0 0 1 1 *'
        WHEN '@monthly' THEN '0 0 1 * *'
        WHEN '@weekly' THEN '0 0 * * 0'
        WHEN '@daily' THEN '0 0 * * *'
        WHEN '@midnight' THEN '0 0 * * *'
        WHEN '@hourly' THEN '0 * * * *'
        ELSE expr
    END;
    IF pg_catalog.left(expr, 1) = '@' THEN
        every := pg_catalog.regexp_match(expr,
            '^@every ([0-9]{1,9}) ?(s|sec|secs|second|seconds|m|min|mins|minute|minutes|h|hour|hours)$');
        IF every IS NULL THEN
            RAISE EXCEPTION 'cron "%": unknown form (use five fields, @yearly, @monthly, @weekly, '
                '@daily, @hourly, or @every <n> seconds|minutes|hours)', cron
                USING ERRCODE = 'PQ004';
        END IF;
        spec.every_seconds := every[1]::bigint
            * CASE pg_catalog.left(every[2], 1) WHEN 's' THEN 1 WHEN 'm' THEN 60 ELSE 3600 END;
        IF spec.every_seconds < 1 THEN
            RAISE EXCEPTION 'cron "%": the interval must be 1 or more', cron USING ERRCODE = 'PQ004';
        END IF;
        RETURN spec;
    END IF;
    f := pg_catalog.string_to_array(expr, ' ');
    IF coalesce(pg_catalog.array_length(f, 1), 0) <> 5 THEN
        RAISE EXCEPTION 'cron "%": want 5 fields (minute hour day-of-month month day-of-week), got %',
            cron, coalesce(pg_catalog.array_length(f, 1), 0) USING ERRCODE = 'PQ004';
    END IF;
    spec.minutes := pgmq._cron_field('minute'::text, f[1], 0, 59);
    spec.hours := pgmq._cron_field('hour'::text, f[2], 0, 23);
    spec.days := pgmq._cron_field('day-of-month'::text, f[3], 1, 31);
    spec.months := pgmq._cron_field('month'::text, f[4], 1, 12,
        '{JAN,FEB,MAR,APR,MAY,JUN,JUL,AUG,SEP,OCT,NOV,DEC}'::text[]);
    spec.weekdays := ARRAY(SELECT DISTINCT v % 7 FROM pg_catalog.unnest(
        pgmq._cron_field('day-of-week'::text, f[5], 0, 7, '{SUN,MON,TUE,WED,THU,FRI,SAT}'::text[])) v ORDER BY 1);
    -- cron's rule: when both day fields are restricted, a day matching either one fires.
    spec.days_or := pg_catalog.left(f[3], 1) <> '*' AND pg_catalog.left(f[5], 1) <> '*';
    spec.wall_clock := pg_catalog.left(f[1], 1) <> '*' AND pg_catalog.left(f[2], 1) <> '*';
    IF NOT spec.days_or AND spec.days[1] > (SELECT pg_catalog.max(month_days[m]) FROM pg_catalog.unnest(spec.months) m) THEN
        RAISE EXCEPTION 'cron field "day-of-month": % never occurs in the months of "%"',
            spec.days[1], f[4] USING ERRCODE = 'PQ004';
    END IF;
    RETURN spec;
END
$function$
;
COMMENT ON FUNCTION pgmq._cron_parse(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._cron_parse(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._cron_value(field text, token text, lo integer, hi integer, names text[])
 RETURNS integer
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
DECLARE
    pos integer := pg_catalog.array_position(names, pg_catalog.upper(token));
    v integer;
BEGIN
    IF pos IS NOT NULL THEN
        RETURN lo + pos - 1;
    END IF;
    IF token !~ '^[0-9]{1,9}$' THEN
        RAISE EXCEPTION 'cron field "%": "%" is not a number%', field, token,
            CASE WHEN names IS NULL THEN '' ELSE ' or a name (' || pg_catalog.array_to_string(names, ' ') || ')' END
            USING ERRCODE = 'PQ004';
    END IF;
    v := token::integer;
    IF v < lo OR v > hi THEN
        RAISE EXCEPTION 'cron field "%": % is out of range %-%', field, v, lo, hi
            USING ERRCODE = 'PQ004';
    END IF;
    RETURN v;
END
$function$
;
COMMENT ON FUNCTION pgmq._cron_value(text,text,integer,integer,text[]) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._cron_value(text,text,integer,integer,text[]) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._dashboard_count(queue_name text, kind "char", exact_limit bigint, since timestamp with time zone DEFAULT NULL::timestamp with time zone, OUT n bigint, OUT estimated boolean)
 RETURNS record
 LANGUAGE plpgsql
AS $function$
DECLARE
    tbl regclass := pgmq._dashboard_table(queue_name, kind);
BEGIN
    IF since IS NULL THEN
        EXECUTE pg_catalog.format('SELECT pg_catalog.count(*) FROM (SELECT 1 FROM %s LIMIT $1) s', tbl)
            INTO n USING exact_limit + 1;
    ELSE
        EXECUTE pg_catalog.format(
            'SELECT pg_catalog.count(*) FROM (SELECT 1 FROM %s WHERE archived_at > $2 LIMIT $1) s', tbl
        ) INTO n USING exact_limit + 1, since;
    END IF;
    estimated := n > exact_limit;
    IF estimated THEN
        n := greatest(n, pgmq._dashboard_estimate(queue_name, kind, since));
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._dashboard_count(text,"char",bigint,timestamp with time zone) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._dashboard_count(text,"char",bigint,timestamp with time zone) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._dashboard_estimate(queue_name text, kind "char", since timestamp with time zone DEFAULT NULL::timestamp with time zone)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    tbl regclass := pgmq._dashboard_table(queue_name, kind);
    plan json;
BEGIN
    IF since IS NULL THEN
        EXECUTE pg_catalog.format('EXPLAIN (FORMAT JSON) SELECT 1 FROM %s', tbl) INTO plan;
    ELSE
        EXECUTE pg_catalog.format('EXPLAIN (FORMAT JSON) SELECT 1 FROM %s WHERE archived_at > %L', tbl, since)
            INTO plan;
    END IF;
    RETURN (plan -> 0 -> 'Plan' ->> 'Plan Rows')::numeric::bigint;
END
$function$
;
COMMENT ON FUNCTION pgmq._dashboard_estimate(text,"char",timestamp with time zone) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._dashboard_estimate(text,"char",timestamp with time zone) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._dashboard_idle_queues(names text[])
 RETURNS TABLE(queue_name text, idle boolean)
 LANGUAGE sql
 STABLE
AS $function$
    SELECT m.queue_name::text, f.idle AND pgmq._archive_idle(m.queue_name::text)
    FROM pgmq._metrics_facts(names) f
    JOIN pgmq.meta m ON m.queue_name::text = f.n
    ORDER BY f.o
$function$
;
COMMENT ON FUNCTION pgmq._dashboard_idle_queues(text[]) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._dashboard_idle_queues(text[]) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._dashboard_match_batch(queue_name text, from_archive boolean, min_read_ct integer, header_key text, header_value text, contains jsonb, after_id bigint, up_to_id bigint, max_rows integer DEFAULT 1000)
 RETURNS SETOF bigint
 LANGUAGE plpgsql
AS $function$
BEGIN
    PERFORM pgmq._require_queue(queue_name);
    IF max_rows IS NULL OR max_rows < 1 OR max_rows > 10000 THEN
        RAISE EXCEPTION 'max_rows must be between 1 and 10000, got %', max_rows
            USING ERRCODE = 'PQ004';
    END IF;
    RETURN QUERY EXECUTE pg_catalog.format(
        $q$
        SELECT t.msg_id
        FROM pgmq.%I t
        WHERE t.msg_id > $5 AND t.msg_id <= $6
          AND ($1::integer IS NULL OR t.read_ct >= $1)
          AND ($2::text IS NULL OR ($3::text IS NULL AND t.headers ? $2) OR t.headers ->> $2 = $3)
          AND ($4::jsonb IS NULL OR t.message @> $4)
        ORDER BY t.msg_id
        LIMIT $7
        $q$,
        pgmq.format_table_name(queue_name, CASE WHEN from_archive THEN 'a' ELSE 'q' END)
    ) USING min_read_ct, header_key, header_value, contains,
            coalesce(after_id, 0), coalesce(up_to_id, 0), max_rows;
END
$function$
;
COMMENT ON FUNCTION pgmq._dashboard_match_batch(text,boolean,integer,text,text,jsonb,bigint,bigint,integer) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._dashboard_match_batch(text,boolean,integer,text,text,jsonb,bigint,bigint,integer) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._dashboard_match_count(queue_name text, from_archive boolean DEFAULT false, min_read_ct integer DEFAULT NULL::integer, header_key text DEFAULT NULL::text, header_value text DEFAULT NULL::text, contains jsonb DEFAULT NULL::jsonb)
 RETURNS TABLE(matched bigint, last_id bigint)
 LANGUAGE plpgsql
AS $function$
BEGIN
    PERFORM pgmq._require_queue(queue_name);
    RETURN QUERY EXECUTE pg_catalog.format(
        $q$
        SELECT pg_catalog.count(*), pg_catalog.max(t.msg_id)
        FROM pgmq.%I t
        WHERE ($1::integer IS NULL OR t.read_ct >= $1)
          AND ($2::text IS NULL OR ($3::text IS NULL AND t.headers ? $2) OR t.headers ->> $2 = $3)
          AND ($4::jsonb IS NULL OR t.message @> $4)
        $q$,
        pgmq.format_table_name(queue_name, CASE WHEN from_archive THEN 'a' ELSE 'q' END)
    ) USING min_read_ct, header_key, header_value, contains;
END
$function$
;
COMMENT ON FUNCTION pgmq._dashboard_match_count(text,boolean,integer,text,text,jsonb) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._dashboard_match_count(text,boolean,integer,text,text,jsonb) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._dashboard_queue_stats(queue_name text, exact_limit bigint DEFAULT 50000, max_receive_count integer DEFAULT NULL::integer)
 RETURNS pgmq._dashboard_stats
 LANGUAGE sql
AS $function$
    SELECT * FROM pgmq._dashboard_stats_of(
        ARRAY[pgmq._require_queue(queue_name)], exact_limit,
        CASE WHEN max_receive_count IS NULL THEN '{}'::jsonb
             ELSE pg_catalog.jsonb_build_object(pgmq._require_queue(queue_name), max_receive_count) END
    )
$function$
;
COMMENT ON FUNCTION pgmq._dashboard_queue_stats(text,bigint,integer) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._dashboard_queue_stats(text,bigint,integer) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._dashboard_requeue(source_queue text, target_queue text, msg_ids bigint[], from_archive boolean DEFAULT false)
 RETURNS SETOF bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    source_table text;
    target_table text;
BEGIN
    PERFORM pgmq._require_queue(source_queue);
    PERFORM pgmq._require_queue(target_queue);
    source_table := pgmq.format_table_name(source_queue, CASE WHEN from_archive THEN 'a' ELSE 'q' END);
    target_table := pgmq.format_table_name(target_queue, 'q'::text);
    IF source_table = target_table THEN
        RAISE EXCEPTION 'requeue needs two different tables, got % twice', source_table
            USING ERRCODE = 'PQ004';
    END IF;
    RETURN QUERY EXECUTE pg_catalog.format(
        $q$
        WITH moved AS (
            DELETE FROM pgmq.%I WHERE msg_id = ANY($1) RETURNING msg_id, message, headers
        )
        INSERT INTO pgmq.%I (vt, message, headers)
        SELECT pg_catalog.clock_timestamp(), message, headers FROM moved ORDER BY msg_id
        RETURNING msg_id
        $q$,
        source_table, target_table
    ) USING msg_ids;
END
$function$
;
COMMENT ON FUNCTION pgmq._dashboard_requeue(text,text,bigint[],boolean) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._dashboard_requeue(text,text,bigint[],boolean) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._dashboard_spark_stats(queue_name text, window_size interval, bucket_size interval)
 RETURNS TABLE(bucket_start timestamp with time zone, archived bigint, p50_sec double precision, p95_sec double precision, p99_sec double precision, retries bigint, last_minute timestamp with time zone)
 LANGUAGE plpgsql
AS $function$
DECLARE
    stored text;
    stats regclass := pg_catalog.to_regclass('pgmq.spark_stats');
BEGIN
    stored := pgmq._require_queue(queue_name);
    IF bucket_size IS NULL OR bucket_size <= interval '0' OR window_size IS NULL
       OR window_size < bucket_size THEN
        RAISE EXCEPTION 'window_size must be at least bucket_size and bucket_size positive, got % and %',
            window_size, bucket_size
            USING ERRCODE = 'PQ004';
    END IF;
    IF stats IS NULL THEN
        RETURN;
    END IF;
    -- The stats job stores the name as typed on its command line: match it and the
    -- queue's own spelling, both through the primary key.
    RETURN QUERY EXECUTE pg_catalog.format(
        $q$
        WITH picked AS (
            SELECT minute, s.archived, wait_p50, wait_p95, wait_p99, s.retries
            FROM %I.%I s
            WHERE s.queue_name::text IN ($1, $2) AND minute > $5 - $3
        )
        SELECT pg_catalog.date_bin($4, minute, timestamptz '2000-01-01 00:00+00'),
               pg_catalog.sum(r.archived)::bigint,
               (pg_catalog.sum(wait_p50 * r.archived) FILTER (WHERE wait_p50 IS NOT NULL)
                / nullif(pg_catalog.sum(r.archived) FILTER (WHERE wait_p50 IS NOT NULL), 0))::float8,
               pg_catalog.max(wait_p95), pg_catalog.max(wait_p99),
               pg_catalog.sum(r.retries)::bigint,
               (SELECT pg_catalog.max(minute) FROM %I.%I WHERE queue_name IN ($1, $2))
        FROM picked r
        GROUP BY 1
        ORDER BY 1
        $q$,
        'pgmq', 'spark_stats', 'pgmq', 'spark_stats'
    ) USING stored, queue_name, window_size, bucket_size, pg_catalog.clock_timestamp();
END
$function$
;
COMMENT ON FUNCTION pgmq._dashboard_spark_stats(text,interval,interval) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._dashboard_spark_stats(text,interval,interval) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._dashboard_stats_of(names text[], exact_limit bigint DEFAULT 50000, max_receive_count jsonb DEFAULT '{}'::jsonb)
 RETURNS SETOF pgmq._dashboard_stats
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF exact_limit IS NULL OR exact_limit < 1 THEN
        RAISE EXCEPTION 'exact_limit must be a positive number of rows, got %', exact_limit
            USING ERRCODE = 'PQ004';
    END IF;
    RETURN QUERY
    SELECT f.queue_name AS queue_name,
           f.queue_length AS queue_length,
           f.queue_visible_length AS queue_visible_length,
           f.in_flight_length AS in_flight_length,
           f.delayed_length AS delayed_length,
           f.oldest_msg_age_sec AS oldest_msg_age_sec,
           f.newest_msg_age_sec AS newest_msg_age_sec,
           f.oldest_visible_age_sec AS oldest_visible_age_sec,
           a.archive_size AS archive_size,
           a.archived_hour AS archived_hour,
           a.archived_day AS archived_day,
           f.poison_length AS poison_length,
           f.total_messages AS total_messages,
           f.estimated || a.estimated AS estimated
    FROM pg_catalog.unnest(names) WITH ORDINALITY AS u(n, o)
    -- The real time, not the transaction's start (see the top of 30_metrics.sql).
    JOIN pgmq._queue_figures(names, exact_limit, max_receive_count, pg_catalog.clock_timestamp()) f
        ON f.queue_name::text = u.n
    CROSS JOIN LATERAL pgmq._dashboard_archive_figures(f.queue_name::text, exact_limit, f.scrape_time) a
    ORDER BY u.o;
END
$function$
;
COMMENT ON FUNCTION pgmq._dashboard_stats_of(text[],bigint,jsonb) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._dashboard_stats_of(text[],bigint,jsonb) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._dashboard_table(queue_name text, kind "char")
 RETURNS regclass
 LANGUAGE plpgsql
 STABLE
AS $function$
BEGIN
    IF kind IS NULL OR kind NOT IN ('q', 'a') THEN
        RAISE EXCEPTION 'table kind must be q (live) or a (archive), got %', coalesce(kind::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    RETURN pg_catalog.format('pgmq.%I', pgmq.format_table_name(pgmq._require_queue(queue_name), kind::text))::regclass;
END
$function$
;
COMMENT ON FUNCTION pgmq._dashboard_table(text,"char") IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._dashboard_table(text,"char") FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._dashboard_throughput(queue_name text, window_size interval, bucket_size interval, row_limit bigint DEFAULT 200000, latency_limit bigint DEFAULT 20000)
 RETURNS TABLE(bucket_start timestamp with time zone, archived bigint, p50_sec double precision, p95_sec double precision, p99_sec double precision, truncated boolean, latency_truncated boolean)
 LANGUAGE plpgsql
AS $function$
DECLARE
    atable regclass;
BEGIN
    PERFORM pgmq._require_queue(queue_name);
    IF bucket_size IS NULL OR bucket_size <= interval '0' OR window_size IS NULL
       OR window_size < bucket_size THEN
        RAISE EXCEPTION 'window_size must be at least bucket_size and bucket_size positive, got % and %',
            window_size, bucket_size
            USING ERRCODE = 'PQ004';
    END IF;
    IF row_limit IS NULL OR row_limit < 1 OR latency_limit IS NULL OR latency_limit < 1 THEN
        RAISE EXCEPTION 'row_limit and latency_limit must be positive, got % and %',
            row_limit, latency_limit
            USING ERRCODE = 'PQ004';
    END IF;
    atable := pg_catalog.format('pgmq.%I', pgmq.format_table_name(queue_name, 'a'::text))::regclass;
    RETURN QUERY EXECUTE pg_catalog.format(
        $q$
        WITH counted AS (
            SELECT pg_catalog.date_bin($2, archived_at, timestamptz '2000-01-01 00:00+00') AS b
            FROM (SELECT archived_at FROM %1$s WHERE archived_at > $4 - $1
                  ORDER BY archived_at DESC LIMIT $3) newest
        ), counts AS (
            SELECT b, pg_catalog.count(*) AS n FROM counted GROUP BY b
        ), timed AS (
            SELECT pg_catalog.date_bin($2, archived_at, timestamptz '2000-01-01 00:00+00') AS b,
                   extract(epoch FROM archived_at - enqueued_at)::float8 AS latency
            FROM %1$s WHERE archived_at > $4 - $1
            ORDER BY archived_at DESC LIMIT $5
        ), latencies AS (
            SELECT b,
                   pg_catalog.percentile_cont(0.5) WITHIN GROUP (ORDER BY latency) AS p50,
                   pg_catalog.percentile_cont(0.95) WITHIN GROUP (ORDER BY latency) AS p95,
                   pg_catalog.percentile_cont(0.99) WITHIN GROUP (ORDER BY latency) AS p99
            FROM timed GROUP BY b
        )
        SELECT counts.b, counts.n, latencies.p50, latencies.p95, latencies.p99,
               (SELECT pg_catalog.count(*) FROM counted) >= $3,
               (SELECT pg_catalog.count(*) FROM timed) >= $5
        FROM counts LEFT JOIN latencies USING (b)
        ORDER BY 1
        $q$, atable
    ) USING window_size, bucket_size, row_limit, pg_catalog.clock_timestamp(), latency_limit;
END
$function$
;
COMMENT ON FUNCTION pgmq._dashboard_throughput(text,interval,interval,bigint,bigint) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._dashboard_throughput(text,interval,interval,bigint,bigint) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._dead_letter(queue_name text, msg_id bigint, dead_letter_queue text, error text DEFAULT NULL::text)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    source text := pgmq._require_queue(queue_name);
    qtable text := pgmq.format_table_name(source, 'q'::text);
    there bigint;
    new_id bigint;
BEGIN
    PERFORM pgmq.validate_queue_name(dead_letter_queue);
    IF pg_catalog.lower(dead_letter_queue) = pg_catalog.lower(source) THEN
        RAISE EXCEPTION 'queue "%" cannot be its own dead-letter queue', source
            USING ERRCODE = 'PQ004';
    END IF;
    -- Locked first, so that a message already gone creates no dead-letter queue.
    EXECUTE pg_catalog.format('SELECT msg_id FROM pgmq.%I WHERE msg_id = $1 FOR UPDATE', qtable)
        INTO there USING msg_id;
    IF there IS NULL THEN
        RETURN NULL;
    END IF;
    PERFORM pgmq._ensure_dead_letter_queue(dead_letter_queue);
    EXECUTE pg_catalog.format(
        $q$
        WITH dead AS (
            DELETE FROM pgmq.%1$I m WHERE m.msg_id = $1
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.message, m.headers,
                      $2::text AS error
        ), %2$s
        SELECT msg_id FROM moved
        $q$,
        qtable, pgmq._dead_letter_move_sql(source, dead_letter_queue)
    ) INTO new_id USING msg_id, error;
    IF pgmq._queue_attributes(source) ? 'max_in_flight' THEN
        -- Its max_in_flight slot frees now, not when its vt passes (sql/26_limits.sql).
        PERFORM pgmq._limit_free(source, ARRAY[msg_id]);
    END IF;
    RETURN new_id;
END
$function$
;
COMMENT ON FUNCTION pgmq._dead_letter(text,bigint,text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._dead_letter(text,bigint,text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._dead_letter_headers(headers jsonb, queue_name text, msg_id bigint, read_ct integer, enqueued_at timestamp with time zone, error text)
 RETURNS jsonb
 LANGUAGE sql
AS $function$
    SELECT CASE
               WHEN headers IS NULL THEN '{}'::jsonb
               WHEN pg_catalog.jsonb_typeof(headers) = 'object' THEN headers
               ELSE pg_catalog.jsonb_build_object('headers', headers)
           END
           || pg_catalog.jsonb_build_object('dead_letter', pg_catalog.jsonb_build_object(
                  'queue', queue_name,
                  'msg_id', msg_id,
                  'read_ct', read_ct,
                  'enqueued_at', enqueued_at,
                  'dead_lettered_at', pg_catalog.clock_timestamp(),
                  'error', coalesce(error, CASE WHEN pg_catalog.jsonb_typeof(headers -> 'attempt_errors') = 'array'
                                                THEN headers -> 'attempt_errors' -> -1 ->> 'error' END)));
$function$
;
COMMENT ON FUNCTION pgmq._dead_letter_headers(jsonb,text,bigint,integer,timestamp with time zone,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._dead_letter_headers(jsonb,text,bigint,integer,timestamp with time zone,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._dead_letter_ids(queue_name text, msg_ids bigint[], delivered integer DEFAULT 0)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    dlq text := pgmq._queue_attributes(queue_name) ->> 'dead_letter_queue';
    moved bigint;
BEGIN
    IF dlq IS NULL OR coalesce(pg_catalog.cardinality(msg_ids), 0) = 0 THEN
        RETURN 0;
    END IF;
    PERFORM pgmq._ensure_dead_letter_queue(dlq);
    EXECUTE pg_catalog.format(
        $q$
        WITH dead AS (
            DELETE FROM pgmq.%1$I m WHERE m.msg_id = ANY($1)
            RETURNING m.msg_id, m.read_ct - $2 AS read_ct, m.enqueued_at, m.message, m.headers,
                      NULL::text AS error
        ), %2$s
        SELECT pg_catalog.count(*) FROM moved
        $q$,
        pgmq.format_table_name(queue_name, 'q'::text),
        pgmq._dead_letter_move_sql(pgmq._stored_queue_name(queue_name), dlq)
    ) INTO moved USING msg_ids, coalesce(delivered, 0);
    RETURN moved;
END
$function$
;
COMMENT ON FUNCTION pgmq._dead_letter_ids(text,bigint[],integer) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._dead_letter_ids(text,bigint[],integer) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._dead_letter_move_sql(queue_name text, dead_letter_queue text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT pg_catalog.format(
        $sql$
        moved AS (
            INSERT INTO pgmq.%I (vt, message, headers)
            SELECT pg_catalog.clock_timestamp(), x.message,
                   pgmq._dead_letter_headers(x.headers, %L, x.msg_id, x.read_ct,
                                             x.enqueued_at, x.error)
            FROM dead x ORDER BY x.msg_id
            RETURNING msg_id
        )
        $sql$,
        pgmq.format_table_name(dead_letter_queue, 'q'::text), queue_name);
$function$
;
COMMENT ON FUNCTION pgmq._dead_letter_move_sql(text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._dead_letter_move_sql(text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._dedup_claim(queue_key text, dedup_ids text[], msg_ids bigint[])
 RETURNS TABLE(deduplication_id text, msg_id bigint)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
#variable_conflict use_column
DECLARE
    win interval;
BEGIN
    IF coalesce(pg_catalog.cardinality(dedup_ids), 0) = 0 THEN
        RETURN;
    END IF;
    win := pg_catalog.make_interval(secs => pgmq._dedup_window(queue_key)::double precision);
    IF pg_catalog.cardinality(dedup_ids) <> coalesce(pg_catalog.cardinality(msg_ids), -1) THEN
        RAISE EXCEPTION 'dedup_ids and msg_ids differ in length' USING ERRCODE = 'PQ004';
    END IF;
    RETURN QUERY
        INSERT INTO pgmq.queue_deduplication AS d (queue_name, deduplication_id, msg_id, sent_at)
        SELECT queue_key, u.dedup, u.id, pg_catalog.clock_timestamp()
        FROM unnest(dedup_ids, msg_ids) AS u(dedup, id)  -- multi-argument unnest is syntax, not a function
        WHERE u.dedup IS NOT NULL AND u.id IS NOT NULL
        ORDER BY u.dedup
        ON CONFLICT (queue_name, deduplication_id) DO UPDATE
        SET msg_id = CASE WHEN d.sent_at > pg_catalog.clock_timestamp() - win
                          THEN d.msg_id ELSE excluded.msg_id END,
            sent_at = CASE WHEN d.sent_at > pg_catalog.clock_timestamp() - win
                           THEN d.sent_at ELSE excluded.sent_at END
        RETURNING d.deduplication_id, d.msg_id;
END
$function$
;
COMMENT ON FUNCTION pgmq._dedup_claim(text,text[],bigint[]) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._dedup_claim(text,text[],bigint[]) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._dedup_expire(queue_name text)
 RETURNS bigint
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    key text := pg_catalog.lower(queue_name);
    secs integer := (SELECT (a.attributes ->> 'deduplication_window')::integer
                     FROM pgmq.queue_attributes a
                     WHERE pg_catalog.lower(a.queue_name::text) = key);
    n bigint;
BEGIN
    IF coalesce(secs, 0) <= 0 THEN
        RETURN 0;
    END IF;
    DELETE FROM pgmq.queue_deduplication d
    WHERE d.queue_name::text = key
      AND d.sent_at < pg_catalog.clock_timestamp() - pg_catalog.make_interval(secs => secs::double precision);
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$function$
;
COMMENT ON FUNCTION pgmq._dedup_expire(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._dedup_expire(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._dedup_record(queue_key text, dedup_ids text[], msg_ids bigint[])
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    n integer;
BEGIN
    IF coalesce(pg_catalog.cardinality(dedup_ids), 0) = 0 THEN
        RETURN 0;
    END IF;
    PERFORM pgmq._dedup_window(queue_key);
    IF pg_catalog.cardinality(dedup_ids) <> coalesce(pg_catalog.cardinality(msg_ids), -1) THEN
        RAISE EXCEPTION 'dedup_ids and msg_ids differ in length' USING ERRCODE = 'PQ004';
    END IF;
    INSERT INTO pgmq.queue_deduplication (queue_name, deduplication_id, msg_id, sent_at)
    SELECT queue_key, u.dedup, u.id, pg_catalog.clock_timestamp()
    FROM unnest(dedup_ids, msg_ids) AS u(dedup, id)  -- multi-argument unnest is syntax, not a function
    WHERE u.dedup IS NOT NULL
    ORDER BY u.dedup;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$function$
;
COMMENT ON FUNCTION pgmq._dedup_record(text,text[],bigint[]) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._dedup_record(text,text[],bigint[]) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._dedup_window(queue_key text)
 RETURNS integer
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    secs integer;
BEGIN
    SELECT (a.attributes ->> 'deduplication_window')::integer INTO secs
    FROM pgmq.queue_attributes a
    WHERE pg_catalog.lower(a.queue_name::text) = queue_key;
    IF coalesce(secs, 0) <= 0 OR queue_key IS DISTINCT FROM pg_catalog.lower(queue_key) THEN
        RAISE EXCEPTION 'queue "%" has no deduplication window', coalesce(queue_key, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    RETURN secs;
END
$function$
;
COMMENT ON FUNCTION pgmq._dedup_window(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._dedup_window(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._default_partition(parent text)
 RETURNS regclass
 LANGUAGE sql
 STABLE
AS $function$
    SELECT nullif(p.partdefid, 0)::regclass FROM pg_catalog.pg_partitioned_table p
    WHERE p.partrelid = pg_catalog.to_regclass(pg_catalog.format('pgmq.%I', parent));
$function$
;
COMMENT ON FUNCTION pgmq._default_partition(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._default_partition(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._default_partition_length(queue_name text)
 RETURNS bigint
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
    spill regclass;
    n bigint;
    total bigint;
BEGIN
    FOR spill IN
        SELECT d FROM pg_catalog.unnest(ARRAY[pgmq.format_table_name(queue_name, 'q'::text),
                                   pgmq.format_table_name(queue_name, 'a'::text)]) AS t,
                      pgmq._default_partition(t) AS d
        WHERE d IS NOT NULL
    LOOP
        EXECUTE pg_catalog.format('SELECT pg_catalog.count(*) FROM (SELECT FROM %s LIMIT 10000) s', spill) INTO n;
        IF n = 10000 THEN
            SELECT greatest(n, c.reltuples::bigint) INTO n FROM pg_catalog.pg_class c WHERE c.oid = spill;
        END IF;
        total := coalesce(total, 0) + n;
    END LOOP;
    RETURN total;
END
$function$
;
COMMENT ON FUNCTION pgmq._default_partition_length(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._default_partition_length(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._delay_to_vt(delay integer)
 RETURNS timestamp with time zone
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF delay IS NULL OR delay < 0 THEN
        RAISE EXCEPTION 'delay cannot be negative, got: %', coalesce(delay::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    IF delay = 0 THEN
        RETURN NULL;  -- none given: the queue's delivery_delay, if any
    END IF;
    RETURN pg_catalog.clock_timestamp() + pg_catalog.make_interval(secs => delay);
END
$function$
;
COMMENT ON FUNCTION pgmq._delay_to_vt(integer) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._delay_to_vt(integer) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._drop_queue(queue_name text)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q'::text);
    atable text := pgmq.format_table_name(queue_name, 'a'::text);
    owner_session boolean := pgmq._session_is_owner();
    creator name;
BEGIN
    IF NOT owner_session THEN
        PERFORM pgmq._require_privilege('create_queues'::text);
    END IF;
    PERFORM pgmq.acquire_queue_lock(queue_name);
    PERFORM pgmq._lock_queue_table(queue_name);  -- waits for an index build to give way
    IF pg_catalog.to_regclass(pg_catalog.format('pgmq.%I', qtable)) IS NULL
       AND NOT EXISTS (SELECT FROM pgmq.meta m
                       WHERE pg_catalog.lower(m.queue_name::text) = pg_catalog.lower($1)) THEN
        RAISE NOTICE 'pgmq queue `%` does not exist', queue_name;
        RETURN false;
    END IF;
    IF NOT owner_session THEN
        SELECT c.created_by INTO creator FROM pgmq.queue_creator c
        WHERE pg_catalog.lower(c.queue_name::text) = pg_catalog.lower($1);
        IF creator IS NULL OR NOT EXISTS (
            SELECT FROM pg_catalog.pg_roles r
            WHERE r.rolname = creator AND pg_catalog.pg_has_role(SESSION_USER, r.oid, 'MEMBER'::text)
        ) THEN
            -- PostgreSQL's text, as a pgmq install where the role does not own the table says
            RAISE EXCEPTION 'must be owner of table %', qtable
                USING ERRCODE = '42501',
                      DETAIL = pg_catalog.format('Queue "%s" was created by %s.', queue_name,
                                                 coalesce(pg_catalog.quote_ident(creator::text),
                                                          'the owner of schema pgmq')),
                      HINT = 'A role granted --create-queues may drop only the queues it created; '
                             'the owner of schema pgmq may drop any.';
        END IF;
    END IF;
    EXECUTE pg_catalog.format('DROP TABLE IF EXISTS pgmq.%I', qtable);
    EXECUTE pg_catalog.format('DROP TABLE IF EXISTS pgmq.%I', atable);
    DELETE FROM pgmq.meta m WHERE pg_catalog.lower(m.queue_name::text) = pg_catalog.lower($1);
    DELETE FROM pgmq.queue_creator c WHERE pg_catalog.lower(c.queue_name::text) = pg_catalog.lower($1);
    RETURN true;
END
$function$
;
COMMENT ON FUNCTION pgmq._drop_queue(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._drop_queue(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._enable_task_queue(queue_name text)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
DECLARE
    built boolean;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pgmq.meta m WHERE pg_catalog.lower(m.queue_name::text) = pg_catalog.lower($1)) THEN
        PERFORM pgmq."create"(queue_name);
    END IF;
    built := pgmq._want_queue_index(queue_name, 'priority'::text);
    -- age(xmin) is 0 for a row this transaction wrote.
    RETURN (SELECT pg_catalog.age(m.xmin) > 0 FROM pgmq.meta m WHERE pg_catalog.lower(m.queue_name::text) = pg_catalog.lower($1))
       AND (built OR (SELECT pg_catalog.age(w.xmin) > 0 FROM pgmq.queue_index_wanted w
                      WHERE w.index_name = pgmq._queue_index_name($1, 'priority'::text)));
END
$function$
;
COMMENT ON FUNCTION pgmq._enable_task_queue(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._enable_task_queue(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._enforce_retention(only_queue text)
 RETURNS TABLE(queue text, expired bigint, archive_deleted bigint)
 LANGUAGE plpgsql
AS $function$
DECLARE
    batch_size constant integer := 5000;
    q record;
    b record;
BEGIN
    IF only_queue IS NOT NULL THEN
        PERFORM pgmq._require_queue(only_queue);
    END IF;
    FOR q IN SELECT * FROM pgmq._retention_queues(only_queue) LOOP
        queue := q.queue_name::text;
        expired := 0;
        archive_deleted := 0;
        LOOP
            SELECT * INTO b FROM pgmq._retention_batch(q.queue_name::text, batch_size);
            expired := expired + b.expired;
            archive_deleted := archive_deleted + b.archive_deleted;
            EXIT WHEN b.expired < batch_size AND b.archive_deleted < batch_size;
        END LOOP;
        IF q.reported THEN
            RETURN NEXT;
        END IF;
    END LOOP;
END
$function$
;
COMMENT ON FUNCTION pgmq._enforce_retention(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._enforce_retention(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._ensure_dead_letter_queue(queue_name text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF pg_catalog.to_regclass(pg_catalog.format('pgmq.%I', pgmq.format_table_name(queue_name, 'q'::text))) IS NULL THEN
        PERFORM pgmq."create"(queue_name);
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._ensure_dead_letter_queue(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._ensure_dead_letter_queue(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._fit_name(base text, suffix text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT CASE
        WHEN pg_catalog.octet_length(base || suffix) <= 63 THEN base || suffix
        ELSE pg_catalog.left(base, 63 - pg_catalog.octet_length(suffix) - 9) || '_'
             || pg_catalog.left(pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(base, 'UTF8')), 'hex'), 8) || suffix
    END;
$function$
;
COMMENT ON FUNCTION pgmq._fit_name(text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._fit_name(text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._forget_deduplication()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
    DELETE FROM pgmq.queue_deduplication d WHERE d.queue_name::text = pg_catalog.lower(OLD.queue_name);
    RETURN OLD;
END
$function$
;
COMMENT ON FUNCTION pgmq._forget_deduplication() IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._forget_deduplication() FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._forget_queue_limits()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    DELETE FROM pgmq.queue_limit_state s WHERE s.queue_name::text = pg_catalog.lower(OLD.queue_name::text);
    -- Rows a claim in progress holds stay (no wait); a limit set again reuses them.
    DELETE FROM pgmq.queue_limit_slots l
    WHERE (l.queue_name, l.kind, l.slot) IN (
        SELECT x.queue_name, x.kind, x.slot FROM pgmq.queue_limit_slots x
        WHERE x.queue_name::text = pg_catalog.lower(OLD.queue_name::text)
        FOR UPDATE SKIP LOCKED);
    RETURN OLD;
END
$function$
;
COMMENT ON FUNCTION pgmq._forget_queue_limits() IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._forget_queue_limits() FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._grant_queue(queue_name text, role name DEFAULT NULL::name)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    tbl regclass;
BEGIN
    FOR tbl IN
        WITH RECURSIVE t(oid) AS (
            SELECT c.oid FROM pg_catalog.pg_class c
            WHERE c.relnamespace = 'pgmq'::regnamespace
              AND c.relname IN (pgmq.format_table_name(queue_name, 'q'::text)::name,
                                pgmq.format_table_name(queue_name, 'a'::text)::name)
            UNION
            SELECT i.inhrelid FROM pg_catalog.pg_inherits i JOIN t ON i.inhparent = t.oid
        )
        SELECT t.oid::regclass FROM t ORDER BY 1
    LOOP
        PERFORM pgmq._grant_queue_table(tbl, role);
    END LOOP;
END
$function$
;
COMMENT ON FUNCTION pgmq._grant_queue(text,name) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._grant_queue(text,name) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._grant_queue_table(tbl regclass, role name DEFAULT NULL::name)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    grantee name;
    seq regclass;
BEGIN
    FOR grantee IN
        SELECT a.role_name FROM pgmq.app_role a
        JOIN pg_catalog.pg_roles r ON r.rolname = a.role_name
        WHERE role IS NULL OR a.role_name = role
        ORDER BY 1
    LOOP
        EXECUTE pg_catalog.format(
            'GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON TABLE %s TO %I', tbl, grantee);
        FOR seq IN
            SELECT s.oid::regclass FROM pg_catalog.pg_depend d
            JOIN pg_catalog.pg_class s ON s.oid = d.objid AND s.relkind = 'S'
            WHERE d.classid = 'pg_catalog.pg_class'::regclass AND d.refobjid = tbl
              AND d.refclassid = 'pg_catalog.pg_class'::regclass AND d.deptype IN ('a', 'i')
        LOOP
            EXECUTE pg_catalog.format('GRANT USAGE, SELECT ON SEQUENCE %s TO %I', seq, grantee);
        END LOOP;
    END LOOP;
END
$function$
;
COMMENT ON FUNCTION pgmq._grant_queue_table(regclass,name) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._grant_queue_table(regclass,name) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._hide_failed(queue_name text, msg_id bigint, seconds double precision, error text, keep integer DEFAULT 20)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    done bigint;
BEGIN
    IF seconds IS NULL OR seconds < 0 OR seconds = 'Infinity' THEN
        RAISE EXCEPTION 'seconds must be zero or more, got: %', coalesce(seconds::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    EXECUTE pg_catalog.format(
        $q$
        WITH free AS (
            SELECT msg_id FROM pgmq.%1$I WHERE msg_id = $1 FOR UPDATE SKIP LOCKED
        )
        UPDATE pgmq.%1$I m
        SET vt = pg_catalog.clock_timestamp() + pg_catalog.make_interval(secs => $2),
            headers = CASE
                WHEN m.headers IS NOT NULL AND pg_catalog.jsonb_typeof(m.headers) <> 'object' THEN m.headers
                WHEN pg_catalog.jsonb_typeof(coalesce(m.headers -> 'attempt_errors', '[]')) <> 'array'
                    THEN m.headers
                ELSE coalesce(m.headers, '{}') || pg_catalog.jsonb_build_object('attempt_errors', (
                    SELECT coalesce(pg_catalog.jsonb_agg(e.value ORDER BY e.n), '[]')
                    FROM pg_catalog.jsonb_array_elements(
                        coalesce(m.headers -> 'attempt_errors', '[]') || pg_catalog.jsonb_build_array(
                            pg_catalog.jsonb_build_object(
                                'attempt', m.read_ct, 'at', pg_catalog.clock_timestamp(), 'error', $3
                            )
                        )
                    ) WITH ORDINALITY AS e(value, n)
                    WHERE e.n > pg_catalog.jsonb_array_length(coalesce(m.headers -> 'attempt_errors', '[]'))
                                + 1 - greatest($4, 1)
                ))
            END
        FROM free
        WHERE m.msg_id = free.msg_id
        RETURNING m.msg_id
        $q$,
        pgmq.format_table_name(pgmq._require_queue(queue_name), 'q'::text)
    ) INTO done USING msg_id, seconds, error, keep;
    RETURN done;
END
$function$
;
COMMENT ON FUNCTION pgmq._hide_failed(text,bigint,double precision,text,integer) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._hide_failed(text,bigint,double precision,text,integer) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._install_notify_trigger(queue_name text)
 RETURNS void
 LANGUAGE plpgsql
 SET client_min_messages TO 'warning'
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q'::text);
    trigger_name text := pgmq._notify_trigger_name(queue_name);
BEGIN
    PERFORM pgmq._lock_queue_table(queue_name);  -- not while an index build runs on it
    EXECUTE pg_catalog.format('DROP TRIGGER IF EXISTS %I ON pgmq.%I', trigger_name, qtable);
    EXECUTE pg_catalog.format(
        $ddl$
        CREATE CONSTRAINT TRIGGER %I
        AFTER INSERT ON pgmq.%I
        DEFERRABLE INITIALLY DEFERRED
        FOR EACH ROW
        EXECUTE FUNCTION pgmq.notify_queue_listeners(%L)
        $ddl$,
        trigger_name, qtable, queue_name
    );
    EXECUTE pg_catalog.format('COMMENT ON TRIGGER %I ON pgmq.%I IS %L',
                   trigger_name, qtable, pgmq._notify_trigger_hash());
END
$function$
;
COMMENT ON FUNCTION pgmq._install_notify_trigger(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._install_notify_trigger(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._invalid_queue_name(queue_name text, prefix text)
 RETURNS text
 LANGUAGE plpgsql
 IMMUTABLE PARALLEL SAFE
AS $function$
BEGIN
    PERFORM pgmq.validate_queue_name(queue_name);
    RETURN pg_catalog.lower(prefix || '_' || queue_name);
END
$function$
;
COMMENT ON FUNCTION pgmq._invalid_queue_name(text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._invalid_queue_name(text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._iso_time(at_instant timestamp with time zone, time_zone text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT pg_catalog.to_char(at_instant AT TIME ZONE time_zone,
                   CASE WHEN pg_catalog.date_trunc('second', at_instant) = at_instant
                        THEN 'YYYY-MM-DD"T"HH24:MI:SS' ELSE 'YYYY-MM-DD"T"HH24:MI:SS.US' END)
        || CASE WHEN o < interval '0' THEN '-' ELSE '+' END
        || pg_catalog.to_char(CASE WHEN o < interval '0' THEN -o ELSE o END, 'HH24:MI')
    FROM (SELECT pgmq._utc_offset(at_instant, time_zone) AS o) x
$function$
;
COMMENT ON FUNCTION pgmq._iso_time(timestamp with time zone,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._iso_time(timestamp with time zone,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._json_int_at_least(value jsonb, low integer)
 RETURNS boolean
 LANGUAGE sql
 IMMUTABLE
AS $function$
    SELECT pg_catalog.jsonb_typeof(value) = 'number'
       AND value::text::numeric = pg_catalog.trunc(value::text::numeric)
       AND value::text::numeric BETWEEN low AND 2147483647;
$function$
;
COMMENT ON FUNCTION pgmq._json_int_at_least(jsonb,integer) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._json_int_at_least(jsonb,integer) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._limit_drop_rows(lq text, kind "char", above integer DEFAULT NULL::integer)
 RETURNS void
 LANGUAGE sql
AS $function$
    DELETE FROM pgmq.queue_limit_slots l
    WHERE (l.queue_name, l.kind, l.slot) IN (
        SELECT x.queue_name, x.kind, x.slot FROM pgmq.queue_limit_slots x
        WHERE x.queue_name::text = $1 AND ($2 IS NULL OR x.kind = $2)
          AND ($3 IS NULL OR x.slot > $3)
          AND ($3 IS NULL OR x.kind = 'r' OR x.t <= pg_catalog.clock_timestamp())
        FOR UPDATE SKIP LOCKED);
$function$
;
COMMENT ON FUNCTION pgmq._limit_drop_rows(text,"char",integer) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._limit_drop_rows(text,"char",integer) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._limit_free(queue_name text, msg_ids bigint[])
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    lq text := pg_catalog.lower(queue_name);
    s pgmq.queue_limit_state;
    c_tids tid[];
    freed integer[];
BEGIN
    -- The slots these messages hold (skipping one a claim holds: no wait).
    -- (Only 'f' rows hold a msg_id: no kind here, so the plan is the msg_id index's.)
    SELECT pg_catalog.array_agg(l.ctid) INTO c_tids
    FROM (SELECT x.ctid FROM pgmq.queue_limit_slots x
          WHERE x.queue_name::text = lq AND x.msg_id = ANY (msg_ids)
            AND x.t > pg_catalog.clock_timestamp()
          FOR UPDATE SKIP LOCKED) l;
    IF c_tids IS NULL THEN
        RETURN;
    END IF;
    -- Freed, but those still in flight keep their slot.
    EXECUTE pg_catalog.format(
        'WITH u AS ('
        '    UPDATE pgmq.queue_limit_slots l SET t = ''-infinity'', msg_id = NULL, read_ct = NULL'
        '    WHERE l.ctid = ANY ($1) AND NOT EXISTS ('
        '        SELECT 1 FROM pgmq.%I q'
        '        WHERE q.msg_id = l.msg_id AND q.vt > pg_catalog.clock_timestamp())'
        '    RETURNING l.slot) '
        'SELECT pg_catalog.array_agg(u.slot) FROM u',
        pgmq.format_table_name(queue_name, 'q'))
    INTO freed USING c_tids;
    SELECT * INTO s FROM pgmq.queue_limit_state l WHERE l.queue_name::text = lq;
    IF freed IS NULL OR s.max_in_flight IS NULL OR s.slots_made < s.max_in_flight THEN
        RETURN;  -- nothing freed, or a reader could still have made a slot: nobody waits
    END IF;
    -- Another free slot within the limit (not one a claim is taking) means no reader
    -- was refused for want of this one.
    IF pg_catalog.current_setting('transaction_isolation') = 'read committed' THEN
        PERFORM 1 FROM pgmq.queue_limit_slots l
        WHERE l.queue_name::text = lq AND l.kind = 'f' AND l.t <= pg_catalog.clock_timestamp()
          AND l.slot <= s.max_in_flight AND l.slot <> ALL (freed)
        LIMIT 1 FOR KEY SHARE SKIP LOCKED;
    ELSE
        PERFORM 1 FROM pgmq.queue_limit_slots l
        WHERE l.queue_name::text = lq AND l.kind = 'f' AND l.t <= pg_catalog.clock_timestamp()
          AND l.slot <= s.max_in_flight AND l.slot <> ALL (freed)
        LIMIT 1;
    END IF;
    IF NOT FOUND THEN
        PERFORM pg_catalog.pg_notify(pgmq._limit_channel(
            (SELECT m.queue_name::text FROM pgmq.meta m
             WHERE pg_catalog.lower(m.queue_name::text) = lq)), '');
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._limit_free(text,bigint[]) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._limit_free(text,bigint[]) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._limit_prefill()
 RETURNS integer
 LANGUAGE sql
 IMMUTABLE
AS $function$ SELECT 1024 $function$
;
COMMENT ON FUNCTION pgmq._limit_prefill() IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._limit_prefill() FROM PUBLIC;

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
    c_rcs integer[];
    still tid[];
    n integer;
    rounds integer := 0;
    snap_strict boolean := pg_catalog.current_setting('transaction_isolation') <> 'read committed';
BEGIN
    IF want <= 0 THEN
        RETURN got;
    END IF;
    IF EXISTS (SELECT 1 FROM pgmq.queue_limit_slots l
               WHERE l.queue_name::text = lq AND l.kind = $2 AND l.slot > cap AND l.t > free_before) THEN
        RETURN got;
    END IF;
    LOOP
        rounds := rounds + 1;
        SELECT pg_catalog.array_agg(x.ctid), pg_catalog.array_agg(x.slot),
               pg_catalog.array_agg(x.msg_id), pg_catalog.array_agg(x.read_ct)
        INTO c_tids, c_slots, c_ids, c_rcs
        FROM (SELECT l.ctid, l.slot, l.msg_id, l.read_ct FROM pgmq.queue_limit_slots l
              WHERE l.queue_name::text = lq AND l.kind = $2 AND l.t <= free_before AND l.slot <= cap
                AND l.slot <> ALL (seen)
              ORDER BY l.t
              LIMIT want - pg_catalog.cardinality(got)
              FOR UPDATE SKIP LOCKED) x;
        EXIT WHEN c_tids IS NULL;
        still := '{}';
        IF kind = 'f' AND EXISTS (SELECT 1 FROM pg_catalog.unnest(c_ids) i WHERE i IS NOT NULL) THEN
            -- Timed-out slots: a message still in flight under the same read keeps its
            -- slot (its t follows the vt). At REPEATABLE READ the message is locked
            -- FOR SHARE, so one changed since the snapshot refuses the claim (40001).
            -- (Rows by ctid: this transaction holds them.)
            EXECUTE pg_catalog.format(
                'WITH c AS (SELECT * FROM ROWS FROM (pg_catalog.unnest($1::tid[]), pg_catalog.unnest($2::bigint[]), '
                '                                pg_catalog.unnest($3::integer[])) AS c(tid, id, rc)), '
                'h AS (SELECT c.tid, q.vt FROM c JOIN pgmq.%I q ON q.msg_id = c.id AND q.read_ct = c.rc '
                '      WHERE q.vt > pg_catalog.clock_timestamp() %s), '
                'u AS (UPDATE pgmq.queue_limit_slots l SET t = h.vt FROM h '
                '      WHERE l.ctid = h.tid AND l.queue_name::text = $4 RETURNING h.tid) '
                'SELECT coalesce(pg_catalog.array_agg(u.tid), ''{}'') FROM u',
                qtable, CASE WHEN snap_strict THEN 'FOR SHARE OF q SKIP LOCKED' ELSE '' END)
            INTO still USING c_tids, c_ids, c_rcs, lq;
        END IF;
        seen := seen || c_slots;
        got := got || ARRAY(SELECT x FROM pg_catalog.unnest(c_tids) x WHERE x <> ALL (still));
        EXIT WHEN pg_catalog.cardinality(still) = 0 OR rounds >= 8
               OR (want IS NOT NULL AND pg_catalog.cardinality(got) >= want);
    END LOOP;
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

CREATE OR REPLACE FUNCTION pgmq._lock_queue_table(queue_name text)
 RETURNS void
 LANGUAGE sql
AS $function$
    SELECT pg_catalog.pg_advisory_xact_lock(k.class_id, k.object_id)
    FROM pgmq._queue_table_lock_key(queue_name) k;
$function$
;
COMMENT ON FUNCTION pgmq._lock_queue_table(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._lock_queue_table(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._low_water_mark(queue_name text)
 RETURNS bigint
 LANGUAGE sql
AS $function$
    SELECT pgmq._low_water_mark_for(pgmq._message_table_name(queue_name, 'q'::text));
$function$
;
COMMENT ON FUNCTION pgmq._low_water_mark(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._low_water_mark(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._low_water_mark_for(qtable text)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    -- '-' may not appear in a setting's name, '$' may, and never appears in a queue name
    key text := 'pgmq.low_' || pg_catalog.replace(qtable, '-', '$');
    kept text := pg_catalog.current_setting(key, true);
    -- a value of another shape than this function writes (set by hand) counts as none:
    -- never an error (80 characters keep the times within float8; the msg_id is checked
    -- for bigint below; a regular expression with counted repeats costs 15 us a call)
    mark text[] := CASE
        WHEN pg_catalog.octet_length(kept) <= 80
             AND kept ~ '^[0-9]+ [0-9]+(\.[0-9]+)? [0-9]+ [0-9]+(\.[0-9]+)?$'
        THEN pg_catalog.string_to_array(kept, ' ') END;
    rel oid := pg_catalog.to_regclass(pg_catalog.format('pgmq.%I', qtable));
    now_s float8 := pg_catalog.date_part('epoch', pg_catalog.clock_timestamp());
    full_look boolean;
    low bigint;
    given bigint;  -- the id sequence's last value
BEGIN
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
    IF NOT full_look AND mark[2]::float8 >= now_s THEN
        RETURN mark[3]::bigint;
    END IF;
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

CREATE OR REPLACE FUNCTION pgmq._maintain_table(cfg pgmq.partition_config)
 RETURNS TABLE(action text, partition_name text, range_start text, range_end text, rows_moved bigint)
 LANGUAGE plpgsql
AS $function$
DECLARE
    by_id boolean := cfg.partition_column = 'msg_id';
    step text := cfg.partition_interval;
    cur numeric := pgmq._partition_now(cfg.queue_name::text, by_id);
    spill regclass := pgmq._default_partition(cfg.table_name);
    bound text := pgmq._maintenance_lock_timeout();
    saved text := pg_catalog.current_setting('lock_timeout');
    wanted numeric[] := '{}';
    spilled numeric[];
    bucket numeric;
    bucket_end numeric;
    threshold numeric;
    blocked boolean := false;
    passed_over integer := 0;
    old record;
    made record;
BEGIN
    bucket := pgmq._partition_floor(by_id, step, cur);
    FOR i IN 0..cfg.premake LOOP
        wanted := pg_catalog.array_append(wanted, bucket);
        bucket := pgmq._partition_next(by_id, step, bucket);
    END LOOP;
    IF spill IS NOT NULL THEN
        -- Reading the default partition: ACCESS SHARE, which only DDL conflicts with.
        PERFORM pg_catalog.set_config('lock_timeout', bound, true);
        BEGIN
            EXECUTE pg_catalog.format(
                'SELECT pg_catalog.array_agg(DISTINCT pgmq._partition_floor($1, $2, %s)) FROM %s',
                CASE WHEN by_id THEN pg_catalog.format('%I::numeric', cfg.partition_column)
                     ELSE pg_catalog.format('EXTRACT(epoch FROM %I)', cfg.partition_column) END,
                spill
            ) INTO spilled USING by_id, step;
        EXCEPTION WHEN lock_not_available THEN
            spilled := NULL;  -- its rows wait for the next run
            blocked := true;  -- a DDL holds the table: every step would wait
        END;
        PERFORM pg_catalog.set_config('lock_timeout', saved, true);
    END IF;

    FOR bucket IN
        SELECT DISTINCT w FROM pg_catalog.unnest(pg_catalog.array_cat(wanted, coalesce(spilled, '{}')))
            AS w ORDER BY w
    LOOP
        CONTINUE WHEN EXISTS (
            SELECT 1 FROM pgmq._partitions(cfg.table_name, by_id) p
            WHERE NOT p.is_default AND p.lo <= bucket AND bucket < p.hi
        );
        -- Never overlap a partition made with other bounds (a converted archive's history).
        SELECT LEAST(pgmq._partition_next(by_id, step, bucket), pg_catalog.min(p.lo)) INTO bucket_end
        FROM pgmq._partitions(cfg.table_name, by_id) p
        WHERE NOT p.is_default AND p.lo > bucket;
        action := 'create skipped';
        partition_name := pgmq._partition_name(cfg.table_name, by_id, step, bucket);
        rows_moved := NULL;
        IF blocked THEN
            passed_over := passed_over + 1;
        ELSE
            PERFORM pg_catalog.set_config('lock_timeout', bound, true);
            BEGIN
                SELECT * INTO made FROM pgmq._create_partition(cfg, bucket, bucket_end);
                action := 'created';
                rows_moved := made.rows_moved;
            EXCEPTION WHEN lock_not_available THEN
                blocked := true;
                RAISE NOTICE 'partition pgmq.% not created: the locks it needs on pgmq.% were not '
                             'granted within % (a transaction using the queue is open); the next '
                             'maintenance run tries again', partition_name, cfg.table_name, bound;
            END;
            PERFORM pg_catalog.set_config('lock_timeout', saved, true);
        END IF;
        range_start := pgmq._partition_bound(by_id, bucket);
        range_end := pgmq._partition_bound(by_id, bucket_end);
        RETURN NEXT;
    END LOOP;

    IF cfg.retention_interval IS NOT NULL THEN
        threshold := CASE WHEN by_id THEN cur - cfg.retention_interval::numeric
            ELSE EXTRACT(epoch FROM ((pg_catalog.clock_timestamp() AT TIME ZONE 'UTC')
                                     - cfg.retention_interval::interval) AT TIME ZONE 'UTC')
        END;
        FOR old IN
            SELECT * FROM pgmq._partitions(cfg.table_name, by_id) p
            WHERE NOT p.is_default AND p.hi <= threshold
        LOOP
            -- DROP locks the parent and its default partition ACCESS EXCLUSIVE. (DETACH
            -- PARTITION CONCURRENTLY would not, but PostgreSQL refuses it on a table with a
            -- default partition, and every table here has one.)
            action := 'drop skipped';
            IF blocked THEN
                passed_over := passed_over + 1;
            ELSE
                PERFORM pg_catalog.set_config('lock_timeout', bound, true);
                BEGIN
                    EXECUTE pg_catalog.format('DROP TABLE pgmq.%I', old.partition_name);
                    action := 'dropped';
                EXCEPTION WHEN lock_not_available THEN
                    blocked := true;
                    RAISE NOTICE 'partition pgmq.% not dropped: the locks it needs on pgmq.% were '
                                 'not granted within % (a transaction using the queue is open); the '
                                 'next maintenance run tries again',
                                 old.partition_name, cfg.table_name, bound;
                END;
                PERFORM pg_catalog.set_config('lock_timeout', saved, true);
            END IF;
            partition_name := old.partition_name;
            range_start := pgmq._partition_bound(by_id, old.lo);
            range_end := pgmq._partition_bound(by_id, old.hi);
            rows_moved := NULL;
            RETURN NEXT;
        END LOOP;
    END IF;
    IF passed_over > 0 THEN
        RAISE NOTICE '% more step(s) on pgmq.% skipped without waiting (the same open transaction '
                     'holds them up); the next maintenance run tries again', passed_over, cfg.table_name;
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._maintain_table(pgmq.partition_config) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._maintain_table(pgmq.partition_config) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._maintenance_lock_timeout()
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT CASE WHEN s.ms <= 0 THEN '200ms'
                ELSE (LEAST(s.ms, 1000)::bigint)::text || 'ms' END
    FROM (SELECT EXTRACT(epoch FROM pg_catalog.current_setting('lock_timeout')::interval) * 1000
                 AS ms) AS s;
$function$
;
COMMENT ON FUNCTION pgmq._maintenance_lock_timeout() IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._maintenance_lock_timeout() FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._message_name_error(queue_name text, prefix text)
 RETURNS text
 LANGUAGE plpgsql
 IMMUTABLE PARALLEL SAFE
AS $function$
BEGIN
    IF queue_name IS NULL THEN
        PERFORM pgmq.validate_queue_name(queue_name);  -- "must not be empty"
    END IF;
    IF queue_name ~ '[$;'']|--' THEN
        RAISE EXCEPTION 'queue name contains invalid characters: $, ;, --, or \'': "%"', queue_name
            USING ERRCODE = 'PQ001';
    END IF;
    -- PostgreSQL's own text for a missing table (identifiers cut at 63 bytes, as it does).
    RAISE EXCEPTION 'relation "pgmq.%" does not exist', pg_catalog.left(pg_catalog.lower(prefix || '_' || queue_name), 63)
        USING ERRCODE = '42P01';
END
$function$
;
COMMENT ON FUNCTION pgmq._message_name_error(text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._message_name_error(text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._message_table_name(queue_name text, prefix text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$
    SELECT CASE
        WHEN pg_catalog.length(queue_name) <= 47 AND queue_name ~ '^[A-Za-z0-9_][A-Za-z0-9_-]*$'
             AND pg_catalog.strpos(queue_name, '--') = 0
        THEN pg_catalog.lower(prefix || '_' || queue_name)
        ELSE pgmq._message_name_error(queue_name, prefix)
    END;
$function$
;
COMMENT ON FUNCTION pgmq._message_table_name(text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._message_table_name(text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._metrics_facts(names text[])
 RETURNS TABLE(n text, o bigint, qtable text, qoid oid, seq oid, spill boolean, idle boolean)
 LANGUAGE sql
 STABLE
AS $function$
    SELECT f.n, f.o, f.qtable, f.qoid, f.seq, f.spill,
           coalesce(f.relkind = 'r' AND NOT f.spill AND pg_catalog.pg_relation_size(f.qoid) = 0, false)
    FROM (
        SELECT u.n, u.o, u.qtable, c.oid AS qoid, c.relkind,
               coalesce(c.oid = ANY (spilling.oids) OR a.oid = ANY (spilling.oids), false) AS spill,
               CASE WHEN pg_catalog.cardinality(names) > 64
               THEN ((SELECT pg_catalog.jsonb_object_agg(d.refobjid::text, d.objid)
                      FROM pg_catalog.pg_sequence s
                      JOIN pg_catalog.pg_depend d ON d.classid = 'pg_class'::regclass
                                      AND d.objid = s.seqrelid AND d.objsubid = 0
                      WHERE d.refclassid = 'pg_class'::regclass AND d.deptype IN ('a', 'i'))
                     ->> c.oid::text)::oid
               ELSE (SELECT d.objid FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_sequence s ON s.seqrelid = d.objid
                     WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass
                       AND d.refobjid = c.oid AND d.deptype IN ('a', 'i')
                     LIMIT 1)
               END AS seq
        -- OFFSET 0 keeps the name check to once per name: flattened, format_table_name's
        -- regular expression went into the joins' hash keys and was run again for every
        -- probe (a tenth of metrics_all's time at 10,000 queues)
        FROM (SELECT x.n, x.o, pgmq.format_table_name(x.n, 'q'::text) AS qtable
              FROM pg_catalog.unnest(names) WITH ORDINALITY AS x(n, o) OFFSET 0) u
        CROSS JOIN (SELECT pg_catalog.array_agg(p.partrelid) AS oids FROM pg_catalog.pg_partitioned_table p
                    WHERE p.partdefid <> 0) spilling
        LEFT JOIN pg_catalog.pg_class c ON c.relnamespace = 'pgmq'::regnamespace AND c.relname = u.qtable
        LEFT JOIN pg_catalog.pg_class a
            ON a.relnamespace = 'pgmq'::regnamespace AND a.relname = 'a' || pg_catalog.substr(u.qtable, 2)
    ) f;
$function$
;
COMMENT ON FUNCTION pgmq._metrics_facts(text[]) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._metrics_facts(text[]) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._notify_throttle_pass(queue_name text)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    UPDATE pgmq.notify_insert_throttle t
    SET last_notified_at = pg_catalog.clock_timestamp()
    WHERE t.queue_name::text = $1
      AND pg_catalog.clock_timestamp() - t.last_notified_at
          >= t.throttle_interval_ms * interval '1 millisecond';
    RETURN FOUND;
END
$function$
;
COMMENT ON FUNCTION pgmq._notify_throttle_pass(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._notify_throttle_pass(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._notify_trigger_name(queue_name text)
 RETURNS text
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$
    SELECT CASE
        WHEN pg_catalog.lower(queue_name) ~ '^[a-z0-9_]+$' THEN 'q_' || pg_catalog.lower(queue_name) || '_notify_insert'
        ELSE 'pgmq_notify_' || pg_catalog.left(pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(pg_catalog.lower(queue_name), 'UTF8')), 'hex'), 20)
    END;
$function$
;
COMMENT ON FUNCTION pgmq._notify_trigger_name(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._notify_trigger_name(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._partition_arg_error(what text, expected text, got text)
 RETURNS void
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
BEGIN
    RAISE EXCEPTION '% must be %, got: %', what, expected, coalesce(pg_catalog.quote_literal(got), 'NULL')
        USING ERRCODE = 'PQ004';
END
$function$
;
COMMENT ON FUNCTION pgmq._partition_arg_error(text,text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._partition_arg_error(text,text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._partition_bound(by_id boolean, pos numeric)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT CASE
        WHEN pos = '-Infinity'::numeric THEN 'MINVALUE'
        WHEN pos = 'Infinity'::numeric THEN 'MAXVALUE'
        WHEN by_id THEN (pos::bigint)::text
        ELSE pg_catalog.to_char(pg_catalog.to_timestamp(pos::double precision) AT TIME ZONE 'UTC',
                     CASE WHEN pos = pg_catalog.trunc(pos) THEN 'YYYY-MM-DD"T"HH24:MI:SS"+00"'
                          ELSE 'YYYY-MM-DD"T"HH24:MI:SS.US"+00"' END)
    END;
$function$
;
COMMENT ON FUNCTION pgmq._partition_bound(boolean,numeric) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._partition_bound(boolean,numeric) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._partition_floor(by_id boolean, step text, pos numeric)
 RETURNS numeric
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
DECLARE
    iv interval;
    utc timestamp;
    months integer;
    n integer;
BEGIN
    IF by_id THEN
        RETURN pg_catalog.floor(pos / step::bigint) * step::bigint;
    END IF;
    iv := step::interval;
    utc := pg_catalog.to_timestamp(pos::double precision) AT TIME ZONE 'UTC';
    months := extract(year FROM iv)::integer * 12 + extract(month FROM iv)::integer;
    IF months > 0 THEN
        n := (extract(year FROM utc)::integer - 2000) * 12 + extract(month FROM utc)::integer - 1;
        utc := timestamp '2000-01-01' + pg_catalog.make_interval(months => pg_catalog.floor(n::numeric / months)::integer * months);
    ELSE
        utc := pg_catalog.date_bin(iv, utc, timestamp '2000-01-01');
    END IF;
    RETURN extract(epoch FROM utc AT TIME ZONE 'UTC');
END
$function$
;
COMMENT ON FUNCTION pgmq._partition_floor(boolean,text,numeric) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._partition_floor(boolean,text,numeric) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._partition_literal(by_id boolean, pos numeric)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT CASE WHEN pg_catalog.abs(pos) = 'Infinity'::numeric THEN pgmq._partition_bound(by_id, pos)
                ELSE pg_catalog.quote_literal(pgmq._partition_bound(by_id, pos)) END;
$function$
;
COMMENT ON FUNCTION pgmq._partition_literal(boolean,numeric) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._partition_literal(boolean,numeric) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._partition_name(parent text, by_id boolean, step text, lo numeric)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT pgmq._fit_name(parent, '_p' || CASE
        WHEN by_id THEN (lo::bigint)::text
        WHEN step::interval = pg_catalog.date_trunc('day', step::interval)
            THEN pg_catalog.to_char(pg_catalog.to_timestamp(lo::double precision) AT TIME ZONE 'UTC', 'YYYYMMDD')
        ELSE pg_catalog.to_char(pg_catalog.to_timestamp(lo::double precision) AT TIME ZONE 'UTC', 'YYYYMMDD"_"HH24MISS')
    END);
$function$
;
COMMENT ON FUNCTION pgmq._partition_name(text,boolean,text,numeric) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._partition_name(text,boolean,text,numeric) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._partition_next(by_id boolean, step text, lo numeric)
 RETURNS numeric
 LANGUAGE sql
 IMMUTABLE
AS $function$
    SELECT CASE WHEN by_id THEN lo + step::bigint
                ELSE extract(epoch FROM ((pg_catalog.to_timestamp(lo::double precision) AT TIME ZONE 'UTC')
                                         + step::interval) AT TIME ZONE 'UTC')
           END;
$function$
;
COMMENT ON FUNCTION pgmq._partition_next(boolean,text,numeric) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._partition_next(boolean,text,numeric) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._partition_now(queue_name text, by_id boolean)
 RETURNS numeric
 LANGUAGE sql
AS $function$
    SELECT CASE WHEN by_id
        THEN coalesce(pg_catalog.pg_sequence_last_value(pg_catalog.pg_get_serial_sequence(
                 pg_catalog.format('pgmq.%I', pgmq.format_table_name(queue_name, 'q'::text)), 'msg_id')::regclass), 0) + 1
        ELSE extract(epoch FROM pg_catalog.clock_timestamp())
    END;
$function$
;
COMMENT ON FUNCTION pgmq._partition_now(text,boolean) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._partition_now(text,boolean) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._partition_position(by_id boolean, bound text)
 RETURNS numeric
 LANGUAGE sql
 STABLE
AS $function$
    SELECT CASE
        WHEN bound = 'MINVALUE' THEN '-Infinity'::numeric
        WHEN bound = 'MAXVALUE' THEN 'Infinity'::numeric
        WHEN by_id THEN pg_catalog.btrim(bound, '''')::numeric
        ELSE extract(epoch FROM pg_catalog.btrim(bound, '''')::timestamptz)
    END;
$function$
;
COMMENT ON FUNCTION pgmq._partition_position(boolean,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._partition_position(boolean,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._partitions(parent text, by_id boolean)
 RETURNS TABLE(partition_name text, lo numeric, hi numeric, is_default boolean)
 LANGUAGE sql
 STABLE
AS $function$
    SELECT c.relname::text,
           pgmq._partition_position(by_id, b[1]),
           pgmq._partition_position(by_id, b[2]),
           b IS NULL
    FROM pg_catalog.pg_inherits i
    JOIN pg_catalog.pg_class c ON c.oid = i.inhrelid
    CROSS JOIN LATERAL pg_catalog.regexp_match(pg_catalog.pg_get_expr(c.relpartbound, c.oid),
                                    '^FOR VALUES FROM \((.*)\) TO \((.*)\)$') AS b
    WHERE i.inhparent = pg_catalog.to_regclass(pg_catalog.format('pgmq.%I', parent))
    ORDER BY 2 NULLS FIRST;
$function$
;
COMMENT ON FUNCTION pgmq._partitions(text,boolean) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._partitions(text,boolean) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._poll(reader text, queue_name text, vt integer, qty integer, extra text, max_poll_seconds integer, poll_interval_ms integer)
 RETURNS SETOF pgmq.message_record
 LANGUAGE plpgsql
AS $function$
DECLARE
    deadline timestamptz := pg_catalog.clock_timestamp() + pg_catalog.make_interval(secs => coalesce(max_poll_seconds, 0));
    rec pgmq.message_record;
    got boolean;
BEGIN
    IF reader IS NULL OR reader NOT IN ('read', 'read_grouped') THEN
        RAISE EXCEPTION 'reader must be read or read_grouped, got: %', coalesce(reader, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    IF poll_interval_ms IS NULL OR poll_interval_ms <= 0 THEN
        RAISE EXCEPTION 'poll_interval_ms must be positive, got: %', coalesce(poll_interval_ms::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    LOOP
        got := false;
        IF reader = 'read' THEN
            FOR rec IN SELECT * FROM pgmq.read(queue_name, vt, qty, extra::jsonb) LOOP
                got := true;
                RETURN NEXT rec;
            END LOOP;
        ELSE
            FOR rec IN SELECT * FROM pgmq._read_grouped(queue_name, vt, qty, extra) LOOP
                got := true;
                RETURN NEXT rec;
            END LOOP;
        END IF;
        EXIT WHEN got OR pg_catalog.clock_timestamp() >= deadline;
        PERFORM pg_catalog.pg_sleep(least(poll_interval_ms / 1000.0,
                               extract(epoch FROM deadline - pg_catalog.clock_timestamp())));
    END LOOP;
END
$function$
;
COMMENT ON FUNCTION pgmq._poll(text,text,integer,integer,text,integer,integer) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._poll(text,text,integer,integer,text,integer,integer) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_attributes(queue_name text)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
AS $function$
    SELECT a.attributes FROM pgmq.queue_attributes a WHERE pg_catalog.lower(a.queue_name::text) = pg_catalog.lower($1);
$function$
;
COMMENT ON FUNCTION pgmq._queue_attributes(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_attributes(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_figures(names text[], exact_limit bigint DEFAULT NULL::bigint, max_receive_count jsonb DEFAULT NULL::jsonb, at timestamp with time zone DEFAULT now())
 RETURNS SETOF pgmq.queue_figures
 LANGUAGE plpgsql
AS $function$
DECLARE
    bounded constant boolean := exact_limit IS NOT NULL;
    limits constant jsonb := coalesce(max_receive_count, '{}');
    answered pgmq.queue_figures[];
    part pgmq.queue_figures[];
    busy text[];
    tables text[];
    seqs oid[];
    idle_seqs oid[];
    totals bigint[];
    spills boolean[];
    caps integer[];
    chunk constant integer := 200;
    first integer := 1;
    upto integer;
BEGIN
    at := coalesce(at, pg_catalog.now());
    IF bounded AND exact_limit < 1 THEN
        RAISE EXCEPTION 'exact_limit must be a positive number of rows, got %', exact_limit
            USING ERRCODE = 'PQ004';
    END IF;
    IF bounded THEN
        names := ARRAY(SELECT m.queue_name::text FROM pg_catalog.unnest(names) AS u(n)
                       JOIN pgmq.meta m ON m.queue_name::text = u.n);
    END IF;
    -- One pass over the catalogue: the idle queues' rows (the type's columns in order:
    -- zeros and the sequence), and what the others need.
    SELECT coalesce(pg_catalog.array_agg(ROW(
               f.n, 0, NULL, NULL,
               CASE WHEN NOT bounded THEN coalesce(pg_catalog.pg_sequence_last_value(f.seq), 0) END,
               at, 0, NULL,
               CASE WHEN bounded THEN 0 END, CASE WHEN bounded THEN 0 END, NULL,
               CASE WHEN bounded AND limits ? f.n THEN 0 END, '{}'
           )::pgmq.queue_figures ORDER BY f.o) FILTER (WHERE f.idle), '{}'),
           pg_catalog.array_agg(f.seq ORDER BY f.o) FILTER (WHERE f.idle),
           pg_catalog.array_agg(f.n ORDER BY f.o) FILTER (WHERE NOT f.idle),
           pg_catalog.array_agg(f.qtable ORDER BY f.o) FILTER (WHERE NOT f.idle),
           pg_catalog.array_agg(f.seq ORDER BY f.o) FILTER (WHERE NOT f.idle),
           pg_catalog.array_agg(f.spill ORDER BY f.o) FILTER (WHERE NOT f.idle),
           pg_catalog.array_agg((limits ->> f.n)::integer ORDER BY f.o) FILTER (WHERE NOT f.idle)
    INTO answered, idle_seqs, busy, tables, seqs, spills, caps
    FROM pgmq._metrics_facts(names) f
    WHERE NOT bounded OR f.qoid IS NOT NULL;
    IF bounded THEN  -- the idle queues' totals, by SELECT (see the top of this file)
        BEGIN
            totals := pgmq._queue_totals(idle_seqs);
        EXCEPTION WHEN undefined_table THEN
            -- An idle queue was dropped since its sequence was named: read them again
            -- (a dropped queue's total is NULL, its row left out below).
            totals := pgmq._queue_totals(idle_seqs);
        END;
        FOR i IN 1 .. coalesce(pg_catalog.cardinality(answered), 0) LOOP
            answered[i].total_messages := totals[i];
        END LOOP;
        answered := ARRAY(SELECT a FROM pg_catalog.unnest(answered) AS a WHERE a.total_messages IS NOT NULL);
    END IF;
    WHILE first <= coalesce(pg_catalog.cardinality(busy), 0) LOOP
        upto := least(first + chunk - 1, pg_catalog.cardinality(busy));
        IF NOT bounded THEN
            part := pgmq._queue_figures_chunk(busy[first:upto], tables[first:upto], seqs[first:upto],
                                              spills[first:upto], caps[first:upto], at, NULL);
        ELSE
            BEGIN
                part := pgmq._queue_figures_chunk(busy[first:upto], tables[first:upto],
                                                  seqs[first:upto], spills[first:upto],
                                                  caps[first:upto], at, exact_limit);
            EXCEPTION WHEN undefined_table THEN
                -- A queue of the chunk was dropped since the catalogue pass: the others
                -- one by one, the dropped one left out.
                part := '{}';
                FOR i IN first .. upto LOOP
                    BEGIN
                        part := part || pgmq._queue_figures_chunk(
                            ARRAY[busy[i]], ARRAY[tables[i]], ARRAY[seqs[i]], ARRAY[spills[i]],
                            ARRAY[caps[i]], at, exact_limit);
                    EXCEPTION WHEN undefined_table THEN
                        NULL;
                    END;
                END LOOP;
            END;
        END IF;
        answered := answered || part;
        first := first + chunk;
    END LOOP;
    RETURN QUERY SELECT * FROM pg_catalog.unnest(answered);
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_figures(text[],bigint,jsonb,timestamp with time zone) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_figures(text[],bigint,jsonb,timestamp with time zone) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_figures_chunk(names text[], tables text[], seqs oid[], spills boolean[], caps integer[], at timestamp with time zone, exact_limit bigint)
 RETURNS pgmq.queue_figures[]
 LANGUAGE plpgsql
AS $function$
DECLARE
    sizes bigint[];
    small integer[];
    large integer[];
    answered pgmq.queue_figures[] := '{}';
BEGIN
    IF exact_limit IS NULL THEN
        RETURN ARRAY(SELECT c FROM pgmq._queue_figures_counted(names, tables, seqs, spills, caps,
                                                               at, false) c);
    END IF;
    EXECUTE 'SELECT pg_catalog.array_agg(b.n ORDER BY b.i) FROM ('
        || (SELECT pg_catalog.string_agg(pg_catalog.format('SELECT %s, pg_catalog.count(*) FROM (SELECT FROM pgmq.%I LIMIT $1) s',
                                     u.i, u.t), ' UNION ALL ')
            FROM pg_catalog.unnest(tables) WITH ORDINALITY AS u(t, i))
        || ') AS b(i, n)'
    INTO sizes USING exact_limit + 1;
    small := ARRAY(SELECT i FROM pg_catalog.generate_subscripts(names, 1) i WHERE sizes[i] <= exact_limit);
    large := ARRAY(SELECT i FROM pg_catalog.generate_subscripts(names, 1) i WHERE sizes[i] > exact_limit);
    IF pg_catalog.cardinality(small) > 0 THEN
        answered := ARRAY(
            SELECT c FROM pgmq._queue_figures_counted(
                ARRAY(SELECT names[i] FROM pg_catalog.unnest(small) i),
                ARRAY(SELECT tables[i] FROM pg_catalog.unnest(small) i),
                ARRAY(SELECT seqs[i] FROM pg_catalog.unnest(small) i),
                ARRAY(SELECT spills[i] FROM pg_catalog.unnest(small) i),
                ARRAY(SELECT caps[i] FROM pg_catalog.unnest(small) i), at, true) c);
    END IF;
    RETURN answered || ARRAY(
        SELECT pgmq._queue_figures_estimated(names[i], seqs[i], spills[i], exact_limit, caps[i], at)
        FROM pg_catalog.unnest(large) i);
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_figures_chunk(text[],text[],oid[],boolean[],integer[],timestamp with time zone,bigint) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_figures_chunk(text[],text[],oid[],boolean[],integer[],timestamp with time zone,bigint) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_figures_counted(names text[], tables text[], seqs oid[], spills boolean[], caps integer[], at timestamp with time zone, bounded boolean)
 RETURNS SETOF pgmq.queue_figures
 LANGUAGE plpgsql
AS $function$
BEGIN
    RETURN QUERY EXECUTE
        'SELECT $1[b.i] AS queue_name, b.len AS queue_length, '
        || 'extract(epoch FROM $5 - b.newest)::integer AS newest_msg_age_sec, '
        || 'extract(epoch FROM $5 - b.oldest)::integer AS oldest_msg_age_sec, '
        || CASE WHEN bounded THEN 'b.total' ELSE 'coalesce(pg_catalog.pg_sequence_last_value($2[b.i]), 0)' END
        || ' AS total_messages, '
        || '$5 AS scrape_time, b.visible AS queue_visible_length, '
        || 'CASE WHEN $3[b.i] THEN pgmq._default_partition_length($1[b.i]) END '
        || 'AS default_partition_length, '
        || 'b.in_flight AS in_flight_length, b.len - b.visible - b.in_flight AS delayed_length, '
        || 'extract(epoch FROM $5 - b.oldest_vt)::integer AS oldest_visible_age_sec, '
        || 'CASE WHEN $4[b.i] IS NOT NULL THEN b.poison END AS poison_length, '
        || '''{}''::text[] AS estimated FROM ('
        || (SELECT pg_catalog.string_agg(pg_catalog.format('SELECT %s, pg_catalog.count(*), pg_catalog.max(enqueued_at), pg_catalog.min(enqueued_at), '
                                     'pg_catalog.count(*) FILTER (WHERE vt <= $5), %s FROM pgmq.%I',
                                     u.i,
                                     CASE WHEN bounded
                                          THEN pg_catalog.format('pg_catalog.count(*) FILTER (WHERE vt > $5 AND read_ct > 0), '
                                                      'pg_catalog.min(vt) FILTER (WHERE vt <= $5), '
                                                      'pg_catalog.count(*) FILTER (WHERE read_ct >= $4[%s]), %s',
                                                      u.i, pgmq._sequence_read_sql(seqs[u.i]))
                                          ELSE 'NULL::bigint, NULL::timestamptz, NULL::bigint, NULL::bigint' END,
                                     u.t), ' UNION ALL ')
            FROM pg_catalog.unnest(tables) WITH ORDINALITY AS u(t, i))
        || ') AS b(i, len, newest, oldest, visible, in_flight, oldest_vt, poison, total)'
    USING names, seqs, spills, caps, at;
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_figures_counted(text[],text[],oid[],boolean[],integer[],timestamp with time zone,boolean) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_figures_counted(text[],text[],oid[],boolean[],integer[],timestamp with time zone,boolean) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_figures_estimated(queue_name text, seq oid, spill boolean, exact_limit bigint, cap integer, at timestamp with time zone)
 RETURNS pgmq.queue_figures
 LANGUAGE plpgsql
AS $function$
DECLARE
    r pgmq.queue_figures;
    qtable regclass := pg_catalog.format('pgmq.%I', pgmq.format_table_name(queue_name, 'q'::text))::regclass;
    future bigint;
    future_read bigint;
    sampled bigint;
    s_in_flight bigint;
    s_delayed bigint;
    s_poison bigint;
    oldest timestamptz;
    newest timestamptz;
    oldest_vt timestamptz;
BEGIN
    r.queue_name := queue_name;
    r.scrape_time := at;
    r.queue_length := greatest(exact_limit + 1, pgmq._dashboard_estimate(queue_name, 'q'));
    r.estimated := ARRAY['queue_length', 'queue_visible_length'];
    EXECUTE pg_catalog.format(
        $q$SELECT pg_catalog.count(*), pg_catalog.count(*) FILTER (WHERE read_ct > 0)
           FROM (SELECT read_ct FROM %s WHERE vt > $2 LIMIT $1) s$q$, qtable
    ) INTO future, future_read USING exact_limit + 1, at;
    EXECUTE pg_catalog.format(
        $q$SELECT pg_catalog.count(*),
                  pg_catalog.count(*) FILTER (WHERE vt > $3 AND read_ct > 0),
                  pg_catalog.count(*) FILTER (WHERE vt > $3 AND read_ct = 0),
                  pg_catalog.count(*) FILTER (WHERE read_ct >= $2)
           FROM %s TABLESAMPLE SYSTEM ($1)$q$, qtable
    ) INTO sampled, s_in_flight, s_delayed, s_poison
      USING least(100.0, 1000000.0 / r.queue_length), cap, at;
    sampled := greatest(sampled, 1);
    IF future <= exact_limit THEN
        r.in_flight_length := future_read;
        r.delayed_length := future - future_read;
    ELSE
        r.in_flight_length := pg_catalog.round(r.queue_length::numeric * s_in_flight / sampled);
        r.delayed_length := pg_catalog.round(r.queue_length::numeric * s_delayed / sampled);
        r.estimated := r.estimated || ARRAY['in_flight_length', 'delayed_length'];
    END IF;
    r.queue_visible_length := greatest(r.queue_length - r.in_flight_length - r.delayed_length, 0);
    IF cap IS NOT NULL THEN
        r.poison_length := pg_catalog.round(r.queue_length::numeric * s_poison / sampled);
        r.estimated := r.estimated || 'poison_length'::text;
    END IF;
    EXECUTE pg_catalog.format('SELECT enqueued_at FROM %s ORDER BY msg_id LIMIT 1', qtable) INTO oldest;
    EXECUTE pg_catalog.format('SELECT enqueued_at FROM %s ORDER BY msg_id DESC LIMIT 1', qtable) INTO newest;
    EXECUTE pg_catalog.format('SELECT pg_catalog.min(vt) FROM %s WHERE vt <= $1', qtable) INTO oldest_vt USING at;
    r.oldest_msg_age_sec := extract(epoch FROM at - oldest)::integer;
    r.newest_msg_age_sec := extract(epoch FROM at - newest)::integer;
    r.oldest_visible_age_sec := extract(epoch FROM at - oldest_vt)::integer;
    r.total_messages := (pgmq._queue_totals(ARRAY[seq]))[1];
    IF spill THEN
        r.default_partition_length := pgmq._default_partition_length(queue_name);
    END IF;
    RETURN r;
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_figures_estimated(text,oid,boolean,bigint,integer,timestamp with time zone) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_figures_estimated(text,oid,boolean,bigint,integer,timestamp with time zone) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_index_columns(kind text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
    SELECT CASE kind WHEN 'priority' THEN 'pgmq._task_priority(headers) DESC, msg_id'
                     WHEN 'fifo' THEN 'pgmq._fifo_group(headers), msg_id' END;
$function$
;
COMMENT ON FUNCTION pgmq._queue_index_columns(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_index_columns(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_index_name(queue_name text, kind text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
    SELECT pgmq.format_table_name(queue_name, 'q'::text)
           || CASE kind WHEN 'priority' THEN '_priority' WHEN 'fifo' THEN '_fifo_idx' END;
$function$
;
COMMENT ON FUNCTION pgmq._queue_index_name(text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_index_name(text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_attr_sql(queue_name text, op "char", low text, attrs jsonb)
 RETURNS text
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q'::text);
    checks text := nullif(pgmq._send_checks_sql(attrs), '');
    gate text := 'TRUE';
    msg text := 'u.msg';
    vt text := 'coalesce($4, pg_catalog.clock_timestamp())';
    -- Only the ordering and redrive matter here: the limits are the caller's (no lock).
    f record := pgmq._claim_filter(queue_name, attrs - 'max_in_flight' - 'rate_limit', NULL);
    window_ text := (attrs ->> 'deduplication_window') || ' seconds';
    order_by text;
    pick text;
BEGIN
    IF op = 's' OR op = 'S' THEN
        IF checks IS NOT NULL THEN
            -- Valid messages pass an inline test; pgmq._checked_message raises the error
            -- that names what is wrong with the first of the others.
            gate := pg_catalog.format(
                '(SELECT pg_catalog.count(pgmq._checked_message(%L, u.msg, u.hdr, %s, %L, %L)) '
                'FROM unnest($6, $7) AS u(msg, hdr) WHERE (%s) IS NOT TRUE) >= 0',
                queue_name, coalesce(attrs ->> 'max_message_size', 'NULL'), f.by_priority,
                window_ IS NOT NULL AND (attrs ->> 'deduplication_window')::integer > 0, checks);
        END IF;
        IF coalesce((attrs ->> 'delivery_delay')::integer, 0) > 0 THEN
            vt := pg_catalog.format('coalesce($4, pg_catalog.clock_timestamp() + interval %L)',
                         (attrs ->> 'delivery_delay') || ' seconds');
        END IF;
        IF coalesce((attrs ->> 'deduplication_window')::integer, 0) = 0 THEN
            RETURN pg_catalog.format(
                $sql$
        INSERT INTO pgmq.%1$I AS q (vt, message, headers)
        SELECT %2$s, %3$s, u.hdr FROM unnest($6, $7) AS u(msg, hdr)
        WHERE %4$s
        RETURNING q.msg_id, NULL::integer, NULL::timestamptz, NULL::timestamptz,
                  NULL::timestamptz, NULL::jsonb, NULL::jsonb
                $sql$, qtable, vt, msg, gate);
        END IF;
        IF op = 'S' THEN
            -- The fast send: two plain inserts, the ids claimed in the order the statement
            -- below claims them (so no two batches, fast or not, wait on each other's ids
            -- crosswise). Any id already claimed, by an earlier send, a concurrent one
            -- (after its commit) or this batch itself, raises unique_violation, and the
            -- caller runs the statement below instead.
            RETURN pg_catalog.format(
                $sql$
        WITH m AS (
            INSERT INTO pgmq.%1$I AS q (vt, message, headers)
            SELECT %2$s, %3$s, u.hdr FROM unnest($6, $7) AS u(msg, hdr)
            WHERE %5$s
            RETURNING q.msg_id, q.headers ->> 'deduplication_id' AS dedup
        ), claimed AS (
            -- the owner's helper records the ids (pgmq._dedup_record)
            SELECT pgmq._dedup_record(%4$L::text,
                                      pg_catalog.array_agg(m.dedup ORDER BY m.dedup),
                                      pg_catalog.array_agg(m.msg_id ORDER BY m.dedup)) AS n
            FROM m WHERE m.dedup IS NOT NULL
        )
        SELECT (SELECT pg_catalog.array_agg(m.msg_id ORDER BY m.msg_id) FROM m) FROM claimed
                $sql$, qtable, vt, msg, pg_catalog.lower(queue_name), gate);
        END IF;
        -- Deduplication: a message takes a new msg_id only when it may be enqueued: it
        -- has no deduplication id, or it is its id's first in the batch and no send within
        -- the window holds that id (as this statement's snapshot sees it). Each such id is
        -- claimed in pgmq.queue_deduplication; a conflict (a concurrent sender waits there
        -- for the first one's commit) keeps the row of a send within the window, so only
        -- a claim that kept our new msg_id enqueues its message (the loser of that race
        -- is the one case where an id is used up without a message). Every message of the
        -- batch returns its id's msg_id.
        RETURN pg_catalog.format(
            $sql$
        WITH input AS MATERIALIZED (
            SELECT u.ord, %3$s AS msg, u.hdr, u.hdr ->> 'deduplication_id' AS dedup
            FROM unnest($6, $7) WITH ORDINALITY AS u(msg, hdr, ord)
            WHERE %7$s
        ),
        numbered AS MATERIALIZED (
            SELECT i.ord, i.msg, i.hdr, i.dedup,
                   CASE WHEN i.dedup IS NULL
                          OR (i.first AND NOT EXISTS (
                                SELECT 1 FROM pgmq.queue_deduplication d
                                WHERE d.queue_name::text = %5$L AND d.deduplication_id = i.dedup
                                  AND d.sent_at > pg_catalog.clock_timestamp() - interval %6$L))
                        THEN pg_catalog.nextval(%4$L::regclass) END AS new_id
            FROM (SELECT x.*, pg_catalog.row_number() OVER (PARTITION BY x.dedup ORDER BY x.ord) = 1 AS first
                  FROM input x) i
            ORDER BY i.ord
        ),
        claimed AS MATERIALIZED (
            -- the owner's helper claims the ids (pgmq._dedup_claim)
            SELECT c.deduplication_id, c.msg_id
            FROM (SELECT pg_catalog.array_agg(n.dedup ORDER BY n.dedup) AS dedups,
                         pg_catalog.array_agg(n.new_id ORDER BY n.dedup) AS ids
                  FROM numbered n WHERE n.dedup IS NOT NULL AND n.new_id IS NOT NULL) x,
                 pgmq._dedup_claim(%5$L::text, x.dedups, x.ids) c
        ),
        inserted AS (
            INSERT INTO pgmq.%1$I AS q (msg_id, vt, message, headers) OVERRIDING SYSTEM VALUE
            SELECT n.new_id, %2$s, n.msg, n.hdr
            FROM numbered n
            WHERE n.dedup IS NULL OR n.new_id IN (SELECT c.msg_id FROM claimed c)
            ORDER BY n.ord
            RETURNING q.msg_id
        )
        SELECT coalesce(c.msg_id,
                        (SELECT d.msg_id FROM pgmq.queue_deduplication d
                         WHERE d.queue_name::text = %5$L AND d.deduplication_id = n.dedup),
                        n.new_id),
               NULL::integer, NULL::timestamptz, NULL::timestamptz,
               NULL::timestamptz, NULL::jsonb, NULL::jsonb
        FROM numbered n
        LEFT JOIN claimed c ON c.deduplication_id = n.dedup
        ORDER BY n.ord
            $sql$,
            qtable, vt, msg,
            pg_catalog.pg_get_serial_sequence(pg_catalog.format('pgmq.%I', qtable), 'msg_id'),
            pg_catalog.lower(queue_name), window_, gate);
    END IF;

    IF op <> 'r' AND op <> 'p' THEN
        RETURN pgmq._queue_ops_sql(queue_name, op, low);
    END IF;
    IF NOT f.by_priority AND f.dead_letter_queue IS NULL THEN
        RETURN pgmq._queue_ops_sql(queue_name, op, low);
    END IF;

    order_by := CASE WHEN f.by_priority THEN 'pgmq._task_priority(%1$s.headers) DESC, %1$s.msg_id'
                     ELSE '%1$s.msg_id' END;
    -- Only messages that may still be delivered are picked, so redrive never uses up
    -- the qty (issue 22 #11); the over-read ones among those the pick walked past (all
    -- of them when it found fewer than qty) move to the dead-letter queue, at most
    -- max(qty, 100) per call.
    pick := pg_catalog.format(
        $pick$
            SELECT q.msg_id FROM pgmq.%I q
            WHERE q.msg_id >= %s AND q.vt <= pg_catalog.clock_timestamp()
              AND ($8 IS NULL OR $8 = '{}'::jsonb OR q.message @> $8)
              %s
            ORDER BY %s
            LIMIT $2
            FOR UPDATE SKIP LOCKED
        $pick$,
        qtable, low,
        CASE WHEN f.dead_letter_queue IS NULL THEN ''
             ELSE pg_catalog.format('AND q.read_ct < %s', f.max_receive_count) END,
        pg_catalog.format(order_by, 'q'));
    RETURN pg_catalog.format(
        $sql$
        WITH picked AS MATERIALIZED (%2$s),
        %3$s
        done AS (
            %4$s
            WHERE m.msg_id = ANY(ARRAY(SELECT p.msg_id FROM picked p))
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message, m.headers
        )
        SELECT * FROM done d ORDER BY %5$s
        $sql$,
        qtable, pick,
        CASE WHEN f.dead_letter_queue IS NULL THEN '' ELSE pg_catalog.format(
            $dead$
        dead AS (
            DELETE FROM pgmq.%1$I m
            WHERE m.msg_id = ANY(ARRAY(
                SELECT q.msg_id FROM pgmq.%1$I q
                WHERE q.msg_id >= %3$s AND q.vt <= pg_catalog.clock_timestamp()
                  AND ($8 IS NULL OR $8 = '{}'::jsonb OR q.message @> $8)
                  AND q.read_ct >= %2$s
                  AND ((SELECT pg_catalog.count(*) FROM picked) < $2
                       OR q.msg_id < (SELECT pg_catalog.max(p.msg_id) FROM picked p))
                ORDER BY q.msg_id
                LIMIT greatest($2, 100)
                FOR UPDATE SKIP LOCKED))
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.message, m.headers,
                      NULL::text AS error
        ),
            $dead$,
            qtable, f.max_receive_count, low)
            -- the name as stored, as the worker's dead letters write it, whatever the
            -- caller's spelling
            || pgmq._dead_letter_move_sql(pgmq._stored_queue_name(queue_name),
                                          f.dead_letter_queue) || ',' END,
        CASE WHEN op = 'r' THEN pg_catalog.format(
            $upd$
            UPDATE pgmq.%I m
            SET vt = pg_catalog.clock_timestamp() + pg_catalog.make_interval(secs => $3),
                read_ct = m.read_ct + 1,
                last_read_at = pg_catalog.clock_timestamp()
            $upd$, qtable)
        ELSE pg_catalog.format('DELETE FROM pgmq.%I m', qtable) END,
        pg_catalog.format(order_by, 'd'));
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_attr_sql(text,"char",text,jsonb) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_attr_sql(text,"char",text,jsonb) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_client_sql(queue_name text, op "char", qty integer DEFAULT 1)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT CASE WHEN op IN ('r', 'p', 'a', 'd', 's') AND qty BETWEEN 1 AND 100000 THEN
        pgmq._queue_ops_kept_sql(
            t.qtable, op, pg_catalog.format('(SELECT pgmq._low_water_mark_for(%L::text))', t.qtable),
            qty::text, '$1', 'NULL::jsonb', '$1', 'NULL::timestamptz', '$1::jsonb[]', '$2::jsonb[]')
    END
    FROM (SELECT pgmq._message_table_name(queue_name, 'q'::text) AS qtable) t;
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_client_sql(text,"char",integer) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_client_sql(text,"char",integer) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_ids_sql(qtable text, op "char", cond text DEFAULT ''::text, ids text DEFAULT '$5'::text, vt text DEFAULT '$4'::text, msgs text DEFAULT '$6'::text, hdrs text DEFAULT '$7'::text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT pg_catalog.format(
        CASE op
        -- A function scan yields the arrays in order and the insert numbers rows as they
        -- come, so ids follow the array order; unnest pads a NULL headers array with NULLs.
        WHEN 's' THEN $sql$
        INSERT INTO pgmq.%1$I AS q (vt, message, headers)
        SELECT coalesce(%5$s, pg_catalog.clock_timestamp()), u.msg, u.hdr
        FROM unnest(%6$s, %7$s) AS u(msg, hdr)%3$s
        RETURNING q.msg_id$sql$
        -- one message: a VALUES row plans in less time than a function scan
        WHEN '1' THEN $sql$
        INSERT INTO pgmq.%1$I AS q (vt, message, headers)
        VALUES (coalesce(%5$s, pg_catalog.clock_timestamp()), (%6$s)[1], (%7$s)[1])
        RETURNING q.msg_id$sql$
        WHEN 'a' THEN $sql$
        WITH moved AS (
            DELETE FROM pgmq.%1$I q WHERE q.msg_id = ANY(%4$s)%3$s
            RETURNING q.msg_id, q.read_ct, q.enqueued_at, q.last_read_at, q.vt, q.message, q.headers
        )
        INSERT INTO pgmq.%2$I AS a (msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers)
        SELECT * FROM moved
        RETURNING a.msg_id$sql$
        WHEN 'd' THEN $sql$
        DELETE FROM pgmq.%1$I q WHERE q.msg_id = ANY(%4$s)%3$s
        RETURNING q.msg_id$sql$
        END,
        qtable,
        'a' || pg_catalog.substr(qtable, 2),
        cond,
        ids,
        vt,
        msgs,
        hdrs);
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_ids_sql(text,"char",text,text,text,text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_ids_sql(text,"char",text,text,text,text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_keep(qtable text, op "char")
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
    EXECUTE pgmq._queue_ops_kept_prepare_sql(qtable, op);
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_keep(text,"char") IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_keep(text,"char") FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_kept_held(qtable text, op "char")
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
DECLARE
    stmt text := pgmq._queue_ops_kept_name(qtable, op);
    held text;
BEGIN
    SELECT s.statement INTO held FROM pg_catalog.pg_prepared_statements s WHERE s.name = stmt;
    IF held IS NULL THEN
        RETURN false;
    ELSIF held = pgmq._queue_ops_kept_prepare_sql(qtable, op) THEN
        RETURN true;
    END IF;
    EXECUTE pg_catalog.format('DEALLOCATE %I', stmt);
    RETURN false;
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_kept_held(text,"char") IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_kept_held(text,"char") FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_kept_key(qtable text, op "char")
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$ SELECT 'pgmq.prep_' || pg_catalog.replace(op::text || 'g_' || qtable, '-', '$'); $function$
;
COMMENT ON FUNCTION pgmq._queue_ops_kept_key(text,"char") IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_kept_key(text,"char") FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_kept_missed(queue_name text, qtable text, op "char")
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF pgmq._queue_attributes(queue_name) IS NULL THEN
        RETURN true;
    END IF;
    PERFORM pg_catalog.set_config(pgmq._queue_ops_kept_key(qtable, op), '0', false);
    RETURN false;
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_kept_missed(text,text,"char") IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_kept_missed(text,text,"char") FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_kept_prepare_sql(qtable text, op "char")
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT pg_catalog.format(
        'PREPARE %I ("char", integer, integer, timestamptz, bigint[], jsonb[], jsonb[], jsonb, bigint) AS %s',
        pgmq._queue_ops_kept_name(qtable, op), pgmq._queue_ops_kept_sql(qtable, op));
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_kept_prepare_sql(text,"char") IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_kept_prepare_sql(text,"char") FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_kept_ready(qtable text, op "char")
 RETURNS text
 LANGUAGE plpgsql
AS $function$
DECLARE
    stmt text := pgmq._queue_ops_kept_name(qtable, op);
    held text;
BEGIN
    -- pgmq._queue_ops_kept_held, written out: this runs on every fast-path call
    SELECT s.statement INTO held FROM pg_catalog.pg_prepared_statements s WHERE s.name = stmt;
    IF held IS NULL OR held <> pgmq._queue_ops_kept_prepare_sql(qtable, op) THEN
        IF held IS NOT NULL THEN
            EXECUTE pg_catalog.format('DEALLOCATE %I', stmt);
        END IF;
        PERFORM pgmq._queue_ops_keep(qtable, op);
    END IF;
    RETURN stmt;
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_kept_ready(text,"char") IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_kept_ready(text,"char") FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_kept_sql(qtable text, op "char", low text DEFAULT '$9'::text, qty text DEFAULT '$2'::text, secs text DEFAULT '$3'::text, cond text DEFAULT '$8'::text, ids text DEFAULT '$5'::text, vt text DEFAULT '$4'::text, msgs text DEFAULT '$6'::text, hdrs text DEFAULT '$7'::text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT CASE WHEN op IN ('a', 'd')
                THEN pgmq._queue_ops_ids_sql(qtable, op, ' AND ' || g.guard, ids)
                WHEN op = 's'
                THEN pgmq._queue_ops_ids_sql(qtable, op, ' WHERE ' || g.guard, ids, vt, msgs, hdrs)
                ELSE pgmq._queue_ops_sql_for(qtable, op, low || ' AND ' || g.guard, qty, secs, cond)
           END
    FROM (SELECT pg_catalog.format(
              'NOT EXISTS (SELECT FROM pgmq.queue_attributes x WHERE pg_catalog.lower(x.queue_name::text) = %L)',
              pg_catalog.substr(qtable, 3)) AS guard) g;
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_kept_sql(text,"char",text,text,text,text,text,text,text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_kept_sql(text,"char",text,text,text,text,text,text,text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_prepared(qtable text, op "char")
 RETURNS text
 LANGUAGE plpgsql
AS $function$
DECLARE
    stmt text := pgmq._queue_ops_kept_name(qtable, op);
    key text := pgmq._queue_ops_kept_key(qtable, op);
    state text := coalesce(pg_catalog.current_setting(key, true), '');
BEGIN
    IF state = 'p' OR state = '3' THEN
        IF NOT pgmq._queue_ops_kept_held(qtable, op) THEN
            IF pg_catalog.octet_length(stmt) > 63
               OR (SELECT pg_catalog.count(*) FROM pg_catalog.pg_prepared_statements s
                   WHERE s.name LIKE 'pgmq\_%') >= 32 THEN
                state := 'c';
            ELSE
                PERFORM pgmq._queue_ops_keep(qtable, op);
            END IF;
        END IF;
        IF state <> 'p' THEN
            PERFORM pg_catalog.set_config(key, CASE state WHEN 'c' THEN 'c' ELSE 'p' END, false);
        END IF;
        IF state <> 'c' THEN
            RETURN stmt;
        END IF;
    ELSIF state IN ('', '0', '1', '2') THEN
        PERFORM pg_catalog.set_config(key, (coalesce(nullif(state, ''), '0')::integer + 1)::text, false);
    ELSIF state <> 'c' THEN
        PERFORM pg_catalog.set_config(key, '1', false);
    END IF;
    RETURN NULL;
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_prepared(text,"char") IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_prepared(text,"char") FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_route(queue_name text, p_op "char", p_qty integer, p_secs integer, p_vt timestamp with time zone, p_ids bigint[], p_msgs jsonb[], p_headers jsonb[], p_cond jsonb)
 RETURNS SETOF pgmq.message_record
 LANGUAGE plpgsql
AS $function$
DECLARE
    -- checks the name first, as pgmq's per-message functions do (sql/05_names.sql)
    qtable text := pgmq._message_table_name(queue_name, 'q'::text);
    attrs jsonb;
    low bigint := 0;
    stmt text;
BEGIN
    IF p_op = 'r' OR p_op = 'p' THEN
        low := pgmq._low_water_mark_for(qtable);
    END IF;
    SELECT a.attributes INTO attrs
    FROM pgmq.queue_attributes a WHERE pg_catalog.lower(a.queue_name::text) = pg_catalog.lower($1);
    IF attrs IS NOT NULL THEN
        RETURN QUERY SELECT * FROM pgmq._queue_ops_with_attributes(
            queue_name, attrs, p_op, p_qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond, low);
        RETURN;
    END IF;
    IF p_op = 'r' OR p_op = 'p' THEN
        stmt := pgmq._queue_ops_prepared(qtable, p_op);
        IF stmt IS NOT NULL THEN
            RETURN QUERY SELECT * FROM pgmq._queue_ops_run_prepared(stmt, p_qty, p_secs, p_ids, p_cond, low);
            RETURN;
        END IF;
    END IF;
    RETURN QUERY EXECUTE pgmq._queue_ops_sql_for(qtable, p_op, '$9'::text)
        USING p_op, p_qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond, low;
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_route(text,"char",integer,integer,timestamp with time zone,bigint[],jsonb[],jsonb[],jsonb) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_route(text,"char",integer,integer,timestamp with time zone,bigint[],jsonb[],jsonb[],jsonb) FROM PUBLIC;

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
    n bigint;
BEGIN
    -- archive and delete in a session that keeps the statement: the fast path (migration
    -- 0042, see "Kept plans"), with no separate attribute lookup
    IF (op = 'a' OR op = 'd') AND pg_catalog.current_setting(pgmq._queue_ops_kept_key(qtable, op), true) = 'p' THEN
        RETURN QUERY SELECT * FROM pgmq._queue_ops_run_prepared_ids(
            pgmq._queue_ops_kept_ready(qtable, op), p_ids);
        GET DIAGNOSTICS n = ROW_COUNT;
        IF n > 0 OR pgmq._queue_ops_kept_missed(queue_name, qtable, op) THEN
            RETURN;
        END IF;
    END IF;
    SELECT a.attributes INTO attrs
    FROM pgmq.queue_attributes a WHERE pg_catalog.lower(a.queue_name::text) = pg_catalog.lower($1);
    IF attrs IS NOT NULL THEN
        RETURN QUERY SELECT r.msg_id FROM pgmq._queue_ops_with_attributes(
            queue_name, attrs, p_op, NULL::integer, NULL::integer, p_vt, p_ids, p_msgs, p_headers,
            NULL::jsonb, 0::bigint) r;
        RETURN;
    END IF;
    IF op = 'a' OR op = 'd' THEN
        stmt := pgmq._queue_ops_prepared(qtable, op);
        IF stmt IS NOT NULL THEN
            RETURN QUERY SELECT * FROM pgmq._queue_ops_run_prepared_ids(stmt, p_ids);
            RETURN;
        END IF;
    END IF;
    RETURN QUERY EXECUTE pgmq._queue_ops_ids_sql(qtable, op)
        USING p_op, NULL::integer, NULL::integer, p_vt, p_ids, p_msgs, p_headers, NULL::jsonb, 0::bigint;
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_route_ids(text,"char",timestamp with time zone,bigint[],jsonb[],jsonb[]) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_route_ids(text,"char",timestamp with time zone,bigint[],jsonb[],jsonb[]) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_run_prepared(stmt text, p_qty integer, p_secs integer, p_ids bigint[], p_cond jsonb, low bigint)
 RETURNS SETOF pgmq.message_record
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
 SET enable_bitmapscan TO 'off'
AS $function$
BEGIN
    RETURN QUERY EXECUTE pg_catalog.format(
        'EXECUTE %I(NULL, %L, %L, NULL, %L, NULL, NULL, %L, %L)', stmt, p_qty, p_secs, p_ids, p_cond, low);
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_run_prepared(text,integer,integer,bigint[],jsonb,bigint) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_run_prepared(text,integer,integer,bigint[],jsonb,bigint) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_run_prepared_ids(stmt text, p_ids bigint[])
 RETURNS SETOF bigint
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
 SET enable_bitmapscan TO 'off'
AS $function$
BEGIN
    RETURN QUERY EXECUTE pg_catalog.format('EXECUTE %I(NULL, NULL, NULL, NULL, %L, NULL, NULL, NULL, NULL)', stmt, p_ids);
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_run_prepared_ids(text,bigint[]) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_run_prepared_ids(text,bigint[]) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_sql(queue_name text, op "char", low text DEFAULT '0'::text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT pgmq._queue_ops_sql_for(pgmq.format_table_name(queue_name, 'q'::text), op, low);
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_sql(text,"char",text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_sql(text,"char",text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_sql_for(qtable text, op "char", low text, qty text DEFAULT '$2'::text, secs text DEFAULT '$3'::text, cond text DEFAULT '$8'::text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT CASE
        WHEN op IN ('s', '1', 'a', 'd') THEN
            -- the statement pgmq._queue_ops_ids_sql gives, with the record's other columns
            pgmq._queue_ops_ids_sql(qtable, op) || $cols$, NULL::integer, NULL::timestamptz,
                  NULL::timestamptz, NULL::timestamptz, NULL::jsonb, NULL::jsonb$cols$
        ELSE pg_catalog.format(
        CASE op
        WHEN 'r' THEN $sql$
        WITH claimed AS (
            UPDATE pgmq.%1$I m
            SET vt = pg_catalog.clock_timestamp() + pg_catalog.make_interval(secs => %3$s),
                read_ct = m.read_ct + 1,
                last_read_at = pg_catalog.clock_timestamp()
            WHERE m.msg_id = ANY(ARRAY(%2$s))
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message, m.headers
        )
        SELECT * FROM claimed c ORDER BY c.msg_id
        $sql$
        WHEN 'p' THEN $sql$
        WITH removed AS (
            DELETE FROM pgmq.%1$I m
            WHERE m.msg_id = ANY(ARRAY(%2$s))
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message, m.headers
        )
        SELECT * FROM removed r ORDER BY r.msg_id
        $sql$
        WHEN 'v' THEN $sql$
        WITH moved AS (
            UPDATE pgmq.%1$I q SET vt = $4 WHERE q.msg_id = ANY($5)
            RETURNING q.msg_id, q.read_ct, q.enqueued_at, q.last_read_at, q.vt, q.message, q.headers
        )
        SELECT * FROM moved m ORDER BY m.msg_id
        $sql$
        END,
        qtable,
        -- read's and pop's pick: the oldest visible messages from the mark up, locked; the
        -- rows are then claimed with "= ANY(ARRAY(pick))", so the update looks up exactly
        -- the picked rows by key, whatever the plan's row estimates (a join could walk
        -- the table)
        pg_catalog.format(
            $pick$
                SELECT q.msg_id FROM pgmq.%1$I q
                WHERE q.msg_id >= %2$s AND q.vt <= pg_catalog.clock_timestamp()
                  AND (%3$s IS NULL OR %3$s = '{}'::jsonb OR q.message @> %3$s)
                ORDER BY q.msg_id
                LIMIT %4$s
                FOR UPDATE SKIP LOCKED
            $pick$,
            qtable, low, cond, qty),
        secs)
        END;
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_sql_for(text,"char",text,text,text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_sql_for(text,"char",text,text,text,text) FROM PUBLIC;

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
            -- A limited queue: note what was claimed, for pgmq._claim_record.
            FOR rec IN EXECUTE pgmq._queue_ops_attr_sql(queue_name, p_op, '$9'::text, attrs)
                USING p_op, qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond, low
            LOOP
                claimed := claimed || rec.msg_id;
                claimed_rcs := claimed_rcs || rec.read_ct;
                claimed_vts := claimed_vts || rec.vt;
                RETURN NEXT rec;
            END LOOP;
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
        -- A slot may have freed (not by a heartbeat's set_vt into the future): free it,
        -- and wake a worker waiting at the limit (at commit) if the queue was at it.
        GET DIAGNOSTICS n = ROW_COUNT;
        IF n > 0 THEN
            PERFORM pgmq._limit_free(queue_name, p_ids);
        END IF;
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_with_attributes(text,jsonb,"char",integer,integer,timestamp with time zone,bigint[],jsonb[],jsonb[],jsonb,bigint) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_with_attributes(text,jsonb,"char",integer,integer,timestamp with time zone,bigint[],jsonb[],jsonb[],jsonb,bigint) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_table_lock_key(queue_name text, OUT class_id integer, OUT object_id integer)
 RETURNS record
 LANGUAGE sql
 IMMUTABLE
AS $function$
    SELECT 1885826417, pg_catalog.hashtext(pg_catalog.lower(queue_name));
$function$
;
COMMENT ON FUNCTION pgmq._queue_table_lock_key(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_table_lock_key(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_totals(seqs oid[])
 RETURNS bigint[]
 LANGUAGE plpgsql
AS $function$
DECLARE
    totals bigint[];
BEGIN
    IF coalesce(pg_catalog.cardinality(seqs), 0) = 0 THEN
        RETURN '{}';
    END IF;
    EXECUTE 'SELECT pg_catalog.array_agg(t.v ORDER BY t.i) FROM ('
        || (SELECT pg_catalog.string_agg(pg_catalog.format('SELECT %s, %s', u.i, pgmq._sequence_read_sql(u.s)), ' UNION ALL ')
            FROM pg_catalog.unnest(seqs) WITH ORDINALITY AS u(s, i))
        || ') AS t(i, v)'
    INTO totals;
    RETURN totals;
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_totals(oid[]) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_totals(oid[]) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._read_by_priority(queue_name text, vt integer, qty integer)
 RETURNS SETOF pgmq.message_record
 LANGUAGE plpgsql
AS $function$
DECLARE
    stored text := pgmq._require_queue(queue_name);
    attrs jsonb := coalesce(pgmq._queue_attributes(stored), '{}'::jsonb);
BEGIN
    IF vt IS NULL OR vt < 0 OR qty IS NULL OR qty < 1 THEN
        RAISE EXCEPTION 'vt must be 0 or more and qty 1 or more, got vt % and qty %',
            coalesce(vt::text, 'NULL'), coalesce(qty::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    RETURN QUERY SELECT * FROM pgmq._queue_ops_with_attributes(
        stored, attrs || '{"priorities": true}'::jsonb, 'r'::"char", qty, vt, NULL::timestamptz,
        NULL::bigint[], NULL::jsonb[], NULL::jsonb[], '{}'::jsonb, pgmq._low_water_mark(stored));
END
$function$
;
COMMENT ON FUNCTION pgmq._read_by_priority(text,integer,integer) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._read_by_priority(text,integer,integer) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._read_grouped(queue_name text, vt integer, qty integer, mode text)
 RETURNS SETOF pgmq.message_record
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text := pgmq._message_table_name(queue_name, 'q'::text);  -- pgmq's per-message check
    lock_space integer := pg_catalog.hashtext(qtable);
    grp text;
    groups text[] := '{}';
    ready bigint;
    budget integer;
    f record;
    wanted integer;
    claim text;
    rec pgmq.message_record;
    dead bigint[];
    given bigint[] := '{}';
    limited boolean;
BEGIN
    IF qty IS NULL OR qty < 0 THEN
        RAISE EXCEPTION 'qty must be zero or more, got: %', coalesce(qty::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    f := pgmq._claim_filter(queue_name, coalesce(pgmq._queue_attributes(queue_name), '{}'::jsonb), qty);
    wanted := f.allowed;
    IF wanted = 0 THEN
        RETURN;
    END IF;
    limited := f.held IS NOT NULL OR f.stamps IS NOT NULL;
    -- Over-read messages moved to the dead-letter queue do not count: read again for
    -- the rest (each round moves at least one, so this ends).
    LOOP
    groups := '{}';
    budget := wanted;
    dead := '{}';

    -- Groups whose first message looks visible, oldest first. Only a hint: each
    -- is checked again below, after its lock is held.
    FOR grp IN EXECUTE pg_catalog.format(
        $q$
        SELECT h.grp
        FROM (
            SELECT DISTINCT ON (pgmq._fifo_group(headers))
                   pgmq._fifo_group(headers) AS grp, msg_id, vt
            FROM pgmq.%I
            ORDER BY pgmq._fifo_group(headers), msg_id
        ) h
        WHERE h.vt <= pg_catalog.clock_timestamp()
        ORDER BY h.msg_id
        $q$,
        qtable
    )
    LOOP
        -- Another reader holds this group until it commits: leave it alone.
        CONTINUE WHEN NOT pg_catalog.pg_try_advisory_xact_lock(lock_space, pg_catalog.hashtext(grp));
        -- A new statement, so a new snapshot: it sees what the last holder committed.
        EXECUTE pg_catalog.format(
            $q$
            SELECT pg_catalog.count(*) FILTER (WHERE ok)
            FROM (
                SELECT pg_catalog.bool_and(vt <= pg_catalog.clock_timestamp()) OVER (ORDER BY msg_id) AS ok
                FROM (
                    SELECT msg_id, vt FROM pgmq.%I
                    WHERE pgmq._fifo_group(headers) = $1
                    ORDER BY msg_id
                    LIMIT $2
                ) front
            ) run
            $q$,
            qtable
        ) INTO ready USING grp, CASE WHEN mode = 'fill' THEN budget ELSE 1 END;
        CONTINUE WHEN ready = 0;
        groups := groups || grp;
        budget := budget - CASE WHEN mode = 'fill' THEN ready::integer ELSE 1 END;
        EXIT WHEN budget <= 0;
    END LOOP;

    EXIT WHEN pg_catalog.cardinality(groups) = 0;

    claim := pg_catalog.format(
        $q$
        WITH wanted AS MATERIALIZED (
            -- The readable front of each locked group, ranked, then chosen by mode.
            SELECT g.prio, r.msg_id, r.rnk
            FROM pg_catalog.unnest($1::text[]) WITH ORDINALITY AS g(grp, prio)
            CROSS JOIN LATERAL (
                SELECT f.msg_id,
                       pg_catalog.row_number() OVER w AS rnk,
                       pg_catalog.bool_and(f.vt <= pg_catalog.clock_timestamp()) OVER w AS ok
                FROM (
                    SELECT msg_id, vt FROM pgmq.%1$I
                    WHERE pgmq._fifo_group(headers) = g.grp
                    ORDER BY msg_id
                    LIMIT $5
                ) f
                WINDOW w AS (ORDER BY f.msg_id)
            ) r
            WHERE r.ok AND ($4 <> 'head' OR r.rnk = 1)
            ORDER BY CASE WHEN $4 = 'rr' THEN r.rnk ELSE g.prio END,
                     CASE WHEN $4 = 'rr' THEN g.prio ELSE r.rnk END
            LIMIT $2
        ),
        locked AS MATERIALIZED (
            SELECT m.msg_id FROM pgmq.%1$I m
            WHERE m.msg_id IN (SELECT msg_id FROM wanted) AND m.vt <= pg_catalog.clock_timestamp()
              AND m.msg_id <> ALL ($6)  -- handed out by an earlier round of this call
            FOR UPDATE SKIP LOCKED
        ),
        usable AS (
            -- A row someone else holds (a plain read, a delete) ends its group's share.
            SELECT w.msg_id, w.prio, w.rnk
            FROM wanted w
            WHERE NOT EXISTS (
                SELECT 1 FROM wanted e
                WHERE e.prio = w.prio AND e.rnk <= w.rnk
                  AND NOT EXISTS (SELECT 1 FROM locked l WHERE l.msg_id = e.msg_id)
            )
        ),
        claimed AS (
            UPDATE pgmq.%1$I m
            SET vt = pg_catalog.clock_timestamp() + $3,
                read_ct = m.read_ct + 1,
                last_read_at = pg_catalog.clock_timestamp()
            FROM usable u
            WHERE m.msg_id = u.msg_id
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message,
                      m.headers, u.prio, u.rnk
        )
        SELECT msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers
        FROM claimed
        -- Round-robin keeps its rounds (as pgmq does); the others come in msg_id order.
        ORDER BY CASE WHEN $4 = 'rr' THEN rnk ELSE 0 END,
                 CASE WHEN $4 = 'rr' THEN prio ELSE 0 END,
                 msg_id
        $q$,
        qtable
    );
    IF f.max_receive_count IS NULL AND NOT limited THEN
        RETURN QUERY EXECUTE claim
            USING groups, wanted, pg_catalog.make_interval(secs => coalesce(vt, 0)), mode,
            -- The most one group can contribute: every other group gives at least one.
            CASE WHEN mode = 'head' THEN 1 ELSE wanted - pg_catalog.cardinality(groups) + 1 END, given;
        RETURN;
    END IF;
    FOR rec IN EXECUTE claim
        USING groups, wanted, pg_catalog.make_interval(secs => coalesce(vt, 0)), mode,
        CASE WHEN mode = 'head' THEN 1 ELSE wanted - pg_catalog.cardinality(groups) + 1 END, given
    LOOP
        IF rec.read_ct > f.max_receive_count THEN  -- NULL (no redrive): never
            dead := dead || rec.msg_id;
        ELSE
            RETURN NEXT rec;
            given := given || rec.msg_id;
            wanted := wanted - 1;
        END IF;
    END LOOP;
    PERFORM pgmq._dead_letter_ids(queue_name, dead, 1);
    EXIT WHEN pg_catalog.cardinality(dead) = 0 OR wanted <= 0;
    END LOOP;
    IF limited THEN
        PERFORM pgmq._claim_record(queue_name, f.held, f.stamps, f.counts, given);
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._read_grouped(text,integer,integer,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._read_grouped(text,integer,integer,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._read_grouped_poll(queue_name text, vt integer, qty integer, max_poll_seconds integer, poll_interval_ms integer, mode text)
 RETURNS SETOF pgmq.message_record
 LANGUAGE sql
AS $function$
    SELECT * FROM pgmq._poll(
        'read_grouped'::text,
        queue_name, vt, qty, mode, max_poll_seconds, poll_interval_ms);
$function$
;
COMMENT ON FUNCTION pgmq._read_grouped_poll(text,integer,integer,integer,integer,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._read_grouped_poll(text,integer,integer,integer,integer,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._rearm_notify(queue_name text)
 RETURNS bigint
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    n bigint;
BEGIN
    UPDATE pgmq.notify_insert_throttle t SET last_notified_at = pg_catalog.to_timestamp(0::double precision)
    WHERE pg_catalog.lower(t.queue_name::text) = pg_catalog.lower($1)
      AND t.throttle_interval_ms > 0
      AND t.last_notified_at > pg_catalog.to_timestamp(0::double precision);
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$function$
;
COMMENT ON FUNCTION pgmq._rearm_notify(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._rearm_notify(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._record_creator(queue_name text)
 RETURNS void
 LANGUAGE sql
AS $function$
    INSERT INTO pgmq.queue_creator AS c (queue_name, created_by)
    SELECT m.queue_name::text, SESSION_USER FROM pgmq.meta m
    WHERE pg_catalog.lower(m.queue_name::text) = pg_catalog.lower($1)
    ON CONFLICT (queue_name) DO NOTHING;
$function$
;
COMMENT ON FUNCTION pgmq._record_creator(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._record_creator(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._refuse_foreign_tables(queue_name text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    squatter record;
BEGIN
    SELECT c.relname, pg_catalog.pg_get_userbyid(c.relowner) AS owner INTO squatter
    FROM pg_catalog.pg_class c
    JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'pgmq'::name AND c.relowner <> n.nspowner
      AND c.relname IN (pgmq.format_table_name(queue_name, 'q'::text)::name,
                        pgmq.format_table_name(queue_name, 'a'::text)::name,
                        ('archived_at_idx_'::text || pg_catalog.lower(queue_name))::name)
    ORDER BY c.relname
    LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'queue "%": relation pgmq.% already exists and is owned by role "%", not by the owner of schema pgmq',
            queue_name, squatter.relname, squatter.owner
            USING ERRCODE = 'PQ003',
                  HINT = 'A queue is never built on a table another role made. Drop that relation, '
                         'or, if it is a queue of an older install, have a DBA run '
                         'ALTER TABLE ... OWNER TO the owner of schema pgmq.';
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._refuse_foreign_tables(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._refuse_foreign_tables(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._remove_notify_trigger(queue_name text)
 RETURNS void
 LANGUAGE plpgsql
 SET client_min_messages TO 'warning'
AS $function$
BEGIN
    PERFORM pgmq._lock_queue_table(queue_name);
    EXECUTE pg_catalog.format(
        'DROP TRIGGER IF EXISTS %I ON pgmq.%I',
        pgmq._notify_trigger_name(queue_name), pgmq.format_table_name(queue_name, 'q'::text)
    );
END
$function$
;
COMMENT ON FUNCTION pgmq._remove_notify_trigger(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._remove_notify_trigger(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._require_app_role()
 RETURNS void
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    -- Joined to pg_roles: a recorded role dropped since (without pgmq_grant --revoke)
    -- is no one's, and never an error.
    IF pgmq._session_is_owner()
       OR EXISTS (SELECT 1 FROM pgmq.app_role a
                  JOIN pg_catalog.pg_roles r ON r.rolname = a.role_name
                  WHERE pg_catalog.pg_has_role(SESSION_USER, r.oid, 'MEMBER'::text)) THEN
        RETURN;
    END IF;
    RAISE EXCEPTION 'role "%" is not an application role of pgmq', SESSION_USER
        USING ERRCODE = '42501',
              HINT = pg_catalog.format('manage.py pgmq_grant %s', SESSION_USER);
END
$function$
;
COMMENT ON FUNCTION pgmq._require_app_role() IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._require_app_role() FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._require_privilege(what text)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    IF what IS NULL OR what NOT IN ('create_queues'::text, 'manage_queues'::text) THEN
        RAISE EXCEPTION 'unknown pgmq privilege "%": use create_queues or manage_queues', what
            USING ERRCODE = 'PQ004';
    END IF;
    IF pgmq._session_is_owner() THEN
        RETURN;
    END IF;
    IF EXISTS (
        SELECT FROM pgmq.app_role a
        JOIN pg_catalog.pg_roles r ON r.rolname = a.role_name
        WHERE CASE what WHEN 'create_queues'::text THEN a.create_queues ELSE a.manage_queues END
          AND pg_catalog.pg_has_role(SESSION_USER, r.oid, 'MEMBER'::text)
    ) THEN
        RETURN;
    END IF;
    RAISE EXCEPTION 'permission denied: role "%" does not hold the pgmq privilege %', SESSION_USER, what
        USING ERRCODE = '42501',
              HINT = pg_catalog.format(
                  'The owner grants it with manage.py pgmq_grant %s --%s',
                  pg_catalog.quote_ident(SESSION_USER::text),
                  pg_catalog.replace(what, '_'::text, '-'::text));
END
$function$
;
COMMENT ON FUNCTION pgmq._require_privilege(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._require_privilege(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._retention_batch(queue_name text, batch_size integer DEFAULT 5000)
 RETURNS TABLE(expired bigint, archive_deleted bigint)
 LANGUAGE plpgsql
AS $function$
DECLARE
    stored text := pgmq._require_queue(queue_name);
    attrs jsonb := coalesce(pgmq._queue_attributes(stored), '{}'::jsonb);
BEGIN
    IF batch_size IS NULL OR batch_size < 1 THEN
        RAISE EXCEPTION 'batch_size must be at least 1, got %', batch_size USING ERRCODE = 'PQ004';
    END IF;
    expired := 0;
    archive_deleted := 0;
    IF attrs ? 'message_retention' THEN
        EXECUTE pg_catalog.format(
            $d$
            DELETE FROM pgmq.%1$I m WHERE m.msg_id = ANY(ARRAY(
                SELECT x.msg_id FROM pgmq.%1$I x
                WHERE x.enqueued_at < pg_catalog.clock_timestamp() - pg_catalog.make_interval(secs => $1)
                ORDER BY x.msg_id LIMIT $2 FOR UPDATE SKIP LOCKED))
            $d$, pgmq.format_table_name(stored, 'q'::text))
        USING (attrs ->> 'message_retention')::integer, batch_size;
        GET DIAGNOSTICS expired = ROW_COUNT;
    END IF;
    IF attrs ? 'archive_retention' THEN
        EXECUTE pg_catalog.format(
            $d$
            DELETE FROM pgmq.%1$I a WHERE (a.msg_id, a.archived_at) IN (
                SELECT x.msg_id, x.archived_at FROM pgmq.%1$I x
                WHERE x.archived_at < pg_catalog.clock_timestamp() - pg_catalog.make_interval(secs => $1)
                ORDER BY x.archived_at LIMIT $2 FOR UPDATE SKIP LOCKED)
            $d$, pgmq.format_table_name(stored, 'a'::text))
        USING (attrs ->> 'archive_retention')::integer, batch_size;
        GET DIAGNOSTICS archive_deleted = ROW_COUNT;
    END IF;
    IF coalesce((attrs ->> 'deduplication_window')::integer, 0) > 0 THEN
        PERFORM pgmq._dedup_expire(stored);  -- the owner's helper
    END IF;
    RETURN NEXT;
END
$function$
;
COMMENT ON FUNCTION pgmq._retention_batch(text,integer) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._retention_batch(text,integer) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._retention_queues(only_queue text DEFAULT NULL::text)
 RETURNS TABLE(queue_name text, reported boolean)
 LANGUAGE sql
 STABLE
AS $function$
    SELECT a.queue_name::text, a.attributes ? 'message_retention' OR a.attributes ? 'archive_retention'
    FROM pgmq.queue_attributes a
    WHERE (only_queue IS NULL OR pg_catalog.lower(a.queue_name::text) = pg_catalog.lower(only_queue))
      AND (a.attributes ? 'message_retention' OR a.attributes ? 'archive_retention'
           OR coalesce((a.attributes ->> 'deduplication_window')::integer, 0) > 0)
    ORDER BY a.queue_name;
$function$
;
COMMENT ON FUNCTION pgmq._retention_queues(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._retention_queues(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._same_name_queue(queue_name text)
 RETURNS pgmq.meta
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
    existing pgmq.meta;
BEGIN
    SELECT m.* INTO existing FROM pgmq.meta m WHERE pg_catalog.lower(m.queue_name::text) = pg_catalog.lower($1);
    IF existing.queue_name IS NOT NULL AND existing.queue_name::text <> queue_name THEN
        RAISE EXCEPTION 'queue name "%" maps to table pgmq.%, which queue "%" already uses',
            queue_name, pgmq.format_table_name(queue_name, 'q'::text), existing.queue_name
            USING ERRCODE = 'PQ003',
                  HINT = 'Table names are lower-cased; use the existing name or another one.';
    END IF;
    RETURN existing;
END
$function$
;
COMMENT ON FUNCTION pgmq._same_name_queue(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._same_name_queue(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._schedule_claim_due(at_instant timestamp with time zone)
 RETURNS TABLE(schedule_name text, queue_name text, message jsonb, headers jsonb, time_zone text, tick timestamp with time zone)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
#variable_conflict use_column
DECLARE
    s pgmq.schedules;
    spec pgmq._cron_spec;
    due record;
BEGIN
    IF at_instant IS NULL THEN
        RAISE EXCEPTION 'at must not be NULL' USING ERRCODE = 'PQ004';
    END IF;
    IF at_instant > pg_catalog.now() + interval '1 minute' THEN
        PERFORM pgmq._require_privilege('manage_queues'::text);
    END IF;
    FOR s IN
        SELECT * FROM pgmq.schedules x
        WHERE x.enabled AND x.next_tick <= at_instant
        ORDER BY x.next_tick
        FOR UPDATE SKIP LOCKED
    LOOP
        spec := pgmq._cron_parse(s.cron);
        SELECT * INTO due FROM pgmq._schedule_due_tick(spec, s.time_zone, s.next_tick, s.catch_up,
                                                       at_instant);
        UPDATE pgmq.schedules x
        SET next_tick = coalesce(pgmq._cron_next(spec, s.time_zone, at_instant), 'infinity'),
            skipped = x.skipped + due.skipped
        WHERE x.schedule_name = s.schedule_name;
        CONTINUE WHEN due.tick IS NULL;
        INSERT INTO pgmq.schedule_ticks AS k (schedule_name, tick, queue_name)
        VALUES (s.schedule_name, due.tick, s.queue_name::text)
        ON CONFLICT ON CONSTRAINT schedule_ticks_pkey DO NOTHING;
        CONTINUE WHEN NOT FOUND;  -- sent by another call
        schedule_name := s.schedule_name;
        queue_name := s.queue_name::text;
        message := s.message;
        headers := s.headers;
        time_zone := s.time_zone;
        tick := due.tick;
        RETURN NEXT;
    END LOOP;
END
$function$
;
COMMENT ON FUNCTION pgmq._schedule_claim_due(timestamp with time zone) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._schedule_claim_due(timestamp with time zone) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._schedule_due_tick(spec pgmq._cron_spec, time_zone text, next_tick timestamp with time zone, catch_up interval, at_instant timestamp with time zone, OUT tick timestamp with time zone, OUT skipped bigint)
 RETURNS record
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
    window_start timestamptz := at_instant - catch_up;
    -- the first tick not handled yet (next_tick is one, unless someone wrote another)
    first_tick timestamptz := pgmq._cron_next(spec, time_zone, next_tick - interval '1 microsecond');
    t timestamptz;
    later timestamptz;
BEGIN
    IF spec.every_seconds IS NOT NULL THEN
        t := pg_catalog.to_timestamp((pg_catalog.floor(extract(epoch FROM at_instant) / spec.every_seconds) * spec.every_seconds)::double precision);
    ELSE
        t := CASE WHEN first_tick >= window_start THEN first_tick
                  ELSE pgmq._cron_next(spec, time_zone, window_start - interval '1 microsecond') END;
        LOOP
            later := pgmq._cron_next(spec, time_zone, t);
            EXIT WHEN later IS NULL OR later > at_instant;
            t := later;
        END LOOP;
    END IF;
    IF t IS NULL OR t > at_instant OR t < window_start OR t < first_tick THEN
        tick := NULL;
        skipped := pgmq._cron_count(spec, time_zone, first_tick, at_instant + interval '1 microsecond');
    ELSE
        tick := t;
        skipped := pgmq._cron_count(spec, time_zone, first_tick, t);
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._schedule_due_tick(pgmq._cron_spec,text,timestamp with time zone,interval,timestamp with time zone) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._schedule_due_tick(pgmq._cron_spec,text,timestamp with time zone,interval,timestamp with time zone) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._schedule_tick_done(schedule_name text, tick timestamp with time zone, msg_id bigint, error text)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    UPDATE pgmq.schedule_ticks k SET msg_id = $3, error = $4
    WHERE k.schedule_name = $1 AND k.tick = $2 AND k.msg_id IS NULL AND k.error IS NULL;
    DELETE FROM pgmq.schedule_ticks k
    WHERE k.schedule_name = $1
      AND k.tick < (SELECT o.tick FROM pgmq.schedule_ticks o
                    WHERE o.schedule_name = $1
                    ORDER BY o.tick DESC OFFSET 99 LIMIT 1);
END
$function$
;
COMMENT ON FUNCTION pgmq._schedule_tick_done(text,timestamp with time zone,bigint,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._schedule_tick_done(text,timestamp with time zone,bigint,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._send_checks_sql(attrs jsonb)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT pg_catalog.concat_ws(' AND ',
        CASE WHEN attrs ? 'max_message_size'
             THEN pg_catalog.format('pg_catalog.octet_length(u.msg::text) <= %s', (attrs ->> 'max_message_size')::integer) END,
        CASE WHEN (attrs -> 'priorities') = 'true'::jsonb THEN $t$
            CASE WHEN u.hdr -> 'priority' IS NULL OR pg_catalog.jsonb_typeof(u.hdr) <> 'object' THEN true
                 WHEN pg_catalog.jsonb_typeof(u.hdr -> 'priority') <> 'number'
                      OR (u.hdr ->> 'priority') !~ '^-?[0-9]{1,3}$' THEN false
                 ELSE pg_catalog.abs((u.hdr ->> 'priority')::integer) <= 100 END$t$ END,
        CASE WHEN coalesce((attrs ->> 'deduplication_window')::integer, 0) > 0 THEN $t$
            CASE WHEN u.hdr -> 'deduplication_id' IS NULL OR pg_catalog.jsonb_typeof(u.hdr) <> 'object' THEN true
                 WHEN pg_catalog.jsonb_typeof(u.hdr -> 'deduplication_id') <> 'string' THEN false
                 ELSE pg_catalog.char_length(u.hdr ->> 'deduplication_id') BETWEEN 1 AND 128 END$t$ END);
$function$
;
COMMENT ON FUNCTION pgmq._send_checks_sql(jsonb) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._send_checks_sql(jsonb) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._send_deduplicated(queue_name text, attrs jsonb, p_vt timestamp with time zone, p_msgs jsonb[], p_headers jsonb[])
 RETURNS SETOF pgmq.message_record
 LANGUAGE plpgsql
AS $function$
DECLARE
    ids bigint[];
    tries text := coalesce(pg_catalog.current_setting('pgmq.dedup_tries', true), '');
    tried integer := CASE WHEN pg_catalog.split_part(tries, ' ', 1) = pg_catalog.pg_current_xact_id_if_assigned()::text
                          THEN pg_catalog.split_part(tries, ' ', 2)::integer ELSE 0 END;
BEGIN
    IF tried < 16 AND NOT EXISTS (
        SELECT 1
        FROM (SELECT h ->> 'deduplication_id' AS dedup FROM pg_catalog.unnest(p_headers) AS h) x
        WHERE x.dedup IS NOT NULL
        GROUP BY x.dedup
        HAVING pg_catalog.count(*) > 1 OR EXISTS (
            SELECT 1 FROM pgmq.queue_deduplication d
            WHERE d.queue_name::text = pg_catalog.lower($1) AND d.deduplication_id = x.dedup))
    THEN
        BEGIN
            EXECUTE pgmq._queue_ops_attr_sql(queue_name, 'S', '0'::text, attrs) INTO ids
                USING NULL::"char", NULL::integer, NULL::integer, p_vt, NULL::bigint[],
                      p_msgs, p_headers, NULL::jsonb;
        EXCEPTION WHEN unique_violation THEN
            ids := NULL;
        END;
        PERFORM pg_catalog.set_config('pgmq.dedup_tries',
                           coalesce(pg_catalog.pg_current_xact_id_if_assigned()::text, '') || ' ' || (tried + 1),
                           false);
        IF ids IS NOT NULL THEN
            RETURN QUERY SELECT i, NULL::integer, NULL::timestamptz, NULL::timestamptz,
                                NULL::timestamptz, NULL::jsonb, NULL::jsonb
                         FROM pg_catalog.unnest(ids) AS i;
            RETURN;
        END IF;
    END IF;
    RETURN QUERY EXECUTE pgmq._queue_ops_attr_sql(queue_name, 's', '0'::text, attrs)
        USING NULL::"char", NULL::integer, NULL::integer, p_vt, NULL::bigint[],
              p_msgs, p_headers, NULL::jsonb;
END
$function$
;
COMMENT ON FUNCTION pgmq._send_deduplicated(text,jsonb,timestamp with time zone,jsonb[],jsonb[]) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._send_deduplicated(text,jsonb,timestamp with time zone,jsonb[],jsonb[]) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._sequence_read_sql(seq oid)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT coalesce(
        (SELECT pg_catalog.format('(SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM %s)',
                       c.oid::regclass)
         FROM pg_catalog.pg_class c WHERE c.oid = seq),
        'NULL::bigint')
$function$
;
COMMENT ON FUNCTION pgmq._sequence_read_sql(oid) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._sequence_read_sql(oid) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._session_is_owner()
 RETURNS boolean
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
    SELECT coalesce((SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = SESSION_USER), false)
        OR pg_catalog.pg_has_role(
               SESSION_USER,
               (SELECT n.nspowner FROM pg_catalog.pg_namespace n WHERE n.nspname = 'pgmq'::name),
               'MEMBER'::text);
$function$
;
COMMENT ON FUNCTION pgmq._session_is_owner() IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._session_is_owner() FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._set_vt_seconds(queue_name text, msg_ids bigint[], seconds double precision, unread boolean DEFAULT false)
 RETURNS SETOF bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q'::text);
BEGIN
    IF seconds IS NULL OR seconds < 0 OR seconds = 'Infinity' THEN
        RAISE EXCEPTION 'seconds must be zero or more, got: %', coalesce(seconds::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    RETURN QUERY EXECUTE pg_catalog.format(
        $q$
        WITH free AS (
            SELECT msg_id FROM pgmq.%1$I WHERE msg_id = ANY($1) FOR UPDATE SKIP LOCKED
        )
        UPDATE pgmq.%1$I m
        SET vt = pg_catalog.clock_timestamp() + pg_catalog.make_interval(secs => $2),
            read_ct = CASE WHEN $3 THEN greatest(m.read_ct - 1, 0) ELSE m.read_ct END
        FROM free
        WHERE m.msg_id = free.msg_id
        RETURNING m.msg_id
        $q$,
        qtable
    ) USING msg_ids, seconds, coalesce(unread, false);
END
$function$
;
COMMENT ON FUNCTION pgmq._set_vt_seconds(text,bigint[],double precision,boolean) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._set_vt_seconds(text,bigint[],double precision,boolean) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._spark_batch_ack(queue_name text, consumer text, upto_batch bigint)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    last_acked bigint;
BEGIN
    UPDATE pgmq.spark_stream_batch b SET acked_at = pg_catalog.clock_timestamp()
    WHERE b.queue_name::text = $1 AND b.consumer = $2 AND b.batch <= upto_batch AND b.acked_at IS NULL;
    SELECT pg_catalog.max(b.batch) INTO last_acked FROM pgmq.spark_stream_batch b
    WHERE b.queue_name::text = $1 AND b.consumer = $2 AND b.acked_at IS NOT NULL;
    DELETE FROM pgmq.spark_stream_batch b
    WHERE b.queue_name::text = $1 AND b.consumer = $2 AND b.acked_at IS NOT NULL AND b.batch < last_acked;
END
$function$
;
COMMENT ON FUNCTION pgmq._spark_batch_ack(text,text,bigint) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._spark_batch_ack(text,text,bigint) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._spark_batch_record(queue_name text, consumer text, min_batch bigint, ids bigint[], claimed_at timestamp with time zone)
 RETURNS bigint
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    stored text := pgmq._require_queue(queue_name);
    claimed bigint;
    next_batch bigint;
BEGIN
    IF ids IS NULL OR consumer IS NULL OR claimed_at IS NULL THEN
        RETURN NULL;
    END IF;
    EXECUTE pg_catalog.format('SELECT pg_catalog.count(*) FROM pgmq.%I q WHERE q.msg_id = ANY ($1) '
                              'AND q.last_read_at = $2', pgmq.format_table_name(stored, 'q'::text))
        INTO claimed USING ids, claimed_at;
    IF claimed <> pg_catalog.cardinality(ids) THEN
        RAISE EXCEPTION 'queue "%": not every message of the batch was claimed at %', stored, claimed_at
            USING ERRCODE = 'PQ004';
    END IF;
    SELECT greatest(coalesce(pg_catalog.max(b.batch), 0), coalesce(min_batch, 0)) + 1 INTO next_batch
    FROM pgmq.spark_stream_batch b WHERE b.queue_name::text = $1 AND b.consumer = $2;
    INSERT INTO pgmq.spark_stream_batch (queue_name, consumer, batch, msg_ids, claimed_at)
    VALUES ($1, $2, next_batch, ids, claimed_at);
    RETURN next_batch;
END
$function$
;
COMMENT ON FUNCTION pgmq._spark_batch_record(text,text,bigint,bigint[],timestamp with time zone) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._spark_batch_record(text,text,bigint,bigint[],timestamp with time zone) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._spark_consumer_lock(queue_name text, consumer text)
 RETURNS void
 LANGUAGE sql
AS $function$
    SELECT pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('pgmq.spark.' || pg_catalog.lower(queue_name) || '.' || consumer));
$function$
;
COMMENT ON FUNCTION pgmq._spark_consumer_lock(text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._spark_consumer_lock(text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._spark_export_run(queue_name text, path text, older_than double precision)
 RETURNS TABLE(run_id uuid, cutoff timestamp with time zone, max_msg_id bigint, exported bigint, stage text)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
#variable_conflict use_column
DECLARE
    stored text;
    top bigint;
BEGIN
    PERFORM pgmq._require_app_role();
    stored := pgmq._require_queue(queue_name);
    IF path IS NULL OR older_than IS NULL OR older_than < 0 THEN
        RAISE EXCEPTION 'queue "%": an export needs a path and older_than of 0 or more', stored
            USING ERRCODE = 'PQ004';
    END IF;
    EXECUTE pg_catalog.format('SELECT coalesce(pg_catalog.max(a.msg_id), 0) FROM pgmq.%I a',
                              pgmq.format_table_name(stored, 'a'::text)) INTO top;
    RETURN QUERY
        INSERT INTO pgmq.spark_export_run AS r (run_id, queue_name, path, cutoff, max_msg_id)
        VALUES (pg_catalog.gen_random_uuid(), $1, $2,
                pg_catalog.now() - pg_catalog.make_interval(secs => $3), top)
        RETURNING r.run_id, r.cutoff, r.max_msg_id, r.exported, r.stage;
END
$function$
;
COMMENT ON FUNCTION pgmq._spark_export_run(text,text,double precision) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._spark_export_run(text,text,double precision) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._spark_export_set_stage(run_id uuid, stage text, exported bigint, removed bigint)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    PERFORM pgmq._require_app_role();
    UPDATE pgmq.spark_export_run r
    SET stage = $2, exported = coalesce($3, r.exported), removed = coalesce($4, r.removed),
        finished_at = CASE WHEN $2 = 'done' THEN pg_catalog.now() END
    WHERE r.run_id = $1;
END
$function$
;
COMMENT ON FUNCTION pgmq._spark_export_set_stage(uuid,text,bigint,bigint) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._spark_export_set_stage(uuid,text,bigint,bigint) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._spark_send_staged(queue_name text, stage regclass, attempts bigint[])
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    run record;
    sent bigint := 0;
BEGIN
    FOR run IN EXECUTE pg_catalog.format(
        $q$
        WITH ordered AS (
            SELECT s.vt, s.message, s.headers,
                   pg_catalog.row_number() OVER (ORDER BY s.part, s.seq) AS n,
                   pg_catalog.row_number() OVER (PARTITION BY s.vt ORDER BY s.part, s.seq) AS k
            FROM %s s WHERE $1 IS NULL OR s.attempt = ANY ($1)
        )
        SELECT o.vt, pg_catalog.array_agg(o.message ORDER BY o.n) AS msgs,
               pg_catalog.array_agg(o.headers ORDER BY o.n) AS hdrs
        FROM ordered o
        GROUP BY o.vt, o.n - o.k, (o.k - 1) / 10000
        ORDER BY pg_catalog.min(o.n)
        $q$, stage) USING attempts
    LOOP
        PERFORM pg_catalog.count(*) FROM pgmq.send_batch(queue_name, run.msgs, run.hdrs, run.vt);
        sent := sent + pg_catalog.cardinality(run.msgs);
    END LOOP;
    RETURN sent;
END
$function$
;
COMMENT ON FUNCTION pgmq._spark_send_staged(text,regclass,bigint[]) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._spark_send_staged(text,regclass,bigint[]) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._spark_stage_entry(stage text)
 RETURNS pgmq.spark_stage
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    entry pgmq.spark_stage;
BEGIN
    SELECT * INTO entry FROM pgmq.spark_stage s WHERE s.stage_table = stage FOR UPDATE;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    IF entry.writer_role IS NULL THEN
        PERFORM pgmq._require_app_role();
    ELSIF NOT (pg_catalog.to_regrole(pg_catalog.quote_ident(entry.writer_role::text)) IS NOT NULL
               AND pg_catalog.pg_has_role(SESSION_USER, entry.writer_role, 'MEMBER')) THEN
        PERFORM pgmq._require_privilege('manage_queues'::text);
    END IF;
    RETURN entry;
END
$function$
;
COMMENT ON FUNCTION pgmq._spark_stage_entry(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._spark_stage_entry(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._spark_stage_finish(stage text, batch_id bigint, drop_batch_stage boolean)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    entry pgmq.spark_stage := pgmq._spark_stage_entry(stage);
BEGIN
    IF entry.stage_table IS NULL THEN
        RAISE EXCEPTION 'staging table pgmq.% does not exist (already committed or dropped)', stage
            USING ERRCODE = 'PQ004';
    END IF;
    IF pgmq._spark_stage_table(stage, true) IS NULL THEN
        DELETE FROM pgmq.spark_stage s WHERE s.stage_table = stage;  -- its table is gone
        RETURN;
    END IF;
    IF entry.writer_id IS NULL AND drop_batch_stage THEN
        EXECUTE pg_catalog.format('DROP TABLE pgmq.%I', stage);
        DELETE FROM pgmq.spark_stage s WHERE s.stage_table = stage;
    ELSE
        EXECUTE pg_catalog.format('TRUNCATE pgmq.%I', stage);
        IF entry.writer_id IS NOT NULL AND batch_id IS NOT NULL THEN
            INSERT INTO pgmq.spark_sink_batch AS k (queue_name, writer_id, batch_id)
            VALUES (entry.queue_name, entry.writer_id, batch_id)
            ON CONFLICT (queue_name, writer_id)
            DO UPDATE SET batch_id = excluded.batch_id, committed_at = pg_catalog.now();
        END IF;
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._spark_stage_finish(text,bigint,boolean) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._spark_stage_finish(text,bigint,boolean) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._spark_stage_lock(stage text)
 RETURNS pgmq.spark_stage
 LANGUAGE sql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
    SELECT pgmq._spark_stage_entry($1::text);
$function$
;
COMMENT ON FUNCTION pgmq._spark_stage_lock(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._spark_stage_lock(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._spark_stage_make(queue_name text, writer_id text, grantee name)
 RETURNS text
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    stored text;
    stage text;
    other oid;
BEGIN
    PERFORM pgmq._require_app_role();
    IF grantee IS NULL OR pg_catalog.to_regrole(pg_catalog.quote_ident(grantee::text)) IS NULL
       OR NOT pg_catalog.pg_has_role(SESSION_USER, grantee, 'MEMBER') THEN
        RAISE EXCEPTION 'role "%" may not write a staging table for role "%"', SESSION_USER,
            coalesce(grantee::text, 'NULL') USING ERRCODE = '42501';
    END IF;
    stored := pgmq._require_queue(queue_name);
    IF writer_id IS NOT NULL THEN
        PERFORM pg_catalog.pg_advisory_xact_lock(
            pg_catalog.hashtext('pgmq.spark.stage.' || pg_catalog.lower(stored) || '.' || writer_id));
        SELECT s.stage_table INTO stage FROM pgmq.spark_stage s
        WHERE s.queue_name::text = stored AND s.writer_id = $2 AND s.writer_role IS NOT DISTINCT FROM grantee;
        IF stage IS NOT NULL AND pgmq._spark_stage_table(stage, true) IS NOT NULL THEN
            RETURN stage;
        END IF;
        stage := (SELECT s.stage_table FROM pgmq.spark_stage s
                  WHERE s.queue_name::text = stored AND s.writer_id = $2);
        IF stage IS NOT NULL AND pgmq._spark_stage_table(stage, true) IS NOT NULL THEN
            EXECUTE pg_catalog.format('DROP TABLE pgmq.%I', stage);  -- another role's, replaced
        END IF;
        DELETE FROM pgmq.spark_stage s WHERE s.queue_name::text = stored AND s.writer_id = $2;
    END IF;
    stage := 'spark_stage_' || pg_catalog.replace(pg_catalog.gen_random_uuid()::text, '-', '');
    EXECUTE pg_catalog.format(
        'CREATE UNLOGGED TABLE pgmq.%I (part integer NOT NULL, attempt bigint NOT NULL, '
        'seq bigint GENERATED ALWAYS AS IDENTITY, vt timestamptz, message jsonb, headers jsonb)',
        stage
    );
    -- Only the writer's role: the owner's default privileges (a grant to every application
    -- role, for queue tables) are taken back from this table.
    FOR other IN
        SELECT DISTINCT a.grantee FROM pg_catalog.pg_class c,
               LATERAL pg_catalog.aclexplode(c.relacl) a
        WHERE c.oid = pg_catalog.format('pgmq.%I', stage)::regclass AND a.grantee <> c.relowner
    LOOP
        EXECUTE pg_catalog.format('REVOKE ALL ON pgmq.%I FROM %s', stage,
            CASE WHEN other = 0 THEN 'PUBLIC'
                 ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(other)::text) END);
    END LOOP;
    EXECUTE pg_catalog.format('GRANT SELECT, INSERT ON pgmq.%I TO %I', stage, grantee);
    INSERT INTO pgmq.spark_stage (stage_table, queue_name, writer_id, writer_role)
    VALUES (stage, stored, $2, grantee);
    RETURN stage;
END
$function$
;
COMMENT ON FUNCTION pgmq._spark_stage_make(text,text,name) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._spark_stage_make(text,text,name) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._spark_stage_table(stage text, missing_ok boolean DEFAULT false)
 RETURNS regclass
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    rel regclass;
BEGIN
    IF stage IS NULL OR stage !~ '^spark_stage_[0-9a-f]{32}$' THEN
        RAISE EXCEPTION 'pgmq.% is not a Spark staging table: their names are spark_stage_ '
            'and 32 hexadecimal digits', coalesce(stage, 'NULL') USING ERRCODE = 'PQ004';
    END IF;
    rel := pg_catalog.to_regclass(pg_catalog.format('pgmq.%I', stage));
    IF rel IS NULL THEN
        IF missing_ok THEN
            RETURN NULL;
        END IF;
        RAISE EXCEPTION 'staging table pgmq.% does not exist (already committed or dropped)', stage
            USING ERRCODE = 'PQ004';
    END IF;
    IF (SELECT c.relkind FROM pg_catalog.pg_class c WHERE c.oid = rel) <> 'r'
       OR (SELECT pg_catalog.string_agg(a.attname || ' ' || pg_catalog.format_type(a.atttypid, a.atttypmod), ', '
                             ORDER BY a.attnum)
           FROM pg_catalog.pg_attribute a WHERE a.attrelid = rel AND a.attnum > 0 AND NOT a.attisdropped)
          IS DISTINCT FROM 'part integer, attempt bigint, seq bigint, '
                           'vt timestamp with time zone, message jsonb, headers jsonb' THEN
        RAISE EXCEPTION 'pgmq.% is not a Spark staging table: not the table '
            'pgmq.spark_stage_create makes', stage USING ERRCODE = 'PQ004';
    END IF;
    RETURN rel;
END
$function$
;
COMMENT ON FUNCTION pgmq._spark_stage_table(text,boolean) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._spark_stage_table(text,boolean) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._spark_stats_upsert(queue_name text, minute timestamp with time zone, archived bigint, p50 double precision, p95 double precision, p99 double precision, retries bigint)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    PERFORM pgmq._require_app_role();  -- no queue check: statistics outlive a dropped queue
    INSERT INTO pgmq.spark_stats AS s
        (queue_name, minute, archived, wait_p50, wait_p95, wait_p99, retries, computed_at)
    VALUES ($1, $2, $3, $4, $5, $6, $7, pg_catalog.now())
    ON CONFLICT ON CONSTRAINT spark_stats_pkey DO UPDATE
    SET archived = excluded.archived, wait_p50 = excluded.wait_p50, wait_p95 = excluded.wait_p95,
        wait_p99 = excluded.wait_p99, retries = excluded.retries, computed_at = excluded.computed_at;
END
$function$
;
COMMENT ON FUNCTION pgmq._spark_stats_upsert(text,timestamp with time zone,bigint,double precision,double precision,double precision,bigint) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._spark_stats_upsert(text,timestamp with time zone,bigint,double precision,double precision,double precision,bigint) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._stored_queue_name(queue_name text)
 RETURNS text
 LANGUAGE plpgsql
 STABLE
AS $function$
BEGIN
    PERFORM pgmq.validate_queue_name(queue_name);
    RETURN (SELECT m.queue_name FROM pgmq.meta m WHERE pg_catalog.lower(m.queue_name::text) = pg_catalog.lower($1));
END
$function$
;
COMMENT ON FUNCTION pgmq._stored_queue_name(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._stored_queue_name(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._sync_queue_limits(queue_name text, attrs jsonb)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    lq text := pg_catalog.lower(queue_name);
    s pgmq.queue_limit_state;
    new_max integer := (attrs ->> 'max_in_flight')::integer;
    new_count integer := (attrs -> 'rate_limit' ->> 'count')::integer;
    tries integer := 0;
    made integer;
BEGIN
    LOOP
        BEGIN
            SELECT * INTO s FROM pgmq.queue_limit_state l WHERE l.queue_name::text = lq
            FOR NO KEY UPDATE NOWAIT;
            EXIT;
        EXCEPTION WHEN lock_not_available THEN
            tries := tries + 1;
            IF tries >= 20 THEN
                RAISE EXCEPTION 'queue "%": its limits are being used by a claim in progress; retry',
                    queue_name USING ERRCODE = 'lock_not_available';
            END IF;
            PERFORM pg_catalog.pg_sleep(0.05);
        END;
    END LOOP;
    IF NOT (attrs ? 'max_in_flight' OR attrs ? 'rate_limit') THEN
        DELETE FROM pgmq.queue_limit_state l WHERE l.queue_name::text = lq;
        PERFORM pgmq._limit_drop_rows(lq, NULL);
        RETURN;
    END IF;
    IF s.queue_name IS NULL THEN
        INSERT INTO pgmq.queue_limit_state (queue_name) VALUES (lq) RETURNING * INTO s;
    END IF;

    IF new_max IS NULL THEN
        PERFORM pgmq._limit_drop_rows(lq, 'f');
        s.slots_made := 0;
    ELSIF s.max_in_flight IS NULL THEN
        -- A new max_in_flight: a slot for each message in flight now, then free ones.
        PERFORM pgmq._limit_drop_rows(lq, 'f');
        made := coalesce((SELECT pg_catalog.max(l.slot) FROM pgmq.queue_limit_slots l
                          WHERE l.queue_name::text = lq AND l.kind = 'f'), 0);
        EXECUTE pg_catalog.format(
            'INSERT INTO pgmq.queue_limit_slots (queue_name, kind, slot, t, msg_id, read_ct) '
            'SELECT $1, ''f'', $2 + pg_catalog.row_number() OVER (ORDER BY q.msg_id), q.vt, q.msg_id, q.read_ct '
            'FROM pgmq.%I q WHERE q.read_ct > 0 AND q.vt > pg_catalog.clock_timestamp() '
            '  AND NOT EXISTS (SELECT 1 FROM pgmq.queue_limit_slots x '
            '                  WHERE x.queue_name::text = $1 AND x.msg_id = q.msg_id)',
            pgmq.format_table_name(queue_name, 'q')) USING lq, made;
        made := coalesce((SELECT pg_catalog.max(l.slot) FROM pgmq.queue_limit_slots l
                          WHERE l.queue_name::text = lq AND l.kind = 'f'), 0);
        INSERT INTO pgmq.queue_limit_slots (queue_name, kind, slot)
        SELECT lq, 'f', g FROM pg_catalog.generate_series(made + 1, LEAST(new_max, pgmq._limit_prefill())) g;
        s.slots_made := GREATEST(made, LEAST(new_max, pgmq._limit_prefill()));
    ELSIF new_max < s.max_in_flight THEN
        PERFORM pgmq._limit_drop_rows(lq, 'f', new_max);
        s.slots_made := LEAST(s.slots_made, new_max);
    END IF;

    IF new_count IS NULL THEN
        PERFORM pgmq._limit_drop_rows(lq, 'r');
        s.tokens_made := 0;
    ELSIF s.rate_count IS NULL THEN
        PERFORM pgmq._limit_drop_rows(lq, 'r');
        made := coalesce((SELECT pg_catalog.max(l.slot) FROM pgmq.queue_limit_slots l
                          WHERE l.queue_name::text = lq AND l.kind = 'r'), 0);
        INSERT INTO pgmq.queue_limit_slots (queue_name, kind, slot)
        SELECT lq, 'r', g FROM pg_catalog.generate_series(made + 1, LEAST(new_count, pgmq._limit_prefill())) g;
        s.tokens_made := GREATEST(made, LEAST(new_count, pgmq._limit_prefill()));
    ELSIF new_count < s.rate_count THEN
        PERFORM pgmq._limit_drop_rows(lq, 'r', new_count);
        s.tokens_made := LEAST(s.tokens_made, new_count);
    END IF;

    UPDATE pgmq.queue_limit_state l
    SET max_in_flight = new_max, rate_count = new_count,
        rate_seconds = (attrs -> 'rate_limit' ->> 'seconds')::double precision,
        slots_made = s.slots_made, tokens_made = s.tokens_made
    WHERE l.queue_name::text = lq;
END
$function$
;
COMMENT ON FUNCTION pgmq._sync_queue_limits(text,jsonb) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._sync_queue_limits(text,jsonb) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._task_finish_and_start(task_queue text, done_id uuid, done_msg_id bigint, done_status text, done_finished_at timestamp with time zone, done_return_value jsonb, done_errors jsonb, next_id uuid, started timestamp with time zone, worker text)
 RETURNS TABLE(id uuid, backend text, queue_name text, task_path text, priority integer, status text, args jsonb, kwargs jsonb, run_after timestamp with time zone, enqueued_at timestamp with time zone, started_at timestamp with time zone, finished_at timestamp with time zone, last_attempted_at timestamp with time zone, return_value jsonb, errors jsonb, worker_ids jsonb, max_attempts integer, msg_id bigint)
 LANGUAGE plpgsql
AS $function$
#variable_conflict use_variable
BEGIN
    IF done_id IS NOT NULL THEN
        UPDATE django_pgmq_taskresultrecord AS t
        SET status = done_status, finished_at = done_finished_at,
            return_value = done_return_value, errors = done_errors
        WHERE t.id = done_id;
        IF FOUND THEN
            PERFORM pgmq.delete(task_queue, ARRAY[done_msg_id]);
        END IF;
    END IF;
    IF next_id IS NULL THEN
        RETURN;
    END IF;
    RETURN QUERY
    UPDATE django_pgmq_taskresultrecord AS t
    SET status = 'RUNNING',
        started_at = coalesce(t.started_at, started),
        last_attempted_at = started,
        worker_ids = t.worker_ids || pg_catalog.jsonb_build_array(worker)
    WHERE t.id = next_id AND t.status = 'READY'
    RETURNING t.id, t.backend::text, t.queue_name::text, t.task_path::text,
              t.priority::integer, t.status::text, t.args, t.kwargs, t.run_after,
              t.enqueued_at, t.started_at, t.finished_at, t.last_attempted_at,
              t.return_value, t.errors, t.worker_ids, t.max_attempts::integer, t.msg_id;
END
$function$
;
COMMENT ON FUNCTION pgmq._task_finish_and_start(text,uuid,bigint,text,timestamp with time zone,jsonb,jsonb,uuid,timestamp with time zone,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._task_finish_and_start(text,uuid,bigint,text,timestamp with time zone,jsonb,jsonb,uuid,timestamp with time zone,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._time_step(what text, step text)
 RETURNS interval
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
DECLARE
    expected constant text := 'a positive integer (msg_id ranges) or a time interval such as '
        '''1 day'' or ''1 month'' (time ranges)';
    iv interval;
BEGIN
    BEGIN
        iv := step::interval;
    EXCEPTION WHEN invalid_datetime_format OR datetime_field_overflow OR interval_field_overflow
                   OR numeric_value_out_of_range THEN
        PERFORM pgmq._partition_arg_error(what, expected, step);
    END;
    IF iv < interval '1 second' THEN
        PERFORM pgmq._partition_arg_error(what, 'at least 1 second'::text, step);
    END IF;
    -- date_trunc('day', iv) keeps the months and days of an interval, not its time.
    IF extract(year FROM iv) * 12 + extract(month FROM iv) <> 0
       AND (extract(day FROM iv) <> 0 OR pg_catalog.date_trunc('day', iv) <> iv) THEN
        PERFORM pgmq._partition_arg_error(
            what, 'whole months (''3 months'') or a fixed length (''12 hours''), not both'::text, step);
    END IF;
    RETURN iv;
END
$function$
;
COMMENT ON FUNCTION pgmq._time_step(text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._time_step(text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._topic_regex(pattern text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$
    SELECT '^'
        || pg_catalog.replace(
               pg_catalog.replace(pg_catalog.regexp_replace(pattern, '([^[:alnum:]_*#-])', '\\\1', 'g'), '*', '[^.]+'),
               '#', '.*')
        || '$';
$function$
;
COMMENT ON FUNCTION pgmq._topic_regex(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._topic_regex(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._tune_live_table(tbl text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
    EXECUTE pg_catalog.format('ALTER TABLE pgmq.%I SET (fillfactor = 80)', tbl);
END
$function$
;
COMMENT ON FUNCTION pgmq._tune_live_table(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._tune_live_table(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._validate_batch_params(msgs jsonb[], headers jsonb[])
 RETURNS void
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
BEGIN
    IF msgs IS NULL OR pg_catalog.cardinality(msgs) = 0 THEN
        RAISE EXCEPTION 'msgs cannot be NULL or empty' USING ERRCODE = 'PQ004';
    END IF;
    IF headers IS NOT NULL AND pg_catalog.cardinality(headers) <> pg_catalog.cardinality(msgs) THEN
        RAISE EXCEPTION 'headers array length (%) must match msgs array length (%)',
            pg_catalog.cardinality(headers), pg_catalog.cardinality(msgs)
            USING ERRCODE = 'PQ004';
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._validate_batch_params(jsonb[],jsonb[]) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._validate_batch_params(jsonb[],jsonb[]) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._want_queue_index(queue_name text, kind text)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    stored text;
    wanted text;
    tbl regclass;
    state boolean;
    small boolean;
    alone boolean;
    bound text;
    saved text;
    reason text;
BEGIN
    IF kind IS NULL OR kind NOT IN ('priority', 'fifo') THEN
        RAISE EXCEPTION 'index kind must be priority or fifo, got %', coalesce(kind, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    stored := pgmq._require_queue(queue_name);
    wanted := pgmq._queue_index_name(stored, kind);
    tbl := pg_catalog.to_regclass(
        pg_catalog.format('pgmq.%I', pgmq.format_table_name(stored, 'q'::text)));
    IF tbl IS NULL THEN
        RAISE EXCEPTION 'queue "%" does not exist', queue_name
            USING ERRCODE = 'PQ002', HINT = 'Create it first with pgmq.create().';
    END IF;
    IF NOT (pg_catalog.has_table_privilege(SESSION_USER, tbl, 'INSERT'::text)
            OR pg_catalog.has_table_privilege(SESSION_USER, tbl, 'UPDATE'::text)) THEN
        RAISE EXCEPTION 'role "%" may not use queue "%", so it may not index it', SESSION_USER, stored
            USING ERRCODE = '42501',
                  HINT = 'The owner grants message rights with manage.py pgmq_grant.';
    END IF;
    SELECT i.indisvalid INTO state FROM pg_catalog.pg_index i WHERE i.indexrelid = pg_catalog.to_regclass(
        pg_catalog.format('pgmq.%I', wanted));
    IF state THEN
        RETURN true;
    END IF;

    -- Its partitions' heaps (pg_partition_tree has no row for a table not partitioned).
    SELECT coalesce(pg_catalog.sum(pg_catalog.pg_relation_size(t.relid)),
                    pg_catalog.pg_relation_size(tbl)) <= 1048576 INTO small
    FROM pg_catalog.pg_partition_tree(tbl) AS t;
    -- A transaction that has written nothing yet: the call is most likely its only
    -- statement (a client in autocommit); one that has (a longer transaction) would hold
    -- the build's SHARE lock, and every writer, until it ends. A table this transaction
    -- created (it holds it ACCESS EXCLUSIVE) is nobody else's yet.
    alone := (pg_catalog.pg_current_xact_id_if_assigned() IS NULL
              AND pg_catalog.current_setting('pgmq.defer_index_builds', true)
                  IS DISTINCT FROM 'on')
             OR EXISTS (SELECT 1 FROM pg_catalog.pg_locks l
                        WHERE l.locktype = 'relation' AND l.relation = tbl::oid
                          AND l.pid = pg_catalog.pg_backend_pid()
                          AND l.mode = 'AccessExclusiveLock' AND l.granted);
    IF state IS NOT NULL THEN  -- left invalid by a failed build, or being built concurrently
        reason := 'an invalid or unfinished index of that name exists (a concurrent build failed '
                  'or is running)';
    ELSIF NOT small THEN
        reason := 'the queue''s table holds more than 1 MB (a plain build would hold its writers)';
    ELSIF NOT alone THEN
        reason := 'the call is inside a transaction that has written (a plain build would hold '
                  'the queue''s writers until it ends)';
    ELSE
        bound := pgmq._maintenance_lock_timeout();
        saved := pg_catalog.current_setting('lock_timeout');
        PERFORM pg_catalog.set_config('lock_timeout', bound, true);
        BEGIN
            EXECUTE pg_catalog.format('CREATE INDEX IF NOT EXISTS %I ON %s (%s)',
                                      wanted, tbl, pgmq._queue_index_columns(kind));
            reason := NULL;
        EXCEPTION
            WHEN lock_not_available THEN
                reason := pg_catalog.format('the queue''s table lock was not granted within %s '
                                            '(a transaction using the queue is open)', bound);
            WHEN insufficient_privilege THEN
                reason := 'the owner of this function does not own the queue''s table';
        END;
        PERFORM pg_catalog.set_config('lock_timeout', saved, true);
        IF reason IS NULL THEN
            DELETE FROM pgmq.queue_index_wanted w WHERE w.index_name = wanted;
            RETURN true;
        END IF;
    END IF;
    INSERT INTO pgmq.queue_index_wanted (index_name, queue_name, kind)
    VALUES (wanted, stored, kind)
    ON CONFLICT (index_name) DO NOTHING;
    RAISE NOTICE 'index pgmq.% of queue "%" deferred: %; it is built CONCURRENTLY by django-pgmq '
                 '(the manager, its commands and workers, manage.py pgmq_maintain), or run '
                 'each statement of pgmq.pending_indexes() outside a transaction block',
                 wanted, stored, reason;
    RETURN false;
END
$function$
;
COMMENT ON FUNCTION pgmq._want_queue_index(text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._want_queue_index(text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.acquire_queue_lock(queue_name text)
 RETURNS void
 LANGUAGE sql
AS $function$
    SELECT pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('pgmq.queue_' || pg_catalog.lower(queue_name)));
$function$
;
COMMENT ON FUNCTION pgmq.acquire_queue_lock(text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.acquire_queue_lock(text) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.bind_topic(pattern text, queue_name text)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    PERFORM pgmq._require_privilege('manage_queues'::text);
    PERFORM pgmq.validate_topic_pattern(pattern);
    PERFORM pgmq._check_topic_queue_arg(queue_name);
    INSERT INTO pgmq.topic_bindings (pattern, queue_name)
    VALUES (pattern, pgmq._existing_queue(queue_name, 'the queue'::text))
    ON CONFLICT ON CONSTRAINT topic_bindings_unique_pattern_queue DO NOTHING;
END
$function$
;
COMMENT ON FUNCTION pgmq.bind_topic(text,text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.bind_topic(text,text) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.celery_ack(queue text, msg_ids bigint[], archive boolean DEFAULT true)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
DECLARE
    settled integer;
BEGIN
    IF archive THEN
        SELECT pg_catalog.count(*) INTO settled FROM pgmq.archive(queue, msg_ids);
    ELSE
        SELECT pg_catalog.count(*) INTO settled FROM pgmq.delete(queue, msg_ids);
    END IF;
    RETURN settled;
END
$function$
;
COMMENT ON FUNCTION pgmq.celery_ack(text,bigint[],boolean) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.celery_ack(text,bigint[],boolean) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.celery_bind(exchange text, exchange_type text, routing_key text, queue text)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
#variable_conflict use_column
BEGIN
    PERFORM pgmq._require_app_role();
    INSERT INTO pgmq.celery_binding (exchange, exchange_type, routing_key, queue_name, key_regex)
    VALUES ($1, $2, $3, $4, CASE WHEN $2 = 'topic' THEN pgmq._celery_topic_regex($3) END)
    ON CONFLICT (exchange, queue_name, routing_key) DO UPDATE
    SET exchange_type = EXCLUDED.exchange_type, key_regex = EXCLUDED.key_regex;
END
$function$
;
COMMENT ON FUNCTION pgmq.celery_bind(text,text,text,text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.celery_bind(text,text,text,text) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.celery_cancel(queue text, session integer)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    PERFORM pgmq._require_app_role();
    IF pgmq._celery_own_session(session) OR NOT pgmq._celery_session_alive(session) THEN
        DELETE FROM pgmq.celery_consumer k
        WHERE k.queue_name::text = queue AND k.session_id = session;
    END IF;
    UPDATE pgmq.celery_queue c SET last_used_at = pg_catalog.now() WHERE c.queue_name::text = queue;
    PERFORM pg_catalog.set_config('lock_timeout', '2s', true);
    BEGIN
        RETURN pgmq._celery_drop_if_unused(queue);
    EXCEPTION WHEN lock_not_available THEN
        RETURN false;  -- busy: the periodic cleanup will drop it
    END;
END
$function$
;
COMMENT ON FUNCTION pgmq.celery_cancel(text,integer) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.celery_cancel(text,integer) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.celery_cleanup()
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
DECLARE
    q record;
    dropped integer;
BEGIN
    IF NOT pg_catalog.pg_try_advisory_xact_lock(pgmq._celery_lock_space(), 0) THEN
        RETURN 0;
    END IF;
    PERFORM pg_catalog.set_config('lock_timeout'::text, '1s'::text, true);
    dropped := pgmq._celery_cleanup_queues();
    FOR q IN
        SELECT c.queue_name::text AS queue_name, c.message_ttl FROM pgmq.celery_queue c
        WHERE c.message_ttl IS NOT NULL ORDER BY c.queue_name
    LOOP
        BEGIN
            EXECUTE pg_catalog.format('DELETE FROM pgmq.%I WHERE enqueued_at < pg_catalog.clock_timestamp() - $1',
                                      pgmq.format_table_name(q.queue_name, 'q'::text))
                USING q.message_ttl;
        EXCEPTION WHEN lock_not_available OR undefined_table THEN
            NULL;  -- busy, or dropped since the loop started
        END;
    END LOOP;
    RETURN dropped;
END
$function$
;
COMMENT ON FUNCTION pgmq.celery_cleanup() IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.celery_cleanup() TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.celery_consume(queue text, session integer)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    PERFORM pgmq._require_app_role();
    IF NOT pgmq._celery_own_session(session) THEN
        RAISE EXCEPTION 'Celery session % is not held by a connection of role %', session, SESSION_USER
            USING ERRCODE = 'PQ004', HINT = 'Open one with pgmq.celery_open_session().';
    END IF;
    INSERT INTO pgmq.celery_consumer (queue_name, session_id)
    SELECT c.queue_name, $2 FROM pgmq.celery_queue c WHERE c.queue_name::text = $1
    ON CONFLICT DO NOTHING;
    UPDATE pgmq.celery_queue c SET ever_consumed = true, last_used_at = pg_catalog.now()
    WHERE c.queue_name::text = $1;
END
$function$
;
COMMENT ON FUNCTION pgmq.celery_consume(text,integer) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.celery_consume(text,integer) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.celery_declare_queue(queue text, original_name text, durable boolean DEFAULT true, is_auto_delete boolean DEFAULT false, expires_ms bigint DEFAULT NULL::bigint, ttl_ms bigint DEFAULT NULL::bigint)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    created boolean := false;
BEGIN
    PERFORM pgmq._require_app_role();
    IF expires_ms IS NOT NULL AND expires_ms <= 0 OR ttl_ms IS NOT NULL AND ttl_ms < 0 THEN
        RAISE EXCEPTION 'queue "%": x-expires must be positive and x-message-ttl not negative',
            queue USING ERRCODE = 'PQ004';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pgmq.meta m WHERE m.queue_name::text = queue) THEN
        IF durable THEN
            PERFORM pgmq."create"(queue);
        ELSE
            PERFORM pgmq.create_unlogged(queue);
        END IF;
        created := true;
    END IF;
    INSERT INTO pgmq.celery_queue AS c (queue_name, celery_name, auto_delete, expires, message_ttl,
                                        created_by_celery)
    VALUES (queue, original_name, is_auto_delete,
            pg_catalog.make_interval(secs => expires_ms / 1000.0),
            pg_catalog.make_interval(secs => ttl_ms / 1000.0), created)
    ON CONFLICT (queue_name) DO UPDATE
    SET celery_name = EXCLUDED.celery_name,
        auto_delete = EXCLUDED.auto_delete,
        expires = EXCLUDED.expires,
        message_ttl = EXCLUDED.message_ttl,
        last_used_at = pg_catalog.now(),
        -- A redeclared auto-delete queue without live consumers starts afresh.
        ever_consumed = c.ever_consumed AND EXISTS (
            SELECT 1 FROM pgmq.celery_consumer k
            WHERE k.queue_name::text = c.queue_name::text AND pgmq._celery_session_alive(k.session_id));
END
$function$
;
COMMENT ON FUNCTION pgmq.celery_declare_queue(text,text,boolean,boolean,bigint,bigint) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.celery_declare_queue(text,text,boolean,boolean,bigint,bigint) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.celery_delete_exchange(exchange text)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    PERFORM pgmq._require_app_role();
    DELETE FROM pgmq.celery_binding b WHERE b.exchange = $1;
END
$function$
;
COMMENT ON FUNCTION pgmq.celery_delete_exchange(text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.celery_delete_exchange(text) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.celery_delete_queue(queue text)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    PERFORM pgmq._require_app_role();
    PERFORM pgmq.acquire_queue_lock(queue);
    IF NOT EXISTS (SELECT 1 FROM pgmq.celery_queue c
                   WHERE c.queue_name::text = queue AND c.created_by_celery) THEN
        RETURN NULL;
    END IF;
    RETURN pgmq.drop_queue(queue);
END
$function$
;
COMMENT ON FUNCTION pgmq.celery_delete_queue(text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.celery_delete_queue(text) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.celery_enable_priorities(queue text)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    PERFORM pgmq._require_app_role();
    IF (pgmq._queue_attributes(queue) -> 'priorities') = 'true'::jsonb THEN
        RETURN;
    END IF;
    PERFORM pgmq._apply_queue_attributes(
        queue, '{"priorities": true}'::jsonb,
        CASE WHEN EXISTS (SELECT 1 FROM pgmq.celery_queue c
                          WHERE c.queue_name::text = queue AND c.created_by_celery)
             THEN NULL ELSE 'manage_queues' END);
END
$function$
;
COMMENT ON FUNCTION pgmq.celery_enable_priorities(text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.celery_enable_priorities(text) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.celery_extend(queue text, msg_ids bigint[], vt integer)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
DECLARE
    extended integer;
BEGIN
    SELECT pg_catalog.count(*) INTO extended FROM pgmq.set_vt(queue, msg_ids, vt);
    RETURN extended;
END
$function$
;
COMMENT ON FUNCTION pgmq.celery_extend(text,bigint[],integer) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.celery_extend(text,bigint[],integer) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.celery_next_visible(queues text[])
 RETURNS timestamp with time zone
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
    queue text;
    earliest timestamptz;
    candidate timestamptz;
BEGIN
    FOREACH queue IN ARRAY queues LOOP
        CONTINUE WHEN NOT EXISTS (SELECT 1 FROM pgmq.meta m WHERE m.queue_name::text = queue);
        CONTINUE WHEN (pgmq._claim_filter(queue, coalesce(pgmq._queue_attributes(queue), '{}'::jsonb), 1,
                                          peek => true)).allowed = 0;
        BEGIN
            EXECUTE pg_catalog.format('SELECT pg_catalog.min(vt) FROM pgmq.%I', pgmq.format_table_name(queue, 'q'::text))
                INTO candidate;
            earliest := least(earliest, candidate);
        EXCEPTION WHEN undefined_table THEN
            NULL;  -- dropped just now
        END;
    END LOOP;
    RETURN earliest;
END
$function$
;
COMMENT ON FUNCTION pgmq.celery_next_visible(text[]) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.celery_next_visible(text[]) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.celery_open_session()
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
DECLARE
    sid integer;
BEGIN
    LOOP
        sid := pg_catalog.nextval('pgmq.celery_session_seq');
        -- After the sequence wraps, skip ids whose session is still alive.
        EXIT WHEN pg_catalog.pg_try_advisory_lock(pgmq._celery_lock_space(), sid);
    END LOOP;
    RETURN sid;
END
$function$
;
COMMENT ON FUNCTION pgmq.celery_open_session() IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.celery_open_session() TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.celery_release(queue text, msg_ids bigint[], notify boolean DEFAULT true)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
DECLARE
    released integer;
BEGIN
    SELECT pg_catalog.count(*) INTO released FROM pgmq.set_vt(queue, msg_ids, 0);
    IF released > 0 AND notify THEN
        PERFORM pg_catalog.pg_notify('pgmq.q_' || queue || '.INSERT', '');
    END IF;
    RETURN released;
END
$function$
;
COMMENT ON FUNCTION pgmq.celery_release(text,bigint[],boolean) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.celery_release(text,bigint[],boolean) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.celery_send(queue text, msg jsonb, headers jsonb DEFAULT NULL::jsonb, deliver_at timestamp with time zone DEFAULT NULL::timestamp with time zone, notify boolean DEFAULT true)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    sent bigint;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pgmq.meta m WHERE m.queue_name::text = queue) THEN
        RETURN NULL;
    END IF;
    SELECT pgmq.send(queue, msg, headers, deliver_at) INTO sent;
    IF notify THEN
        PERFORM pg_catalog.pg_notify('pgmq.q_' || queue || '.INSERT', '');
    END IF;
    RETURN sent;
END
$function$
;
COMMENT ON FUNCTION pgmq.celery_send(text,jsonb,jsonb,timestamp with time zone,boolean) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.celery_send(text,jsonb,jsonb,timestamp with time zone,boolean) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.celery_unbind(exchange text, routing_key text, queue text)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    PERFORM pgmq._require_app_role();
    DELETE FROM pgmq.celery_binding b
    WHERE b.exchange = $1 AND b.routing_key = $2 AND b.queue_name::text = $3;
END
$function$
;
COMMENT ON FUNCTION pgmq.celery_unbind(text,text,text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.celery_unbind(text,text,text) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.convert_archive_partitioned(table_name text, partition_interval text DEFAULT '10000'::text, retention_interval text DEFAULT '100000'::text, leading_partition integer DEFAULT 10)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    stored text;
    atable text := pgmq.format_table_name(table_name, 'a'::text);
    history text := pgmq._fit_name(atable, '_history'::text);
    index_name text := 'archived_at_idx_' || pg_catalog.lower(table_name);
    by_id boolean;
    acol text;
    pkey text;
    quiet text;
    newest numeric;
    cfg pgmq.partition_config;
BEGIN
    stored := pgmq._require_queue(table_name);
    PERFORM pgmq.acquire_queue_lock(stored);
    PERFORM pgmq._lock_queue_table(stored);  -- it alters the live table too (fillfactor)
    IF (SELECT c.relkind FROM pg_catalog.pg_class c WHERE c.oid = pg_catalog.to_regclass(pg_catalog.format('pgmq.%I', atable))) = 'p' THEN
        -- pgmq's own notice, its stray 's' included ("Table a_orderss is already partitioned").
        RAISE NOTICE 'Table %s is already partitioned', atable;
        RETURN;
    END IF;
    PERFORM pgmq._check_partition_args(
        partition_interval, retention_interval, leading_partition, 'leading_partition'::text);

    by_id := pgmq._partition_by_id(partition_interval);
    acol := CASE WHEN by_id THEN 'msg_id' ELSE 'archived_at' END;
    -- Free the names the new table takes: the table, its primary key and its index.
    EXECUTE pg_catalog.format('ALTER TABLE pgmq.%I RENAME TO %I', atable, history);
    SELECT k.conname INTO pkey FROM pg_catalog.pg_constraint k
    WHERE k.conrelid = pg_catalog.format('pgmq.%I', history)::regclass AND k.contype = 'p';
    IF pkey IS NOT NULL AND by_id THEN
        EXECUTE pg_catalog.format('ALTER TABLE pgmq.%I RENAME CONSTRAINT %I TO %I',
                       history, pkey, pgmq._fit_name(history, '_pkey'::text));
    ELSIF pkey IS NOT NULL THEN
        -- The new key is (msg_id, archived_at); attaching builds it on the old rows.
        EXECUTE pg_catalog.format('ALTER TABLE pgmq.%I DROP CONSTRAINT %I', history, pkey);
    END IF;
    EXECUTE pg_catalog.format('ALTER INDEX IF EXISTS pgmq.%I RENAME TO %I',
                   index_name, pgmq._fit_name(history, '_archived_at_idx'::text));
    quiet := pg_catalog.current_setting('client_min_messages');
    PERFORM pg_catalog.set_config('client_min_messages', 'warning', true);  -- "q_<name> already exists"
    PERFORM pgmq._create_queue_tables(stored, false, NULL, acol);
    PERFORM pg_catalog.set_config('client_min_messages', quiet, true);
    EXECUTE pg_catalog.format('CREATE TABLE pgmq.%I PARTITION OF pgmq.%I DEFAULT', atable || '_default', atable);

    EXECUTE pg_catalog.format(
        'SELECT pg_catalog.max(%s) FROM pgmq.%I',
        CASE WHEN by_id THEN pg_catalog.format('%I::numeric', acol) ELSE pg_catalog.format('extract(epoch FROM %I)', acol) END,
        history
    ) INTO newest;
    IF newest IS NULL THEN
        EXECUTE pg_catalog.format('DROP TABLE pgmq.%I', history);
    ELSE
        EXECUTE pg_catalog.format(
            'ALTER TABLE pgmq.%I ATTACH PARTITION pgmq.%I FOR VALUES FROM (MINVALUE) TO (%s)',
            atable, history,
            pgmq._partition_literal(by_id, pgmq._partition_next(
                by_id, partition_interval, pgmq._partition_floor(by_id, partition_interval, newest)))
        );
    END IF;

    INSERT INTO pgmq.partition_config AS c
        (table_name, queue_name, partition_column, partition_interval, retention_interval, premake)
    VALUES (atable, stored, acol, pg_catalog.btrim(partition_interval), pg_catalog.btrim(retention_interval), leading_partition)
    RETURNING c.* INTO cfg;
    PERFORM pgmq._maintain_table(cfg);
    PERFORM pgmq._grant_queue(stored);  -- the new archive table and its partitions
END
$function$
;
COMMENT ON FUNCTION pgmq.convert_archive_partitioned(text,text,text,integer) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.convert_archive_partitioned(text,text,text,integer) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.create_fifo_index(queue_name text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
    PERFORM pgmq._want_queue_index(queue_name, 'fifo'::text);
END
$function$
;
COMMENT ON FUNCTION pgmq.create_fifo_index(text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.create_fifo_index(text) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.create_partitioned(queue_name text, partition_interval text DEFAULT '10000'::text, retention_interval text DEFAULT '100000'::text, premake integer DEFAULT 4)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q'::text);
    atable text := pgmq.format_table_name(queue_name, 'a'::text);
    by_id boolean;
    existing pgmq.meta;
    cfg pgmq.partition_config;
BEGIN
    PERFORM pgmq._check_partition_args(partition_interval, retention_interval, premake, 'premake');
    -- An existing partitioned queue is recognised before the queue lock is taken, as
    -- pgmq._create_queue does (one lock order with drop_queue, docs/guide/roles.md).
    IF (pgmq._same_name_queue(queue_name)).is_partitioned THEN
        RETURN;
    END IF;
    PERFORM pgmq.acquire_queue_lock(queue_name);
    existing := pgmq._same_name_queue(queue_name);
    IF existing.queue_name IS NOT NULL THEN
        IF NOT existing.is_partitioned THEN
            RAISE EXCEPTION 'queue "%" already exists and is not partitioned', queue_name
                USING ERRCODE = 'PQ003',
                      HINT = 'Drop it first, or use another name.';
        END IF;
        RETURN;
    END IF;

    by_id := pgmq._partition_by_id(partition_interval);
    PERFORM pgmq._create_queue_tables(
        queue_name, false,
        CASE WHEN by_id THEN 'msg_id' ELSE 'enqueued_at' END,
        CASE WHEN by_id THEN 'msg_id' ELSE 'archived_at' END
    );
    EXECUTE pg_catalog.format('CREATE TABLE pgmq.%I PARTITION OF pgmq.%I DEFAULT', qtable || '_default', qtable);
    PERFORM pgmq._tune_live_table(qtable || '_default');
    EXECUTE pg_catalog.format('CREATE TABLE pgmq.%I PARTITION OF pgmq.%I DEFAULT', atable || '_default', atable);
    INSERT INTO pgmq.meta (queue_name, is_partitioned, is_unlogged) VALUES (queue_name, true, false);

    FOR cfg IN
        INSERT INTO pgmq.partition_config AS c
            (table_name, queue_name, partition_column, partition_interval, retention_interval, premake)
        VALUES
            (qtable, queue_name, CASE WHEN by_id THEN 'msg_id' ELSE 'enqueued_at' END,
             pg_catalog.btrim(partition_interval), pg_catalog.btrim(retention_interval), premake),
            (atable, queue_name, CASE WHEN by_id THEN 'msg_id' ELSE 'archived_at' END,
             pg_catalog.btrim(partition_interval), pg_catalog.btrim(retention_interval), premake)
        RETURNING c.*
    LOOP
        PERFORM pgmq._maintain_table(cfg);
    END LOOP;
    PERFORM pgmq._record_creator(queue_name);
    PERFORM pgmq._grant_queue(queue_name);  -- the default partitions too
END
$function$
;
COMMENT ON FUNCTION pgmq.create_partitioned(text,text,text,integer) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.create_partitioned(text,text,text,integer) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.create_schedule(schedule_name text, cron text, queue_name text, message jsonb DEFAULT '{}'::jsonb, headers jsonb DEFAULT NULL::jsonb, time_zone text DEFAULT 'UTC'::text, catch_up interval DEFAULT '00:10:00'::interval, enabled boolean DEFAULT true)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
#variable_conflict use_variable
DECLARE
    spec pgmq._cron_spec;
    stored text;
    first_tick timestamptz;
    last_sent timestamptz;
BEGIN
    IF schedule_name IS NULL OR pg_catalog.length(schedule_name) NOT BETWEEN 1 AND 200 THEN
        RAISE EXCEPTION 'schedule name must be 1 to 200 characters, got %',
            coalesce(pg_catalog.quote_literal(schedule_name), 'NULL') USING ERRCODE = 'PQ004';
    END IF;
    BEGIN
        spec := pgmq._cron_parse(cron::text);
    EXCEPTION WHEN SQLSTATE 'PQ004' THEN
        RAISE EXCEPTION 'schedule "%": %', schedule_name, SQLERRM USING ERRCODE = 'PQ004';
    END;
    PERFORM pgmq._check_time_zone(time_zone);
    SELECT m.queue_name INTO stored FROM pgmq.meta m WHERE pg_catalog.lower(m.queue_name::text) = pg_catalog.lower(queue_name);
    IF stored IS NULL THEN
        RAISE EXCEPTION 'schedule "%": queue "%" does not exist', schedule_name, queue_name
            USING ERRCODE = 'PQ002', HINT = 'Create it first with pgmq.create().';
    END IF;
    IF message IS NULL THEN
        RAISE EXCEPTION 'schedule "%": message must not be NULL', schedule_name USING ERRCODE = 'PQ004';
    END IF;
    IF headers IS NOT NULL AND pg_catalog.jsonb_typeof(headers) <> 'object' THEN
        RAISE EXCEPTION 'schedule "%": headers must be a JSON object or NULL, got %',
            schedule_name, pg_catalog.jsonb_typeof(headers) USING ERRCODE = 'PQ004';
    END IF;
    IF catch_up IS NULL OR catch_up < interval '0' THEN
        RAISE EXCEPTION 'schedule "%": catch_up must be an interval of 0 or more, got %',
            schedule_name, coalesce(catch_up::text, 'NULL') USING ERRCODE = 'PQ004';
    END IF;
    IF enabled IS NULL THEN
        RAISE EXCEPTION 'schedule "%": enabled must be true or false', schedule_name
            USING ERRCODE = 'PQ004';
    END IF;
    -- The same schedule again (a worker's start applies the settings' schedules): nothing
    -- to change, so no right needed; any change is policy (manage_queues).
    IF EXISTS (SELECT 1 FROM pgmq.schedules s
               WHERE s.schedule_name = schedule_name AND s.cron = cron
                 AND s.queue_name::text = stored AND s.message = message
                 AND s.headers IS NOT DISTINCT FROM headers AND s.time_zone = time_zone
                 AND s.catch_up = catch_up AND s.enabled = enabled) THEN
        RETURN;
    END IF;
    PERFORM pgmq._require_privilege('manage_queues'::text);
    SELECT pg_catalog.max(k.tick) INTO last_sent FROM pgmq.schedule_ticks k WHERE k.schedule_name = schedule_name;
    first_tick := pgmq._cron_next(spec, time_zone, greatest(pg_catalog.now(), last_sent));
    IF first_tick IS NULL THEN
        RAISE EXCEPTION 'schedule "%": cron "%" never fires', schedule_name, cron USING ERRCODE = 'PQ004';
    END IF;
    INSERT INTO pgmq.schedules AS s (schedule_name, cron, queue_name, message, headers,
                                     time_zone, catch_up, enabled, next_tick)
    VALUES (schedule_name, cron, stored, message, headers, time_zone, catch_up, enabled, first_tick)
    ON CONFLICT ON CONSTRAINT schedules_pkey DO UPDATE SET
        cron = EXCLUDED.cron,
        queue_name = EXCLUDED.queue_name,
        message = EXCLUDED.message,
        headers = EXCLUDED.headers,
        time_zone = EXCLUDED.time_zone,
        catch_up = EXCLUDED.catch_up,
        enabled = EXCLUDED.enabled,
        next_tick = CASE
            WHEN s.cron = EXCLUDED.cron AND s.time_zone = EXCLUDED.time_zone
                 AND s.enabled AND EXCLUDED.enabled THEN s.next_tick
            ELSE EXCLUDED.next_tick END,
        updated_at = pg_catalog.now();
END
$function$
;
COMMENT ON FUNCTION pgmq.create_schedule(text,text,text,jsonb,jsonb,text,interval,boolean) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.create_schedule(text,text,text,jsonb,jsonb,text,interval,boolean) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.disable_notify_insert(queue_name text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    stored text;
BEGIN
    PERFORM pgmq.acquire_queue_lock(queue_name);
    stored := pgmq._existing_queue(queue_name, 'it'::text);
    PERFORM pgmq._remove_notify_trigger(stored);
    DELETE FROM pgmq.notify_insert_throttle t WHERE t.queue_name::text = stored;
END
$function$
;
COMMENT ON FUNCTION pgmq.disable_notify_insert(text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.disable_notify_insert(text) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.drop_queue(queue_name text)
 RETURNS boolean
 LANGUAGE sql
AS $function$
    SELECT pgmq._drop_queue(queue_name);
$function$
;
COMMENT ON FUNCTION pgmq.drop_queue(text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.drop_queue(text) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.drop_schedule(schedule_name text)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    PERFORM pgmq._require_privilege('manage_queues'::text);
    DELETE FROM pgmq.schedules s WHERE s.schedule_name = drop_schedule.schedule_name;
    RETURN FOUND;
END
$function$
;
COMMENT ON FUNCTION pgmq.drop_schedule(text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.drop_schedule(text) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.enable_notify_insert(queue_name text, throttle_interval_ms integer DEFAULT 250)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    stored text;
BEGIN
    PERFORM pgmq._check_throttle(throttle_interval_ms);
    PERFORM pgmq.acquire_queue_lock(queue_name);
    stored := pgmq._existing_queue(queue_name, 'it'::text);
    INSERT INTO pgmq.notify_insert_throttle (queue_name, throttle_interval_ms)
    VALUES (stored, throttle_interval_ms)
    ON CONFLICT ON CONSTRAINT notify_insert_throttle_queue_name_key DO UPDATE
        SET throttle_interval_ms = excluded.throttle_interval_ms,
            last_notified_at = pg_catalog.to_timestamp(0);
    PERFORM pgmq._install_notify_trigger(stored);
END
$function$
;
COMMENT ON FUNCTION pgmq.enable_notify_insert(text,integer) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.enable_notify_insert(text,integer) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.enable_schedule(schedule_name text, enabled boolean)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    s pgmq.schedules;
BEGIN
    s := pgmq._require_schedule(schedule_name);
    IF enabled IS NULL THEN
        RAISE EXCEPTION 'schedule "%": enabled must be true or false', schedule_name
            USING ERRCODE = 'PQ004';
    END IF;
    IF s.enabled = enabled THEN
        RETURN;  -- no change: no right needed
    END IF;
    PERFORM pgmq._require_privilege('manage_queues'::text);
    UPDATE pgmq.schedules x
    SET enabled = enable_schedule.enabled,
        next_tick = CASE WHEN enable_schedule.enabled
            THEN coalesce(pgmq._cron_next(pgmq._cron_parse(x.cron), x.time_zone,
                                          greatest(pg_catalog.now(), (SELECT pg_catalog.max(k.tick) FROM pgmq.schedule_ticks k
                                                           WHERE k.schedule_name = x.schedule_name))),
                          x.next_tick)
            ELSE x.next_tick END,
        updated_at = pg_catalog.now()
    WHERE x.schedule_name = s.schedule_name;
END
$function$
;
COMMENT ON FUNCTION pgmq.enable_schedule(text,boolean) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.enable_schedule(text,boolean) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.enqueue_due_schedules(at timestamp with time zone DEFAULT now())
 RETURNS TABLE(schedule_name text, queue_name text, tick timestamp with time zone, msg_id bigint)
 LANGUAGE plpgsql
AS $function$
#variable_conflict use_column
DECLARE
    due record;
    sent bigint;
    failure text;
BEGIN
    IF enqueue_due_schedules.at IS NULL THEN
        RAISE EXCEPTION 'at must not be NULL' USING ERRCODE = 'PQ004';
    END IF;
    FOR due IN SELECT * FROM pgmq._schedule_claim_due(enqueue_due_schedules.at) LOOP
        sent := NULL;
        failure := NULL;
        BEGIN
            SELECT * INTO sent FROM pgmq.send(
                queue_name => due.queue_name::text,
                msg => due.message::jsonb,
                headers => (coalesce(due.headers, '{}'::jsonb) || pg_catalog.jsonb_build_object(
                    'schedule'::text,
                    pg_catalog.jsonb_build_object('name'::text, due.schedule_name::text,
                                                  'tick'::text, pgmq._iso_time(due.tick, due.time_zone::text)))
                           )::jsonb);
        EXCEPTION WHEN OTHERS THEN
            failure := SQLERRM;
        END;
        PERFORM pgmq._schedule_tick_done(due.schedule_name::text, due.tick, sent, failure);
        CONTINUE WHEN sent IS NULL;
        schedule_name := due.schedule_name;
        queue_name := due.queue_name::text;
        tick := due.tick;
        msg_id := sent;
        RETURN NEXT;
    END LOOP;
END
$function$
;
COMMENT ON FUNCTION pgmq.enqueue_due_schedules(timestamp with time zone) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.enqueue_due_schedules(timestamp with time zone) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.format_table_name(queue_name text, prefix text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$
    SELECT CASE
        WHEN pg_catalog.length(queue_name) <= 47 AND queue_name ~ '^[A-Za-z0-9_][A-Za-z0-9_-]*$'
             AND pg_catalog.strpos(queue_name, '--') = 0
        THEN pg_catalog.lower(prefix || '_' || queue_name)
        ELSE pgmq._invalid_queue_name(queue_name, prefix)
    END;
$function$
;
COMMENT ON FUNCTION pgmq.format_table_name(text,text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.format_table_name(text,text) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.grant_app_role(role name, create_queues boolean DEFAULT false, tables regclass[] DEFAULT '{}'::regclass[], manage_queues boolean DEFAULT false)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    tbl regclass;
    queue text;
BEGIN
    IF role IS NULL OR pg_catalog.to_regrole(pg_catalog.quote_ident(role::text)) IS NULL THEN
        RAISE EXCEPTION 'role "%" does not exist', role
            USING ERRCODE = 'PQ004', HINT = 'Create it first: CREATE ROLE ... LOGIN.';
    END IF;
    IF NOT pgmq._session_is_owner() THEN
        RAISE EXCEPTION 'permission denied: only the owner of schema pgmq grants application roles'
            USING ERRCODE = '42501';
    END IF;
    IF pg_catalog.pg_has_role(role, (SELECT n.nspowner FROM pg_catalog.pg_namespace n
                                     WHERE n.nspname = 'pgmq'::name), 'MEMBER'::text) THEN
        RAISE EXCEPTION 'role "%" is (a member of) the owner of schema pgmq: it needs no grant', role
            USING ERRCODE = 'PQ004',
                  HINT = 'Grant a role of its own to the application (CREATE ROLE ... LOGIN).';
    END IF;
    INSERT INTO pgmq.app_role AS a (role_name, create_queues, manage_queues)
    VALUES (role, coalesce($2, false), coalesce($4, false))
    ON CONFLICT (role_name) DO UPDATE
    SET create_queues = EXCLUDED.create_queues, manage_queues = EXCLUDED.manage_queues;

    EXECUTE pg_catalog.format('GRANT USAGE ON SCHEMA pgmq TO %I', role);
    EXECUTE pg_catalog.format('REVOKE CREATE ON SCHEMA pgmq FROM %I', role);
    EXECUTE pg_catalog.format('GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA pgmq TO %I', role);
    EXECUTE pg_catalog.format(
        'ALTER DEFAULT PRIVILEGES IN SCHEMA pgmq GRANT EXECUTE ON FUNCTIONS TO %I', role);
    -- an older version's rules for every table and sequence, present and future
    EXECUTE pg_catalog.format('ALTER DEFAULT PRIVILEGES IN SCHEMA pgmq REVOKE ALL ON TABLES FROM %I', role);
    EXECUTE pg_catalog.format('ALTER DEFAULT PRIVILEGES IN SCHEMA pgmq REVOKE ALL ON SEQUENCES FROM %I', role);
    EXECUTE pg_catalog.format('REVOKE ALL ON ALL TABLES IN SCHEMA pgmq FROM %I', role);
    EXECUTE pg_catalog.format('REVOKE ALL ON ALL SEQUENCES IN SCHEMA pgmq FROM %I', role);

    FOR tbl IN
        SELECT c.oid::regclass FROM pg_catalog.pg_class c
        WHERE c.relnamespace = 'pgmq'::regnamespace AND c.relkind IN ('r', 'p')
          AND NOT c.relispartition
          AND c.oid NOT IN ('pgmq.app_role'::regclass, 'pgmq.queue_creator'::regclass)
          AND NOT EXISTS (
              SELECT FROM pgmq.meta m
              WHERE c.relname IN (pgmq.format_table_name(m.queue_name::text, 'q'::text)::name,
                                  pgmq.format_table_name(m.queue_name::text, 'a'::text)::name))
          AND c.relname !~ '^spark_stage_[0-9a-f]{32}$'
        ORDER BY 1
    LOOP
        EXECUTE pg_catalog.format('GRANT SELECT ON TABLE %s TO %I', tbl, role);
    END LOOP;
    -- The Celery transport numbers its consumer sessions from this sequence
    -- (pgmq.celery_open_session runs as the caller): nextval only, no policy in it.
    EXECUTE pg_catalog.format('GRANT USAGE ON SEQUENCE pgmq.celery_session_seq TO %I', role);

    FOR queue IN SELECT m.queue_name::text FROM pgmq.meta m ORDER BY 1 LOOP
        PERFORM pgmq._grant_queue(queue, role);
    END LOOP;
    FOR i IN 1 .. coalesce(pg_catalog.cardinality(tables), 0) LOOP
        EXECUTE pg_catalog.format('GRANT SELECT, INSERT, UPDATE, DELETE ON %s TO %I', tables[i], role);
    END LOOP;
END
$function$
;
COMMENT ON FUNCTION pgmq.grant_app_role(name,boolean,regclass[],boolean) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.grant_app_role(name,boolean,regclass[],boolean) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.list_partitions(queue_name text)
 RETURNS TABLE(partitioned_table text, partition_name text, range_start text, range_end text, is_default boolean)
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
    stored text := pgmq._require_queue(queue_name);
BEGIN
    RETURN QUERY
        SELECT c.table_name, p.partition_name,
               pgmq._partition_bound(c.partition_column = 'msg_id', p.lo),
               pgmq._partition_bound(c.partition_column = 'msg_id', p.hi),
               p.is_default
        FROM pgmq.partition_config c
        CROSS JOIN LATERAL pgmq._partitions(c.table_name, c.partition_column = 'msg_id') p
        WHERE c.queue_name::text = stored
        ORDER BY c.table_name DESC, p.is_default, p.lo;
END
$function$
;
COMMENT ON FUNCTION pgmq.list_partitions(text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.list_partitions(text) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.list_schedules()
 RETURNS TABLE(schedule_name text, cron text, time_zone text, queue_name text, message jsonb, headers jsonb, catch_up interval, enabled boolean, last_tick timestamp with time zone, next_tick timestamp with time zone)
 LANGUAGE sql
 STABLE
AS $function$
    SELECT s.schedule_name, s.cron, s.time_zone, s.queue_name::text, s.message, s.headers,
           s.catch_up, s.enabled,
           (SELECT pg_catalog.max(k.tick) FROM pgmq.schedule_ticks k WHERE k.schedule_name = s.schedule_name),
           CASE WHEN s.enabled THEN s.next_tick END
    FROM pgmq.schedules s
    ORDER BY s.schedule_name
$function$
;
COMMENT ON FUNCTION pgmq.list_schedules() IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.list_schedules() TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.list_topic_bindings(queue_name text)
 RETURNS TABLE(pattern text, queue_name text, bound_at timestamp with time zone, compiled_regex text)
 LANGUAGE sql
 STABLE
AS $function$
    SELECT b.pattern, b.queue_name, b.bound_at, b.compiled_regex
    FROM pgmq.topic_bindings b
    WHERE pg_catalog.lower(b.queue_name::text) = pg_catalog.lower($1)
    ORDER BY b.bound_at DESC, b.pattern;
$function$
;
COMMENT ON FUNCTION pgmq.list_topic_bindings(text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.list_topic_bindings(text) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.maintain_partitions(queue_name text DEFAULT NULL::text)
 RETURNS TABLE(queue text, partitioned_table text, action text, partition_name text, range_start text, range_end text, rows_moved bigint)
 LANGUAGE plpgsql
AS $function$
DECLARE
    target text;
    stored text;
    bound text := pgmq._maintenance_lock_timeout();
    saved text := pg_catalog.current_setting('lock_timeout');
    locked boolean;
    cfg pgmq.partition_config;
BEGIN
    IF $1 IS NOT NULL THEN
        target := pgmq._require_queue($1);
        IF NOT EXISTS (SELECT 1 FROM pgmq.partition_config c WHERE c.queue_name::text = target) THEN
            RAISE EXCEPTION 'queue "%" is not partitioned: it has no partitions to maintain', $1
                USING ERRCODE = 'PQ004',
                      HINT = 'Create it with pgmq.create_partitioned(), or convert its archive '
                             'with pgmq.convert_archive_partitioned().';
        END IF;
    END IF;
    FOR stored IN
        SELECT DISTINCT c.queue_name::text FROM pgmq.partition_config c
        WHERE target IS NULL OR c.queue_name::text = target
        ORDER BY 1
    LOOP
        PERFORM pg_catalog.set_config('lock_timeout', bound, true);
        BEGIN
            PERFORM pgmq.acquire_queue_lock(stored);  -- kept by the transaction
            locked := true;
        EXCEPTION WHEN lock_not_available THEN
            locked := false;
        END;
        PERFORM pg_catalog.set_config('lock_timeout', saved, true);
        IF NOT locked THEN
            RAISE NOTICE 'queue "%" not maintained: another session holds its queue lock (maintenance, '
                         'or a create or drop not committed) for more than %; the next run tries again',
                         stored, bound;
            RETURN QUERY SELECT stored, NULL::text, 'queue skipped'::text, NULL::text, NULL::text,
                                NULL::text, NULL::bigint;
            CONTINUE;
        END IF;
        -- Read the configuration after the lock: a drop_queue may have just committed.
        FOR cfg IN
            SELECT * FROM pgmq.partition_config c WHERE c.queue_name::text = stored
            ORDER BY c.table_name DESC
        LOOP
            RETURN QUERY SELECT stored, cfg.table_name, m.* FROM pgmq._maintain_table(cfg) m;
        END LOOP;
    END LOOP;
END
$function$
;
COMMENT ON FUNCTION pgmq.maintain_partitions(text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.maintain_partitions(text) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.notify_queue_listeners()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
DECLARE
    queue text := coalesce(TG_ARGV[0], substring(TG_TABLE_NAME FROM 3));
    -- Transaction-local marker: the first row of a commit decides, the others skip.
    decided text := 'pgmq_notify.t' || TG_RELID;
    throttle integer;
    last_at timestamptz;
BEGIN
    IF pg_catalog.current_setting(decided, true) = 'yes' THEN
        RETURN NULL;
    END IF;
    PERFORM pg_catalog.set_config(decided, 'yes', true);

    SELECT t.throttle_interval_ms, t.last_notified_at INTO throttle, last_at
    FROM pgmq.notify_insert_throttle t
    WHERE t.queue_name::text = queue;

    -- Throttle 0 (or no row) notifies every commit without touching the row, so
    -- concurrent producers never queue up on its lock.
    IF coalesce(throttle, 0) > 0 THEN
        IF pg_catalog.clock_timestamp() - last_at < throttle * interval '1 millisecond' THEN
            RETURN NULL;
        END IF;
        -- Re-checked under the row lock: of two commits racing past the window, one
        -- notifies. The owner's helper writes the row (the inserting role may not).
        IF NOT pgmq._notify_throttle_pass(queue) THEN
            RETURN NULL;
        END IF;
    END IF;

    PERFORM pg_catalog.pg_notify('pgmq.q_' || queue || '.INSERT', NULL);
    RETURN NULL;
END
$function$
;
COMMENT ON FUNCTION pgmq.notify_queue_listeners() IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.notify_queue_listeners() TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.pending_indexes()
 RETURNS TABLE(queue_name text, index_name text, kind text, invalid boolean, drop_statement text, statement text)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    DELETE FROM pgmq.queue_index_wanted w
    WHERE NOT EXISTS (SELECT 1 FROM pgmq.meta m WHERE m.queue_name::text = w.queue_name::text)
       OR EXISTS (SELECT 1 FROM pg_catalog.pg_index i
                  WHERE i.indexrelid = pg_catalog.to_regclass(
                            pg_catalog.format('pgmq.%I', w.index_name))
                    AND i.indisvalid);
    RETURN QUERY
    SELECT w.queue_name, w.index_name, w.kind,
           pg_catalog.to_regclass(pg_catalog.format('pgmq.%I', w.index_name)) IS NOT NULL,
           pg_catalog.format('DROP INDEX CONCURRENTLY IF EXISTS pgmq.%I', w.index_name),
           pg_catalog.format('CREATE INDEX CONCURRENTLY IF NOT EXISTS %I ON pgmq.%I (%s)',
                             w.index_name, pgmq.format_table_name(w.queue_name, 'q'::text),
                             pgmq._queue_index_columns(w.kind))
    FROM pgmq.queue_index_wanted w
    ORDER BY w.wanted_at, w.index_name;
END
$function$
;
COMMENT ON FUNCTION pgmq.pending_indexes() IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.pending_indexes() TO PUBLIC;

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
            pgmq._queue_ops_kept_ready(qtable, 'p'), qty, NULL, NULL, NULL, pgmq._low_water_mark_for(qtable));
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

CREATE OR REPLACE FUNCTION pgmq.purge_queue(queue_name text)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q'::text);
    removed bigint;
BEGIN
    PERFORM pgmq._require_queue(queue_name);
    PERFORM pgmq._lock_queue_table(queue_name);  -- waits for an index build to give way
    -- Lock first so the count and the truncate see the same rows.
    EXECUTE pg_catalog.format('LOCK TABLE pgmq.%I IN ACCESS EXCLUSIVE MODE', qtable);
    EXECUTE pg_catalog.format('SELECT pg_catalog.count(*) FROM pgmq.%I', qtable) INTO removed;
    EXECUTE pg_catalog.format('TRUNCATE TABLE pgmq.%I', qtable);
    RETURN removed;
END
$function$
;
COMMENT ON FUNCTION pgmq.purge_queue(text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.purge_queue(text) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.queue_limits(queue_name text DEFAULT NULL::text)
 RETURNS TABLE(queue_name text, max_in_flight integer, in_flight integer, rate_count integer, rate_seconds double precision, handed_out integer, next_free_at timestamp with time zone)
 LANGUAGE sql
AS $function$
    SELECT m.queue_name::text, l.max_in_flight, l.in_flight,
           l.rate_count, l.rate_seconds, l.handed_out, l.next_free_at
    FROM pgmq.meta m
    JOIN pgmq.queue_limit_state s ON s.queue_name::text = pg_catalog.lower(m.queue_name::text)
    CROSS JOIN LATERAL pgmq._claim_limits(m.queue_name::text, NULL::integer, false, false) l
    WHERE $1 IS NULL OR pg_catalog.lower(m.queue_name::text) = pg_catalog.lower($1)
    ORDER BY m.queue_name;
$function$
;
COMMENT ON FUNCTION pgmq.queue_limits(text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.queue_limits(text) TO PUBLIC;

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
            pgmq._queue_ops_kept_ready(qtable, 'r'), qty, coalesce(vt, 0), NULL,
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

CREATE OR REPLACE FUNCTION pgmq.read_grouped(queue_name text, vt integer, qty integer)
 RETURNS SETOF pgmq.message_record
 LANGUAGE sql
AS $function$ SELECT * FROM pgmq._read_grouped(queue_name, vt, qty, 'fill'::text); $function$
;
COMMENT ON FUNCTION pgmq.read_grouped(text,integer,integer) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.read_grouped(text,integer,integer) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.read_grouped_head(queue_name text, vt integer, qty integer)
 RETURNS SETOF pgmq.message_record
 LANGUAGE sql
AS $function$ SELECT * FROM pgmq._read_grouped(queue_name, vt, qty, 'head'::text); $function$
;
COMMENT ON FUNCTION pgmq.read_grouped_head(text,integer,integer) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.read_grouped_head(text,integer,integer) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.read_grouped_head_with_poll(queue_name text, vt integer, qty integer, max_poll_seconds integer DEFAULT 5, poll_interval_ms integer DEFAULT 100)
 RETURNS SETOF pgmq.message_record
 LANGUAGE sql
AS $function$
    SELECT * FROM pgmq._read_grouped_poll(queue_name, vt, qty, max_poll_seconds, poll_interval_ms, 'head'::text);
$function$
;
COMMENT ON FUNCTION pgmq.read_grouped_head_with_poll(text,integer,integer,integer,integer) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.read_grouped_head_with_poll(text,integer,integer,integer,integer) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.read_grouped_rr(queue_name text, vt integer, qty integer)
 RETURNS SETOF pgmq.message_record
 LANGUAGE sql
AS $function$ SELECT * FROM pgmq._read_grouped(queue_name, vt, qty, 'rr'::text); $function$
;
COMMENT ON FUNCTION pgmq.read_grouped_rr(text,integer,integer) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.read_grouped_rr(text,integer,integer) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.read_grouped_rr_with_poll(queue_name text, vt integer, qty integer, max_poll_seconds integer DEFAULT 5, poll_interval_ms integer DEFAULT 100)
 RETURNS SETOF pgmq.message_record
 LANGUAGE sql
AS $function$
    SELECT * FROM pgmq._read_grouped_poll(queue_name, vt, qty, max_poll_seconds, poll_interval_ms, 'rr'::text);
$function$
;
COMMENT ON FUNCTION pgmq.read_grouped_rr_with_poll(text,integer,integer,integer,integer) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.read_grouped_rr_with_poll(text,integer,integer,integer,integer) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.read_grouped_with_poll(queue_name text, vt integer, qty integer, max_poll_seconds integer DEFAULT 5, poll_interval_ms integer DEFAULT 100)
 RETURNS SETOF pgmq.message_record
 LANGUAGE sql
AS $function$
    SELECT * FROM pgmq._read_grouped_poll(queue_name, vt, qty, max_poll_seconds, poll_interval_ms, 'fill'::text);
$function$
;
COMMENT ON FUNCTION pgmq.read_grouped_with_poll(text,integer,integer,integer,integer) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.read_grouped_with_poll(text,integer,integer,integer,integer) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.read_with_poll(queue_name text, vt integer, qty integer, max_poll_seconds integer DEFAULT 5, poll_interval_ms integer DEFAULT 100, conditional jsonb DEFAULT '{}'::jsonb)
 RETURNS SETOF pgmq.message_record
 LANGUAGE sql
AS $function$
    SELECT * FROM pgmq._poll(
        'read'::text,
        queue_name, vt, qty, conditional::text, max_poll_seconds, poll_interval_ms);
$function$
;
COMMENT ON FUNCTION pgmq.read_with_poll(text,integer,integer,integer,integer,jsonb) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.read_with_poll(text,integer,integer,integer,integer,jsonb) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.redrive(dead_letter_queue text, conditional jsonb DEFAULT '{}'::jsonb, max_messages integer DEFAULT NULL::integer)
 RETURNS TABLE(source_queue text, moved bigint, skipped bigint)
 LANGUAGE plpgsql
AS $function$
DECLARE
    dlq_table text := pgmq.format_table_name(pgmq._require_queue(dead_letter_queue), 'q'::text);
    source text;
    waiting bigint;
    target text;
    budget integer := max_messages;
BEGIN
    IF max_messages IS NOT NULL AND max_messages < 0 THEN
        RAISE EXCEPTION 'max_messages must be zero or more, got: %', max_messages
            USING ERRCODE = 'PQ004';
    END IF;
    FOR source, waiting IN EXECUTE pg_catalog.format(
        $q$
        SELECT m.headers -> 'dead_letter' ->> 'queue', pg_catalog.count(*) FROM pgmq.%I m
        WHERE pg_catalog.jsonb_typeof(m.headers -> 'dead_letter') = 'object'
          AND m.message @> coalesce($1, '{}'::jsonb)
        GROUP BY 1 ORDER BY 1
        $q$, dlq_table) USING conditional
    LOOP
        target := NULL;
        BEGIN
            target := pgmq._stored_queue_name(source);
        EXCEPTION WHEN SQLSTATE 'PQ001' THEN
            target := NULL;  -- not a valid queue name: reported below
        END;
        IF target IS NULL THEN
            RAISE NOTICE 'pgmq.redrive: % message(s) in "%" name queue % in their dead_letter '
                'header, which is not a valid queue name or does not exist; they stay',
                waiting, dead_letter_queue, coalesce(pg_catalog.format('"%s"', source), 'NULL');
            source_queue := source;
            moved := 0;
            skipped := waiting;
            RETURN NEXT;
            CONTINUE;
        END IF;
        CONTINUE WHEN budget IS NOT NULL AND budget <= 0;
        skipped := 0;
        source_queue := target;
        EXECUTE pg_catalog.format(
            $q$
            WITH picked AS (
                SELECT m.msg_id FROM pgmq.%1$I m
                WHERE m.headers -> 'dead_letter' ->> 'queue' = $1
                  AND m.message @> coalesce($2, '{}'::jsonb)
                ORDER BY m.msg_id
                LIMIT $3
                FOR UPDATE SKIP LOCKED
            ), gone AS (
                DELETE FROM pgmq.%1$I m WHERE m.msg_id IN (SELECT p.msg_id FROM picked p)
                RETURNING m.msg_id, m.message, m.headers
            ), back AS (
                INSERT INTO pgmq.%2$I (vt, message, headers)
                SELECT pg_catalog.clock_timestamp(), g.message, g.headers - 'dead_letter'
                FROM gone g ORDER BY g.msg_id
                RETURNING 1
            )
            SELECT pg_catalog.count(*) FROM back
            $q$,
            dlq_table, pgmq.format_table_name(source_queue, 'q'::text))
        INTO moved USING source, conditional, budget;
        budget := budget - moved;
        RETURN NEXT;
    END LOOP;
END
$function$
;
COMMENT ON FUNCTION pgmq.redrive(text,jsonb,integer) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.redrive(text,jsonb,integer) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.revoke_app_role(role name, tables regclass[] DEFAULT '{}'::regclass[])
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    IF role IS NULL OR pg_catalog.to_regrole(pg_catalog.quote_ident(role::text)) IS NULL THEN
        RAISE EXCEPTION 'role "%" does not exist', role USING ERRCODE = 'PQ004';
    END IF;
    IF NOT pgmq._session_is_owner() THEN
        RAISE EXCEPTION 'permission denied: only the owner of schema pgmq revokes application roles'
            USING ERRCODE = '42501';
    END IF;
    DELETE FROM pgmq.app_role a WHERE a.role_name = role;
    EXECUTE pg_catalog.format('ALTER DEFAULT PRIVILEGES IN SCHEMA pgmq REVOKE ALL ON FUNCTIONS FROM %I', role);
    EXECUTE pg_catalog.format('ALTER DEFAULT PRIVILEGES IN SCHEMA pgmq REVOKE ALL ON TABLES FROM %I', role);
    EXECUTE pg_catalog.format('ALTER DEFAULT PRIVILEGES IN SCHEMA pgmq REVOKE ALL ON SEQUENCES FROM %I', role);
    EXECUTE pg_catalog.format('REVOKE ALL ON ALL FUNCTIONS IN SCHEMA pgmq FROM %I', role);
    EXECUTE pg_catalog.format('REVOKE ALL ON ALL TABLES IN SCHEMA pgmq FROM %I', role);
    EXECUTE pg_catalog.format('REVOKE ALL ON ALL SEQUENCES IN SCHEMA pgmq FROM %I', role);
    EXECUTE pg_catalog.format('REVOKE ALL ON SCHEMA pgmq FROM %I', role);
    FOR i IN 1 .. coalesce(pg_catalog.cardinality(tables), 0) LOOP
        EXECUTE pg_catalog.format('REVOKE ALL ON %s FROM %I', tables[i], role);
    END LOOP;
END
$function$
;
COMMENT ON FUNCTION pgmq.revoke_app_role(name,regclass[]) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.revoke_app_role(name,regclass[]) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.run_schedule_now(schedule_name text)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    s pgmq.schedules := pgmq._require_schedule(schedule_name);
    sent bigint;
BEGIN
    SELECT * INTO sent FROM pgmq.send(
        queue_name => s.queue_name::text,
        msg => s.message,
        headers => coalesce(s.headers, '{}'::jsonb) || pg_catalog.jsonb_build_object('schedule', pg_catalog.jsonb_build_object(
            'name', s.schedule_name,
            'tick', pgmq._iso_time(pg_catalog.clock_timestamp(), s.time_zone),
            'manual', true)));
    RETURN sent;
END
$function$
;
COMMENT ON FUNCTION pgmq.run_schedule_now(text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.run_schedule_now(text) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.send(queue_name text, msg jsonb)
 RETURNS SETOF bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text := pgmq._message_table_name(queue_name, 'q'::text);
BEGIN
    IF NOT EXISTS (SELECT FROM pgmq.queue_attributes a WHERE pg_catalog.lower(a.queue_name::text) = pg_catalog.lower($1)) THEN
        RETURN QUERY EXECUTE pgmq._queue_ops_ids_sql(qtable, '1')
            USING NULL::"char", NULL::integer, NULL::integer, NULL::timestamptz, NULL::bigint[],
                  ARRAY[msg], ARRAY[NULL::jsonb], NULL::jsonb, 0::bigint;
        RETURN;
    END IF;
    RETURN QUERY SELECT * FROM pgmq._queue_ops_route_ids(
        queue_name, 's'::"char", NULL::timestamptz, NULL::bigint[], ARRAY[msg], ARRAY[NULL::jsonb]);
END
$function$
;
COMMENT ON FUNCTION pgmq.send(text,jsonb) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.send(text,jsonb) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.set_queue_attributes(queue_name text, attributes jsonb)
 RETURNS jsonb
 LANGUAGE sql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
    SELECT pgmq._apply_queue_attributes($1::text, $2::jsonb, 'manage_queues'::text);
$function$
;
COMMENT ON FUNCTION pgmq.set_queue_attributes(text,jsonb) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.set_queue_attributes(text,jsonb) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.set_schedule_origin(schedule_names text[], origin text)
 RETURNS SETOF text
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pgmq.schedules s
                   WHERE s.schedule_name = ANY ($1) AND s.origin IS DISTINCT FROM $2) THEN
        RETURN;
    END IF;
    PERFORM pgmq._require_privilege('manage_queues'::text);
    RETURN QUERY
        UPDATE pgmq.schedules s SET origin = $2
        WHERE s.schedule_name = ANY ($1) AND s.origin IS DISTINCT FROM $2
        RETURNING s.schedule_name;
END
$function$
;
COMMENT ON FUNCTION pgmq.set_schedule_origin(text[],text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.set_schedule_origin(text[],text) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.set_vt(queue_name text, msg_id bigint, vt integer)
 RETURNS SETOF pgmq.message_record
 LANGUAGE sql
AS $function$ SELECT * FROM pgmq.set_vt(queue_name, ARRAY[msg_id], pg_catalog.clock_timestamp() + pg_catalog.make_interval(secs => vt)); $function$
;
COMMENT ON FUNCTION pgmq.set_vt(text,bigint,integer) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.set_vt(text,bigint,integer) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.set_vt(queue_name text, msg_ids bigint[], vt integer)
 RETURNS SETOF pgmq.message_record
 LANGUAGE sql
AS $function$ SELECT * FROM pgmq.set_vt(queue_name, msg_ids, pg_catalog.clock_timestamp() + pg_catalog.make_interval(secs => vt)); $function$
;
COMMENT ON FUNCTION pgmq.set_vt(text,bigint[],integer) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.set_vt(text,bigint[],integer) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.spark_ack(queue_name text, consumer text, upto_batch bigint, mode text)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
DECLARE
    ids bigint[];
    batches integer;
BEGIN
    IF mode IS NULL OR mode NOT IN ('archive', 'delete', 'none') THEN
        RAISE EXCEPTION 'ack must be archive, delete or none, got %', coalesce(mode, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    PERFORM pgmq._spark_consumer_lock(queue_name, consumer);
    SELECT pg_catalog.array_agg(id), pg_catalog.count(DISTINCT b.batch) INTO ids, batches
    FROM pgmq.spark_stream_batch b, pg_catalog.unnest(b.msg_ids) AS id
    WHERE b.queue_name::text = $1 AND b.consumer = $2 AND b.batch <= upto_batch AND b.acked_at IS NULL;
    IF ids IS NULL THEN
        RETURN 0;
    END IF;
    IF mode = 'archive' THEN
        PERFORM pg_catalog.count(*) FROM pgmq.archive(queue_name, ids);
    ELSIF mode = 'delete' THEN
        PERFORM pg_catalog.count(*) FROM pgmq.delete(queue_name, ids);
    END IF;
    PERFORM pgmq._spark_batch_ack(queue_name::text, consumer::text, upto_batch::bigint);
    RETURN batches;
END
$function$
;
COMMENT ON FUNCTION pgmq.spark_ack(text,text,bigint,text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.spark_ack(text,text,bigint,text) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.spark_claim(queue_name text, consumer text, vt integer, qty integer, max_msg_id bigint, min_batch bigint)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q'::text);
    stamp timestamptz := pg_catalog.clock_timestamp();
    f record;
    held bigint[];
    ids bigint[];
    dead bigint[];
BEGIN
    PERFORM pgmq._require_queue(queue_name);
    IF vt IS NULL OR vt < 1 THEN
        RAISE EXCEPTION 'vt must be at least 1 second, got %', vt USING ERRCODE = 'PQ004';
    END IF;
    f := pgmq._claim_filter(queue_name, coalesce(pgmq._queue_attributes(queue_name), '{}'::jsonb), qty);
    IF f.allowed = 0 THEN
        RETURN NULL;
    END IF;
    -- Taken after the filter, which may have waited for a limited queue's state row: the
    -- claim's last_read_at then follows every earlier claim's (rate_limit's windows).
    stamp := pg_catalog.clock_timestamp();
    PERFORM pgmq._spark_consumer_lock(queue_name, consumer);
    SELECT coalesce(pg_catalog.array_agg(id), '{}') INTO held
    FROM pgmq.spark_stream_batch b, pg_catalog.unnest(b.msg_ids) AS id
    WHERE b.queue_name::text = $1 AND b.consumer = $2 AND b.acked_at IS NULL;

    -- $6: max_receive_count when the queue has a dead-letter queue, else NULL (none dead).
    -- Only deliverable messages are picked; the over-read ones the pick walked past (all
    -- of them when it found fewer than qty) are locked to be dead-lettered.
    EXECUTE pg_catalog.format(
        $q$
        WITH picked AS MATERIALIZED (
            SELECT msg_id FROM pgmq.%1$I
            WHERE vt <= $1 AND ($2::bigint IS NULL OR msg_id <= $2) AND msg_id <> ALL ($3)
              AND NOT coalesce(read_ct >= $6, false)
            ORDER BY %2$s
            LIMIT $4
            FOR UPDATE SKIP LOCKED
        ), over_read AS MATERIALIZED (
            SELECT msg_id FROM pgmq.%1$I
            WHERE $6 IS NOT NULL AND read_ct >= $6
              AND vt <= $1 AND ($2::bigint IS NULL OR msg_id <= $2) AND msg_id <> ALL ($3)
              AND ($4 IS NULL OR (SELECT pg_catalog.count(*) FROM picked) < $4
                   OR msg_id < (SELECT pg_catalog.max(p.msg_id) FROM picked p))
            ORDER BY msg_id
            LIMIT greatest($4, 100)
            FOR UPDATE SKIP LOCKED
        ), claimed AS (
            UPDATE pgmq.%1$I q
            SET vt = $1 + pg_catalog.make_interval(secs => $5), read_ct = q.read_ct + 1, last_read_at = $1
            WHERE q.msg_id = ANY(ARRAY(SELECT p.msg_id FROM picked p))
            RETURNING q.msg_id
        )
        SELECT (SELECT pg_catalog.array_agg(c.msg_id ORDER BY c.msg_id) FROM claimed c),
               (SELECT pg_catalog.array_agg(o.msg_id ORDER BY o.msg_id) FROM over_read o)
        $q$,
        qtable,
        CASE WHEN f.by_priority THEN 'pgmq._task_priority(headers) DESC, msg_id' ELSE 'msg_id' END
    ) INTO ids, dead
    USING stamp, max_msg_id, held, f.allowed, vt, f.max_receive_count;
    IF dead IS NOT NULL THEN
        PERFORM pgmq._dead_letter_ids(queue_name, dead, 0);
    END IF;
    IF f.held IS NOT NULL OR f.stamps IS NOT NULL THEN
        -- a limited queue only (as pgmq.read): an unlimited one has no state to record
        PERFORM pgmq._claim_record(queue_name, f.held, f.stamps, f.counts, ids);
    END IF;

    IF ids IS NULL THEN
        RETURN NULL;
    END IF;
    -- The owner's helper records the batch (application roles may not write the table).
    RETURN pgmq._spark_batch_record(queue_name::text, consumer::text, min_batch::bigint, ids, stamp);
END
$function$
;
COMMENT ON FUNCTION pgmq.spark_claim(text,text,integer,integer,bigint,bigint) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.spark_claim(text,text,integer,integer,bigint,bigint) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.spark_hold(queue_name text, consumer text, after_batch bigint, upto_batch bigint, vt integer)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    held bigint;
BEGIN
    PERFORM pgmq._require_queue(queue_name);
    EXECUTE pg_catalog.format(
        $q$
        WITH touched AS (
            UPDATE pgmq.%I q SET vt = pg_catalog.clock_timestamp() + pg_catalog.make_interval(secs => $5)
            FROM pgmq.spark_stream_batch b
            WHERE b.queue_name::text = $1 AND b.consumer = $2 AND b.batch > $3 AND b.batch <= $4
              AND b.acked_at IS NULL AND q.msg_id = ANY (b.msg_ids) AND q.last_read_at = b.claimed_at
            RETURNING 1
        )
        SELECT pg_catalog.count(*) FROM touched
        $q$,
        pgmq.format_table_name(queue_name, 'q'::text)
    ) INTO held USING queue_name, consumer, after_batch, upto_batch, vt;
    RETURN held;
END
$function$
;
COMMENT ON FUNCTION pgmq.spark_hold(text,text,bigint,bigint,integer) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.spark_hold(text,text,bigint,bigint,integer) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.spark_stage_abort(stage text)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    entry pgmq.spark_stage := pgmq._spark_stage_entry(stage);
BEGIN
    IF entry.stage_table IS NULL THEN
        RETURN false;
    END IF;
    PERFORM pgmq._spark_stage_finish(stage, NULL::bigint, true);
    RETURN true;
END
$function$
;
COMMENT ON FUNCTION pgmq.spark_stage_abort(text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.spark_stage_abort(text) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.spark_stage_commit(stage text, attempts bigint[], batch_id bigint DEFAULT NULL::bigint)
 RETURNS bigint
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    entry pgmq.spark_stage;
    moved bigint;
BEGIN
    entry := pgmq._spark_stage_lock(stage);
    IF entry.stage_table IS NULL THEN
        RAISE EXCEPTION 'staging table pgmq.% does not exist (already committed or dropped)', stage
            USING ERRCODE = 'PQ004';
    END IF;
    PERFORM pgmq._spark_stage_table(stage);
    IF entry.writer_id IS NOT NULL AND batch_id IS NOT NULL AND EXISTS (
        SELECT 1 FROM pgmq.spark_sink_batch k
        WHERE k.queue_name::text = entry.queue_name::text AND k.writer_id = entry.writer_id
          AND k.batch_id >= $3
    ) THEN
        PERFORM pgmq._spark_stage_finish(stage, NULL::bigint, false);
        RETURN -1;
    END IF;
    IF pgmq._spark_checked_send(entry.queue_name) THEN
        moved := pgmq._spark_send_staged(entry.queue_name, pg_catalog.format('pgmq.%I', stage)::regclass,
                                         coalesce(attempts, '{}'));
    ELSE
        EXECUTE pg_catalog.format(
            'INSERT INTO pgmq.%I (vt, message, headers) '
            'SELECT coalesce(vt, pg_catalog.clock_timestamp()), message, headers FROM pgmq.%I '
            'WHERE attempt = ANY ($1) ORDER BY part, seq',
            pgmq.format_table_name(entry.queue_name, 'q'::text), stage
        ) USING attempts;
        GET DIAGNOSTICS moved = ROW_COUNT;
    END IF;
    PERFORM pgmq._spark_stage_finish(stage, batch_id, true);
    RETURN moved;
END
$function$
;
COMMENT ON FUNCTION pgmq.spark_stage_commit(text,bigint[],bigint) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.spark_stage_commit(text,bigint[],bigint) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.spark_stage_create(queue_name text, writer_id text DEFAULT NULL::text)
 RETURNS text
 LANGUAGE sql
AS $function$
    SELECT pgmq._spark_stage_make($1::text, $2::text, CURRENT_USER::name);
$function$
;
COMMENT ON FUNCTION pgmq.spark_stage_create(text,text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.spark_stage_create(text,text) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.spark_stage_drop_stale(older_than interval)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    stale text;
    dropped integer := 0;
BEGIN
    PERFORM pgmq._require_app_role();
    IF older_than IS NULL OR older_than < interval '1 hour' THEN
        PERFORM pgmq._require_privilege('manage_queues'::text);
    END IF;
    FOR stale IN
        SELECT s.stage_table FROM pgmq.spark_stage s
        WHERE s.writer_id IS NULL AND s.created_at < pg_catalog.now() - older_than
        FOR UPDATE SKIP LOCKED
    LOOP
        BEGIN
            IF pgmq._spark_stage_table(stale, true) IS NOT NULL THEN
                EXECUTE pg_catalog.format('DROP TABLE pgmq.%I', stale);
                dropped := dropped + 1;
            END IF;
        EXCEPTION WHEN SQLSTATE 'PQ004' THEN
            -- Not a staging table: only the catalogue row goes, the table stays.
            RAISE WARNING 'pgmq.spark_stage_drop_stale: %; its row of pgmq.spark_stage is removed, '
                'the table is left alone', SQLERRM;
        END;
        DELETE FROM pgmq.spark_stage s WHERE s.stage_table = stale;
    END LOOP;
    RETURN dropped;
END
$function$
;
COMMENT ON FUNCTION pgmq.spark_stage_drop_stale(interval) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.spark_stage_drop_stale(interval) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.unbind_topic(pattern text, queue_name text)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    PERFORM pgmq._require_privilege('manage_queues'::text);
    IF pattern IS NULL OR pattern = '' THEN
        RAISE EXCEPTION 'pattern cannot be NULL or empty' USING ERRCODE = 'PQ004';
    END IF;
    PERFORM pgmq._check_topic_queue_arg(queue_name);
    DELETE FROM pgmq.topic_bindings b
    WHERE b.pattern = $1 AND pg_catalog.lower(b.queue_name::text) = pg_catalog.lower($2);
    RETURN FOUND;
END
$function$
;
COMMENT ON FUNCTION pgmq.unbind_topic(text,text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.unbind_topic(text,text) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.update_notify_insert(queue_name text, throttle_interval_ms integer)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    stored text;
BEGIN
    PERFORM pgmq._check_throttle(throttle_interval_ms);
    stored := pgmq._existing_queue(queue_name, 'the queue'::text);
    UPDATE pgmq.notify_insert_throttle t
    SET throttle_interval_ms = $2,
        last_notified_at = pg_catalog.to_timestamp(0)
    WHERE t.queue_name::text = stored;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'Queue "%" does not have notify_insert enabled. '
            'Enable it first using pgmq.enable_notify_insert()', queue_name
            USING ERRCODE = 'PQ004';
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq.update_notify_insert(text,integer) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.update_notify_insert(text,integer) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.validate_queue_name(queue_name text)
 RETURNS void
 LANGUAGE plpgsql
 IMMUTABLE PARALLEL SAFE
AS $function$
BEGIN
    IF queue_name IS NULL OR queue_name = '' THEN
        RAISE EXCEPTION 'queue name must not be empty' USING ERRCODE = 'PQ001';
    END IF;
    IF pg_catalog.length(queue_name) > 47 THEN
        RAISE EXCEPTION 'queue name is too long, maximum length is 47 characters: "%" has %',
            pg_catalog.left(queue_name, 57), pg_catalog.length(queue_name)
            USING ERRCODE = 'PQ001';
    END IF;
    IF queue_name ~ '[$;'']|--' THEN
        RAISE EXCEPTION 'queue name contains invalid characters: $, ;, --, or \'': "%"', queue_name
            USING ERRCODE = 'PQ001';
    END IF;
    IF queue_name !~ '^[A-Za-z0-9_][A-Za-z0-9_-]*$' THEN
        RAISE EXCEPTION 'queue name "%" is invalid: use ASCII letters, digits, ''_'' and ''-'' (not first)',
            queue_name
            USING ERRCODE = 'PQ001';
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq.validate_queue_name(text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.validate_queue_name(text) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.validate_routing_key(routing_key text)
 RETURNS boolean
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
BEGIN
    PERFORM pgmq._check_topic_text(
        'routing_key'::text, routing_key, 'a-zA-Z0-9._-'::text,
        'alphanumeric, dots, hyphens, and underscores are allowed'::text);
    RETURN true;
END
$function$
;
COMMENT ON FUNCTION pgmq.validate_routing_key(text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.validate_routing_key(text) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.validate_topic_pattern(pattern text)
 RETURNS boolean
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
BEGIN
    PERFORM pgmq._check_topic_text(
        'pattern'::text, pattern, 'a-zA-Z0-9._*#-'::text,
        'alphanumeric, dots, hyphens, underscores, *, and # are allowed'::text);
    IF pg_catalog.strpos(pattern, '**') > 0 THEN
        RAISE EXCEPTION 'pattern cannot contain consecutive stars (**). '
            'Use # for multi-segment matching. Got: %', pattern
            USING ERRCODE = 'PQ004';
    END IF;
    IF pg_catalog.strpos(pattern, '##') > 0 THEN
        RAISE EXCEPTION 'pattern cannot contain consecutive hashes (##). '
            'A single # already matches zero or more segments. Got: %', pattern
            USING ERRCODE = 'PQ004';
    END IF;
    IF pg_catalog.strpos(pattern, '*#') > 0 OR pg_catalog.strpos(pattern, '#*') > 0 THEN
        RAISE EXCEPTION 'pattern cannot contain adjacent wildcards (*# or #*). '
            'Separate wildcards with dots. Got: %', pattern
            USING ERRCODE = 'PQ004';
    END IF;
    RETURN true;
END
$function$
;
COMMENT ON FUNCTION pgmq.validate_topic_pattern(text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.validate_topic_pattern(text) TO PUBLIC;

CREATE INDEX queue_limit_slots_free ON pgmq.queue_limit_slots USING btree (queue_name, kind, t);

CREATE UNIQUE INDEX queue_limit_slots_key ON pgmq.queue_limit_slots USING btree (queue_name, kind, slot);

CREATE INDEX queue_limit_slots_msg ON pgmq.queue_limit_slots USING btree (queue_name, msg_id) WHERE (msg_id IS NOT NULL);

-- BY HAND (done above): index pgmq.app_role_pkey
-- BY HAND (done above): index pgmq.queue_creator_pkey
-- BY HAND (done above): table pgmq.app_role
-- BY HAND (done above): table pgmq.celery_queue
-- BY HAND (done above): table pgmq.queue_creator
-- BY HAND (done above): table pgmq.queue_limit_slots
-- BY HAND (done above): table pgmq.queue_limit_state
-- BY HAND (done above): table pgmq.spark_stage

-- 0046_figure_rows_by_name_and_one_channel
-- 0046_figure_rows_by_name_and_one_channel: figure rows by name and one channel spelling
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._claim_filter(text,jsonb,integer,boolean,boolean);
CREATE OR REPLACE FUNCTION pgmq._claim_filter(queue_name text, attrs jsonb, qty integer, pops boolean DEFAULT false, take_lock boolean DEFAULT true, OUT allowed integer, OUT max_receive_count integer, OUT dead_letter_queue text, OUT by_priority boolean, OUT held tid[], OUT stamps timestamp with time zone[], OUT counts tid[])
 RETURNS record
 LANGUAGE plpgsql
AS $function$
BEGIN
    allowed := CASE WHEN (attrs -> 'paused') = 'true'::jsonb THEN 0 ELSE qty END;
    max_receive_count := CASE WHEN attrs ? 'dead_letter_queue'
                              THEN (attrs ->> 'max_receive_count')::integer END;
    dead_letter_queue := attrs ->> 'dead_letter_queue';
    by_priority := coalesce((attrs -> 'priorities') = 'true'::jsonb, false);
    IF allowed IS DISTINCT FROM 0 AND (attrs ? 'max_in_flight' OR attrs ? 'rate_limit') THEN
        -- held: the max_in_flight slots taken for the claim; counts: the rate_limit
        -- tokens (their rows' ctids); stamps: '{}' when the queue has a rate limit
        -- (sql/26_limits.sql).
        SELECT l.allowed, l.slots,
               CASE WHEN l.tokens IS NOT NULL THEN '{}'::timestamptz[] END, l.tokens
        INTO allowed, held, stamps, counts
        FROM pgmq._claim_limits(queue_name, allowed, pops, take_lock) l;
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._claim_filter(text,jsonb,integer,boolean,boolean) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._claim_filter(text,jsonb,integer,boolean,boolean) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._dashboard_stats_of(names text[], exact_limit bigint DEFAULT 50000, max_receive_count jsonb DEFAULT '{}'::jsonb)
 RETURNS SETOF pgmq._dashboard_stats
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF exact_limit IS NULL OR exact_limit < 1 THEN
        RAISE EXCEPTION 'exact_limit must be a positive number of rows, got %', exact_limit
            USING ERRCODE = 'PQ004';
    END IF;
    -- Each row by column name (pgmq._dashboard_stats_row); the builder inlines and (r).*
    -- flattens, so the plan selects the plain columns.
    RETURN QUERY
    SELECT (r).* FROM (
        SELECT pgmq._dashboard_stats_row(
                   queue_name => f.queue_name,
                   queue_length => f.queue_length,
                   queue_visible_length => f.queue_visible_length,
                   in_flight_length => f.in_flight_length,
                   delayed_length => f.delayed_length,
                   oldest_msg_age_sec => f.oldest_msg_age_sec,
                   newest_msg_age_sec => f.newest_msg_age_sec,
                   oldest_visible_age_sec => f.oldest_visible_age_sec,
                   archive_size => a.archive_size,
                   archived_hour => a.archived_hour,
                   archived_day => a.archived_day,
                   poison_length => f.poison_length,
                   total_messages => f.total_messages,
                   estimated => f.estimated || a.estimated
               ) AS r, u.o
        FROM pg_catalog.unnest(names) WITH ORDINALITY AS u(n, o)
        -- The real time, not the transaction's start (see the top of 30_metrics.sql).
        JOIN pgmq._queue_figures(names, exact_limit, max_receive_count, pg_catalog.clock_timestamp()) f
            ON f.queue_name::text = u.n
        CROSS JOIN LATERAL pgmq._dashboard_archive_figures(f.queue_name::text, exact_limit, f.scrape_time) a
    ) s
    ORDER BY s.o;
END
$function$
;
COMMENT ON FUNCTION pgmq._dashboard_stats_of(text[],bigint,jsonb) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._dashboard_stats_of(text[],bigint,jsonb) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._dashboard_stats_row(queue_name text DEFAULT NULL::text, queue_length bigint DEFAULT NULL::bigint, queue_visible_length bigint DEFAULT NULL::bigint, in_flight_length bigint DEFAULT NULL::bigint, delayed_length bigint DEFAULT NULL::bigint, oldest_msg_age_sec integer DEFAULT NULL::integer, newest_msg_age_sec integer DEFAULT NULL::integer, oldest_visible_age_sec integer DEFAULT NULL::integer, archive_size bigint DEFAULT NULL::bigint, archived_hour bigint DEFAULT NULL::bigint, archived_day bigint DEFAULT NULL::bigint, poison_length bigint DEFAULT NULL::bigint, total_messages bigint DEFAULT NULL::bigint, estimated text[] DEFAULT NULL::text[])
 RETURNS pgmq._dashboard_stats
 LANGUAGE sql
 IMMUTABLE
AS $function$
    SELECT ROW(queue_name, queue_length, queue_visible_length, in_flight_length, delayed_length,
               oldest_msg_age_sec, newest_msg_age_sec, oldest_visible_age_sec, archive_size,
               archived_hour, archived_day, poison_length, total_messages,
               estimated)::pgmq._dashboard_stats
$function$
;
COMMENT ON FUNCTION pgmq._dashboard_stats_row(text,bigint,bigint,bigint,bigint,integer,integer,integer,bigint,bigint,bigint,bigint,bigint,text[]) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._dashboard_stats_row(text,bigint,bigint,bigint,bigint,integer,integer,integer,bigint,bigint,bigint,bigint,bigint,text[]) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._limit_channel(queue_name text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$ SELECT pgmq._queue_channel(queue_name, 'FREE'::text) $function$
;
COMMENT ON FUNCTION pgmq._limit_channel(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._limit_channel(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_channel(queue_name text, event text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$ SELECT 'pgmq.q_' || queue_name || '.' || event $function$
;
COMMENT ON FUNCTION pgmq._queue_channel(text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_channel(text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_figures(names text[], exact_limit bigint DEFAULT NULL::bigint, max_receive_count jsonb DEFAULT NULL::jsonb, at timestamp with time zone DEFAULT now())
 RETURNS SETOF pgmq.queue_figures
 LANGUAGE plpgsql
AS $function$
DECLARE
    bounded constant boolean := exact_limit IS NOT NULL;
    limits constant jsonb := coalesce(max_receive_count, '{}');
    answered pgmq.queue_figures[];
    part pgmq.queue_figures[];
    busy text[];
    tables text[];
    seqs oid[];
    idle_seqs oid[];
    totals bigint[];
    spills boolean[];
    caps integer[];
    chunk constant integer := 200;
    first integer := 1;
    upto integer;
BEGIN
    at := coalesce(at, pg_catalog.now());
    IF bounded AND exact_limit < 1 THEN
        RAISE EXCEPTION 'exact_limit must be a positive number of rows, got %', exact_limit
            USING ERRCODE = 'PQ004';
    END IF;
    IF bounded THEN
        names := ARRAY(SELECT m.queue_name::text FROM pg_catalog.unnest(names) AS u(n)
                       JOIN pgmq.meta m ON m.queue_name::text = u.n);
    END IF;
    -- One pass over the catalogue: the idle queues' rows (zeros and the sequence; the
    -- figures not named are NULL), and what the others need.
    SELECT coalesce(pg_catalog.array_agg(pgmq._queue_figures_row(
               queue_name => f.n, queue_length => 0::bigint,
               total_messages => CASE WHEN NOT bounded
                                      THEN coalesce(pg_catalog.pg_sequence_last_value(f.seq), 0) END,
               scrape_time => at, queue_visible_length => 0::bigint,
               in_flight_length => CASE WHEN bounded THEN 0::bigint END,
               delayed_length => CASE WHEN bounded THEN 0::bigint END,
               poison_length => CASE WHEN bounded AND limits ? f.n THEN 0::bigint END,
               estimated => '{}'::text[]
           ) ORDER BY f.o) FILTER (WHERE f.idle), '{}'),
           pg_catalog.array_agg(f.seq ORDER BY f.o) FILTER (WHERE f.idle),
           pg_catalog.array_agg(f.n ORDER BY f.o) FILTER (WHERE NOT f.idle),
           pg_catalog.array_agg(f.qtable ORDER BY f.o) FILTER (WHERE NOT f.idle),
           pg_catalog.array_agg(f.seq ORDER BY f.o) FILTER (WHERE NOT f.idle),
           pg_catalog.array_agg(f.spill ORDER BY f.o) FILTER (WHERE NOT f.idle),
           pg_catalog.array_agg((limits ->> f.n)::integer ORDER BY f.o) FILTER (WHERE NOT f.idle)
    INTO answered, idle_seqs, busy, tables, seqs, spills, caps
    FROM pgmq._metrics_facts(names) f
    WHERE NOT bounded OR f.qoid IS NOT NULL;
    IF bounded THEN  -- the idle queues' totals, by SELECT (see the top of this file)
        BEGIN
            totals := pgmq._queue_totals(idle_seqs);
        EXCEPTION WHEN undefined_table THEN
            -- An idle queue was dropped since its sequence was named: read them again
            -- (a dropped queue's total is NULL, its row left out below).
            totals := pgmq._queue_totals(idle_seqs);
        END;
        FOR i IN 1 .. coalesce(pg_catalog.cardinality(answered), 0) LOOP
            answered[i].total_messages := totals[i];
        END LOOP;
        answered := ARRAY(SELECT a FROM pg_catalog.unnest(answered) AS a WHERE a.total_messages IS NOT NULL);
    END IF;
    WHILE first <= coalesce(pg_catalog.cardinality(busy), 0) LOOP
        upto := least(first + chunk - 1, pg_catalog.cardinality(busy));
        IF NOT bounded THEN
            part := pgmq._queue_figures_chunk(busy[first:upto], tables[first:upto], seqs[first:upto],
                                              spills[first:upto], caps[first:upto], at, NULL);
        ELSE
            BEGIN
                part := pgmq._queue_figures_chunk(busy[first:upto], tables[first:upto],
                                                  seqs[first:upto], spills[first:upto],
                                                  caps[first:upto], at, exact_limit);
            EXCEPTION WHEN undefined_table THEN
                -- A queue of the chunk was dropped since the catalogue pass: the others
                -- one by one, the dropped one left out.
                part := '{}';
                FOR i IN first .. upto LOOP
                    BEGIN
                        part := part || pgmq._queue_figures_chunk(
                            ARRAY[busy[i]], ARRAY[tables[i]], ARRAY[seqs[i]], ARRAY[spills[i]],
                            ARRAY[caps[i]], at, exact_limit);
                    EXCEPTION WHEN undefined_table THEN
                        NULL;
                    END;
                END LOOP;
            END;
        END IF;
        answered := answered || part;
        first := first + chunk;
    END LOOP;
    RETURN QUERY SELECT * FROM pg_catalog.unnest(answered);
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_figures(text[],bigint,jsonb,timestamp with time zone) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_figures(text[],bigint,jsonb,timestamp with time zone) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_figures_counted(names text[], tables text[], seqs oid[], spills boolean[], caps integer[], at timestamp with time zone, bounded boolean)
 RETURNS SETOF pgmq.queue_figures
 LANGUAGE plpgsql
AS $function$
BEGIN
    -- Each row by column name (pgmq._queue_figures_row); the builder inlines and (r).*
    -- flattens, so the plan selects the plain columns.
    RETURN QUERY EXECUTE
        'SELECT (r).* FROM (SELECT pgmq._queue_figures_row('
        || 'queue_name => $1[b.i], queue_length => b.len, '
        || 'newest_msg_age_sec => extract(epoch FROM $5 - b.newest)::integer, '
        || 'oldest_msg_age_sec => extract(epoch FROM $5 - b.oldest)::integer, '
        || 'total_messages => '
        || CASE WHEN bounded THEN 'b.total' ELSE 'coalesce(pg_catalog.pg_sequence_last_value($2[b.i]), 0)' END
        || ', scrape_time => $5, queue_visible_length => b.visible, '
        || 'default_partition_length => CASE WHEN $3[b.i] THEN pgmq._default_partition_length($1[b.i]) END, '
        || 'in_flight_length => b.in_flight, delayed_length => b.len - b.visible - b.in_flight, '
        || 'oldest_visible_age_sec => extract(epoch FROM $5 - b.oldest_vt)::integer, '
        || 'poison_length => CASE WHEN $4[b.i] IS NOT NULL THEN b.poison END, '
        || 'estimated => ''{}''::text[]) AS r FROM ('
        || (SELECT pg_catalog.string_agg(pg_catalog.format('SELECT %s, pg_catalog.count(*), pg_catalog.max(enqueued_at), pg_catalog.min(enqueued_at), '
                                     'pg_catalog.count(*) FILTER (WHERE vt <= $5), %s FROM pgmq.%I',
                                     u.i,
                                     CASE WHEN bounded
                                          THEN pg_catalog.format('pg_catalog.count(*) FILTER (WHERE vt > $5 AND read_ct > 0), '
                                                      'pg_catalog.min(vt) FILTER (WHERE vt <= $5), '
                                                      'pg_catalog.count(*) FILTER (WHERE read_ct >= $4[%s]), %s',
                                                      u.i, pgmq._sequence_read_sql(seqs[u.i]))
                                          ELSE 'NULL::bigint, NULL::timestamptz, NULL::bigint, NULL::bigint' END,
                                     u.t), ' UNION ALL ')
            FROM pg_catalog.unnest(tables) WITH ORDINALITY AS u(t, i))
        || ') AS b(i, len, newest, oldest, visible, in_flight, oldest_vt, poison, total)) s'
    USING names, seqs, spills, caps, at;
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_figures_counted(text[],text[],oid[],boolean[],integer[],timestamp with time zone,boolean) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_figures_counted(text[],text[],oid[],boolean[],integer[],timestamp with time zone,boolean) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_figures_row(queue_name text DEFAULT NULL::text, queue_length bigint DEFAULT NULL::bigint, newest_msg_age_sec integer DEFAULT NULL::integer, oldest_msg_age_sec integer DEFAULT NULL::integer, total_messages bigint DEFAULT NULL::bigint, scrape_time timestamp with time zone DEFAULT NULL::timestamp with time zone, queue_visible_length bigint DEFAULT NULL::bigint, default_partition_length bigint DEFAULT NULL::bigint, in_flight_length bigint DEFAULT NULL::bigint, delayed_length bigint DEFAULT NULL::bigint, oldest_visible_age_sec integer DEFAULT NULL::integer, poison_length bigint DEFAULT NULL::bigint, estimated text[] DEFAULT NULL::text[])
 RETURNS pgmq.queue_figures
 LANGUAGE sql
 IMMUTABLE
AS $function$
    SELECT ROW(queue_name, queue_length, newest_msg_age_sec, oldest_msg_age_sec, total_messages,
               scrape_time, queue_visible_length, default_partition_length, in_flight_length,
               delayed_length, oldest_visible_age_sec, poison_length, estimated)::pgmq.queue_figures
$function$
;
COMMENT ON FUNCTION pgmq._queue_figures_row(text,bigint,integer,integer,bigint,timestamp with time zone,bigint,bigint,bigint,bigint,integer,bigint,text[]) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_figures_row(text,bigint,integer,integer,bigint,timestamp with time zone,bigint,bigint,bigint,bigint,integer,bigint,text[]) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_attr_sql(queue_name text, op "char", low text, attrs jsonb)
 RETURNS text
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q'::text);
    checks text := nullif(pgmq._send_checks_sql(attrs), '');
    gate text := 'TRUE';
    msg text := 'u.msg';
    vt text := 'coalesce($4, pg_catalog.clock_timestamp())';
    -- Only the ordering and redrive matter here: the limits are the caller's (no lock).
    f record := pgmq._claim_filter(queue_name, attrs - 'max_in_flight' - 'rate_limit', NULL);
    window_ text := (attrs ->> 'deduplication_window') || ' seconds';
    order_by text;
    pick text;
BEGIN
    IF op = 's' OR op = 'S' THEN
        IF checks IS NOT NULL THEN
            -- Valid messages pass an inline test; pgmq._checked_message raises the error
            -- that names what is wrong with the first of the others.
            gate := pg_catalog.format(
                '(SELECT pg_catalog.count(pgmq._checked_message(%L, u.msg, u.hdr, %s, %L, %L)) '
                'FROM unnest($6, $7) AS u(msg, hdr) WHERE (%s) IS NOT TRUE) >= 0',
                queue_name, coalesce(attrs ->> 'max_message_size', 'NULL'), f.by_priority,
                window_ IS NOT NULL AND (attrs ->> 'deduplication_window')::integer > 0, checks);
        END IF;
        IF coalesce((attrs ->> 'delivery_delay')::integer, 0) > 0 THEN
            vt := pg_catalog.format('coalesce($4, pg_catalog.clock_timestamp() + interval %L)',
                         (attrs ->> 'delivery_delay') || ' seconds');
        END IF;
        IF coalesce((attrs ->> 'deduplication_window')::integer, 0) = 0 THEN
            RETURN pg_catalog.format(
                $sql$
        INSERT INTO pgmq.%1$I AS q (vt, message, headers)
        SELECT %2$s, %3$s, u.hdr FROM unnest($6, $7) AS u(msg, hdr)
        WHERE %4$s
        RETURNING q.msg_id, NULL::integer, NULL::timestamptz, NULL::timestamptz,
                  NULL::timestamptz, NULL::jsonb, NULL::jsonb
                $sql$, qtable, vt, msg, gate);
        END IF;
        IF op = 'S' THEN
            -- The fast send: two plain inserts, the ids claimed in the order the statement
            -- below claims them (so no two batches, fast or not, wait on each other's ids
            -- crosswise). Any id already claimed, by an earlier send, a concurrent one
            -- (after its commit) or this batch itself, raises unique_violation, and the
            -- caller runs the statement below instead.
            RETURN pg_catalog.format(
                $sql$
        WITH m AS (
            INSERT INTO pgmq.%1$I AS q (vt, message, headers)
            SELECT %2$s, %3$s, u.hdr FROM unnest($6, $7) AS u(msg, hdr)
            WHERE %5$s
            RETURNING q.msg_id, q.headers ->> 'deduplication_id' AS dedup
        ), claimed AS (
            -- the owner's helper records the ids (pgmq._dedup_record)
            SELECT pgmq._dedup_record(%4$L::text,
                                      pg_catalog.array_agg(m.dedup ORDER BY m.dedup),
                                      pg_catalog.array_agg(m.msg_id ORDER BY m.dedup)) AS n
            FROM m WHERE m.dedup IS NOT NULL
        )
        SELECT (SELECT pg_catalog.array_agg(m.msg_id ORDER BY m.msg_id) FROM m) FROM claimed
                $sql$, qtable, vt, msg, pg_catalog.lower(queue_name), gate);
        END IF;
        -- Deduplication: a message takes a new msg_id only when it may be enqueued: it
        -- has no deduplication id, or it is its id's first in the batch and no send within
        -- the window holds that id (as this statement's snapshot sees it). Each such id is
        -- claimed in pgmq.queue_deduplication; a conflict (a concurrent sender waits there
        -- for the first one's commit) keeps the row of a send within the window, so only
        -- a claim that kept our new msg_id enqueues its message (the loser of that race
        -- is the one case where an id is used up without a message). Every message of the
        -- batch returns its id's msg_id.
        RETURN pg_catalog.format(
            $sql$
        WITH input AS MATERIALIZED (
            SELECT u.ord, %3$s AS msg, u.hdr, u.hdr ->> 'deduplication_id' AS dedup
            FROM unnest($6, $7) WITH ORDINALITY AS u(msg, hdr, ord)
            WHERE %7$s
        ),
        numbered AS MATERIALIZED (
            SELECT i.ord, i.msg, i.hdr, i.dedup,
                   CASE WHEN i.dedup IS NULL
                          OR (i.first AND NOT EXISTS (
                                SELECT 1 FROM pgmq.queue_deduplication d
                                WHERE d.queue_name::text = %5$L AND d.deduplication_id = i.dedup
                                  AND d.sent_at > pg_catalog.clock_timestamp() - interval %6$L))
                        THEN pg_catalog.nextval(%4$L::regclass) END AS new_id
            FROM (SELECT x.*, pg_catalog.row_number() OVER (PARTITION BY x.dedup ORDER BY x.ord) = 1 AS first
                  FROM input x) i
            ORDER BY i.ord
        ),
        claimed AS MATERIALIZED (
            -- the owner's helper claims the ids (pgmq._dedup_claim)
            SELECT c.deduplication_id, c.msg_id
            FROM (SELECT pg_catalog.array_agg(n.dedup ORDER BY n.dedup) AS dedups,
                         pg_catalog.array_agg(n.new_id ORDER BY n.dedup) AS ids
                  FROM numbered n WHERE n.dedup IS NOT NULL AND n.new_id IS NOT NULL) x,
                 pgmq._dedup_claim(%5$L::text, x.dedups, x.ids) c
        ),
        inserted AS (
            INSERT INTO pgmq.%1$I AS q (msg_id, vt, message, headers) OVERRIDING SYSTEM VALUE
            SELECT n.new_id, %2$s, n.msg, n.hdr
            FROM numbered n
            WHERE n.dedup IS NULL OR n.new_id IN (SELECT c.msg_id FROM claimed c)
            ORDER BY n.ord
            RETURNING q.msg_id
        )
        SELECT coalesce(c.msg_id,
                        (SELECT d.msg_id FROM pgmq.queue_deduplication d
                         WHERE d.queue_name::text = %5$L AND d.deduplication_id = n.dedup),
                        n.new_id),
               NULL::integer, NULL::timestamptz, NULL::timestamptz,
               NULL::timestamptz, NULL::jsonb, NULL::jsonb
        FROM numbered n
        LEFT JOIN claimed c ON c.deduplication_id = n.dedup
        ORDER BY n.ord
            $sql$,
            qtable, vt, msg,
            pg_catalog.pg_get_serial_sequence(pg_catalog.format('pgmq.%I', qtable), 'msg_id'),
            pg_catalog.lower(queue_name), window_, gate);
    END IF;

    IF op <> 'r' AND op <> 'p' THEN
        RETURN pgmq._queue_ops_sql(queue_name, op, low);
    END IF;
    IF NOT f.by_priority AND f.dead_letter_queue IS NULL THEN
        RETURN pgmq._queue_ops_sql(queue_name, op, low);
    END IF;

    order_by := CASE WHEN f.by_priority THEN 'pgmq._task_priority(%1$s.headers) DESC, %1$s.msg_id'
                     ELSE '%1$s.msg_id' END;
    -- Only messages that may still be delivered are picked, so redrive never uses up
    -- the qty; the over-read ones among those the pick walked past (all
    -- of them when it found fewer than qty) move to the dead-letter queue, at most
    -- max(qty, 100) per call.
    pick := pg_catalog.format(
        $pick$
            SELECT q.msg_id FROM pgmq.%I q
            WHERE q.msg_id >= %s AND q.vt <= pg_catalog.clock_timestamp()
              AND ($8 IS NULL OR $8 = '{}'::jsonb OR q.message @> $8)
              %s
            ORDER BY %s
            LIMIT $2
            FOR UPDATE SKIP LOCKED
        $pick$,
        qtable, low,
        CASE WHEN f.dead_letter_queue IS NULL THEN ''
             ELSE pg_catalog.format('AND q.read_ct < %s', f.max_receive_count) END,
        pg_catalog.format(order_by, 'q'));
    RETURN pg_catalog.format(
        $sql$
        WITH picked AS MATERIALIZED (%2$s),
        %3$s
        done AS (
            %4$s
            WHERE m.msg_id = ANY(ARRAY(SELECT p.msg_id FROM picked p))
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message, m.headers
        )
        SELECT * FROM done d ORDER BY %5$s
        $sql$,
        qtable, pick,
        CASE WHEN f.dead_letter_queue IS NULL THEN '' ELSE pg_catalog.format(
            $dead$
        dead AS (
            DELETE FROM pgmq.%1$I m
            WHERE m.msg_id = ANY(ARRAY(
                SELECT q.msg_id FROM pgmq.%1$I q
                WHERE q.msg_id >= %3$s AND q.vt <= pg_catalog.clock_timestamp()
                  AND ($8 IS NULL OR $8 = '{}'::jsonb OR q.message @> $8)
                  AND q.read_ct >= %2$s
                  AND ((SELECT pg_catalog.count(*) FROM picked) < $2
                       OR q.msg_id < (SELECT pg_catalog.max(p.msg_id) FROM picked p))
                ORDER BY q.msg_id
                LIMIT greatest($2, 100)
                FOR UPDATE SKIP LOCKED))
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.message, m.headers,
                      NULL::text AS error
        ),
            $dead$,
            qtable, f.max_receive_count, low)
            -- the name as stored, as the worker's dead letters write it, whatever the
            -- caller's spelling
            || pgmq._dead_letter_move_sql(pgmq._stored_queue_name(queue_name),
                                          f.dead_letter_queue) || ',' END,
        CASE WHEN op = 'r' THEN pg_catalog.format(
            $upd$
            UPDATE pgmq.%I m
            SET vt = pg_catalog.clock_timestamp() + pg_catalog.make_interval(secs => $3),
                read_ct = m.read_ct + 1,
                last_read_at = pg_catalog.clock_timestamp()
            $upd$, qtable)
        ELSE pg_catalog.format('DELETE FROM pgmq.%I m', qtable) END,
        pg_catalog.format(order_by, 'd'));
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_attr_sql(text,"char",text,jsonb) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_attr_sql(text,"char",text,jsonb) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._require_row_builder(builder regproc)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    columns text;
    arguments text;
    wanted_body text;
    body text;
BEGIN
    SELECT pg_catalog.string_agg(a.attname::text || ' ' || pg_catalog.format_type(a.atttypid, NULL::integer), ', '
                                 ORDER BY a.attnum),
           'SELECTROW(' || pg_catalog.string_agg(a.attname::text, ',' ORDER BY a.attnum) || ')::'
           || pg_catalog.format('%I.%I', n.nspname, t.typname)
    INTO columns, wanted_body
    FROM pg_catalog.pg_proc p
    JOIN pg_catalog.pg_type t ON t.oid = p.prorettype
    JOIN pg_catalog.pg_namespace n ON n.oid = t.typnamespace
    JOIN pg_catalog.pg_attribute a ON a.attrelid = t.typrelid AND a.attnum > 0 AND NOT a.attisdropped
    WHERE p.oid = builder
    GROUP BY n.nspname, t.typname;
    SELECT pg_catalog.string_agg(x.name || ' ' || pg_catalog.format_type(x.type, NULL::integer), ', ' ORDER BY x.i),
           pg_catalog.regexp_replace(pg_catalog.min(p.prosrc), '\s+', '', 'g')
    INTO arguments, body
    FROM pg_catalog.pg_proc p
    CROSS JOIN LATERAL ROWS FROM (pg_catalog.unnest(p.proargnames), pg_catalog.unnest(p.proargtypes::oid[]))
        WITH ORDINALITY AS x(name, type, i)
    WHERE p.oid = builder;
    IF arguments IS DISTINCT FROM columns THEN
        RAISE EXCEPTION '%: its arguments must be its result type''s columns in order (%), got (%)',
            builder, columns, arguments
            USING ERRCODE = 'PQ000';
    END IF;
    IF body IS DISTINCT FROM wanted_body THEN
        RAISE EXCEPTION '%: its body must be SELECT ROW(<its arguments in order>)::<its result type>', builder
            USING ERRCODE = 'PQ000';
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._require_row_builder(regproc) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._require_row_builder(regproc) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.celery_next_visible(queues text[])
 RETURNS timestamp with time zone
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
    queue text;
    earliest timestamptz;
    candidate timestamptz;
BEGIN
    FOREACH queue IN ARRAY queues LOOP
        CONTINUE WHEN NOT EXISTS (SELECT 1 FROM pgmq.meta m WHERE m.queue_name::text = queue);
        CONTINUE WHEN (pgmq._claim_filter(queue, coalesce(pgmq._queue_attributes(queue), '{}'::jsonb), 1,
                                          take_lock => false)).allowed = 0;
        BEGIN
            EXECUTE pg_catalog.format('SELECT pg_catalog.min(vt) FROM pgmq.%I', pgmq.format_table_name(queue, 'q'::text))
                INTO candidate;
            earliest := least(earliest, candidate);
        EXCEPTION WHEN undefined_table THEN
            NULL;  -- dropped just now
        END;
    END LOOP;
    RETURN earliest;
END
$function$
;
COMMENT ON FUNCTION pgmq.celery_next_visible(text[]) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.celery_next_visible(text[]) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.celery_release(queue text, msg_ids bigint[], notify boolean DEFAULT true)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
DECLARE
    released integer;
BEGIN
    SELECT pg_catalog.count(*) INTO released FROM pgmq.set_vt(queue, msg_ids, 0);
    IF released > 0 AND notify THEN
        PERFORM pg_catalog.pg_notify(pgmq._queue_channel(queue, 'INSERT'::text), '');
    END IF;
    RETURN released;
END
$function$
;
COMMENT ON FUNCTION pgmq.celery_release(text,bigint[],boolean) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.celery_release(text,bigint[],boolean) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.celery_send(queue text, msg jsonb, headers jsonb DEFAULT NULL::jsonb, deliver_at timestamp with time zone DEFAULT NULL::timestamp with time zone, notify boolean DEFAULT true)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    sent bigint;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pgmq.meta m WHERE m.queue_name::text = queue) THEN
        RETURN NULL;
    END IF;
    SELECT pgmq.send(queue, msg, headers, deliver_at) INTO sent;
    IF notify THEN
        PERFORM pg_catalog.pg_notify(pgmq._queue_channel(queue, 'INSERT'::text), '');
    END IF;
    RETURN sent;
END
$function$
;
COMMENT ON FUNCTION pgmq.celery_send(text,jsonb,jsonb,timestamp with time zone,boolean) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.celery_send(text,jsonb,jsonb,timestamp with time zone,boolean) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.notify_queue_listeners()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
DECLARE
    queue text := coalesce(TG_ARGV[0], substring(TG_TABLE_NAME FROM 3));
    -- Transaction-local marker: the first row of a commit decides, the others skip.
    decided text := 'pgmq_notify.t' || TG_RELID;
    throttle integer;
    last_at timestamptz;
BEGIN
    IF pg_catalog.current_setting(decided, true) = 'yes' THEN
        RETURN NULL;
    END IF;
    PERFORM pg_catalog.set_config(decided, 'yes', true);

    SELECT t.throttle_interval_ms, t.last_notified_at INTO throttle, last_at
    FROM pgmq.notify_insert_throttle t
    WHERE t.queue_name::text = queue;

    -- Throttle 0 (or no row) notifies every commit without touching the row, so
    -- concurrent producers never queue up on its lock.
    IF coalesce(throttle, 0) > 0 THEN
        IF pg_catalog.clock_timestamp() - last_at < throttle * interval '1 millisecond' THEN
            RETURN NULL;
        END IF;
        -- Re-checked under the row lock: of two commits racing past the window, one
        -- notifies. The owner's helper writes the row (the inserting role may not).
        IF NOT pgmq._notify_throttle_pass(queue) THEN
            RETURN NULL;
        END IF;
    END IF;

    PERFORM pg_catalog.pg_notify(pgmq._queue_channel(queue, 'INSERT'::text), NULL);
    RETURN NULL;
END
$function$
;
COMMENT ON FUNCTION pgmq.notify_queue_listeners() IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.notify_queue_listeners() TO PUBLIC;

