-- 0008_attributes_limits_schedules_tasks_workflows_and_roles: attributes limits schedules tasks workflows and roles
-- Frozen when written; never edit a released migration.
-- 0011_admin_bulk_actions_by_filter
-- 0011_admin_bulk_actions_by_filter: admin bulk actions by filter and the worker's record of failed attempts
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
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
    RETURN QUERY EXECUTE format(
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

CREATE OR REPLACE FUNCTION pgmq._dashboard_match_count(queue_name text, from_archive boolean DEFAULT false, min_read_ct integer DEFAULT NULL::integer, header_key text DEFAULT NULL::text, header_value text DEFAULT NULL::text, contains jsonb DEFAULT NULL::jsonb)
 RETURNS TABLE(matched bigint, last_id bigint)
 LANGUAGE plpgsql
AS $function$
BEGIN
    PERFORM pgmq._require_queue(queue_name);
    RETURN QUERY EXECUTE format(
        $q$
        SELECT count(*), max(t.msg_id)
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

CREATE OR REPLACE FUNCTION pgmq._retry_later(queue_name text, msg_id bigint, seconds double precision, error text, keep integer DEFAULT 20)
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
    EXECUTE format(
        $q$
        WITH free AS (
            SELECT msg_id FROM pgmq.%1$I WHERE msg_id = $1 FOR UPDATE SKIP LOCKED
        )
        UPDATE pgmq.%1$I m
        SET vt = clock_timestamp() + make_interval(secs => $2),
            headers = CASE
                WHEN m.headers IS NOT NULL AND jsonb_typeof(m.headers) <> 'object' THEN m.headers
                WHEN jsonb_typeof(coalesce(m.headers -> 'attempt_errors', '[]')) <> 'array'
                    THEN m.headers
                ELSE coalesce(m.headers, '{}') || jsonb_build_object('attempt_errors', (
                    SELECT coalesce(jsonb_agg(e.value ORDER BY e.n), '[]')
                    FROM jsonb_array_elements(
                        coalesce(m.headers -> 'attempt_errors', '[]') || jsonb_build_array(
                            jsonb_build_object(
                                'attempt', m.read_ct, 'at', clock_timestamp(), 'error', $3
                            )
                        )
                    ) WITH ORDINALITY AS e(value, n)
                    WHERE e.n > jsonb_array_length(coalesce(m.headers -> 'attempt_errors', '[]'))
                                + 1 - greatest($4, 1)
                ))
            END
        FROM free
        WHERE m.msg_id = free.msg_id
        RETURNING m.msg_id
        $q$,
        pgmq.format_table_name(pgmq._require_queue(queue_name), 'q')
    ) INTO done USING msg_id, seconds, error, keep;
    RETURN done;
END
$function$
;
COMMENT ON FUNCTION pgmq._retry_later(text,bigint,double precision,text,integer) IS NULL;


-- 0012_flat_cost_per_queue
-- 0012_flat_cost_per_queue: Flat cost per queue
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._queue_ops_missing(text);
DROP FUNCTION IF EXISTS pgmq._queue_ops_statement(text);
CREATE OR REPLACE FUNCTION pgmq._create_queue_tables(queue_name text, unlogged boolean, q_key text, a_key text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q');
    atable text := pgmq.format_table_name(queue_name, 'a');
BEGIN
    EXECUTE format(
        $ddl$
        CREATE %s TABLE IF NOT EXISTS pgmq.%I (
            msg_id bigint GENERATED ALWAYS AS IDENTITY,
            read_ct integer NOT NULL DEFAULT 0,
            enqueued_at timestamptz NOT NULL DEFAULT now(),
            last_read_at timestamptz,
            vt timestamptz NOT NULL,
            message jsonb,
            headers jsonb,
            PRIMARY KEY (%s)
        ) %s
        $ddl$,
        CASE WHEN unlogged THEN 'UNLOGGED' ELSE '' END, qtable,
        CASE WHEN coalesce(q_key, 'msg_id') = 'msg_id' THEN 'msg_id' ELSE format('msg_id, %I', q_key) END,
        CASE WHEN q_key IS NULL THEN '' ELSE format('PARTITION BY RANGE (%I)', q_key) END
    );
    IF q_key IS NULL THEN
        PERFORM pgmq._tune_live_table(qtable);
    END IF;

    EXECUTE format(
        $ddl$
        CREATE TABLE IF NOT EXISTS pgmq.%I (
            msg_id bigint NOT NULL,
            read_ct integer NOT NULL DEFAULT 0,
            enqueued_at timestamptz NOT NULL DEFAULT now(),
            last_read_at timestamptz,
            archived_at timestamptz NOT NULL DEFAULT now(),
            vt timestamptz NOT NULL,
            message jsonb,
            headers jsonb,
            PRIMARY KEY (%s)
        ) %s
        $ddl$,
        atable,
        CASE WHEN coalesce(a_key, 'msg_id') = 'msg_id' THEN 'msg_id' ELSE format('msg_id, %I', a_key) END,
        CASE WHEN a_key IS NULL THEN '' ELSE format('PARTITION BY RANGE (%I)', a_key) END
    );
    -- pgmq's index name; '<atable>_archived_at_idx' would pass 63 bytes for a 47-char name.
    EXECUTE format(
        'CREATE INDEX IF NOT EXISTS %I ON pgmq.%I (archived_at)',
        'archived_at_idx_' || lower(queue_name), atable
    );
END
$function$
;
COMMENT ON FUNCTION pgmq._create_queue_tables(text,boolean,text,text) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._drop_queue_ops(queue_name text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF to_regproc('pgmq.' || quote_ident(pgmq.format_table_name(queue_name, '_ops'))) IS NOT NULL THEN
        PERFORM pg_advisory_xact_lock(hashtext('pgmq.queue_ops_route'));
        EXECUTE format(
            'DROP FUNCTION pgmq.%I("char", integer, integer, timestamptz, bigint[], jsonb[], jsonb[], jsonb)',
            pgmq.format_table_name(queue_name, '_ops'));
        PERFORM pgmq._install_queue_route();
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._drop_queue_ops(text) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._install_queue_ops(queue_name text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
    EXECUTE format(
        $ddl$
CREATE OR REPLACE FUNCTION pgmq.%1$I(
    p_op "char", p_qty integer, p_secs integer, p_vt timestamptz, p_ids bigint[],
    p_msgs jsonb[], p_headers jsonb[], p_cond jsonb
)
RETURNS SETOF pgmq.message_record
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
SET enable_bitmapscan = off
AS $body$
-- Generated by pgmq._install_queue_ops for the tables pgmq.%2$I and its archive.
DECLARE
    mark text;
    low bigint;
BEGIN
    IF p_op = 'r' OR p_op = 'p' THEN
        -- The low-water mark (see sql/15_queue_ops.sql): "<table oid> <next look> <msg_id>";
        -- the table's oid tells a mark of a dropped queue from one of its namesake.
        mark := current_setting(%3$L, true);
        IF coalesce(split_part(mark, ' ', 1), '') <> %5$L
           OR split_part(mark, ' ', 2)::float8 < extract(epoch FROM clock_timestamp()) THEN
            low := coalesce(
                (SELECT q.msg_id FROM pgmq.%2$I q ORDER BY q.msg_id LIMIT 1),
                pg_sequence_last_value(%4$L::regclass),
                0);
            PERFORM set_config(%3$L, concat_ws(' ', %5$L,
                extract(epoch FROM clock_timestamp()) + 1, low), false);
        ELSE
            low := split_part(mark, ' ', 3)::bigint;
        END IF;
    END IF;
    IF p_op = 'r' THEN
        RETURN QUERY %6$s;
    ELSIF p_op = 's' THEN
        RETURN QUERY %7$s;
    ELSIF p_op = 'a' THEN
        RETURN QUERY %8$s;
    ELSIF p_op = 'd' THEN
        RETURN QUERY %9$s;
    ELSIF p_op = 'p' THEN
        RETURN QUERY %10$s;
    ELSIF p_op = 'v' THEN
        RETURN QUERY %11$s;
    ELSE
        RAISE EXCEPTION 'unknown queue operation: %%', p_op USING ERRCODE = 'PQ004';
    END IF;
END
$body$
        $ddl$,
        pgmq.format_table_name(queue_name, '_ops'),
        pgmq.format_table_name(queue_name, 'q'),
        'pgmq.low_' || replace(pgmq.format_table_name(queue_name, 'q'), '-', '$'),
        pg_get_serial_sequence(format('pgmq.%I', pgmq.format_table_name(queue_name, 'q')), 'msg_id'),
        to_regclass(format('pgmq.%I', pgmq.format_table_name(queue_name, 'q')))::oid::text,
        pgmq._queue_ops_sql(queue_name, 'r', 'low'),
        pgmq._queue_ops_sql(queue_name, 's'),
        pgmq._queue_ops_sql(queue_name, 'a'),
        pgmq._queue_ops_sql(queue_name, 'd'),
        pgmq._queue_ops_sql(queue_name, 'p', 'low'),
        pgmq._queue_ops_sql(queue_name, 'v')
    );
    PERFORM pgmq._install_queue_route();
END
$function$
;
COMMENT ON FUNCTION pgmq._install_queue_ops(text) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._install_queue_route()
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    names text[] := ARRAY(SELECT pgmq._queue_ops_hot_set());
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('pgmq.queue_ops_route'));
    EXECUTE format(
        $ddl$
CREATE OR REPLACE FUNCTION pgmq._queue_ops_hot(
    lname text, p_op "char", p_qty integer, p_secs integer, p_vt timestamptz,
    p_ids bigint[], p_msgs jsonb[], p_headers jsonb[], p_cond jsonb
)
RETURNS SETOF pgmq.message_record
LANGUAGE plpgsql
AS $body$
-- Written by pgmq._install_queue_route: %s hot queue(s).
BEGIN
%s
    RAISE EXCEPTION 'pgmq: %% is not a hot queue', lname USING ERRCODE = 'PQ004';
END
$body$
        $ddl$,
        cardinality(names), pgmq._queue_ops_branches(names));
    EXECUTE format(
        $ddl$
CREATE OR REPLACE FUNCTION pgmq._queue_ops_route(
    queue_name text, p_op "char", p_qty integer, p_secs integer, p_vt timestamptz,
    p_ids bigint[], p_msgs jsonb[], p_headers jsonb[], p_cond jsonb
)
RETURNS SETOF pgmq.message_record
LANGUAGE plpgsql
AS $body$
-- Written by pgmq._install_queue_route: the hot set is %1$s.
DECLARE
    lname text := lower(queue_name);
BEGIN
    IF lname = ANY (%1$L::text[])
       AND current_setting('pgmq.uses_q_' || replace(lname, '-', '$'), true)
           = pgmq._queue_ops_warmup()::text THEN
        RETURN QUERY SELECT * FROM pgmq._queue_ops_hot(
            lname, p_op, p_qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond);
        RETURN;
    END IF;
    RETURN QUERY EXECUTE pgmq._queue_ops_cold(queue_name, p_op)
        USING p_op, p_qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond;
END
$body$
        $ddl$,
        names);
END
$function$
;
COMMENT ON FUNCTION pgmq._install_queue_route() IS NULL;

CREATE OR REPLACE FUNCTION pgmq._metrics_query(names text[])
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    WITH queue AS (
        SELECT u.n, u.o, pgmq.format_table_name(u.n, 'q') AS qtable, c.oid AS qoid,
               c.relkind = 'r' AND pg_relation_size(c.oid) = 0 AS empty,
               -- partitioned with a default partition (45_partitions.sql)
               EXISTS (SELECT 1 FROM pg_partitioned_table p
                       WHERE p.partdefid <> 0 AND p.partrelid IN (c.oid, a.oid)) AS spill,
               (SELECT d.objid::regclass::text FROM pg_depend d
                WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass
                  AND d.refobjid = c.oid AND d.deptype IN ('a', 'i')
                  AND d.objid IN (SELECT s.seqrelid FROM pg_sequence s)) AS seq
        FROM unnest(names) WITH ORDINALITY AS u(n, o)
        LEFT JOIN pg_class c
            ON c.relnamespace = 'pgmq'::regnamespace AND c.relname = pgmq.format_table_name(u.n, 'q')
        LEFT JOIN pg_class a
            ON a.relnamespace = 'pgmq'::regnamespace AND a.relname = pgmq.format_table_name(u.n, 'a')
    )
    SELECT 'SELECT m.queue_name, m.queue_length, m.newest_msg_age_sec, m.oldest_msg_age_sec, '
      || 'm.total_messages, m.scrape_time, m.queue_visible_length, m.default_partition_length '
      || 'FROM (' || concat_ws(' UNION ALL ',
        (SELECT format(
             $q$
             SELECT u.n, 0::bigint, NULL::integer, NULL::integer,
                    coalesce(pg_sequence_last_value(u.seq::regclass), 0), now(), 0::bigint, NULL::bigint,
                    u.o
             FROM unnest(%L::text[], %L::text[], %L::integer[]) AS u(n, seq, o)
             $q$,
             array_agg(q.n), array_agg(q.seq), array_agg(q.o))
         FROM queue q WHERE q.empty AND NOT q.spill
         HAVING count(*) > 0),
        (SELECT string_agg(format(
             $q$
             SELECT
                 %1$L::text,
                 count(*),
                 extract(epoch FROM now() - max(enqueued_at))::integer,
                 extract(epoch FROM now() - min(enqueued_at))::integer,
                 coalesce(pg_sequence_last_value(%2$L::regclass), 0),
                 now(),
                 count(*) FILTER (WHERE vt <= now()),
                 %4$s,
                 %5$s
             FROM pgmq.%3$I
             $q$,
             q.n, q.seq, q.qtable,
             CASE WHEN q.spill THEN format('pgmq._default_partition_length(%L)', q.n)
                  ELSE 'NULL::bigint' END,
             q.o), ' UNION ALL ')
         FROM queue q WHERE q.qoid IS NULL OR NOT q.empty OR q.spill)
    ) || ') AS m(queue_name, queue_length, newest_msg_age_sec, oldest_msg_age_sec, '
      || 'total_messages, scrape_time, queue_visible_length, default_partition_length, o) '
      || 'ORDER BY m.o'
    FROM (SELECT 1) one;
$function$
;
COMMENT ON FUNCTION pgmq._metrics_query(text[]) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_cold(queue_name text, op "char")
 RETURNS text
 LANGUAGE plpgsql
AS $function$
DECLARE
    key text := pgmq._queue_ops_uses_key(queue_name);
    uses integer := coalesce(nullif(current_setting(key, true), ''), '0')::integer;
BEGIN
    IF uses < pgmq._queue_ops_warmup() THEN
        uses := uses + 1;
        PERFORM set_config(key, uses::text, false);
        IF uses = pgmq._queue_ops_warmup() THEN
            PERFORM pgmq._queue_ops_promote(queue_name);
        END IF;
    END IF;
    RETURN pgmq._queue_ops_sql(queue_name, op);
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_cold(text,"char") IS NULL;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_hot(lname text, p_op "char", p_qty integer, p_secs integer, p_vt timestamp with time zone, p_ids bigint[], p_msgs jsonb[], p_headers jsonb[], p_cond jsonb)
 RETURNS SETOF pgmq.message_record
 LANGUAGE plpgsql
AS $function$
-- Written by pgmq._install_queue_route: 0 hot queue(s).
BEGIN

    RAISE EXCEPTION 'pgmq: % is not a hot queue', lname USING ERRCODE = 'PQ004';
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_hot(text,"char",integer,integer,timestamp with time zone,bigint[],jsonb[],jsonb[],jsonb) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_hot_set()
 RETURNS SETOF text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT substr(p.proname, 6)
    FROM pg_proc p
    WHERE p.pronamespace = 'pgmq'::regnamespace AND p.proname LIKE '\_ops\_%'
      AND pg_get_function_identity_arguments(p.oid) = 'p_op "char", p_qty integer, '
          'p_secs integer, p_vt timestamp with time zone, p_ids bigint[], p_msgs jsonb[], '
          'p_headers jsonb[], p_cond jsonb'
    ORDER BY substr(p.proname, 6) COLLATE "C";
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_hot_set() IS NULL;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_promote(queue_name text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    room integer := coalesce(nullif(current_setting('pgmq.hot_queues', true), ''), '32')::integer;
BEGIN
    -- One test at a time: SQL does not promise to evaluate an OR's operands in order, and
    -- a lock taken by a test that did not decide would be held to the end of the transaction.
    IF room <= 0 THEN
        RETURN;
    END IF;
    IF to_regproc('pgmq.' || quote_ident(pgmq.format_table_name(queue_name, '_ops'))) IS NOT NULL THEN
        RETURN;
    END IF;
    IF (SELECT count(*) FROM pgmq._queue_ops_hot_set()) >= room THEN
        RETURN;
    END IF;
    IF NOT pg_try_advisory_xact_lock(hashtext('pgmq.queue_' || lower(queue_name))) THEN
        RETURN;
    END IF;
    IF NOT pg_try_advisory_xact_lock(hashtext('pgmq.queue_ops_route')) THEN
        RETURN;
    END IF;
    IF to_regclass('pgmq.' || quote_ident(pgmq.format_table_name(queue_name, 'q'))) IS NULL THEN
        RETURN;
    END IF;
    BEGIN
        PERFORM pgmq._install_queue_ops(queue_name);
    EXCEPTION WHEN insufficient_privilege THEN
        RAISE NOTICE 'pgmq: % may not create functions in schema pgmq; queue % stays on the cold path',
            current_user, queue_name;
    END;
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_promote(text) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_route(queue_name text, p_op "char", p_qty integer, p_secs integer, p_vt timestamp with time zone, p_ids bigint[], p_msgs jsonb[], p_headers jsonb[], p_cond jsonb)
 RETURNS SETOF pgmq.message_record
 LANGUAGE plpgsql
AS $function$
-- Written by pgmq._install_queue_route: the hot set is {}.
DECLARE
    lname text := lower(queue_name);
BEGIN
    IF lname = ANY ('{}'::text[])
       AND current_setting('pgmq.uses_q_' || replace(lname, '-', '$'), true)
           = pgmq._queue_ops_warmup()::text THEN
        RETURN QUERY SELECT * FROM pgmq._queue_ops_hot(
            lname, p_op, p_qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond);
        RETURN;
    END IF;
    RETURN QUERY EXECUTE pgmq._queue_ops_cold(queue_name, p_op)
        USING p_op, p_qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond;
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_route(text,"char",integer,integer,timestamp with time zone,bigint[],jsonb[],jsonb[],jsonb) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_sql(queue_name text, op "char", low text DEFAULT '0'::text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
    SELECT format(
        CASE op
        WHEN 'r' THEN $sql$
        WITH claimed AS (
            UPDATE pgmq.%1$I m
            SET vt = clock_timestamp() + make_interval(secs => $3),
                read_ct = m.read_ct + 1,
                last_read_at = clock_timestamp()
            WHERE m.msg_id = ANY(ARRAY(%3$s))
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message, m.headers
        )
        SELECT * FROM claimed c ORDER BY c.msg_id
        $sql$
        WHEN 'p' THEN $sql$
        WITH removed AS (
            DELETE FROM pgmq.%1$I m
            WHERE m.msg_id = ANY(ARRAY(%3$s))
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message, m.headers
        )
        SELECT * FROM removed r ORDER BY r.msg_id
        $sql$
        -- A function scan yields the arrays in order and the insert numbers rows as they
        -- come, so ids follow the array order; unnest pads a NULL headers array with NULLs.
        WHEN 's' THEN $sql$
        INSERT INTO pgmq.%1$I AS q (vt, message, headers)
        SELECT $4, u.msg, u.hdr FROM unnest($6, $7) AS u(msg, hdr)
        RETURNING q.msg_id, NULL::integer, NULL::timestamptz, NULL::timestamptz,
                  NULL::timestamptz, NULL::jsonb, NULL::jsonb
        $sql$
        WHEN 'a' THEN $sql$
        WITH moved AS (
            DELETE FROM pgmq.%1$I q WHERE q.msg_id = ANY($5)
            RETURNING q.msg_id, q.read_ct, q.enqueued_at, q.last_read_at, q.vt, q.message, q.headers
        )
        INSERT INTO pgmq.%2$I AS a (msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers)
        SELECT * FROM moved
        RETURNING a.msg_id, NULL::integer, NULL::timestamptz, NULL::timestamptz,
                  NULL::timestamptz, NULL::jsonb, NULL::jsonb
        $sql$
        WHEN 'd' THEN $sql$
        DELETE FROM pgmq.%1$I q WHERE q.msg_id = ANY($5)
        RETURNING q.msg_id, NULL::integer, NULL::timestamptz, NULL::timestamptz,
                  NULL::timestamptz, NULL::jsonb, NULL::jsonb
        $sql$
        WHEN 'v' THEN $sql$
        WITH moved AS (
            UPDATE pgmq.%1$I q SET vt = $4 WHERE q.msg_id = ANY($5)
            RETURNING q.msg_id, q.read_ct, q.enqueued_at, q.last_read_at, q.vt, q.message, q.headers
        )
        SELECT * FROM moved m ORDER BY m.msg_id
        $sql$
        END,
        pgmq.format_table_name(queue_name, 'q'),
        pgmq.format_table_name(queue_name, 'a'),
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
            pgmq.format_table_name(queue_name, 'q'), low));
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_sql(text,"char",text) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_uses_key(queue_name text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$
    SELECT 'pgmq.uses_' || replace(pgmq.format_table_name(queue_name, 'q'), '-', '$');
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_uses_key(text) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_warmup()
 RETURNS integer
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$ SELECT 3 $function$
;
COMMENT ON FUNCTION pgmq._queue_ops_warmup() IS NULL;

CREATE OR REPLACE FUNCTION pgmq.drop_queue(queue_name text)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q');
    atable text := pgmq.format_table_name(queue_name, 'a');
BEGIN
    PERFORM pgmq.acquire_queue_lock(queue_name);
    IF to_regclass(format('pgmq.%I', qtable)) IS NULL
       AND NOT EXISTS (SELECT 1 FROM pgmq.meta m WHERE lower(m.queue_name) = lower($1)) THEN
        RAISE NOTICE 'pgmq queue `%` does not exist', queue_name;
        RETURN false;
    END IF;
    EXECUTE format('DROP TABLE IF EXISTS pgmq.%I', qtable);
    EXECUTE format('DROP TABLE IF EXISTS pgmq.%I', atable);
    PERFORM pgmq._drop_queue_ops(queue_name);
    DELETE FROM pgmq.meta m WHERE lower(m.queue_name) = lower($1);
    RETURN true;
END
$function$
;
COMMENT ON FUNCTION pgmq.drop_queue(text) IS NULL;

CREATE OR REPLACE FUNCTION pgmq.metrics(queue_name text)
 RETURNS pgmq.metrics_result
 LANGUAGE plpgsql
AS $function$
DECLARE
    result pgmq.metrics_result;
BEGIN
    EXECUTE pgmq._metrics_query(ARRAY[pgmq._require_queue(queue_name)]) INTO result;
    RETURN result;
END
$function$
;
COMMENT ON FUNCTION pgmq.metrics(text) IS NULL;

CREATE OR REPLACE FUNCTION pgmq.metrics_all()
 RETURNS SETOF pgmq.metrics_result
 LANGUAGE plpgsql
AS $function$
DECLARE
    names text[] := ARRAY(SELECT m.queue_name FROM pgmq.meta m ORDER BY m.queue_name);
    chunk constant integer := 1000;
    first integer := 1;
BEGIN
    WHILE first <= coalesce(cardinality(names), 0) LOOP
        RETURN QUERY EXECUTE pgmq._metrics_query(names[first:first + chunk - 1]);
        first := first + chunk;
    END LOOP;
END
$function$
;
COMMENT ON FUNCTION pgmq.metrics_all() IS NULL;

-- Written by hand: queues made before this migration have access functions from the old
-- generator, one per queue; they are dropped, so every queue starts on the cold path and
-- the busy ones are promoted again as sessions use them. Then the router is written for
-- the (empty) hot set.
DO $drop$
DECLARE
    f regprocedure;
BEGIN
    FOR f IN
        SELECT p.oid::regprocedure FROM pg_proc p
        WHERE p.pronamespace = 'pgmq'::regnamespace AND p.proname LIKE '\_ops\_%'
    LOOP
        EXECUTE format('DROP FUNCTION %s', f);
    END LOOP;
END
$drop$;
SELECT pgmq._install_queue_route();

-- 0013_queue_attributes
-- 0013_queue_attributes: queue attributes
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
-- By hand: the two new tables (their constraints, index and trigger follow).
CREATE TABLE pgmq.queue_attributes (
    queue_name varchar NOT NULL,
    attributes jsonb NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE pgmq.queue_deduplication (
    queue_name text NOT NULL,
    deduplication_id text NOT NULL,
    msg_id bigint NOT NULL,
    sent_at timestamptz NOT NULL
);
ALTER TABLE pgmq.queue_attributes ADD CONSTRAINT queue_attributes_attributes_check CHECK ((jsonb_typeof(attributes) = 'object'::text));

ALTER TABLE pgmq.queue_attributes ADD CONSTRAINT queue_attributes_pkey PRIMARY KEY (queue_name);

ALTER TABLE pgmq.queue_attributes ADD CONSTRAINT queue_attributes_queue_name_fkey FOREIGN KEY (queue_name) REFERENCES pgmq.meta(queue_name) ON UPDATE CASCADE ON DELETE CASCADE;

ALTER TABLE pgmq.queue_deduplication ADD CONSTRAINT queue_deduplication_pkey PRIMARY KEY (queue_name, deduplication_id);

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
                  HINT = 'Known attributes: ' || (SELECT string_agg(r.key, ', ')
                                                  FROM pgmq._queue_attribute_rules() r) || '.';
    END IF;
    RAISE EXCEPTION 'queue "%": queue attribute "%" must be %, got %', queue_name, key, allowed, got
        USING ERRCODE = 'PQ004';
END
$function$
;
COMMENT ON FUNCTION pgmq._bad_queue_attribute(text,text,jsonb) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._check_queue_attributes(queue_name text, attrs jsonb)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    k text;
    v jsonb;
    ok boolean;
BEGIN
    FOR k, v IN SELECT e.key, e.value FROM jsonb_each(attrs) e ORDER BY e.key LOOP
        ok := CASE k
            WHEN 'delivery_delay' THEN pgmq._json_int_at_least(v, 0)
            WHEN 'deduplication_window' THEN pgmq._json_int_at_least(v, 0)
            WHEN 'max_receive_count' THEN pgmq._json_int_at_least(v, 1)
            WHEN 'message_retention' THEN pgmq._json_int_at_least(v, 1)
            WHEN 'archive_retention' THEN pgmq._json_int_at_least(v, 1)
            WHEN 'max_message_size' THEN pgmq._json_int_at_least(v, 1)
            WHEN 'priorities' THEN jsonb_typeof(v) = 'boolean'
            WHEN 'paused' THEN jsonb_typeof(v) = 'boolean'
            WHEN 'dead_letter_queue' THEN jsonb_typeof(v) = 'string'
            ELSE false
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
        size := octet_length(msg::text);
        IF size > max_size THEN
            RAISE EXCEPTION 'queue "%": message of % bytes is larger than the queue''s '
                'max_message_size of % bytes', queue_name, size, max_size
                USING ERRCODE = 'PQ004';
        END IF;
    END IF;
    IF jsonb_typeof(headers) = 'object' THEN
        v := headers -> 'priority';
        IF priorities AND v IS NOT NULL
           AND NOT (jsonb_typeof(v) = 'number' AND v::text ~ '^-?[0-9]{1,3}$'
                    AND abs(v::text::integer) <= 100) THEN
            RAISE EXCEPTION 'queue "%": header "priority" must be an integer from -100 to 100, got %',
                queue_name, v
                USING ERRCODE = 'PQ004';
        END IF;
        v := headers -> 'deduplication_id';
        IF dedup AND v IS NOT NULL
           AND NOT (jsonb_typeof(v) = 'string' AND char_length(v #>> '{}') BETWEEN 1 AND 128) THEN
            RAISE EXCEPTION 'queue "%": header "deduplication_id" must be a string of 1 to 128 '
                'characters, got %', queue_name, left(v::text, 200)
                USING ERRCODE = 'PQ004';
        END IF;
    END IF;
    RETURN msg;
END
$function$
;
COMMENT ON FUNCTION pgmq._checked_message(text,jsonb,jsonb,integer,boolean,boolean) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._dead_letter(queue_name text, msg_id bigint, dead_letter_queue text, error text DEFAULT NULL::text)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    source text := pgmq._require_queue(queue_name);
    v_read_ct integer;
    v_enqueued_at timestamptz;
    v_message jsonb;
    v_headers jsonb;
    new_id bigint;
BEGIN
    PERFORM pgmq.validate_queue_name(dead_letter_queue);
    IF lower(dead_letter_queue) = lower(source) THEN
        RAISE EXCEPTION 'queue "%" cannot be its own dead-letter queue', source
            USING ERRCODE = 'PQ004';
    END IF;
    EXECUTE format(
        'DELETE FROM pgmq.%I WHERE msg_id = $1 RETURNING read_ct, enqueued_at, message, headers',
        pgmq.format_table_name(source, 'q')
    ) INTO v_read_ct, v_enqueued_at, v_message, v_headers USING msg_id;
    IF v_enqueued_at IS NULL THEN
        RETURN NULL;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pgmq.meta m WHERE lower(m.queue_name) = lower(dead_letter_queue)) THEN
        PERFORM pgmq."create"(dead_letter_queue);
    END IF;
    -- The header a read past the queue's max_receive_count writes (sql/25_attributes.sql).
    SELECT s.id INTO new_id
    FROM pgmq.send(
        queue_name => dead_letter_queue,
        msg => v_message,
        headers => pgmq._dead_letter_headers(v_headers, source, msg_id, v_read_ct, v_enqueued_at, error),
        delay => 0
    ) AS s(id);
    RETURN new_id;
END
$function$
;
COMMENT ON FUNCTION pgmq._dead_letter(text,bigint,text,text) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._dead_letter_headers(headers jsonb, queue_name text, msg_id bigint, read_ct integer, enqueued_at timestamp with time zone, error text)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
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

CREATE OR REPLACE FUNCTION pgmq._dead_letter_ids(queue_name text, msg_ids bigint[], delivered integer DEFAULT 0)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    dlq text := pgmq._queue_attributes(queue_name) ->> 'dead_letter_queue';
    moved bigint;
BEGIN
    IF dlq IS NULL OR coalesce(cardinality(msg_ids), 0) = 0 THEN
        RETURN 0;
    END IF;
    PERFORM pgmq._ensure_dead_letter_queue(dlq);
    EXECUTE format(
        $q$
        WITH dead AS (
            DELETE FROM pgmq.%1$I m WHERE m.msg_id = ANY($1)
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.message, m.headers
        ), moved AS (
            INSERT INTO pgmq.%2$I (vt, message, headers)
            SELECT clock_timestamp(), x.message,
                   pgmq._dead_letter_headers(x.headers, %3$L, x.msg_id, x.read_ct - $2, x.enqueued_at, NULL)
            FROM dead x ORDER BY x.msg_id
            RETURNING 1
        )
        SELECT count(*) FROM moved
        $q$,
        pgmq.format_table_name(queue_name, 'q'), pgmq.format_table_name(dlq, 'q'),
        pgmq._stored_queue_name(queue_name)
    ) INTO moved USING msg_ids, coalesce(delivered, 0);
    RETURN moved;
END
$function$
;
COMMENT ON FUNCTION pgmq._dead_letter_ids(text,bigint[],integer) IS NULL;

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
    RETURN clock_timestamp() + make_interval(secs => delay);
END
$function$
;
COMMENT ON FUNCTION pgmq._delay_to_vt(integer) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._enforce_retention(only_queue text)
 RETURNS TABLE(queue text, expired bigint, archive_deleted bigint)
 LANGUAGE plpgsql
AS $function$
DECLARE
    batch_size constant integer := 5000;
    q record;
    n bigint;
BEGIN
    IF only_queue IS NOT NULL THEN
        PERFORM pgmq._require_queue(only_queue);
    END IF;
    FOR q IN
        SELECT a.queue_name::text AS name, a.attributes AS attrs
        FROM pgmq.queue_attributes a
        WHERE only_queue IS NULL OR lower(a.queue_name) = lower(only_queue)
        ORDER BY a.queue_name
    LOOP
        queue := q.name;
        expired := 0;
        archive_deleted := 0;
        IF q.attrs ? 'message_retention' THEN
            LOOP
                EXECUTE format(
                    $d$
                    DELETE FROM pgmq.%1$I m WHERE m.msg_id = ANY(ARRAY(
                        SELECT x.msg_id FROM pgmq.%1$I x
                        WHERE x.enqueued_at < clock_timestamp() - make_interval(secs => $1)
                        ORDER BY x.msg_id LIMIT $2 FOR UPDATE SKIP LOCKED))
                    $d$, pgmq.format_table_name(q.name, 'q'))
                USING (q.attrs ->> 'message_retention')::integer, batch_size;
                GET DIAGNOSTICS n = ROW_COUNT;
                expired := expired + n;
                EXIT WHEN n < batch_size;
            END LOOP;
        END IF;
        IF q.attrs ? 'archive_retention' THEN
            LOOP
                EXECUTE format(
                    $d$
                    DELETE FROM pgmq.%1$I a WHERE (a.msg_id, a.archived_at) IN (
                        SELECT x.msg_id, x.archived_at FROM pgmq.%1$I x
                        WHERE x.archived_at < clock_timestamp() - make_interval(secs => $1)
                        ORDER BY x.archived_at LIMIT $2 FOR UPDATE SKIP LOCKED)
                    $d$, pgmq.format_table_name(q.name, 'a'))
                USING (q.attrs ->> 'archive_retention')::integer, batch_size;
                GET DIAGNOSTICS n = ROW_COUNT;
                archive_deleted := archive_deleted + n;
                EXIT WHEN n < batch_size;
            END LOOP;
        END IF;
        IF coalesce((q.attrs ->> 'deduplication_window')::integer, 0) > 0 THEN
            DELETE FROM pgmq.queue_deduplication d
            WHERE d.queue_name = lower(q.name)
              AND d.sent_at < clock_timestamp()
                              - make_interval(secs => (q.attrs ->> 'deduplication_window')::integer);
        END IF;
        IF q.attrs ? 'message_retention' OR q.attrs ? 'archive_retention' THEN
            RETURN NEXT;
        END IF;
    END LOOP;
END
$function$
;
COMMENT ON FUNCTION pgmq._enforce_retention(text) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._ensure_dead_letter_queue(queue_name text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF to_regclass(format('pgmq.%I', pgmq.format_table_name(queue_name, 'q'))) IS NULL THEN
        PERFORM pgmq."create"(queue_name);
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._ensure_dead_letter_queue(text) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._forget_deduplication()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
    DELETE FROM pgmq.queue_deduplication d WHERE d.queue_name = lower(OLD.queue_name);
    RETURN OLD;
END
$function$
;
COMMENT ON FUNCTION pgmq._forget_deduplication() IS NULL;

CREATE OR REPLACE FUNCTION pgmq._install_queue_ops(queue_name text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
    EXECUTE format(
        $ddl$
CREATE OR REPLACE FUNCTION pgmq.%1$I(
    p_op "char", p_qty integer, p_secs integer, p_vt timestamptz, p_ids bigint[],
    p_msgs jsonb[], p_headers jsonb[], p_cond jsonb
)
RETURNS SETOF pgmq.message_record
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
SET enable_bitmapscan = off
AS $body$
-- Generated by pgmq._install_queue_ops for the tables pgmq.%2$I and its archive.
DECLARE
    mark text;
    low bigint;
BEGIN
    %12$s
    IF p_op = 'r' OR p_op = 'p' THEN
        -- The low-water mark (see sql/15_queue_ops.sql): "<table oid> <next look> <msg_id>";
        -- the table's oid tells a mark of a dropped queue from one of its namesake.
        mark := current_setting(%3$L, true);
        IF coalesce(split_part(mark, ' ', 1), '') <> %5$L
           OR split_part(mark, ' ', 2)::float8 < extract(epoch FROM clock_timestamp()) THEN
            low := coalesce(
                (SELECT q.msg_id FROM pgmq.%2$I q ORDER BY q.msg_id LIMIT 1),
                pg_sequence_last_value(%4$L::regclass),
                0);
            PERFORM set_config(%3$L, concat_ws(' ', %5$L,
                extract(epoch FROM clock_timestamp()) + 1, low), false);
        ELSE
            low := split_part(mark, ' ', 3)::bigint;
        END IF;
    END IF;
    IF p_op = 'r' THEN
        RETURN QUERY %6$s;
    ELSIF p_op = 's' THEN
        RETURN QUERY %7$s;
    ELSIF p_op = 'a' THEN
        RETURN QUERY %8$s;
    ELSIF p_op = 'd' THEN
        RETURN QUERY %9$s;
    ELSIF p_op = 'p' THEN
        RETURN QUERY %10$s;
    ELSIF p_op = 'v' THEN
        RETURN QUERY %11$s;
    ELSE
        RAISE EXCEPTION 'unknown queue operation: %%', p_op USING ERRCODE = 'PQ004';
    END IF;
END
$body$
        $ddl$,
        pgmq.format_table_name(queue_name, '_ops'),
        pgmq.format_table_name(queue_name, 'q'),
        'pgmq.low_' || replace(pgmq.format_table_name(queue_name, 'q'), '-', '$'),
        pg_get_serial_sequence(format('pgmq.%I', pgmq.format_table_name(queue_name, 'q')), 'msg_id'),
        to_regclass(format('pgmq.%I', pgmq.format_table_name(queue_name, 'q')))::oid::text,
        pgmq._queue_ops_text(queue_name, 'r', 'low'),
        pgmq._queue_ops_text(queue_name, 's'),
        pgmq._queue_ops_text(queue_name, 'a'),
        pgmq._queue_ops_text(queue_name, 'd'),
        pgmq._queue_ops_text(queue_name, 'p', 'low'),
        pgmq._queue_ops_text(queue_name, 'v'),
        pgmq._queue_ops_prologue(queue_name)
    );
    PERFORM pgmq._install_queue_route();
END
$function$
;
COMMENT ON FUNCTION pgmq._install_queue_ops(text) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._json_int_at_least(value jsonb, low integer)
 RETURNS boolean
 LANGUAGE sql
 IMMUTABLE
AS $function$
    SELECT jsonb_typeof(value) = 'number'
       AND value::text::numeric = trunc(value::text::numeric)
       AND value::text::numeric BETWEEN low AND 2147483647;
$function$
;
COMMENT ON FUNCTION pgmq._json_int_at_least(jsonb,integer) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._queue_attribute_rules()
 RETURNS TABLE(key text, allowed text)
 LANGUAGE sql
 IMMUTABLE
AS $function$
    VALUES
        ('delivery_delay', 'an integer number of seconds, 0 or more'),
        ('deduplication_window', 'an integer number of seconds, 0 (off) or more'),
        ('max_receive_count', 'an integer, 1 or more, set together with dead_letter_queue'),
        ('dead_letter_queue', 'the name of another queue, set together with max_receive_count'),
        ('message_retention', 'an integer number of seconds, 1 or more'),
        ('archive_retention', 'an integer number of seconds, 1 or more'),
        ('max_message_size', 'an integer number of bytes, 1 or more'),
        ('priorities', 'true or false'),
        ('paused', 'true or false')
$function$
;
COMMENT ON FUNCTION pgmq._queue_attribute_rules() IS NULL;

CREATE OR REPLACE FUNCTION pgmq._queue_attributes(queue_name text)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
AS $function$
    SELECT a.attributes FROM pgmq.queue_attributes a WHERE lower(a.queue_name) = lower($1);
$function$
;
COMMENT ON FUNCTION pgmq._queue_attributes(text) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_attr_sql(queue_name text, op "char", low text, attrs jsonb)
 RETURNS text
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q');
    checks boolean := attrs ? 'max_message_size' OR (attrs -> 'priorities') = 'true'::jsonb
                      OR coalesce((attrs ->> 'deduplication_window')::integer, 0) > 0;
    msg text := 'u.msg';
    vt text := 'coalesce($4, clock_timestamp())';
    prio boolean := (attrs -> 'priorities') = 'true'::jsonb;
    dlq text := attrs ->> 'dead_letter_queue';
    order_by text;
    pick text;
    deliver text;
BEGIN
    IF op = 's' THEN
        IF checks THEN
            -- Valid messages pass an inline test; pgmq._checked_message raises the error
            -- that names what is wrong with the others.
            msg := format('CASE WHEN %s THEN u.msg ELSE pgmq._checked_message(%L, u.msg, u.hdr, %s, %L, %L) END',
                          pgmq._send_checks_sql(attrs),
                          queue_name, coalesce(attrs ->> 'max_message_size', 'NULL'), prio,
                          coalesce((attrs ->> 'deduplication_window')::integer, 0) > 0);
        END IF;
        IF coalesce((attrs ->> 'delivery_delay')::integer, 0) > 0 THEN
            vt := format('coalesce($4, clock_timestamp() + interval %L)',
                         (attrs ->> 'delivery_delay') || ' seconds');
        END IF;
        IF coalesce((attrs ->> 'deduplication_window')::integer, 0) = 0 THEN
            RETURN format(
                $sql$
        INSERT INTO pgmq.%1$I AS q (vt, message, headers)
        SELECT %2$s, %3$s, u.hdr FROM unnest($6, $7) AS u(msg, hdr)
        RETURNING q.msg_id, NULL::integer, NULL::timestamptz, NULL::timestamptz,
                  NULL::timestamptz, NULL::jsonb, NULL::jsonb
                $sql$, qtable, vt, msg);
        END IF;
        -- Deduplication: every message takes a new msg_id (a duplicate's is never used);
        -- each id's first message in the batch claims the id in pgmq.queue_deduplication; a conflict (a concurrent sender
        -- waits there for the first one's commit) keeps the row of a send within the
        -- window, so only a claim that kept our new msg_id enqueues its message. Every
        -- message of the batch returns its id's msg_id.
        RETURN format(
            $sql$
        WITH input AS MATERIALIZED (
            SELECT u.ord, %3$s AS msg, u.hdr, u.hdr ->> 'deduplication_id' AS dedup,
                   nextval(%4$L::regclass) AS new_id
            FROM unnest($6, $7) WITH ORDINALITY AS u(msg, hdr, ord)
        ),
        claimed AS (
            INSERT INTO pgmq.queue_deduplication AS d (queue_name, deduplication_id, msg_id, sent_at)
            SELECT DISTINCT ON (i.dedup) %5$L, i.dedup, i.new_id, clock_timestamp()
            FROM input i WHERE i.dedup IS NOT NULL
            ORDER BY i.dedup, i.ord
            ON CONFLICT (queue_name, deduplication_id) DO UPDATE
            SET msg_id = CASE WHEN d.sent_at > clock_timestamp() - interval %6$L
                              THEN d.msg_id ELSE excluded.msg_id END,
                sent_at = CASE WHEN d.sent_at > clock_timestamp() - interval %6$L
                               THEN d.sent_at ELSE excluded.sent_at END
            RETURNING d.deduplication_id, d.msg_id
        ),
        inserted AS (
            INSERT INTO pgmq.%1$I AS q (msg_id, vt, message, headers) OVERRIDING SYSTEM VALUE
            SELECT i.new_id, %2$s, i.msg, i.hdr
            FROM input i
            WHERE i.dedup IS NULL OR i.new_id IN (SELECT c.msg_id FROM claimed c)
            ORDER BY i.ord
            RETURNING q.msg_id
        )
        SELECT coalesce(c.msg_id, i.new_id), NULL::integer, NULL::timestamptz, NULL::timestamptz,
               NULL::timestamptz, NULL::jsonb, NULL::jsonb
        FROM input i
        LEFT JOIN claimed c ON c.deduplication_id = i.dedup
        ORDER BY i.ord
            $sql$,
            qtable, vt, msg,
            pg_get_serial_sequence(format('pgmq.%I', qtable), 'msg_id'),
            lower(queue_name), (attrs ->> 'deduplication_window') || ' seconds');
    END IF;

    IF op <> 'r' AND op <> 'p' THEN
        RETURN pgmq._queue_ops_sql(queue_name, op, low);
    END IF;
    IF (attrs -> 'paused') = 'true'::jsonb THEN
        RETURN $sql$
        SELECT NULL::bigint, NULL::integer, NULL::timestamptz, NULL::timestamptz,
               NULL::timestamptz, NULL::jsonb, NULL::jsonb
        WHERE false
        $sql$;
    END IF;
    IF NOT prio AND dlq IS NULL THEN
        RETURN pgmq._queue_ops_sql(queue_name, op, low);
    END IF;

    order_by := CASE WHEN prio THEN 'pgmq._task_priority(%1$s.headers) DESC, %1$s.msg_id'
                     ELSE '%1$s.msg_id' END;
    pick := format(
        $pick$
            SELECT q.msg_id, q.read_ct FROM pgmq.%I q
            WHERE q.msg_id >= %s AND q.vt <= clock_timestamp()
              AND ($8 IS NULL OR $8 = '{}'::jsonb OR q.message @> $8)
            ORDER BY %s
            LIMIT $2
            FOR UPDATE SKIP LOCKED
        $pick$,
        qtable, low, format(order_by, 'q'));
    deliver := CASE WHEN dlq IS NULL THEN 'TRUE' ELSE 'p.read_ct < ' || (attrs ->> 'max_receive_count') END;
    RETURN format(
        $sql$
        WITH picked AS MATERIALIZED (%2$s),
        %3$s
        done AS (
            %4$s
            WHERE m.msg_id = ANY(ARRAY(SELECT p.msg_id FROM picked p WHERE %5$s))
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message, m.headers
        )
        SELECT * FROM done d ORDER BY %6$s
        $sql$,
        qtable, pick,
        CASE WHEN dlq IS NULL THEN '' ELSE format(
            $dead$
        dead AS (
            DELETE FROM pgmq.%1$I m
            WHERE m.msg_id = ANY(ARRAY(SELECT p.msg_id FROM picked p WHERE NOT (%3$s)))
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.message, m.headers
        ),
        moved AS (
            INSERT INTO pgmq.%2$I (vt, message, headers)
            SELECT clock_timestamp(), x.message,
                   pgmq._dead_letter_headers(x.headers, %4$L, x.msg_id, x.read_ct, x.enqueued_at, NULL)
            FROM dead x ORDER BY x.msg_id
        ),
            $dead$,
            qtable, pgmq.format_table_name(dlq, 'q'), deliver, queue_name) END,
        CASE WHEN op = 'r' THEN format(
            $upd$
            UPDATE pgmq.%I m
            SET vt = clock_timestamp() + make_interval(secs => $3),
                read_ct = m.read_ct + 1,
                last_read_at = clock_timestamp()
            $upd$, qtable)
        ELSE format('DELETE FROM pgmq.%I m', qtable) END,
        deliver,
        format(order_by, 'd'));
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_attr_sql(text,"char",text,jsonb) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_cold(queue_name text, op "char")
 RETURNS text
 LANGUAGE plpgsql
AS $function$
DECLARE
    key text := pgmq._queue_ops_uses_key(queue_name);
    uses integer := coalesce(nullif(current_setting(key, true), ''), '0')::integer;
BEGIN
    IF uses < pgmq._queue_ops_warmup() THEN
        uses := uses + 1;
        PERFORM set_config(key, uses::text, false);
        IF uses = pgmq._queue_ops_warmup() THEN
            PERFORM pgmq._queue_ops_promote(queue_name);
        END IF;
    END IF;
    RETURN pgmq._queue_ops_text(queue_name, op);
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_cold(text,"char") IS NULL;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_prologue(queue_name text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT CASE WHEN dlq IS NULL THEN '' ELSE format(
        'IF (p_op = ''r'' OR p_op = ''p'') THEN PERFORM pgmq._ensure_dead_letter_queue(%L); END IF;',
        dlq) END
    FROM (SELECT pgmq._queue_attributes(queue_name) ->> 'dead_letter_queue' AS dlq) a;
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_prologue(text) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_sql(queue_name text, op "char", low text DEFAULT '0'::text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
    SELECT format(
        CASE op
        WHEN 'r' THEN $sql$
        WITH claimed AS (
            UPDATE pgmq.%1$I m
            SET vt = clock_timestamp() + make_interval(secs => $3),
                read_ct = m.read_ct + 1,
                last_read_at = clock_timestamp()
            WHERE m.msg_id = ANY(ARRAY(%3$s))
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message, m.headers
        )
        SELECT * FROM claimed c ORDER BY c.msg_id
        $sql$
        WHEN 'p' THEN $sql$
        WITH removed AS (
            DELETE FROM pgmq.%1$I m
            WHERE m.msg_id = ANY(ARRAY(%3$s))
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message, m.headers
        )
        SELECT * FROM removed r ORDER BY r.msg_id
        $sql$
        -- A function scan yields the arrays in order and the insert numbers rows as they
        -- come, so ids follow the array order; unnest pads a NULL headers array with NULLs.
        WHEN 's' THEN $sql$
        INSERT INTO pgmq.%1$I AS q (vt, message, headers)
        SELECT coalesce($4, clock_timestamp()), u.msg, u.hdr FROM unnest($6, $7) AS u(msg, hdr)
        RETURNING q.msg_id, NULL::integer, NULL::timestamptz, NULL::timestamptz,
                  NULL::timestamptz, NULL::jsonb, NULL::jsonb
        $sql$
        WHEN 'a' THEN $sql$
        WITH moved AS (
            DELETE FROM pgmq.%1$I q WHERE q.msg_id = ANY($5)
            RETURNING q.msg_id, q.read_ct, q.enqueued_at, q.last_read_at, q.vt, q.message, q.headers
        )
        INSERT INTO pgmq.%2$I AS a (msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers)
        SELECT * FROM moved
        RETURNING a.msg_id, NULL::integer, NULL::timestamptz, NULL::timestamptz,
                  NULL::timestamptz, NULL::jsonb, NULL::jsonb
        $sql$
        WHEN 'd' THEN $sql$
        DELETE FROM pgmq.%1$I q WHERE q.msg_id = ANY($5)
        RETURNING q.msg_id, NULL::integer, NULL::timestamptz, NULL::timestamptz,
                  NULL::timestamptz, NULL::jsonb, NULL::jsonb
        $sql$
        WHEN 'v' THEN $sql$
        WITH moved AS (
            UPDATE pgmq.%1$I q SET vt = $4 WHERE q.msg_id = ANY($5)
            RETURNING q.msg_id, q.read_ct, q.enqueued_at, q.last_read_at, q.vt, q.message, q.headers
        )
        SELECT * FROM moved m ORDER BY m.msg_id
        $sql$
        END,
        pgmq.format_table_name(queue_name, 'q'),
        pgmq.format_table_name(queue_name, 'a'),
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
            pgmq.format_table_name(queue_name, 'q'), low));
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_sql(text,"char",text) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_text(queue_name text, op "char", low text DEFAULT '0'::text)
 RETURNS text
 LANGUAGE plpgsql
AS $function$
DECLARE
    attrs jsonb := pgmq._queue_attributes(queue_name);
BEGIN
    IF attrs IS NULL THEN
        RETURN pgmq._queue_ops_sql(queue_name, op, low);
    END IF;
    IF (op = 'r' OR op = 'p') AND attrs ? 'dead_letter_queue' THEN
        PERFORM pgmq._ensure_dead_letter_queue(attrs ->> 'dead_letter_queue');
    END IF;
    RETURN pgmq._queue_ops_attr_sql(queue_name, op, low, attrs);
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_text(text,"char",text) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._read_grouped(queue_name text, vt integer, qty integer, mode text)
 RETURNS SETOF pgmq.message_record
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q');
    lock_space integer := hashtext(qtable);
    grp text;
    groups text[] := '{}';
    ready bigint;
    budget integer := qty;
    attrs jsonb := pgmq._queue_attributes(queue_name);
    max_reads integer := (attrs ->> 'max_receive_count')::integer;
    claim text;
    rec pgmq.message_record;
    dead bigint[] := '{}';
BEGIN
    IF qty IS NULL OR qty < 0 THEN
        RAISE EXCEPTION 'qty must be zero or more, got: %', coalesce(qty::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    IF qty = 0 OR (attrs -> 'paused') = 'true'::jsonb THEN
        RETURN;
    END IF;

    -- Groups whose first message looks visible, oldest first. Only a hint: each
    -- is checked again below, after its lock is held.
    FOR grp IN EXECUTE format(
        $q$
        SELECT h.grp
        FROM (
            SELECT DISTINCT ON (pgmq._fifo_group(headers))
                   pgmq._fifo_group(headers) AS grp, msg_id, vt
            FROM pgmq.%I
            ORDER BY pgmq._fifo_group(headers), msg_id
        ) h
        WHERE h.vt <= clock_timestamp()
        ORDER BY h.msg_id
        $q$,
        qtable
    )
    LOOP
        -- Another reader holds this group until it commits: leave it alone.
        CONTINUE WHEN NOT pg_try_advisory_xact_lock(lock_space, hashtext(grp));
        -- A new statement, so a new snapshot: it sees what the last holder committed.
        EXECUTE format(
            $q$
            SELECT count(*) FILTER (WHERE ok)
            FROM (
                SELECT bool_and(vt <= clock_timestamp()) OVER (ORDER BY msg_id) AS ok
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

    IF cardinality(groups) = 0 THEN
        RETURN;
    END IF;

    claim := format(
        $q$
        WITH wanted AS MATERIALIZED (
            -- The readable front of each locked group, ranked, then chosen by mode.
            SELECT g.prio, r.msg_id, r.rnk
            FROM unnest($1::text[]) WITH ORDINALITY AS g(grp, prio)
            CROSS JOIN LATERAL (
                SELECT f.msg_id,
                       row_number() OVER w AS rnk,
                       bool_and(f.vt <= clock_timestamp()) OVER w AS ok
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
            WHERE m.msg_id IN (SELECT msg_id FROM wanted) AND m.vt <= clock_timestamp()
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
            SET vt = clock_timestamp() + $3,
                read_ct = m.read_ct + 1,
                last_read_at = clock_timestamp()
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
    IF max_reads IS NULL THEN
        RETURN QUERY EXECUTE claim
            USING groups, qty, make_interval(secs => coalesce(vt, 0)), mode,
            -- The most one group can contribute: every other group gives at least one.
            CASE WHEN mode = 'head' THEN 1 ELSE qty - cardinality(groups) + 1 END;
        RETURN;
    END IF;
    FOR rec IN EXECUTE claim
        USING groups, qty, make_interval(secs => coalesce(vt, 0)), mode,
        CASE WHEN mode = 'head' THEN 1 ELSE qty - cardinality(groups) + 1 END
    LOOP
        IF rec.read_ct > max_reads THEN
            dead := dead || rec.msg_id;
        ELSE
            RETURN NEXT rec;
        END IF;
    END LOOP;
    PERFORM pgmq._dead_letter_ids(queue_name, dead, 1);
END
$function$
;
COMMENT ON FUNCTION pgmq._read_grouped(text,integer,integer,text) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._send_checks_sql(attrs jsonb)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
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

CREATE OR REPLACE FUNCTION pgmq.enforce_retention(queue_name text DEFAULT NULL::text)
 RETURNS TABLE(queue_name text, expired bigint, archive_deleted bigint)
 LANGUAGE sql
AS $function$
    SELECT * FROM pgmq._enforce_retention($1);
$function$
;
COMMENT ON FUNCTION pgmq.enforce_retention(text) IS NULL;

CREATE OR REPLACE FUNCTION pgmq.get_queue_attributes(queue_name text)
 RETURNS jsonb
 LANGUAGE plpgsql
 STABLE
AS $function$
BEGIN
    PERFORM pgmq._require_queue(queue_name);
    RETURN coalesce(pgmq._queue_attributes(queue_name), '{}'::jsonb);
END
$function$
;
COMMENT ON FUNCTION pgmq.get_queue_attributes(text) IS NULL;

CREATE OR REPLACE FUNCTION pgmq.redrive(dead_letter_queue text, conditional jsonb DEFAULT '{}'::jsonb, max_messages integer DEFAULT NULL::integer)
 RETURNS TABLE(source_queue text, moved bigint)
 LANGUAGE plpgsql
AS $function$
DECLARE
    dlq_table text := pgmq.format_table_name(pgmq._require_queue(dead_letter_queue), 'q');
    source text;
    budget integer := max_messages;
BEGIN
    IF max_messages IS NOT NULL AND max_messages < 0 THEN
        RAISE EXCEPTION 'max_messages must be zero or more, got: %', max_messages
            USING ERRCODE = 'PQ004';
    END IF;
    FOR source IN EXECUTE format(
        $q$
        SELECT DISTINCT m.headers -> 'dead_letter' ->> 'queue' FROM pgmq.%I m
        WHERE jsonb_typeof(m.headers -> 'dead_letter') = 'object'
          AND m.message @> coalesce($1, '{}'::jsonb)
        $q$, dlq_table) USING conditional
    LOOP
        CONTINUE WHEN source IS NULL OR pgmq._stored_queue_name(source) IS NULL;
        EXIT WHEN budget IS NOT NULL AND budget <= 0;
        source_queue := pgmq._stored_queue_name(source);
        EXECUTE format(
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
                SELECT clock_timestamp(), g.message, g.headers - 'dead_letter'
                FROM gone g ORDER BY g.msg_id
                RETURNING 1
            )
            SELECT count(*) FROM back
            $q$,
            dlq_table, pgmq.format_table_name(source_queue, 'q'))
        INTO moved USING source, conditional, budget;
        budget := budget - moved;
        RETURN NEXT;
    END LOOP;
END
$function$
;
COMMENT ON FUNCTION pgmq.redrive(text,jsonb,integer) IS NULL;

CREATE OR REPLACE FUNCTION pgmq.send(queue_name text, msg jsonb)
 RETURNS SETOF bigint
 LANGUAGE plpgsql
AS $function$ BEGIN RETURN QUERY SELECT * FROM pgmq.send(queue_name, msg, NULL::jsonb, NULL::timestamptz); END $function$
;
COMMENT ON FUNCTION pgmq.send(text,jsonb) IS NULL;

CREATE OR REPLACE FUNCTION pgmq.send(queue_name text, msg jsonb, headers jsonb)
 RETURNS SETOF bigint
 LANGUAGE plpgsql
AS $function$ BEGIN RETURN QUERY SELECT * FROM pgmq.send(queue_name, msg, headers, NULL::timestamptz); END $function$
;
COMMENT ON FUNCTION pgmq.send(text,jsonb,jsonb) IS NULL;

CREATE OR REPLACE FUNCTION pgmq.send(queue_name text, msg jsonb, headers jsonb, delay timestamp with time zone)
 RETURNS SETOF bigint
 LANGUAGE plpgsql
AS $function$
BEGIN
    RETURN QUERY SELECT r.msg_id FROM pgmq._queue_ops_route(
        queue_name, 's'::"char", NULL::integer, NULL::integer, delay,
        NULL::bigint[], ARRAY[msg], ARRAY[headers], NULL::jsonb) r;
END
$function$
;
COMMENT ON FUNCTION pgmq.send(text,jsonb,jsonb,timestamp with time zone) IS NULL;

CREATE OR REPLACE FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[])
 RETURNS SETOF bigint
 LANGUAGE plpgsql
AS $function$ BEGIN RETURN QUERY SELECT * FROM pgmq.send_batch(queue_name, msgs, NULL::jsonb[], NULL::timestamptz); END $function$
;
COMMENT ON FUNCTION pgmq.send_batch(text,jsonb[]) IS NULL;

CREATE OR REPLACE FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[])
 RETURNS SETOF bigint
 LANGUAGE plpgsql
AS $function$ BEGIN RETURN QUERY SELECT * FROM pgmq.send_batch(queue_name, msgs, headers, NULL::timestamptz); END $function$
;
COMMENT ON FUNCTION pgmq.send_batch(text,jsonb[],jsonb[]) IS NULL;

CREATE OR REPLACE FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[], headers jsonb[], delay timestamp with time zone)
 RETURNS SETOF bigint
 LANGUAGE plpgsql
AS $function$
BEGIN
    PERFORM pgmq._validate_batch_params(msgs, headers);
    RETURN QUERY SELECT r.msg_id FROM pgmq._queue_ops_route(
        queue_name, 's'::"char", NULL::integer, NULL::integer, delay,
        NULL::bigint[], msgs, headers, NULL::jsonb) r;
END
$function$
;
COMMENT ON FUNCTION pgmq.send_batch(text,jsonb[],jsonb[],timestamp with time zone) IS NULL;

CREATE OR REPLACE FUNCTION pgmq.set_queue_attributes(queue_name text, attributes jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
DECLARE
    stored text := pgmq._require_queue(queue_name);
    old jsonb;
    merged jsonb;
    k text;
    qtable text;
BEGIN
    IF attributes IS NULL OR jsonb_typeof(attributes) <> 'object' THEN
        RAISE EXCEPTION 'queue "%": attributes must be a JSON object, got %', stored,
            coalesce(attributes::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    FOR k IN SELECT jsonb_object_keys(attributes) LOOP
        IF NOT EXISTS (SELECT 1 FROM pgmq._queue_attribute_rules() r WHERE r.key = k) THEN
            PERFORM pgmq._bad_queue_attribute(stored, k, attributes -> k);
        END IF;
    END LOOP;
    PERFORM pgmq.acquire_queue_lock(stored);
    old := coalesce(pgmq._queue_attributes(stored), '{}'::jsonb);
    merged := jsonb_strip_nulls(old || attributes);
    PERFORM pgmq._check_queue_attributes(stored, merged);
    IF merged = old THEN
        RETURN merged;
    END IF;

    IF merged ? 'dead_letter_queue'
       AND NOT EXISTS (SELECT 1 FROM pgmq.meta m
                       WHERE lower(m.queue_name) = lower(merged ->> 'dead_letter_queue')) THEN
        PERFORM pgmq."create"(merged ->> 'dead_letter_queue');
    END IF;
    qtable := pgmq.format_table_name(stored, 'q');
    IF (merged -> 'priorities') = 'true'::jsonb
       AND to_regclass(format('pgmq.%I', qtable || '_priority')) IS NULL THEN
        -- The tasks backend's index (sql/75_tasks.sql): priority descending, then msg_id.
        EXECUTE format('CREATE INDEX %I ON pgmq.%I (pgmq._task_priority(headers) DESC, msg_id)',
                       qtable || '_priority', qtable);
    END IF;
    IF coalesce((merged ->> 'deduplication_window')::integer, 0) = 0 THEN
        DELETE FROM pgmq.queue_deduplication d WHERE d.queue_name = lower(stored);
    END IF;

    IF merged = '{}'::jsonb THEN
        DELETE FROM pgmq.queue_attributes a WHERE a.queue_name = stored;
    ELSE
        INSERT INTO pgmq.queue_attributes AS a (queue_name, attributes)
        VALUES (stored, merged)
        ON CONFLICT ON CONSTRAINT queue_attributes_pkey
        DO UPDATE SET attributes = excluded.attributes, updated_at = now();
    END IF;
    -- A hot queue's access function holds the statements: write it again.
    IF to_regproc('pgmq.' || quote_ident(pgmq.format_table_name(stored, '_ops'))) IS NOT NULL THEN
        PERFORM pg_advisory_xact_lock(hashtext('pgmq.queue_ops_route'));
        PERFORM pgmq._install_queue_ops(stored);
    END IF;
    RETURN merged;
END
$function$
;
COMMENT ON FUNCTION pgmq.set_queue_attributes(text,jsonb) IS NULL;

CREATE UNIQUE INDEX queue_attributes_table_key ON pgmq.queue_attributes USING btree (lower((queue_name)::text));

CREATE TRIGGER queue_attributes_forget_deduplication AFTER DELETE ON pgmq.queue_attributes FOR EACH ROW EXECUTE FUNCTION pgmq._forget_deduplication();

-- By hand: the tables above (their primary keys come with their constraints), and
-- every hot queue's access function written again: the statements of a plain queue
-- changed (a send's delay NULL means "none given"). Existing queues have no attributes,
-- so nothing else about them changes.
SELECT pgmq._install_queue_ops(h.name) FROM pgmq._queue_ops_hot_set() AS h(name);
