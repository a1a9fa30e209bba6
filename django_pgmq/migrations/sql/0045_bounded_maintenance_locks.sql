-- 0045_bounded_maintenance_locks: bounded maintenance locks
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
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
    RETURN QUERY SELECT part, moved;
END
$function$
;
COMMENT ON FUNCTION pgmq._create_partition(pgmq.partition_config,numeric,numeric) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._create_partition(pgmq.partition_config,numeric,numeric) FROM PUBLIC;

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

CREATE OR REPLACE FUNCTION pgmq.pending_indexes()
 RETURNS TABLE(queue_name text, index_name text, kind text, invalid boolean, drop_statement text, statement text)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    DELETE FROM pgmq.queue_index_wanted w
    WHERE NOT EXISTS (SELECT 1 FROM pgmq.meta m WHERE m.queue_name::text = w.queue_name)
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

