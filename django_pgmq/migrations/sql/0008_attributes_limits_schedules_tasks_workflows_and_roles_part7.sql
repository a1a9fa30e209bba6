-- 0008_attributes_limits_schedules_tasks_workflows_and_roles: attributes limits schedules tasks workflows and roles
-- Frozen when written; never edit a released migration.
-- 0048_workflows_advanced_by_the
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

-- 0049_limit_slots_free_lazily
-- 0049_limit_slots_free_lazily: limit slots free lazily
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._limit_free(text,bigint[]);
DROP INDEX IF EXISTS pgmq.queue_limit_slots_msg;
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

    IF pgmq._limit_attributes(old) IS DISTINCT FROM pgmq._limit_attributes(merged) THEN
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
    IF allowed IS DISTINCT FROM 0 AND attrs ?| pgmq._limit_keys() THEN
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
        -- Its max_in_flight slot is free now (the next claim finds it, sql/26_limits.sql):
        -- wake a worker waiting at the limit.
        PERFORM pgmq._limit_wake(pg_catalog.lower(source));
    END IF;
    RETURN new_id;
END
$function$
;
COMMENT ON FUNCTION pgmq._dead_letter(text,bigint,text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._dead_letter(text,bigint,text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._limit_attributes(attrs jsonb)
 RETURNS jsonb
 LANGUAGE sql
 IMMUTABLE
AS $function$
    SELECT coalesce(pg_catalog.jsonb_object_agg(e.key, e.value), '{}'::jsonb)
    FROM pg_catalog.jsonb_each(attrs) e WHERE e.key = ANY (pgmq._limit_keys());
$function$
;
COMMENT ON FUNCTION pgmq._limit_attributes(jsonb) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._limit_attributes(jsonb) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._limit_drop_rows(lq text, kind "char", above integer DEFAULT NULL::integer)
 RETURNS void
 LANGUAGE sql
AS $function$
    DELETE FROM pgmq.queue_limit_slots l
    WHERE (l.queue_name, l.kind, l.slot) IN (
        SELECT x.queue_name, x.kind, x.slot FROM pgmq.queue_limit_slots x
        WHERE x.queue_name::text = $1 AND ($2 IS NULL OR x.kind = $2)
          AND ($3 IS NULL OR x.slot > $3)
          AND ($3 IS NULL OR x.kind = 'r' OR x.msg_id IS NULL OR x.read_ct = -1)
        FOR UPDATE SKIP LOCKED);
$function$
;
COMMENT ON FUNCTION pgmq._limit_drop_rows(text,"char",integer) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._limit_drop_rows(text,"char",integer) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._limit_keys()
 RETURNS text[]
 LANGUAGE sql
 IMMUTABLE
AS $function$
    SELECT pg_catalog.array_agg(d.key ORDER BY d.key) FROM pgmq._queue_attribute_declaration() d
    WHERE d.side = 'limit';
$function$
;
COMMENT ON FUNCTION pgmq._limit_keys() IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._limit_keys() FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._limit_mark_full(lq text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF pg_catalog.current_setting('transaction_isolation') <> 'read committed' THEN
        RETURN;
    END IF;
    UPDATE pgmq.queue_limit_slots w SET t = pg_catalog.clock_timestamp()
    WHERE w.ctid = (SELECT x.ctid FROM pgmq.queue_limit_slots x
                    WHERE x.queue_name::text = lq AND x.kind = 'w' AND x.slot = 0
                      AND x.t < pg_catalog.clock_timestamp() - interval '1 second'
                    FOR UPDATE SKIP LOCKED)
      AND w.queue_name IS NOT DISTINCT FROM lq;
    IF NOT FOUND AND NOT EXISTS (SELECT 1 FROM pgmq.queue_limit_slots x
                                 WHERE x.queue_name::text = lq AND x.kind = 'w' AND x.slot = 0) THEN
        PERFORM 1 FROM pgmq.queue_limit_state l WHERE l.queue_name::text = lq
        FOR NO KEY UPDATE SKIP LOCKED;
        IF FOUND THEN
            INSERT INTO pgmq.queue_limit_slots (queue_name, kind, slot, t)
            VALUES (lq, 'w', 0, pg_catalog.clock_timestamp())
            ON CONFLICT DO NOTHING;
        END IF;
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._limit_mark_full(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._limit_mark_full(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._limit_reclaim(lq text, tids tid[], qtable text)
 RETURNS tid[]
 LANGUAGE plpgsql
AS $function$
DECLARE
    ids bigint[] := ARRAY(SELECT l.msg_id FROM pgmq.queue_limit_slots l
                          WHERE l.ctid = ANY (tids) AND l.queue_name IS NOT DISTINCT FROM lq
                            AND l.msg_id IS NOT NULL AND l.read_ct IS DISTINCT FROM -1);
    f_ids bigint[];
    f_rcs integer[];
    freed tid[];
BEGIN
    IF pg_catalog.current_setting('transaction_isolation') <> 'read committed' THEN
        EXECUTE pg_catalog.format(
            'SELECT pg_catalog.count(*) FROM (SELECT 1 FROM pgmq.%I q WHERE q.msg_id = ANY ($1) '
            '  FOR SHARE OF q SKIP LOCKED) x', qtable)
            USING ids;
    END IF;
    -- The messages still in flight (one short statement: planned at each call).
    EXECUTE pg_catalog.format(
        'SELECT pg_catalog.array_agg(q.msg_id), pg_catalog.array_agg(q.read_ct) '
        'FROM pgmq.%I q WHERE q.msg_id = ANY ($1) AND q.vt > pg_catalog.clock_timestamp()', qtable)
        INTO f_ids, f_rcs USING ids;
    WITH held AS (
        SELECT f.id, f.rc
        FROM ROWS FROM (pg_catalog.unnest(f_ids), pg_catalog.unnest(f_rcs)) AS f(id, rc)
    ), u AS (
        UPDATE pgmq.queue_limit_slots l SET read_ct = -1
        WHERE l.ctid = ANY (tids) AND l.queue_name IS NOT DISTINCT FROM lq AND l.msg_id IS NOT NULL
          AND l.read_ct IS DISTINCT FROM -1
          AND NOT EXISTS (SELECT 1 FROM held h WHERE h.id = l.msg_id AND h.rc = l.read_ct)
        RETURNING l.ctid
    )
    SELECT coalesce(pg_catalog.array_agg(x.tid), '{}') INTO freed
    FROM (SELECT u.ctid AS tid FROM u
          UNION ALL
          SELECT l.ctid FROM pgmq.queue_limit_slots l
          WHERE l.ctid = ANY (tids) AND l.queue_name IS NOT DISTINCT FROM lq
            AND (l.msg_id IS NULL OR l.read_ct = -1)) x;
    RETURN freed;
END
$function$
;
COMMENT ON FUNCTION pgmq._limit_reclaim(text,tid[],text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._limit_reclaim(text,tid[],text) FROM PUBLIC;


CREATE OR REPLACE FUNCTION pgmq._limit_wake(lq text)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    channel text;
BEGIN
    IF pg_catalog.current_setting('transaction_isolation') = 'read committed' THEN
        UPDATE pgmq.queue_limit_slots w SET t = '-infinity'
        WHERE w.ctid = (SELECT x.ctid FROM pgmq.queue_limit_slots x
                        WHERE x.queue_name::text = lq AND x.kind = 'w' AND x.slot = 0
                          AND x.t > '-infinity'::timestamptz
                        FOR UPDATE SKIP LOCKED)
          AND w.queue_name IS NOT DISTINCT FROM lq;
    ELSE
        PERFORM 1 FROM pgmq.queue_limit_slots x
        WHERE x.queue_name::text = lq AND x.kind = 'w' AND x.slot = 0 AND x.t > '-infinity'::timestamptz;
    END IF;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    channel := (SELECT pgmq._limit_channel(m.queue_name::text) FROM pgmq.meta m
                WHERE pg_catalog.lower(m.queue_name::text) = lq);
    IF channel IS NULL THEN
        RETURN false;
    END IF;
    PERFORM pg_catalog.pg_notify(channel, '');
    RETURN true;
END
$function$
;
COMMENT ON FUNCTION pgmq._limit_wake(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._limit_wake(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._limit_wake_sql(qtable text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT pg_catalog.format(
        '(SELECT pg_catalog.count(pgmq._limit_wake(w.queue_name::text)) FROM pgmq.queue_limit_slots w '
        'WHERE w.queue_name::text = %L AND w.kind = ''w'' AND w.slot = 0 '
        'AND w.t > ''-infinity''::timestamptz) >= 0',
        pg_catalog.substr(qtable, 3));
$function$
;
COMMENT ON FUNCTION pgmq._limit_wake_sql(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._limit_wake_sql(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_attribute_declaration()
 RETURNS TABLE(key text, kind text, minimum integer, side text, option text, allowed text, help text)
 LANGUAGE sql
 IMMUTABLE
AS $function$
    VALUES
        ('delivery_delay', 'seconds', 0, 'send', '--delay',
         'an integer number of seconds, 0 or more',
         'Delay every send that gives no delay of its own.'),
        ('deduplication_window', 'seconds', 0, 'send', '--dedup-window',
         'an integer number of seconds, 0 (off) or more',
         'Drop a send whose deduplication_id was sent within this duration.'),
        ('max_receive_count', 'count', 1, 'read', '--max-receives',
         'an integer, 1 or more, set together with dead_letter_queue',
         'Move a message to the dead-letter queue instead of delivering it more often than this.'),
        ('dead_letter_queue', 'queue', NULL, 'read', '--dead-letter',
         'the name of another queue, set together with max_receive_count',
         'The dead-letter queue (with max_receive_count).'),
        ('message_retention', 'seconds', 1, 'retention', '--retention',
         'an integer number of seconds, 1 or more',
         'Delete live messages enqueued longer ago (by pgmq_maintain and the workers).'),
        ('archive_retention', 'seconds', 1, 'retention', '--archive-retention',
         'an integer number of seconds, 1 or more',
         'Delete archived messages archived longer ago (by pgmq_maintain and the workers).'),
        ('max_message_size', 'bytes', 1, 'send', '--max-size',
         'an integer number of bytes, 1 or more',
         'Refuse messages whose JSON text is larger.'),
        ('priorities', 'switch', NULL, 'both', '--priorities',
         'true or false',
         'Read messages with a higher "priority" header (-100..100) first.'),
        ('paused', 'switch', NULL, 'read', NULL,
         'true or false',
         'Readers return no messages; sends go on.'),
        ('max_in_flight', 'count', 1, 'limit', '--max-in-flight',
         'an integer, 1 or more',
         'Hand out at most N messages at once (read, not yet deleted, archived or visible again).'),
        ('rate_limit', 'rate', NULL, 'limit', '--rate-limit',
         'an object {"count": N, "seconds": S}, N an integer 1 or more, S a number of seconds more than 0',
         'Hand out at most COUNT messages in any window of DURATION.')
$function$
;
COMMENT ON FUNCTION pgmq._queue_attribute_declaration() IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_attribute_declaration() FROM PUBLIC;



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
BEGIN
    -- archive and delete: one statement for every queue, attributes or not (see "Kept
    -- plans"); in a session that keeps it, the fast path (migration 0042)
    IF op = 'a' OR op = 'd' THEN
        IF pg_catalog.current_setting(pgmq._queue_ops_kept_key(qtable, op), true) = 'p' THEN
            stmt := pgmq._queue_ops_kept_ready(qtable, op);
        ELSE
            stmt := pgmq._queue_ops_prepared(qtable, op);
        END IF;
        IF stmt IS NOT NULL THEN
            RETURN QUERY SELECT * FROM pgmq._queue_ops_run_prepared_ids(stmt, p_ids);
        ELSE
            RETURN QUERY EXECUTE pgmq._queue_ops_kept_sql(qtable, op)
                USING p_op, NULL::integer, NULL::integer, p_vt, p_ids, p_msgs, p_headers,
                      NULL::jsonb, 0::bigint;
        END IF;
        RETURN;
    END IF;
    SELECT a.attributes INTO attrs
    FROM pgmq.queue_attributes a WHERE pg_catalog.lower(a.queue_name::text) = pg_catalog.lower($1);
    IF attrs IS NOT NULL THEN
        RETURN QUERY SELECT r.msg_id FROM pgmq._queue_ops_with_attributes(
            queue_name, attrs, p_op, NULL::integer, NULL::integer, p_vt, p_ids, p_msgs, p_headers,
            NULL::jsonb, 0::bigint) r;
        RETURN;
    END IF;
    RETURN QUERY EXECUTE pgmq._queue_ops_ids_sql(qtable, op)
        USING p_op, NULL::integer, NULL::integer, p_vt, p_ids, p_msgs, p_headers, NULL::jsonb, 0::bigint;
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_route_ids(text,"char",timestamp with time zone,bigint[],jsonb[],jsonb[]) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_route_ids(text,"char",timestamp with time zone,bigint[],jsonb[],jsonb[]) FROM PUBLIC;

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
    stmt text;
    rows refcursor;
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
            -- A limited queue: note what was claimed, for pgmq._claim_record. A read that
            -- the limits only cap (no priorities, no redrive) is the plain read of the
            -- quantity allowed: kept in the session as 'l' (sql/15_queue_ops.sql).
            IF p_op = 'r' AND NOT f.by_priority AND f.dead_letter_queue IS NULL THEN
                stmt := pgmq._queue_ops_prepared(pgmq.format_table_name(queue_name, 'q'::text), 'l');
            END IF;
            IF stmt IS NOT NULL THEN
                OPEN rows FOR SELECT * FROM pgmq._queue_ops_run_prepared(stmt, qty, p_secs, p_ids, p_cond, low);
            ELSE
                OPEN rows FOR EXECUTE pgmq._queue_ops_attr_sql(queue_name, p_op, '$9'::text, attrs)
                    USING p_op, qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond, low;
            END IF;
            LOOP
                FETCH rows INTO rec;
                EXIT WHEN NOT FOUND;
                claimed := claimed || rec.msg_id;
                claimed_rcs := claimed_rcs || rec.read_ct;
                claimed_vts := claimed_vts || rec.vt;
                RETURN NEXT rec;
            END LOOP;
            CLOSE rows;
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
        -- A slot may have freed (not by a heartbeat's set_vt into the future): wake a
        -- worker waiting at the limit (at commit) if a claim found the queue full. The
        -- slot itself frees lazily (sql/26_limits.sql).
        GET DIAGNOSTICS n = ROW_COUNT;
        IF n > 0 THEN
            PERFORM pgmq._limit_wake(pg_catalog.lower(queue_name));
        END IF;
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_with_attributes(text,jsonb,"char",integer,integer,timestamp with time zone,bigint[],jsonb[],jsonb[],jsonb,bigint) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_with_attributes(text,jsonb,"char",integer,integer,timestamp with time zone,bigint[],jsonb[],jsonb[],jsonb,bigint) FROM PUBLIC;

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
    IF NOT attrs ?| pgmq._limit_keys() THEN
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


-- 0050_one_statement_builder_per_operation_and
-- 0050_one_statement_builder_per_operation_and: one statement builder per operation and fewer limit statements
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._limit_reclaim(text,tid[],text);
CREATE OR REPLACE FUNCTION pgmq._ack_sql(qtable text, archive boolean, cond text DEFAULT ''::text, ids text DEFAULT '$5'::text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT pg_catalog.format(
        CASE WHEN archive THEN $sql$
        WITH moved AS (
            DELETE FROM pgmq.%1$I q WHERE q.msg_id = ANY(%4$s)%3$s
            RETURNING q.msg_id, q.read_ct, q.enqueued_at, q.last_read_at, q.vt, q.message, q.headers
        )
        INSERT INTO pgmq.%2$I AS a (msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers)
        SELECT * FROM moved
        RETURNING a.msg_id$sql$
        ELSE $sql$
        DELETE FROM pgmq.%1$I q WHERE q.msg_id = ANY(%4$s)%3$s
        RETURNING q.msg_id$sql$ END,
        qtable, 'a' || pg_catalog.substr(qtable, 2), cond, ids);
$function$
;
COMMENT ON FUNCTION pgmq._ack_sql(text,boolean,text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._ack_sql(text,boolean,text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._claim_limits(queue_name text, qty integer, pops boolean, take_lock boolean, OUT allowed integer, OUT slots tid[], OUT tokens tid[], OUT max_in_flight integer, OUT in_flight integer, OUT rate_count integer, OUT rate_seconds double precision, OUT handed_out integer, OUT next_free_at timestamp with time zone)
 RETURNS record
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
DECLARE
    lq text := pg_catalog.lower(queue_name);
    s pgmq.queue_limit_state;
    qtable text;
    now_ timestamptz := pg_catalog.clock_timestamp();
    window_start timestamptz;
    free_ integer;
    free_before timestamptz;
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
            free_ := allowed;
            slots := pgmq._limit_take(lq, 'f', allowed, s.max_in_flight, s.slots_made, now_, qtable);
            allowed := pg_catalog.cardinality(slots);
            -- Full: refused some for want of a slot. The next acknowledgement wakes the
            -- readers waiting (pgmq._limit_wake). (Not "took the last free slot": with
            -- slots freed lazily that takes a look at every slot's message to know.)
            IF allowed < free_ THEN
                PERFORM pgmq._limit_mark_full(lq);
            END IF;
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
            -- Counted in full (metrics): a slot is taken while its message is in flight
            -- under the read that took it (slots free lazily: t says nothing alone).
            EXECUTE pg_catalog.format(
                'SELECT pg_catalog.count(*) FROM pgmq.queue_limit_slots l '
                'WHERE l.queue_name::text = $1 AND l.kind = ''f'' AND l.msg_id IS NOT NULL '
                '  AND EXISTS (SELECT 1 FROM pgmq.%I q WHERE q.msg_id = l.msg_id '
                '       AND q.read_ct = l.read_ct AND q.vt > $2)',
                qtable) INTO in_flight USING lq, now_;
        END IF;
        IF NOT pops THEN
            IF EXISTS (SELECT 1 FROM pgmq.queue_limit_slots l WHERE l.queue_name::text = lq AND l.kind = 'f'
                       AND l.slot > s.max_in_flight AND l.msg_id IS NOT NULL
                       AND l.read_ct IS DISTINCT FROM -1) THEN
                free_ := 0;
            ELSIF qty IS NULL THEN
                free_ := GREATEST(s.max_in_flight - in_flight, 0);
            ELSE
                -- Enough to answer: at most qty free slots counted.
                EXECUTE pg_catalog.format(
                    'SELECT pg_catalog.count(*) FROM (SELECT 1 FROM pgmq.queue_limit_slots l '
                    'WHERE l.queue_name::text = $1 AND l.kind = ''f'' AND l.slot <= $3 '
                    '  AND NOT EXISTS (SELECT 1 FROM pgmq.%I q WHERE q.msg_id = l.msg_id '
                    '       AND q.read_ct = l.read_ct AND q.vt > $2) '
                    'LIMIT $4) x', qtable)
                    INTO free_ USING lq, now_, s.max_in_flight, qty;
                free_ := free_ + GREATEST(s.max_in_flight - s.slots_made, 0);
            END IF;
            allowed := LEAST(allowed, free_);
            IF free_ = 0 THEN
                -- the first vt of a message in flight in a slot
                EXECUTE pg_catalog.format(
                    'SELECT pg_catalog.min(q.vt) FROM pgmq.queue_limit_slots l JOIN pgmq.%I q '
                    '  ON q.msg_id = l.msg_id AND q.read_ct = l.read_ct '
                    'WHERE l.queue_name::text = $1 AND l.kind = ''f'' AND q.vt > $2', qtable)
                    INTO free_before USING lq, now_;
                next_free_at := GREATEST(next_free_at, free_before);
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
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
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
        WHERE l.ctid = ANY (counts[1:n]) AND l.queue_name IS NOT DISTINCT FROM lq AND l.kind = 'r'
          AND l.slot <= s.rate_count
          AND l.t <= pg_catalog.clock_timestamp() - pg_catalog.make_interval(secs => s.rate_seconds);
    END IF;
    IF held IS NOT NULL AND NOT pops AND s.max_in_flight IS NOT NULL
       AND pg_catalog.cardinality(claimed_read_cts) = n AND pg_catalog.cardinality(claimed_vts) = n THEN
        -- The claim's own rows (the router's): a slot whose message is not in flight
        -- under that read is taken again (pgmq._limit_take checks).
        UPDATE pgmq.queue_limit_slots l
        SET msg_id = claimed[x.i], read_ct = claimed_read_cts[x.i]
        FROM (SELECT h.tid, h.i FROM ROWS FROM (pg_catalog.unnest(held[1:n])) WITH ORDINALITY AS h(tid, i)) x
        WHERE l.ctid = ANY (held[1:n]) AND l.ctid = x.tid AND l.queue_name IS NOT DISTINCT FROM lq AND l.kind = 'f'
          AND l.slot <= s.max_in_flight AND (l.msg_id IS NULL OR l.read_ct = -1)
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
            UPDATE pgmq.queue_limit_slots l SET msg_id = ids[i], read_ct = rcs[i]
            WHERE l.ctid = held[i] AND l.queue_name IS NOT DISTINCT FROM lq AND l.kind = 'f'
              AND l.slot <= s.max_in_flight AND (l.msg_id IS NULL OR l.read_ct = -1);
        END LOOP;
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._claim_record(text,tid[],timestamp with time zone[],tid[],bigint[],boolean,integer[],timestamp with time zone[]) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._claim_record(text,tid[],timestamp with time zone[],tid[],bigint[],boolean,integer[],timestamp with time zone[]) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._kept_guard_sql(qtable text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT pg_catalog.format(
        'NOT EXISTS (SELECT FROM pgmq.queue_attributes x WHERE pg_catalog.lower(x.queue_name::text) = %L)',
        pg_catalog.substr(qtable, 3));
$function$
;
COMMENT ON FUNCTION pgmq._kept_guard_sql(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._kept_guard_sql(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._limit_reclaim(lq text, tids tid[], ids bigint[], rcs integer[], qtable text)
 RETURNS tid[]
 LANGUAGE plpgsql
AS $function$
DECLARE
    f_ids bigint[];
    f_rcs integer[];
    freed tid[];
BEGIN
    IF pg_catalog.current_setting('transaction_isolation') <> 'read committed' THEN
        EXECUTE pg_catalog.format(
            'SELECT pg_catalog.count(*) FROM (SELECT 1 FROM pgmq.%I q WHERE q.msg_id = ANY ($1) '
            '  FOR SHARE OF q SKIP LOCKED) x', qtable)
            USING ids;
    END IF;
    -- The messages still in flight (one short statement: planned at each call, as it
    -- names the queue's table; the rest is static, its plan kept).
    EXECUTE pg_catalog.format(
        'SELECT pg_catalog.array_agg(q.msg_id), pg_catalog.array_agg(q.read_ct) '
        'FROM pgmq.%I q WHERE q.msg_id = ANY ($1) AND q.vt > pg_catalog.clock_timestamp()', qtable)
        INTO f_ids, f_rcs USING ids;
    -- Marked reclaimed, their ctids change (a new version of each row); the others free
    -- as locked (no message, or reclaimed already) keep theirs.
    WITH u AS (
        UPDATE pgmq.queue_limit_slots l SET read_ct = -1
        WHERE l.ctid = ANY (tids) AND l.queue_name IS NOT DISTINCT FROM lq AND l.msg_id IS NOT NULL
          AND l.read_ct IS DISTINCT FROM -1
          AND NOT EXISTS (SELECT 1 FROM ROWS FROM (pg_catalog.unnest(f_ids), pg_catalog.unnest(f_rcs)) AS h(id, rc)
                          WHERE h.id = l.msg_id AND h.rc = l.read_ct)
        RETURNING l.ctid
    )
    SELECT coalesce(pg_catalog.array_agg(x.tid), '{}') INTO freed
    FROM (SELECT u.ctid AS tid FROM u
          UNION ALL
          SELECT s.tid FROM ROWS FROM (pg_catalog.unnest(tids), pg_catalog.unnest(ids), pg_catalog.unnest(rcs))
                            AS s(tid, id, rc)
          WHERE s.id IS NULL OR s.rc = -1) x;
    RETURN freed;
END
$function$
;
COMMENT ON FUNCTION pgmq._limit_reclaim(text,tid[],bigint[],integer[],text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._limit_reclaim(text,tid[],bigint[],integer[],text) FROM PUBLIC;



CREATE OR REPLACE FUNCTION pgmq._queue_ops_ids_sql(qtable text, op "char", cond text DEFAULT ''::text, ids text DEFAULT '$5'::text, vt text DEFAULT '$4'::text, msgs text DEFAULT '$6'::text, hdrs text DEFAULT '$7'::text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT CASE WHEN op IN ('s', '1') THEN pgmq._send_sql(qtable, op = '1', cond, vt, msgs, hdrs)
                WHEN op IN ('a', 'd') THEN pgmq._ack_sql(qtable, op = 'a', cond, ids)
           END;
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_ids_sql(text,"char",text,text,text,text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_ids_sql(text,"char",text,text,text,text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_kept_sql(qtable text, op "char", low text DEFAULT '$9'::text, qty text DEFAULT '$2'::text, secs text DEFAULT '$3'::text, cond text DEFAULT '$8'::text, ids text DEFAULT '$5'::text, vt text DEFAULT '$4'::text, msgs text DEFAULT '$6'::text, hdrs text DEFAULT '$7'::text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT CASE WHEN op IN ('a', 'd')
                THEN pgmq._queue_ops_ids_sql(qtable, op, ' AND ' || pgmq._limit_wake_sql(qtable), ids)
                -- 'l': a limited queue's read, run by the router after the claim filter
                -- capped its quantity (sql/25_attributes.sql): the plain read, no guard
                WHEN op = 'l'
                THEN pgmq._queue_ops_sql_for(qtable, 'r', low, qty, secs, cond)
                WHEN op = 's'
                THEN pgmq._queue_ops_ids_sql(qtable, op, ' WHERE ' || pgmq._kept_guard_sql(qtable), ids, vt, msgs, hdrs)
                ELSE pgmq._queue_ops_sql_for(qtable, op, low || ' AND ' || pgmq._kept_guard_sql(qtable), qty, secs, cond)
           END;
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
        WHEN op IN ('s', '1', 'a', 'd') THEN pgmq._queue_ops_ids_sql(qtable, op) || pgmq._record_rest_sql()
        WHEN op IN ('r', 'p') THEN pgmq._read_sql(qtable, op = 'p', low, qty, secs, cond)
        WHEN op = 'v' THEN pgmq._set_vt_sql(qtable)
    END;
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_sql_for(text,"char",text,text,text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_sql_for(text,"char",text,text,text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._read_pick_sql(qtable text, low text, qty text, cond text, extra text DEFAULT ''::text, order_by text DEFAULT 'q.msg_id'::text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT pg_catalog.format(
        $pick$
                SELECT q.msg_id FROM pgmq.%1$I q
                WHERE q.msg_id >= %2$s AND q.vt <= pg_catalog.clock_timestamp()
                  AND (%3$s IS NULL OR %3$s = '{}'::jsonb OR q.message @> %3$s)%5$s
                ORDER BY %6$s
                LIMIT %4$s
                FOR UPDATE SKIP LOCKED
            $pick$,
        qtable, low, cond, qty, extra, order_by);
$function$
;
COMMENT ON FUNCTION pgmq._read_pick_sql(text,text,text,text,text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._read_pick_sql(text,text,text,text,text,text) FROM PUBLIC;


CREATE OR REPLACE FUNCTION pgmq._record_rest_sql()
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
    SELECT $cols$, NULL::integer, NULL::timestamptz,
                  NULL::timestamptz, NULL::timestamptz, NULL::jsonb, NULL::jsonb$cols$::text;
$function$
;
COMMENT ON FUNCTION pgmq._record_rest_sql() IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._record_rest_sql() FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._send_sql(qtable text, one boolean DEFAULT false, cond text DEFAULT ''::text, vt text DEFAULT '$4'::text, msgs text DEFAULT '$6'::text, hdrs text DEFAULT '$7'::text, delay text DEFAULT ''::text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT pg_catalog.format(
        CASE WHEN one THEN $sql$
        INSERT INTO pgmq.%1$I AS q (vt, message, headers)
        VALUES (coalesce(%2$s, pg_catalog.clock_timestamp()%6$s), (%3$s)[1], (%4$s)[1])
        RETURNING q.msg_id$sql$
        ELSE $sql$
        INSERT INTO pgmq.%1$I AS q (vt, message, headers)
        SELECT coalesce(%2$s, pg_catalog.clock_timestamp()%6$s), u.msg, u.hdr
        FROM unnest(%3$s, %4$s) AS u(msg, hdr)%5$s
        RETURNING q.msg_id$sql$ END,
        qtable, vt, msgs, hdrs, cond, delay);
$function$
;
COMMENT ON FUNCTION pgmq._send_sql(text,boolean,text,text,text,text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._send_sql(text,boolean,text,text,text,text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._set_vt_sql(qtable text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT pg_catalog.format($sql$
        WITH moved AS (
            UPDATE pgmq.%1$I q SET vt = $4 WHERE q.msg_id = ANY($5)
            RETURNING q.msg_id, q.read_ct, q.enqueued_at, q.last_read_at, q.vt, q.message, q.headers
        )
        SELECT * FROM moved m ORDER BY m.msg_id
        $sql$, qtable);
$function$
;
COMMENT ON FUNCTION pgmq._set_vt_sql(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._set_vt_sql(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.send(queue_name text, msg jsonb)
 RETURNS SETOF bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text := pgmq._message_table_name(queue_name, 'q'::text);
BEGIN
    IF NOT EXISTS (SELECT FROM pgmq.queue_attributes a WHERE pg_catalog.lower(a.queue_name::text) = pg_catalog.lower($1)) THEN
        RETURN QUERY EXECUTE pgmq._send_sql(qtable, true)
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

-- By hand: table pgmq.queue_limit_slots
-- Half of each page left free, so that a claim's two updates of a slot row stay HOT
-- (rows already there keep their place; pages fill to 50% from now on).
ALTER TABLE pgmq.queue_limit_slots SET (fillfactor = 50);

-- 0051_fifo_spark_and_dedup_sends_use_the
-- 0051_fifo_spark_and_dedup_sends_use_the: fifo spark and dedup sends use the builders, a cheaper reclaim
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._limit_reclaim(text,tid[],bigint[],integer[],text);
DROP FUNCTION IF EXISTS pgmq._read_pick_sql(text,text,text,text,text,text);
DROP FUNCTION IF EXISTS pgmq._send_sql(text,boolean,text,text,text,text,text);
CREATE OR REPLACE FUNCTION pgmq._limit_reclaim(lq text, tids tid[], ids bigint[], qtable text)
 RETURNS tid[]
 LANGUAGE plpgsql
AS $function$
DECLARE
    f_ids bigint[];
    f_rcs integer[];
    freed tid[];
BEGIN
    IF pg_catalog.current_setting('transaction_isolation') <> 'read committed' THEN
        EXECUTE pg_catalog.format(
            'SELECT pg_catalog.count(*) FROM (SELECT 1 FROM pgmq.%I q WHERE q.msg_id = ANY ($1) '
            '  FOR SHARE OF q SKIP LOCKED) x', qtable)
            USING ids;
    END IF;
    -- The messages still in flight (one short statement: planned at each call, as it
    -- names the queue's table; the rest is static, its plan kept).
    EXECUTE pg_catalog.format(
        'SELECT pg_catalog.array_agg(q.msg_id), pg_catalog.array_agg(q.read_ct) '
        'FROM pgmq.%I q WHERE q.msg_id = ANY ($1) AND q.vt > pg_catalog.clock_timestamp()', qtable)
        INTO f_ids, f_rcs USING ids;
    -- Marked reclaimed, their ctids change (a new version of each row). A slot's message
    -- is found by its position in f_ids (msg_id is the queue table's key: each at most
    -- once), with no function scan of the arrays (since migration 0051: a FunctionScan's
    -- start-up was a tenth of what a claim adds).
    WITH u AS (
        UPDATE pgmq.queue_limit_slots l SET read_ct = -1
        WHERE l.ctid = ANY (tids) AND l.queue_name IS NOT DISTINCT FROM lq AND l.msg_id IS NOT NULL
          AND l.read_ct IS DISTINCT FROM -1
          AND f_rcs[pg_catalog.array_position(f_ids, l.msg_id)] IS DISTINCT FROM l.read_ct
        RETURNING l.ctid
    )
    SELECT coalesce(pg_catalog.array_agg(u.ctid), '{}') INTO freed FROM u;
    RETURN freed;
END
$function$
;
COMMENT ON FUNCTION pgmq._limit_reclaim(text,tid[],bigint[],text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._limit_reclaim(text,tid[],bigint[],text) FROM PUBLIC;

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
    c_held boolean;
    c_free tid[];
    freed tid[];
    n integer;
    rounds integer := 0;
    -- 'f' with no want (all there are): every free slot, found by the walk at once
    walk boolean := kind = 'f' AND want IS NULL;
    at_key text := 'pgmq.limit_at_' || pg_catalog.replace(lq, '-', '$');
    at_ text := pg_catalog.current_setting(at_key, true);
    at integer := CASE WHEN at_ ~ '^[0-9]{1,9}$' THEN at_::integer ELSE 1 END;
    wrapped boolean := false;
    had integer;
BEGIN
    IF want <= 0 THEN
        RETURN got;
    END IF;
    IF kind = 'r' AND EXISTS (SELECT 1 FROM pgmq.queue_limit_slots l
                              WHERE l.queue_name::text = lq AND l.kind = 'r' AND l.slot > cap
                                AND l.t > free_before) THEN
        RETURN got;
    END IF;
    IF kind = 'r' THEN
        SELECT pg_catalog.array_agg(x.ctid) INTO c_tids
        FROM (SELECT l.ctid FROM pgmq.queue_limit_slots l
              WHERE l.queue_name::text = lq AND l.kind = 'r' AND l.slot <= cap AND l.t <= free_before
              ORDER BY l.t
              LIMIT want
              FOR UPDATE SKIP LOCKED) x;
        got := coalesce(c_tids, '{}');
    ELSE
        IF EXISTS (SELECT 1 FROM pgmq.queue_limit_slots l
                   WHERE l.queue_name::text = lq AND l.kind = 'f' AND l.slot > cap
                     AND l.msg_id IS NOT NULL) THEN
            EXECUTE pg_catalog.format(
                'SELECT EXISTS (SELECT 1 FROM pgmq.queue_limit_slots l JOIN pgmq.%I q '
                '  ON q.msg_id = l.msg_id AND q.read_ct = l.read_ct AND q.vt > pg_catalog.clock_timestamp() '
                '  WHERE l.queue_name::text = $1 AND l.kind = ''f'' AND l.slot > $2)', qtable)
                INTO c_held USING lq, cap;
            IF c_held THEN
                RETURN got;
            END IF;
        END IF;
        IF at > LEAST(cap, made) THEN
            at := 1;
        END IF;
        LOOP
            rounds := rounds + 1;
            -- The rows locked, as locked (the latest version of each: what the claim
            -- checks after its lock).
            IF NOT walk THEN
                SELECT pg_catalog.array_agg(x.ctid), pg_catalog.array_agg(x.slot),
                       pg_catalog.array_agg(x.msg_id),
                       pg_catalog.bool_or(x.msg_id IS NOT NULL AND x.read_ct <> -1),
                       pg_catalog.array_agg(x.ctid) FILTER (WHERE x.msg_id IS NULL OR x.read_ct = -1)
                INTO c_tids, c_slots, c_ids, c_held, c_free
                FROM (SELECT l.ctid, l.slot, l.msg_id, l.read_ct FROM pgmq.queue_limit_slots l
                      WHERE l.queue_name::text = lq AND l.kind = 'f' AND l.slot >= at
                        AND l.slot <= cap AND l.slot <> ALL (seen)
                      ORDER BY l.slot
                      LIMIT want - pg_catalog.cardinality(got)
                      FOR UPDATE SKIP LOCKED) x;
            ELSE
                EXECUTE pg_catalog.format(
                    'SELECT pg_catalog.array_agg(x.ctid), pg_catalog.array_agg(x.slot), '
                    '       pg_catalog.array_agg(x.msg_id), '
                    '       pg_catalog.bool_or(x.msg_id IS NOT NULL AND x.read_ct <> -1), '
                    '       pg_catalog.array_agg(x.ctid) FILTER (WHERE x.msg_id IS NULL OR x.read_ct = -1) '
                    'FROM (SELECT l.ctid, l.slot, l.msg_id, l.read_ct FROM pgmq.queue_limit_slots l '
                    '      WHERE l.queue_name::text = $1 AND l.kind = ''f'' AND l.slot >= $5 '
                    '        AND l.slot <= $2 AND l.slot <> ALL ($3) '
                    '        AND NOT EXISTS (SELECT 1 FROM pgmq.%I q WHERE q.msg_id = l.msg_id '
                    '            AND q.read_ct = l.read_ct AND q.vt > pg_catalog.clock_timestamp()) '
                    '      ORDER BY l.slot LIMIT $4 FOR UPDATE SKIP LOCKED) x', qtable)
                INTO c_tids, c_slots, c_ids, c_held, c_free
                USING lq, cap, seen, want - pg_catalog.cardinality(got), at;
            END IF;
            IF c_tids IS NULL THEN
                -- the end of the ring: once round from its start
                EXIT WHEN wrapped OR at = 1;
                wrapped := true;
                at := 1;
                CONTINUE;
            END IF;
            seen := seen || c_slots;
            -- by slot number: the last is the highest (a hint only, whatever it is)
            at := c_slots[pg_catalog.cardinality(c_slots)] + 1;
            -- the slots free as locked (no message, or reclaimed already), and those
            -- whose message is no longer in flight under the read that took them
            freed := CASE WHEN c_held
                          THEN coalesce(c_free, '{}') || pgmq._limit_reclaim(lq, c_tids, c_ids, qtable)
                          ELSE c_tids END;
            got := got || freed;
            EXIT WHEN want IS NULL OR pg_catalog.cardinality(got) >= want OR rounds >= 6;
            IF NOT walk AND pg_catalog.cardinality(freed) < pg_catalog.cardinality(c_tids) THEN
                -- Some slots tried still hold messages in flight: walk past them (the
                -- cursor then starts this session's next claim after them), unless every
                -- slot is made and the queue was found full within the last second.
                walk := made < cap OR NOT EXISTS (
                    SELECT 1 FROM pgmq.queue_limit_slots w
                    WHERE w.queue_name::text = lq AND w.kind = 'w' AND w.slot = 0
                      AND w.t > pg_catalog.clock_timestamp() - interval '1 second');
                EXIT WHEN NOT walk;
            END IF;
        END LOOP;
        PERFORM pg_catalog.set_config(at_key, at::text, false);
    END IF;
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
            had := pg_catalog.cardinality(got);
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
                -- this session's next claim starts after the new rows it took
                PERFORM pg_catalog.set_config(
                    at_key, (made + 1 + pg_catalog.cardinality(got) - had)::text, false);
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
    delay text := '';
    -- Only the ordering and redrive matter here: the limits are the caller's (no lock).
    f record := pgmq._claim_filter(queue_name, attrs - pgmq._limit_keys(), NULL);
    window_ text := (attrs ->> 'deduplication_window') || ' seconds';
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
            delay := pg_catalog.format(' + interval %L', (attrs ->> 'delivery_delay') || ' seconds');
        END IF;
        IF coalesce((attrs ->> 'deduplication_window')::integer, 0) = 0 THEN
            RETURN pgmq._send_sql(qtable, false, CASE WHEN gate = 'TRUE' THEN '' ELSE ' WHERE ' || gate END,
                                  '$4', '$6', '$7', delay) || pgmq._record_rest_sql();
        END IF;
        IF op = 'S' THEN
            -- The fast send: two plain inserts, the ids claimed in the order the statement
            -- below claims them (so no two batches, fast or not, wait on each other's ids
            -- crosswise). Any id already claimed, by an earlier send, a concurrent one
            -- (after its commit) or this batch itself, raises unique_violation, and the
            -- caller runs the statement below instead.
            RETURN pg_catalog.format(
                $sql$
        WITH m AS (%1$s
        ), claimed AS (
            -- the owner's helper records the ids (pgmq._dedup_record)
            SELECT pgmq._dedup_record(%4$L::text,
                                      pg_catalog.array_agg(m.dedup ORDER BY m.dedup),
                                      pg_catalog.array_agg(m.msg_id ORDER BY m.dedup)) AS n
            FROM m WHERE m.dedup IS NOT NULL
        )
        SELECT (SELECT pg_catalog.array_agg(m.msg_id ORDER BY m.msg_id) FROM m) FROM claimed
                $sql$,
                pgmq._send_sql(qtable, false, CASE WHEN gate = 'TRUE' THEN '' ELSE ' WHERE ' || gate END,
                               '$4', '$6', '$7', delay, $r$q.msg_id, q.headers ->> 'deduplication_id' AS dedup$r$),
                NULL, NULL, pg_catalog.lower(queue_name));
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
        inserted AS (%2$s
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
            qtable,
            pgmq._send_sql(qtable, false, '', '$4', NULL, NULL, delay, 'q.msg_id', $rows$(
                SELECT n.msg, n.hdr, n.new_id AS id
                FROM numbered n
                WHERE n.dedup IS NULL OR n.new_id IN (SELECT c.msg_id FROM claimed c)
                ORDER BY n.ord) AS u$rows$),
            msg,
            pg_catalog.pg_get_serial_sequence(pg_catalog.format('pgmq.%I', qtable), 'msg_id'),
            pg_catalog.lower(queue_name), window_, gate);
    END IF;

    IF op <> 'r' AND op <> 'p' THEN
        RETURN pgmq._queue_ops_sql(queue_name, op, low);
    END IF;
    RETURN pgmq._read_sql(
        qtable, op = 'p', low, '$2', '$3', '$8', f.by_priority, f.max_receive_count,
        -- the name as stored, as the worker's dead letters write it, whatever the
        -- caller's spelling
        CASE WHEN f.dead_letter_queue IS NOT NULL
             THEN pgmq._dead_letter_move_sql(pgmq._stored_queue_name(queue_name), f.dead_letter_queue) END);
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_attr_sql(text,"char",text,jsonb) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_attr_sql(text,"char",text,jsonb) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._read_claim_sql(qtable text, pops boolean, secs text, ids text, now text DEFAULT 'pg_catalog.clock_timestamp()'::text, cols text DEFAULT 'm.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message, m.headers'::text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT pg_catalog.format(
        CASE WHEN pops THEN 'DELETE FROM pgmq.%1$I m' ELSE $upd$UPDATE pgmq.%1$I m
            SET vt = %5$s + pg_catalog.make_interval(secs => %2$s),
                read_ct = m.read_ct + 1,
                last_read_at = %5$s$upd$ END
        || $sql$
            WHERE m.msg_id = ANY(ARRAY(%3$s))
            RETURNING %4$s$sql$,
        qtable, secs, ids, cols, now);
$function$
;
COMMENT ON FUNCTION pgmq._read_claim_sql(text,boolean,text,text,text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._read_claim_sql(text,boolean,text,text,text,text) FROM PUBLIC;

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
            %2$s
        )
        SELECT c.msg_id, c.read_ct, c.enqueued_at, c.last_read_at, c.vt, c.message, c.headers
        FROM claimed c JOIN usable u ON u.msg_id = c.msg_id
        -- Round-robin keeps its rounds (as pgmq does); the others come in msg_id order.
        ORDER BY CASE WHEN $4 = 'rr' THEN u.rnk ELSE 0 END,
                 CASE WHEN $4 = 'rr' THEN u.prio ELSE 0 END,
                 c.msg_id
        $q$,
        qtable,
        -- the claim every read makes (sql/15_queue_ops.sql)
        pgmq._read_claim_sql(qtable, false, '$3', 'SELECT u.msg_id FROM usable u')
    );
    IF f.max_receive_count IS NULL AND NOT limited THEN
        RETURN QUERY EXECUTE claim
            USING groups, wanted, coalesce(vt, 0), mode,
            -- The most one group can contribute: every other group gives at least one.
            CASE WHEN mode = 'head' THEN 1 ELSE wanted - pg_catalog.cardinality(groups) + 1 END, given;
        RETURN;
    END IF;
    FOR rec IN EXECUTE claim
        USING groups, wanted, coalesce(vt, 0), mode,
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

CREATE OR REPLACE FUNCTION pgmq._read_pick_sql(qtable text, low text, qty text, cond text, extra text DEFAULT ''::text, order_by text DEFAULT 'q.msg_id'::text, now text DEFAULT 'pg_catalog.clock_timestamp()'::text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT pg_catalog.format(
        $pick$
                SELECT q.msg_id FROM pgmq.%1$I q
                WHERE q.msg_id >= %2$s AND q.vt <= %7$s
                  AND (%3$s IS NULL OR %3$s = '{}'::jsonb OR q.message @> %3$s)%5$s
                ORDER BY %6$s
                LIMIT %4$s
                FOR UPDATE SKIP LOCKED
            $pick$,
        qtable, low, cond, qty, extra, order_by, now);
$function$
;
COMMENT ON FUNCTION pgmq._read_pick_sql(text,text,text,text,text,text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._read_pick_sql(text,text,text,text,text,text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._read_sql(qtable text, pops boolean, low text, qty text DEFAULT '$2'::text, secs text DEFAULT '$3'::text, cond text DEFAULT '$8'::text, by_priority boolean DEFAULT false, max_receive_count integer DEFAULT NULL::integer, dead_move text DEFAULT NULL::text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT pg_catalog.format(
        CASE WHEN dead_move IS NULL THEN $sql$
        WITH $sql$ ELSE $dead$
        WITH picked AS MATERIALIZED (%3$s),
        dead AS (
            DELETE FROM pgmq.%1$I m
            WHERE m.msg_id = ANY(ARRAY(%5$s))
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.message, m.headers,
                      NULL::text AS error
        ),
        %6$s,
        $dead$ END
        || $sql$claimed AS (
            %2$s
        )
        SELECT * FROM claimed c ORDER BY %4$s
        $sql$,
        qtable,
        pgmq._read_claim_sql(qtable, pops, secs,
            CASE WHEN dead_move IS NULL THEN pgmq._read_pick_sql(
                qtable, low, qty, cond, '',
                CASE WHEN by_priority THEN 'pgmq._task_priority(q.headers) DESC, q.msg_id' ELSE 'q.msg_id' END)
            ELSE 'SELECT p.msg_id FROM picked p' END),
        CASE WHEN dead_move IS NOT NULL THEN pgmq._read_pick_sql(
            qtable, low, qty, cond, ' AND q.read_ct < ' || max_receive_count::text,
            CASE WHEN by_priority THEN 'pgmq._task_priority(q.headers) DESC, q.msg_id' ELSE 'q.msg_id' END) END,
        CASE WHEN by_priority THEN 'pgmq._task_priority(c.headers) DESC, c.msg_id' ELSE 'c.msg_id' END,
        CASE WHEN dead_move IS NOT NULL THEN pgmq._read_pick_sql(
            qtable, low, 'greatest(' || qty || ', 100)', cond,
            pg_catalog.format(
                $x$ AND q.read_ct >= %s
                  AND ((SELECT pg_catalog.count(*) FROM picked) < %s
                       OR q.msg_id < (SELECT pg_catalog.max(p.msg_id) FROM picked p))$x$,
                max_receive_count, qty)) END,
        dead_move);
$function$
;
COMMENT ON FUNCTION pgmq._read_sql(text,boolean,text,text,text,text,boolean,integer,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._read_sql(text,boolean,text,text,text,text,boolean,integer,text) FROM PUBLIC;

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
    -- The pick and the claim are every read's (sql/15_queue_ops.sql), at the claim's stamp.
    EXECUTE pg_catalog.format(
        $q$
        WITH picked AS MATERIALIZED (%1$s),
        over_read AS MATERIALIZED (%2$s),
        claimed AS (
            %3$s
        )
        SELECT (SELECT pg_catalog.array_agg(c.msg_id ORDER BY c.msg_id) FROM claimed c),
               (SELECT pg_catalog.array_agg(o.msg_id ORDER BY o.msg_id) FROM over_read o)
        $q$,
        pgmq._read_pick_sql(
            qtable, '0', '$4', 'NULL::jsonb',
            ' AND ($2::bigint IS NULL OR q.msg_id <= $2) AND q.msg_id <> ALL ($3)'
            ' AND NOT coalesce(q.read_ct >= $6, false)',
            CASE WHEN f.by_priority THEN 'pgmq._task_priority(q.headers) DESC, q.msg_id' ELSE 'q.msg_id' END,
            '$1'),
        pgmq._read_pick_sql(
            qtable, '0', 'greatest($4, 100)', 'NULL::jsonb',
            ' AND $6 IS NOT NULL AND q.read_ct >= $6'
            ' AND ($2::bigint IS NULL OR q.msg_id <= $2) AND q.msg_id <> ALL ($3)'
            ' AND ($4 IS NULL OR (SELECT pg_catalog.count(*) FROM picked) < $4'
            ' OR q.msg_id < (SELECT pg_catalog.max(p.msg_id) FROM picked p))',
            'q.msg_id', '$1'),
        pgmq._read_claim_sql(qtable, false, '$5', 'SELECT p.msg_id FROM picked p', '$1', 'm.msg_id')
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


-- 0052_sql_api_fast_paths_limit_slots_by_key
-- 0052_sql_api_fast_paths_limit_slots_by_key: SQL API fast paths, limit slots by key, chain steps sent directly
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
ALTER TABLE pgmq.workflow_step DROP CONSTRAINT IF EXISTS workflow_step_status_check;
DROP INDEX IF EXISTS pgmq.queue_limit_slots_free;
DROP INDEX IF EXISTS pgmq.workflow_step_sent_idx;
-- BY HAND: a step's status checked by a domain in place of the table's CHECK (which every
-- statement that writes a row read back from its text and prepared again)
CREATE DOMAIN pgmq.workflow_step_status AS text
    CONSTRAINT workflow_step_status_check CHECK (VALUE IN ('waiting', 'sent', 'done', 'failed', 'cancelled'));
ALTER TABLE pgmq.workflow_step ALTER COLUMN status TYPE pgmq.workflow_step_status;
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
    c_held boolean;
    c_free tid[];
    freed tid[];
    n integer;
    rounds integer := 0;
    -- 'f' with no want (all there are): every free slot, found by the walk at once
    walk boolean := kind = 'f' AND want IS NULL;
    at_key text := 'pgmq.limit_at_' || pg_catalog.replace(lq, '-', '$');
    at_ text := pg_catalog.current_setting(at_key, true);
    at integer := CASE WHEN at_ ~ '^[0-9]{1,9}$' THEN at_::integer ELSE 1 END;
    wrapped boolean := false;
    had integer;
BEGIN
    IF want <= 0 THEN
        RETURN got;
    END IF;
    IF kind = 'r' THEN
        -- (an IF of its own: a condition with a subquery runs as a statement, also for 'f')
        IF EXISTS (SELECT 1 FROM pgmq.queue_limit_slots l
                   WHERE l.queue_name::text = lq AND l.kind = 'r' AND l.slot > cap
                     AND l.t > free_before) THEN
            RETURN got;
        END IF;
        SELECT pg_catalog.array_agg(x.ctid) INTO c_tids
        FROM (SELECT l.ctid FROM pgmq.queue_limit_slots l
              WHERE l.queue_name::text = lq AND l.kind = 'r' AND l.slot <= cap AND l.t <= free_before
              ORDER BY l.t
              LIMIT want
              FOR UPDATE SKIP LOCKED) x;
        got := coalesce(c_tids, '{}');
    ELSE
        IF EXISTS (SELECT 1 FROM pgmq.queue_limit_slots l
                   WHERE l.queue_name::text = lq AND l.kind = 'f' AND l.slot > cap
                     AND l.msg_id IS NOT NULL) THEN
            EXECUTE pg_catalog.format(
                'SELECT EXISTS (SELECT 1 FROM pgmq.queue_limit_slots l JOIN pgmq.%I q '
                '  ON q.msg_id = l.msg_id AND q.read_ct = l.read_ct AND q.vt > pg_catalog.clock_timestamp() '
                '  WHERE l.queue_name::text = $1 AND l.kind = ''f'' AND l.slot > $2)', qtable)
                INTO c_held USING lq, cap;
            IF c_held THEN
                RETURN got;
            END IF;
        END IF;
        IF at > LEAST(cap, made) THEN
            at := 1;
        END IF;
        LOOP
            rounds := rounds + 1;
            -- The rows locked, as locked (the latest version of each: what the claim
            -- checks after its lock).
            IF NOT walk THEN
                SELECT pg_catalog.array_agg(x.ctid), pg_catalog.array_agg(x.slot),
                       pg_catalog.array_agg(x.msg_id),
                       pg_catalog.bool_or(x.msg_id IS NOT NULL AND x.read_ct <> -1),
                       pg_catalog.array_agg(x.ctid) FILTER (WHERE x.msg_id IS NULL OR x.read_ct = -1)
                INTO c_tids, c_slots, c_ids, c_held, c_free
                FROM (SELECT l.ctid, l.slot, l.msg_id, l.read_ct FROM pgmq.queue_limit_slots l
                      WHERE l.queue_name::text = lq AND l.kind = 'f' AND l.slot >= at
                        AND l.slot <= cap AND l.slot <> ALL (seen)
                      ORDER BY l.slot
                      LIMIT want - pg_catalog.cardinality(got)
                      FOR UPDATE SKIP LOCKED) x;
            ELSE
                EXECUTE pg_catalog.format(
                    'SELECT pg_catalog.array_agg(x.ctid), pg_catalog.array_agg(x.slot), '
                    '       pg_catalog.array_agg(x.msg_id), '
                    '       pg_catalog.bool_or(x.msg_id IS NOT NULL AND x.read_ct <> -1), '
                    '       pg_catalog.array_agg(x.ctid) FILTER (WHERE x.msg_id IS NULL OR x.read_ct = -1) '
                    'FROM (SELECT l.ctid, l.slot, l.msg_id, l.read_ct FROM pgmq.queue_limit_slots l '
                    '      WHERE l.queue_name::text = $1 AND l.kind = ''f'' AND l.slot >= $5 '
                    '        AND l.slot <= $2 AND l.slot <> ALL ($3) '
                    '        AND NOT EXISTS (SELECT 1 FROM pgmq.%I q WHERE q.msg_id = l.msg_id '
                    '            AND q.read_ct = l.read_ct AND q.vt > pg_catalog.clock_timestamp()) '
                    '      ORDER BY l.slot LIMIT $4 FOR UPDATE SKIP LOCKED) x', qtable)
                INTO c_tids, c_slots, c_ids, c_held, c_free
                USING lq, cap, seen, want - pg_catalog.cardinality(got), at;
            END IF;
            IF c_tids IS NULL THEN
                -- the end of the ring: once round from its start
                EXIT WHEN wrapped OR at = 1;
                wrapped := true;
                at := 1;
                CONTINUE;
            END IF;
            seen := seen || c_slots;
            -- by slot number: the last is the highest (a hint only, whatever it is)
            at := c_slots[pg_catalog.cardinality(c_slots)] + 1;
            -- the slots free as locked (no message, or reclaimed already), and those
            -- whose message is no longer in flight under the read that took them
            freed := CASE WHEN c_held
                          THEN coalesce(c_free, '{}') || pgmq._limit_reclaim(lq, c_tids, c_ids, qtable)
                          ELSE c_tids END;
            got := got || freed;
            EXIT WHEN want IS NULL OR pg_catalog.cardinality(got) >= want OR rounds >= 6;
            IF NOT walk AND pg_catalog.cardinality(freed) < pg_catalog.cardinality(c_tids) THEN
                -- Some slots tried still hold messages in flight: walk past them (the
                -- cursor then starts this session's next claim after them), unless every
                -- slot is made and the queue was found full within the last second.
                walk := made < cap OR NOT EXISTS (
                    SELECT 1 FROM pgmq.queue_limit_slots w
                    WHERE w.queue_name::text = lq AND w.kind = 'w' AND w.slot = 0
                      AND w.t > pg_catalog.clock_timestamp() - interval '1 second');
                EXIT WHEN NOT walk;
            END IF;
        END LOOP;
        PERFORM pg_catalog.set_config(at_key, at::text, false);
    END IF;
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
            had := pg_catalog.cardinality(got);
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
                -- this session's next claim starts after the new rows it took
                PERFORM pg_catalog.set_config(
                    at_key, (made + 1 + pg_catalog.cardinality(got) - had)::text, false);
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

CREATE OR REPLACE FUNCTION pgmq._low_water_mark_for(qtable text)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    -- '-' may not appear in a setting's name, '$' may, and never appears in a queue name
    kept text := pg_catalog.current_setting('pgmq.low_' || pg_catalog.replace(qtable, '-', '$'), true);
    -- a value of another shape than this function writes (set by hand) counts as none:
    -- never an error (80 characters keep the times within float8; the msg_id is checked
    -- for bigint below; a regular expression with counted repeats costs 15 us a call)
    mark text[] := CASE
        WHEN pg_catalog.octet_length(kept) <= 80
             AND kept ~ '^[0-9]+ [0-9]+(\.[0-9]+)? [0-9]+ [0-9]+(\.[0-9]+)?$'
        THEN pg_catalog.string_to_array(kept, ' ') END;
    now_s float8 := pg_catalog.date_part('epoch', pg_catalog.clock_timestamp());
    key text;
    rel oid;
    full_look boolean;
    low bigint;
    given bigint;  -- the id sequence's last value
BEGIN
    -- the common case first, in one test (each PL/pgSQL expression is set up again in
    -- every transaction): a mark of this table whose next look is not due
    IF mark[2]::float8 >= now_s AND mark[2]::float8 <= now_s + 0.05
       AND mark[4]::float8 >= now_s AND mark[4]::float8 <= now_s + 1
       AND pg_catalog.octet_length(mark[3]) <= 18
       AND mark[1] = pg_catalog.to_regclass(pg_catalog.format('pgmq.%I', qtable))::oid::text THEN
        RETURN mark[3]::bigint;
    END IF;
    key := 'pgmq.low_' || pg_catalog.replace(qtable, '-', '$');
    rel := pg_catalog.to_regclass(pg_catalog.format('pgmq.%I', qtable));
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

CREATE OR REPLACE FUNCTION pgmq._queue_ops_kept_stmt(qtable text, op "char")
 RETURNS SETOF text
 LANGUAGE sql
 STABLE ROWS 1
AS $function$
    SELECT CASE WHEN (SELECT s.statement FROM pg_catalog.pg_prepared_statements s
                      WHERE s.name = pgmq._queue_ops_kept_name(qtable, op))
                     = pgmq._queue_ops_kept_prepare_sql(qtable, op)
                THEN pgmq._queue_ops_kept_name(qtable, op)
                ELSE pgmq._queue_ops_kept_ready(qtable, op) END;
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_kept_stmt(text,"char") IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_kept_stmt(text,"char") FROM PUBLIC;

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
BEGIN
    -- archive and delete: one statement for every queue, attributes or not (see "Kept
    -- plans"); in a session that keeps it, the fast path (migration 0042)
    IF op = 'a' OR op = 'd' THEN
        IF pg_catalog.current_setting(pgmq._queue_ops_kept_key(qtable, op), true) = 'p' THEN
            stmt := (SELECT k FROM pgmq._queue_ops_kept_stmt(qtable, op) k);
        ELSE
            stmt := pgmq._queue_ops_prepared(qtable, op);
        END IF;
        IF stmt IS NOT NULL THEN
            RETURN QUERY SELECT * FROM pgmq._queue_ops_run_prepared_ids(stmt, p_ids);
        ELSE
            RETURN QUERY EXECUTE pgmq._queue_ops_kept_sql(qtable, op)
                USING p_op, NULL::integer, NULL::integer, p_vt, p_ids, p_msgs, p_headers,
                      NULL::jsonb, 0::bigint;
        END IF;
        RETURN;
    END IF;
    SELECT a.attributes INTO attrs
    FROM pgmq.queue_attributes a WHERE pg_catalog.lower(a.queue_name::text) = pg_catalog.lower($1);
    IF attrs IS NOT NULL THEN
        RETURN QUERY SELECT r.msg_id FROM pgmq._queue_ops_with_attributes(
            queue_name, attrs, p_op, NULL::integer, NULL::integer, p_vt, p_ids, p_msgs, p_headers,
            NULL::jsonb, 0::bigint) r;
        RETURN;
    END IF;
    RETURN QUERY EXECUTE pgmq._queue_ops_ids_sql(qtable, op)
        USING p_op, NULL::integer, NULL::integer, p_vt, p_ids, p_msgs, p_headers, NULL::jsonb, 0::bigint;
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_route_ids(text,"char",timestamp with time zone,bigint[],jsonb[],jsonb[]) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_route_ids(text,"char",timestamp with time zone,bigint[],jsonb[],jsonb[]) FROM PUBLIC;

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
    stmt text;
    qtable text;
    rows refcursor;
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
            -- A limited queue: note what was claimed, for pgmq._claim_record. A read that
            -- the limits only cap (no priorities, no redrive) is the plain read of the
            -- quantity allowed: kept in the session as 'l' (sql/15_queue_ops.sql).
            IF p_op = 'r' AND NOT f.by_priority AND f.dead_letter_queue IS NULL THEN
                qtable := pgmq.format_table_name(queue_name, 'q'::text);
                -- once kept, straight to the check of its text (as archive and delete do)
                IF pg_catalog.current_setting(pgmq._queue_ops_kept_key(qtable, 'l'), true) = 'p' THEN
                    stmt := pgmq._queue_ops_kept_ready(qtable, 'l');
                ELSE
                    stmt := pgmq._queue_ops_prepared(qtable, 'l');
                END IF;
            END IF;
            IF stmt IS NOT NULL THEN
                OPEN rows FOR SELECT * FROM pgmq._queue_ops_run_prepared(stmt, qty, p_secs, p_ids, p_cond, low);
            ELSE
                OPEN rows FOR EXECUTE pgmq._queue_ops_attr_sql(queue_name, p_op, '$9'::text, attrs)
                    USING p_op, qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond, low;
            END IF;
            LOOP
                FETCH rows INTO rec;
                EXIT WHEN NOT FOUND;
                claimed := claimed || rec.msg_id;
                claimed_rcs := claimed_rcs || rec.read_ct;
                claimed_vts := claimed_vts || rec.vt;
                RETURN NEXT rec;
            END LOOP;
            CLOSE rows;
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
        -- A slot may have freed (not by a heartbeat's set_vt into the future): wake a
        -- worker waiting at the limit (at commit) if a claim found the queue full. The
        -- slot itself frees lazily (sql/26_limits.sql).
        GET DIAGNOSTICS n = ROW_COUNT;
        IF n > 0 THEN
            PERFORM pgmq._limit_wake(pg_catalog.lower(queue_name));
        END IF;
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_with_attributes(text,jsonb,"char",integer,integer,timestamp with time zone,bigint[],jsonb[],jsonb[],jsonb,bigint) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_with_attributes(text,jsonb,"char",integer,integer,timestamp with time zone,bigint[],jsonb[],jsonb[],jsonb,bigint) FROM PUBLIC;

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

CREATE OR REPLACE FUNCTION pgmq.archive(queue_name text, msg_ids bigint[])
 RETURNS SETOF bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    -- checks the name first, as pgmq's per-message functions do (sql/05_names.sql)
    qtable text := pgmq._message_table_name(queue_name, 'q'::text);
BEGIN
    -- the fast path (see read): the router's, without its layer
    IF pg_catalog.current_setting(pgmq._queue_ops_kept_key(qtable, 'a'), true) = 'p' THEN
        RETURN QUERY SELECT * FROM pgmq._queue_ops_run_prepared_ids(
            (SELECT k FROM pgmq._queue_ops_kept_stmt(qtable, 'a') k), msg_ids);
        RETURN;
    END IF;
    RETURN QUERY SELECT * FROM pgmq._queue_ops_route_ids(
        queue_name, 'a'::"char", NULL::timestamptz, msg_ids, NULL::jsonb[], NULL::jsonb[]);
END
$function$
;
COMMENT ON FUNCTION pgmq.archive(text,bigint[]) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.archive(text,bigint[]) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.delete(queue_name text, msg_ids bigint[])
 RETURNS SETOF bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    -- checks the name first, as pgmq's per-message functions do (sql/05_names.sql)
    qtable text := pgmq._message_table_name(queue_name, 'q'::text);
BEGIN
    -- the fast path (see read): the router's, without its layer
    IF pg_catalog.current_setting(pgmq._queue_ops_kept_key(qtable, 'd'), true) = 'p' THEN
        RETURN QUERY SELECT * FROM pgmq._queue_ops_run_prepared_ids(
            (SELECT k FROM pgmq._queue_ops_kept_stmt(qtable, 'd') k), msg_ids);
        RETURN;
    END IF;
    RETURN QUERY SELECT * FROM pgmq._queue_ops_route_ids(
        queue_name, 'd'::"char", NULL::timestamptz, msg_ids, NULL::jsonb[], NULL::jsonb[]);
END
$function$
;
COMMENT ON FUNCTION pgmq.delete(text,bigint[]) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.delete(text,bigint[]) TO PUBLIC;

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
            (SELECT k FROM pgmq._queue_ops_kept_stmt(qtable, 'p') k), qty, NULL, NULL, NULL,
            pgmq._low_water_mark_for(qtable));
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
    qtable := pgmq._message_table_name(queue_name, 'q'::text);
    IF pg_catalog.current_setting(pgmq._queue_ops_kept_key(qtable, 'r'), true) = 'p' THEN
        RETURN QUERY SELECT * FROM pgmq._queue_ops_run_prepared(
            (SELECT k FROM pgmq._queue_ops_kept_stmt(qtable, 'r') k), qty, coalesce(vt, 0), NULL,
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

CREATE OR REPLACE FUNCTION pgmq.send_batch(queue_name text, msgs jsonb[])
 RETURNS SETOF bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text;
BEGIN
    IF msgs IS NULL OR pg_catalog.cardinality(msgs) = 0 THEN
        PERFORM pgmq._validate_batch_params(msgs, NULL::jsonb[]);
    END IF;
    qtable := pgmq._message_table_name(queue_name, 'q'::text);
    IF NOT EXISTS (SELECT FROM pgmq.queue_attributes a WHERE pg_catalog.lower(a.queue_name::text) = pg_catalog.lower($1)) THEN
        RETURN QUERY EXECUTE pgmq._queue_ops_ids_sql(
            qtable, CASE WHEN pg_catalog.cardinality(msgs) = 1 THEN '1' ELSE 's' END::"char")
            USING NULL::"char", NULL::integer, NULL::integer, NULL::timestamptz, NULL::bigint[],
                  msgs, NULL::jsonb[], NULL::jsonb, 0::bigint;
        RETURN;
    END IF;
    RETURN QUERY SELECT * FROM pgmq._queue_ops_route_ids(
        queue_name, 's'::"char", NULL::timestamptz, NULL::bigint[], msgs, NULL::jsonb[]);
END
$function$
;
COMMENT ON FUNCTION pgmq.send_batch(text,jsonb[]) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.send_batch(text,jsonb[]) TO PUBLIC;

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

CREATE INDEX queue_limit_slots_free ON pgmq.queue_limit_slots USING btree (queue_name, kind, t) WHERE (kind = 'r'::"char");

CREATE INDEX workflow_step_sent_idx ON pgmq.workflow_step USING btree (queue_name) WHERE ((status)::text = 'sent'::text);

-- BY HAND (done above): table pgmq.workflow_step
-- BY HAND (done above): type pgmq.workflow_step_status

-- 0053_workflow_results_inline
-- 0053_workflow_results_inline: workflow results inline
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._workflow_advance(bigint,boolean,integer[],integer[]);
DROP FUNCTION IF EXISTS pgmq._workflow_deliver(bigint,integer,text,jsonb,jsonb,boolean);
CREATE OR REPLACE FUNCTION pgmq._workflow_ack()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    finished record;
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
    IF FOUND AND pg_catalog.cardinality(finished.children) > 0 THEN
        done := pgmq._workflow_advance(finished.workflow_id, finished.failed,
                                       finished.children, finished.child_stripes,
                                       finished.step_no, finished.step, finished.outcome);
    END IF;
    RETURN NULL;
END
$function$
;
COMMENT ON FUNCTION pgmq._workflow_ack() IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._workflow_ack() FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._workflow_advance(wid bigint, failed boolean, kids integer[], kid_stripes integer[], parent_no integer DEFAULT NULL::integer, parent_step text DEFAULT NULL::text, parent_result jsonb DEFAULT NULL::jsonb)
 RETURNS boolean
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
        WHERE (SELECT t.pending FROM t) = 0
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
$function$
;
COMMENT ON FUNCTION pgmq._workflow_advance(bigint,boolean,integer[],integer[],integer,text,jsonb) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._workflow_advance(bigint,boolean,integer[],integer[],integer,text,jsonb) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._workflow_deliver(wid bigint, step_no integer, qname text, msg jsonb, hdr jsonb, first boolean)
 RETURNS boolean
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
    done boolean;
BEGIN
    SELECT s.children, s.child_stripes INTO kids, kid_stripes
    FROM pgmq.workflow_step s WHERE s.workflow_id = wid AND s.step_no = $2;
    done := pgmq._workflow_advance(wid, failed, kids, kid_stripes);
END
$function$
;
COMMENT ON FUNCTION pgmq._workflow_finished(bigint,integer,boolean) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._workflow_finished(bigint,integer,boolean) FROM PUBLIC;

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
$function$
;
COMMENT ON FUNCTION pgmq._workflow_send(bigint,integer) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._workflow_send(bigint,integer) FROM PUBLIC;

