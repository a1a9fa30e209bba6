-- 0048_workflows_advanced_by_the: workflows advanced by the acknowledgement
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
-- HAND (wf) part 1, at the top, right after SET LOCAL check_function_bodies = off:
-- the workflow tables (constraints and indexes are generated below).
CREATE TABLE pgmq.workflow (
    workflow_id bigint GENERATED ALWAYS AS IDENTITY,
    on_failure text NOT NULL,
    step_count integer NOT NULL,
    created_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    cancelled_at timestamptz
);
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
    status text NOT NULL,
    msg_id bigint,
    result jsonb,
    error jsonb,
    sent_at timestamptz,
    finished_at timestamptz
);
CREATE TABLE pgmq.workflow_stripe (
    workflow_id bigint NOT NULL,
    step_no integer NOT NULL,
    stripe integer NOT NULL,
    pending integer NOT NULL
);
-- END HAND part 1
ALTER TABLE pgmq.workflow ADD CONSTRAINT workflow_on_failure_check CHECK ((on_failure = ANY (ARRAY['cancel'::text, 'continue'::text])));

ALTER TABLE pgmq.workflow ADD CONSTRAINT workflow_pkey PRIMARY KEY (workflow_id);

ALTER TABLE pgmq.workflow_step ADD CONSTRAINT workflow_step_name_key UNIQUE (workflow_id, step);

ALTER TABLE pgmq.workflow_step ADD CONSTRAINT workflow_step_pkey PRIMARY KEY (workflow_id, step_no);

ALTER TABLE pgmq.workflow_step ADD CONSTRAINT workflow_step_status_check CHECK ((status = ANY (ARRAY['waiting'::text, 'sent'::text, 'done'::text, 'failed'::text, 'cancelled'::text])));

ALTER TABLE pgmq.workflow_stripe ADD CONSTRAINT workflow_stripe_pkey PRIMARY KEY (workflow_id, step_no, stripe);

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
    PERFORM pgmq._workflow_trigger(queue_name);  -- workflow steps advance on delete
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

CREATE OR REPLACE FUNCTION pgmq._dead_letter_move_sql(queue_name text, dead_letter_queue text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT pg_catalog.format(
        $sql$
        moved AS (
            INSERT INTO pgmq.%1$I (vt, message, headers)
            SELECT pg_catalog.clock_timestamp(), x.message,
                   pgmq._dead_letter_headers(
                       pgmq._workflow_message_failed(x.headers, %2$L, x.msg_id,
                           pg_catalog.jsonb_build_object(
                               'error', coalesce(x.error, 'dead-lettered: read too often (max_receive_count)'),
                               'dead_letter_queue', %3$L::text)),
                       %2$L, x.msg_id, x.read_ct, x.enqueued_at, x.error)
            FROM dead x ORDER BY x.msg_id
            RETURNING msg_id
        )
        $sql$,
        pgmq.format_table_name(dead_letter_queue, 'q'::text), queue_name, dead_letter_queue);
$function$
;
COMMENT ON FUNCTION pgmq._dead_letter_move_sql(text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._dead_letter_move_sql(text,text) FROM PUBLIC;

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
    -- the workflow steps sent to it fail (their messages went without a delete)
    PERFORM pgmq._workflow_queue_lost(queue_name, pg_catalog.format('queue "%s" was dropped', queue_name));
    RETURN true;
END
$function$
;
COMMENT ON FUNCTION pgmq._drop_queue(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._drop_queue(text) FROM PUBLIC;

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
    lost bigint[];
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
                    lost := NULL;
                    IF cfg.table_name = pgmq.format_table_name(cfg.queue_name::text, 'q'::text) THEN
                        -- workflow steps whose messages the drop takes fail (no delete fires)
                        EXECUTE pg_catalog.format(
                            'SELECT pg_catalog.array_agg(m.msg_id) FROM pgmq.%I m WHERE m.headers ? ''workflow''::text',
                            old.partition_name) INTO lost;
                    END IF;
                    EXECUTE pg_catalog.format('DROP TABLE pgmq.%I', old.partition_name);
                    IF lost IS NOT NULL THEN
                        PERFORM pgmq._workflow_queue_lost(cfg.queue_name::text,
                            pg_catalog.format('partition %s dropped by retention', old.partition_name), lost);
                    END IF;
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
        -- a workflow step's message expires as a failure of its step (sql/57_workflow_settle.sql):
        -- the error is recorded (a locking CTE, so only rows this batch deletes) first
        EXECUTE pg_catalog.format(
            $d$
            WITH picked AS MATERIALIZED (
                SELECT x.msg_id, x.headers FROM pgmq.%1$I x
                WHERE x.enqueued_at < pg_catalog.clock_timestamp() - pg_catalog.make_interval(secs => $1)
                ORDER BY x.msg_id LIMIT $2 FOR UPDATE SKIP LOCKED
            ), noted AS MATERIALIZED (
                SELECT p.msg_id, CASE WHEN p.headers ? 'workflow'::text
                    THEN pgmq._workflow_message_failed(p.headers, %2$L, p.msg_id,
                             pg_catalog.jsonb_build_object('error', 'expired: message_retention'::text))
                    END AS headers
                FROM picked p
            )
            DELETE FROM pgmq.%1$I m WHERE m.msg_id = ANY(ARRAY(SELECT n.msg_id FROM noted n))
            $d$, pgmq.format_table_name(stored, 'q'::text), stored)
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

CREATE OR REPLACE FUNCTION pgmq._workflow_check_queues(steps jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
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
$function$
;
COMMENT ON FUNCTION pgmq._workflow_check_queues(jsonb) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._workflow_check_queues(jsonb) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._workflow_check_spec(steps jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
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
$function$
;
COMMENT ON FUNCTION pgmq._workflow_check_spec(jsonb) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._workflow_check_spec(jsonb) FROM PUBLIC;

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

CREATE OR REPLACE FUNCTION pgmq._workflow_message_failed(headers jsonb, queue_name text, msg_id bigint, error jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    IF headers ? 'workflow'::text THEN
        PERFORM pgmq._workflow_require_delete(queue_name);
        PERFORM pgmq._workflow_record(queue_name, msg_id, headers, NULL::jsonb, error);
    END IF;
    RETURN headers;
END
$function$
;
COMMENT ON FUNCTION pgmq._workflow_message_failed(jsonb,text,bigint,jsonb) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._workflow_message_failed(jsonb,text,bigint,jsonb) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._workflow_order(steps jsonb, edge_parent integer[], edge_child integer[])
 RETURNS integer[]
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
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
$function$
;
COMMENT ON FUNCTION pgmq._workflow_order(jsonb,integer[],integer[]) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._workflow_order(jsonb,integer[],integer[]) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._workflow_queue_lost(queue_name text, reason text, msg_ids bigint[] DEFAULT NULL::bigint[])
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
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
$function$
;
COMMENT ON FUNCTION pgmq._workflow_queue_lost(text,text,bigint[]) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._workflow_queue_lost(text,text,bigint[]) FROM PUBLIC;

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

CREATE OR REPLACE FUNCTION pgmq._workflow_refuse(label text, problem text, code text DEFAULT 'PQ004'::text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
    RAISE EXCEPTION 'workflow step %: %', label, problem
        USING ERRCODE = code, HINT = 'Nothing of the workflow was written.';
END
$function$
;
COMMENT ON FUNCTION pgmq._workflow_refuse(text,text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._workflow_refuse(text,text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._workflow_require(wid bigint)
 RETURNS void
 LANGUAGE plpgsql
 STABLE
AS $function$
BEGIN
    IF NOT EXISTS (SELECT FROM pgmq.workflow w WHERE w.workflow_id = wid) THEN
        RAISE EXCEPTION 'workflow % does not exist', coalesce(wid::text, 'NULL')
            USING ERRCODE = 'PQ006', HINT = 'Finished workflows are removed after PGMQ["WORKFLOW_RETENTION"].';
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._workflow_require(bigint) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._workflow_require(bigint) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._workflow_require_delete(stored text)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    IF NOT pgmq._session_is_owner() AND NOT pg_catalog.has_table_privilege(
            SESSION_USER, pg_catalog.format('pgmq.%I', pgmq.format_table_name(stored, 'q'::text)), 'DELETE'::text) THEN
        RAISE EXCEPTION 'permission denied: role "%" may not acknowledge messages of queue "%"', SESSION_USER, stored
            USING ERRCODE = '42501';
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._workflow_require_delete(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._workflow_require_delete(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._workflow_retention(keep_seconds double precision, batch integer DEFAULT 1000)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
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
$function$
;
COMMENT ON FUNCTION pgmq._workflow_retention(double precision,integer) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._workflow_retention(double precision,integer) FROM PUBLIC;

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

CREATE OR REPLACE FUNCTION pgmq._workflow_settle(queue_name text, msg_id bigint, result jsonb, error jsonb)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
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
$function$
;
COMMENT ON FUNCTION pgmq._workflow_settle(text,bigint,jsonb,jsonb) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._workflow_settle(text,bigint,jsonb,jsonb) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._workflow_step_label(spec jsonb, pos bigint)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT CASE WHEN pg_catalog.jsonb_typeof(spec -> 'step'::text) = 'string'::text
                     AND (spec ->> 'step'::text) <> ''::text
                THEN pg_catalog.format('"%s"', spec ->> 'step'::text)
                ELSE pg_catalog.format('#%s', pos) END;
$function$
;
COMMENT ON FUNCTION pgmq._workflow_step_label(jsonb,bigint) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._workflow_step_label(jsonb,bigint) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._workflow_step_problem(spec jsonb)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
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
$function$
;
COMMENT ON FUNCTION pgmq._workflow_step_problem(jsonb) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._workflow_step_problem(jsonb) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._workflow_trigger(queue_name text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
    EXECUTE pg_catalog.format(
        'CREATE OR REPLACE TRIGGER pgmq_workflow_ack AFTER DELETE ON pgmq.%I FOR EACH ROW '
        'WHEN (OLD.headers OPERATOR(pg_catalog.?) ''workflow''::text) '
        'EXECUTE FUNCTION pgmq._workflow_ack(%L)',
        pgmq.format_table_name(queue_name, 'q'::text), queue_name);
END
$function$
;
COMMENT ON FUNCTION pgmq._workflow_trigger(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._workflow_trigger(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.cancel_workflow(workflow_id bigint)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
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
$function$
;
COMMENT ON FUNCTION pgmq.cancel_workflow(bigint) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.cancel_workflow(bigint) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.complete(queue_name text, msg_id bigint, result jsonb)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
BEGIN
    PERFORM pgmq._workflow_settle(queue_name, msg_id, result, NULL::jsonb);
    RETURN pgmq.archive(queue_name, msg_id);
END
$function$
;
COMMENT ON FUNCTION pgmq.complete(text,bigint,jsonb) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.complete(text,bigint,jsonb) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.create_workflow(steps jsonb, on_failure text DEFAULT 'cancel'::text)
 RETURNS bigint
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
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
        SELECT e.parent, e.child, (e.k % least(e.parents, 64))::integer AS stripe, e.k
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
        FROM striped s GROUP BY s.child, s.stripe
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
$function$
;
COMMENT ON FUNCTION pgmq.create_workflow(jsonb,text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.create_workflow(jsonb,text) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.fail(queue_name text, msg_id bigint, error jsonb)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
BEGIN
    PERFORM pgmq._workflow_settle(queue_name, msg_id, NULL::jsonb, coalesce(error, 'null'::jsonb));
    RETURN pgmq.archive(queue_name, msg_id);
END
$function$
;
COMMENT ON FUNCTION pgmq.fail(text,bigint,jsonb) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.fail(text,bigint,jsonb) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.list_workflows(status text DEFAULT NULL::text, max_rows integer DEFAULT 100, before_id bigint DEFAULT NULL::bigint)
 RETURNS TABLE(workflow_id bigint, status text, on_failure text, steps_done integer, steps_total integer, created_at timestamp with time zone, finished_at timestamp with time zone)
 LANGUAGE sql
 STABLE
AS $function$
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
$function$
;
COMMENT ON FUNCTION pgmq.list_workflows(text,integer,bigint) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.list_workflows(text,integer,bigint) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.purge_queue(queue_name text)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q'::text);
    removed bigint;
    stored text;
BEGIN
    stored := pgmq._require_queue(queue_name);
    PERFORM pgmq._lock_queue_table(queue_name);  -- waits for an index build to give way
    -- Lock first so the count and the truncate see the same rows.
    EXECUTE pg_catalog.format('LOCK TABLE pgmq.%I IN ACCESS EXCLUSIVE MODE', qtable);
    EXECUTE pg_catalog.format('SELECT pg_catalog.count(*) FROM pgmq.%I', qtable) INTO removed;
    EXECUTE pg_catalog.format('TRUNCATE TABLE pgmq.%I', qtable);
    -- a truncate fires no delete trigger: the workflow steps it took fail
    PERFORM pgmq._workflow_queue_lost(stored, pg_catalog.format('queue "%s" was purged', stored));
    RETURN removed;
END
$function$
;
COMMENT ON FUNCTION pgmq.purge_queue(text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.purge_queue(text) TO PUBLIC;

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

-- HAND (wf) part 2, at the end (replaces the generated CREATE TRIGGER lines on the
-- scratch queues q_k_*): every existing queue's live table gets the workflow trigger
-- (a partitioned queue's parent: it clones to the partitions), and every registered
-- application role reads the new tables, as pgmq.grant_app_role gives it the others.
-- A live table another role still owns (an old install's, left by migration 0045 with a
-- warning) gets no trigger, and a warning: create_workflow refuses that queue until a
-- DBA gives the table to the owner and runs SELECT pgmq._workflow_trigger('<queue>').
DO $workflows$
DECLARE
    q record;
    r name;
BEGIN
    FOR q IN
        SELECT m.queue_name::text AS name, c.relowner
        FROM pgmq.meta m
        JOIN pg_catalog.pg_class c
          ON c.oid = pg_catalog.to_regclass(pg_catalog.format('pgmq.%I', pgmq.format_table_name(m.queue_name::text, 'q'::text)))
        ORDER BY 1
    LOOP
        IF pg_catalog.pg_has_role(current_user, q.relowner, 'MEMBER'::text) THEN
            PERFORM pgmq._workflow_trigger(q.name);
        ELSE
            RAISE WARNING 'queue "%": its table is owned by role "%", so it gets no workflow trigger; '
                'workflows refuse it until a DBA runs ALTER TABLE ... OWNER TO the owner of schema pgmq '
                'and SELECT pgmq._workflow_trigger(%L)', q.name, pg_catalog.pg_get_userbyid(q.relowner), q.name;
        END IF;
    END LOOP;
    FOR r IN SELECT a.role_name FROM pgmq.app_role a
             JOIN pg_catalog.pg_roles x ON x.rolname = a.role_name ORDER BY 1 LOOP
        EXECUTE pg_catalog.format(
            'GRANT SELECT ON TABLE pgmq.workflow, pgmq.workflow_step, pgmq.workflow_stripe TO %I', r);
    END LOOP;
END
$workflows$;
-- END HAND part 2
