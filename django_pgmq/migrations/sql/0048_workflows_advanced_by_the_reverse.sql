-- 0048_workflows_advanced_by_the: workflows advanced by the acknowledgement
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
-- HAND (wf) part 1, at the top, right after SET LOCAL check_function_bodies = off
-- (replaces the generated DROP TRIGGER lines on the scratch queues q_k_*): the trigger
-- leaves every queue's live table before its function is dropped (the tables the
-- migrating role owns: the forward block gave no other one the trigger).
DO $workflows$
DECLARE
    t record;
BEGIN
    FOR t IN
        SELECT c.relname FROM pg_catalog.pg_trigger g JOIN pg_catalog.pg_class c ON c.oid = g.tgrelid
        WHERE c.relnamespace = 'pgmq'::regnamespace AND g.tgname = 'pgmq_workflow_ack'
          AND g.tgparentid = 0 AND pg_catalog.pg_has_role(current_user, c.relowner, 'MEMBER'::text)
        ORDER BY 1
    LOOP
        EXECUTE pg_catalog.format('DROP TRIGGER IF EXISTS pgmq_workflow_ack ON pgmq.%I', t.relname);
    END LOOP;
END
$workflows$;
-- END HAND part 1
ALTER TABLE pgmq.workflow DROP CONSTRAINT IF EXISTS workflow_on_failure_check;
ALTER TABLE pgmq.workflow DROP CONSTRAINT IF EXISTS workflow_pkey;
ALTER TABLE pgmq.workflow_step DROP CONSTRAINT IF EXISTS workflow_step_name_key;
ALTER TABLE pgmq.workflow_step DROP CONSTRAINT IF EXISTS workflow_step_pkey;
ALTER TABLE pgmq.workflow_step DROP CONSTRAINT IF EXISTS workflow_step_status_check;
ALTER TABLE pgmq.workflow_stripe DROP CONSTRAINT IF EXISTS workflow_stripe_pkey;
DROP FUNCTION IF EXISTS pgmq._workflow_ack();
DROP FUNCTION IF EXISTS pgmq._workflow_check_queues(jsonb);
DROP FUNCTION IF EXISTS pgmq._workflow_check_spec(jsonb);
DROP FUNCTION IF EXISTS pgmq._workflow_finished(bigint,integer,boolean);
DROP FUNCTION IF EXISTS pgmq._workflow_graph(bigint);
DROP FUNCTION IF EXISTS pgmq._workflow_message_failed(jsonb,text,bigint,jsonb);
DROP FUNCTION IF EXISTS pgmq._workflow_order(jsonb,integer[],integer[]);
DROP FUNCTION IF EXISTS pgmq._workflow_queue_lost(text,text,bigint[]);
DROP FUNCTION IF EXISTS pgmq._workflow_record(text,bigint,jsonb,jsonb,jsonb);
DROP FUNCTION IF EXISTS pgmq._workflow_refuse(text,text,text);
DROP FUNCTION IF EXISTS pgmq._workflow_require(bigint);
DROP FUNCTION IF EXISTS pgmq._workflow_require_delete(text);
DROP FUNCTION IF EXISTS pgmq._workflow_retention(double precision,integer);
DROP FUNCTION IF EXISTS pgmq._workflow_send(bigint,integer);
DROP FUNCTION IF EXISTS pgmq._workflow_settle(text,bigint,jsonb,jsonb);
DROP FUNCTION IF EXISTS pgmq._workflow_step_label(jsonb,bigint);
DROP FUNCTION IF EXISTS pgmq._workflow_step_problem(jsonb);
DROP FUNCTION IF EXISTS pgmq._workflow_trigger(text);
DROP FUNCTION IF EXISTS pgmq.cancel_workflow(bigint);
DROP FUNCTION IF EXISTS pgmq.complete(text,bigint,jsonb);
DROP FUNCTION IF EXISTS pgmq.create_workflow(jsonb,text);
DROP FUNCTION IF EXISTS pgmq.fail(text,bigint,jsonb);
DROP FUNCTION IF EXISTS pgmq.list_workflows(text,integer,bigint);
DROP FUNCTION IF EXISTS pgmq.workflow_status(bigint);
DROP INDEX IF EXISTS pgmq.workflow_step_sent_idx;
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

-- HAND (wf) part 2, at the end: the workflow tables.
DROP TABLE IF EXISTS pgmq.workflow_stripe;
DROP TABLE IF EXISTS pgmq.workflow_step;
DROP TABLE IF EXISTS pgmq.workflow;
-- END HAND part 2
