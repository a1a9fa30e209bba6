-- How send, read, pop, archive, delete and set_vt reach a queue's tables: every call
-- goes through pgmq._queue_ops_route, which takes one of two paths.
--
-- The cold path (every queue, always available): the statement for the queue and the
-- operation is written by pgmq._queue_ops_sql and run with EXECUTE, parsed and planned
-- on each call, as pgmq does. It costs a session nothing per queue it has touched, and
-- a queue costs nothing to create or drop beyond its tables.
--
-- The hot path (a bounded set of busy queues): a queue used pgmq.hot_queues_warmup (3)
-- times by one session is promoted, while fewer than the setting pgmq.hot_queues
-- (default 32; 0 turns promotion off) are hot: it gets pgmq._ops_<name>, a PL/pgSQL
-- function whose statements (the same text, from _queue_ops_sql) name its tables, so
-- each session plans them once and keeps the plans; the router and pgmq._queue_ops_hot
-- are written again to call it by a static statement. A session takes the hot path for
-- a queue only after using it that many times itself, so a session that touches
-- hundreds of queues once each keeps no plans for them. The hot set is global and
-- changes only on promotion and when a hot queue is dropped: creating or dropping any
-- other queue never rewrites a function, so its cost does not grow with the number of
-- queues, and a new session compiles only small functions.
--
-- Why two paths (measured on 2 cores, PostgreSQL 15, docs/design.md): planning on
-- every call costs the server more than the rows it moves at batch 10 (read+archive ran
-- about 10% slower through EXECUTE than through kept plans), while keeping plans for
-- every queue a session touches cost it about 300 kB per queue (35 MB after 100 queues,
-- against pgmq's 4 MB). Kept plans for the few busy queues, planning for the rest.
--
-- Low-water mark (hot path only): read and pop walk the primary key from the oldest
-- message. Archived and deleted messages leave index entries behind until VACUUM removes
-- them, and in a busy queue autovacuum (at most once a minute per table) leaves hundreds
-- of thousands, so a walk from the start of the index would slow every read as the minute
-- goes on. So each session keeps, per hot queue, the smallest msg_id alive when it last
-- looked (a session setting pgmq.low_<name>) and starts its reads there, looking again
-- once a second. Every message alive then has an id at or above the mark and ids only
-- grow, so no message is skipped; the one exception is a message whose sending
-- transaction was still open when the mark was taken and which had a lower id than every
-- message alive: it becomes visible to this session at the next look, within a second.
--
-- Plans: the access function runs with plan_cache_mode = force_generic_plan, so one plan
-- per statement is kept (a custom plan per call would cost what EXECUTE costs), and with
-- enable_seqscan and enable_bitmapscan off, so that plan walks the primary key in order
-- whatever the statistics were when it was made. Without them a plan made while the
-- table was empty could keep a sequential scan while the queue grows to millions of
-- rows, and one made for "msg_id >= low LIMIT n" with unknown values could read and
-- sort every row above the mark on every call.

-- The statement of one operation on one queue. Its parameters are the access function's
-- (and the cold path's USING list), in this order: $1 op, $2 qty, $3 vt seconds, $4 vt
-- timestamp, $5 msg_ids, $6 messages, $7 headers, $8 read condition. low is the SQL
-- expression of the low-water mark read and pop start from (the cold path starts at 0).
-- Ops: s send, r read, p pop, a archive, d delete, v set_vt; s, a and d return only msg_id.
-- A send's $4 NULL means "no delay given". These are a plain queue's statements; a queue
-- with attributes runs pgmq._queue_ops_attr_sql's (sql/25_attributes.sql), which
-- pgmq._queue_ops_text chooses.
CREATE OR REPLACE FUNCTION pgmq._queue_ops_sql(queue_name text, op "char", low text DEFAULT '0')
RETURNS text
LANGUAGE sql IMMUTABLE
-- One SQL expression, so a caller's plan inlines it: nothing to compile in a new session.
AS $fn$
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
$fn$;

-- Uses of a queue after which a session takes its hot path (and may promote it).
CREATE OR REPLACE FUNCTION pgmq._queue_ops_warmup()
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $fn$ SELECT 3 $fn$;

-- Make queue_name hot, if there is room (setting pgmq.hot_queues, default 32) and nobody
-- holds the locks it needs (it never waits: it is tried again by the next session that
-- warms up to the queue). A role that may not create functions in pgmq stays cold.
CREATE OR REPLACE FUNCTION pgmq._queue_ops_promote(queue_name text)
RETURNS void
LANGUAGE plpgsql
AS $fn$
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
$fn$;

-- Create or replace the access function of queue_name (its tables must exist) and write
-- the router again. Called by _queue_ops_promote, under its locks, and by
-- set_queue_attributes when a hot queue's attributes change. Its send branch comes from
-- pgmq._queue_ops_send_block (sql/25_attributes.sql): a deduplicating queue's needs a block.
CREATE OR REPLACE FUNCTION pgmq._install_queue_ops(queue_name text)
RETURNS void
LANGUAGE plpgsql
AS $fn$
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
        %7$s
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
        pgmq._queue_ops_send_block(queue_name),
        pgmq._queue_ops_text(queue_name, 'a'),
        pgmq._queue_ops_text(queue_name, 'd'),
        pgmq._queue_ops_text(queue_name, 'p', 'low'),
        pgmq._queue_ops_text(queue_name, 'v'),
        pgmq._queue_ops_prologue(queue_name)
    );
    PERFORM pgmq._install_queue_route();
END
$fn$;

-- Drop queue_name's access function, if it has one, and write the router again.
CREATE OR REPLACE FUNCTION pgmq._drop_queue_ops(queue_name text)
RETURNS void
LANGUAGE plpgsql
AS $fn$
BEGIN
    IF to_regproc('pgmq.' || quote_ident(pgmq.format_table_name(queue_name, '_ops'))) IS NOT NULL THEN
        PERFORM pg_advisory_xact_lock(hashtext('pgmq.queue_ops_route'));
        EXECUTE format(
            'DROP FUNCTION pgmq.%I("char", integer, integer, timestamptz, bigint[], jsonb[], jsonb[], jsonb)',
            pgmq.format_table_name(queue_name, '_ops'));
        PERFORM pgmq._install_queue_route();
    END IF;
END
$fn$;

-- The hot queues: the lower-cased names of the queues that have an access function.
CREATE OR REPLACE FUNCTION pgmq._queue_ops_hot_set()
RETURNS SETOF text
LANGUAGE sql STABLE
AS $fn$
    SELECT substr(p.proname, 6)
    FROM pg_proc p
    WHERE p.pronamespace = 'pgmq'::regnamespace AND p.proname LIKE '\_ops\_%'
      AND pg_get_function_identity_arguments(p.oid) = 'p_op "char", p_qty integer, '
          'p_secs integer, p_vt timestamp with time zone, p_ids bigint[], p_msgs jsonb[], '
          'p_headers jsonb[], p_cond jsonb'
    ORDER BY substr(p.proname, 6) COLLATE "C";
$fn$;

-- The hot path's tree of IFs: picks among names (sorted, lower-case) by its variable lname.
CREATE OR REPLACE FUNCTION pgmq._queue_ops_branches(names text[])
RETURNS text
LANGUAGE plpgsql IMMUTABLE
AS $fn$
DECLARE
    n integer := coalesce(cardinality(names), 0);
    half integer := n / 2;
BEGIN
    IF n = 0 THEN
        RETURN '';
    ELSIF n = 1 THEN
        RETURN format(
            $if$
IF lname = %L THEN
    RETURN QUERY SELECT * FROM pgmq.%I(p_op, p_qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond);
    RETURN;
END IF;
$if$,
            names[1], '_ops_' || names[1]);
    END IF;
    RETURN format(E'IF lname < %L COLLATE "C" THEN\n%sELSE\n%sEND IF;\n',
                  names[half + 1],
                  pgmq._queue_ops_branches(names[1:half]),
                  pgmq._queue_ops_branches(names[half + 1:n]));
END
$fn$;

-- Write the router and the hot path again for the current hot set. Serialised by a lock,
-- as two sessions may not replace one function at once.
CREATE OR REPLACE FUNCTION pgmq._install_queue_route()
RETURNS void
LANGUAGE plpgsql
AS $fn$
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
    -- this session's calls to the queue ('-' may not appear in a setting's name, '$'
    -- may, and never appears in a queue name)
    uses_key text := 'pgmq.uses_q_' || replace(lname, '-', '$');
    uses integer;
    statement text;
BEGIN
    IF lname = ANY (%1$L::text[])
       AND current_setting(uses_key, true) = pgmq._queue_ops_warmup()::text THEN
        RETURN QUERY SELECT * FROM pgmq._queue_ops_hot(
            lname, p_op, p_qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond);
        RETURN;
    END IF;
    -- The cold path, here rather than in a function of its own: a new session's first
    -- call compiles one function less. The name is checked as pgmq's per-message
    -- functions check it (sql/05_names.sql), before the statement is written.
    PERFORM pgmq._message_table_name(queue_name, 'q');
    IF EXISTS (SELECT 1 FROM pgmq.queue_attributes a WHERE lower(a.queue_name) = lname) THEN
        statement := pgmq._queue_ops_text(queue_name, p_op);
    ELSE
        statement := pgmq._queue_ops_sql(queue_name, p_op);
    END IF;
    uses := coalesce(nullif(current_setting(uses_key, true), ''), '0')::integer;
    IF uses < pgmq._queue_ops_warmup() THEN
        PERFORM set_config(uses_key, (uses + 1)::text, false);
        IF uses + 1 = pgmq._queue_ops_warmup() THEN
            PERFORM pgmq._queue_ops_promote(queue_name);
        END IF;
    END IF;
    RETURN QUERY EXECUTE statement
        USING p_op, p_qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond;
END
$body$
        $ddl$,
        names);
END
$fn$;

SELECT pgmq._install_queue_route();
