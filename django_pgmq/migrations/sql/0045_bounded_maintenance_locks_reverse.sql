-- 0045_bounded_maintenance_locks: bounded maintenance locks
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._maintenance_lock_timeout();
DROP FUNCTION IF EXISTS pgmq._queue_index_columns(text);
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
    EXECUTE format('CREATE TABLE pgmq.%I (LIKE pgmq.%I INCLUDING DEFAULTS)', part, cfg.table_name);
    IF cfg.table_name = pgmq.format_table_name(cfg.queue_name, 'q') THEN
        PERFORM pgmq._tune_live_table(part);
    END IF;
    IF spill IS NOT NULL THEN
        EXECUTE format(
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
    -- ATTACH (not CREATE ... PARTITION OF) leaves readers and writers of the queue running.
    EXECUTE format('ALTER TABLE pgmq.%I ATTACH PARTITION pgmq.%I FOR VALUES FROM (%s) TO (%s)',
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
    cur numeric := pgmq._partition_now(cfg.queue_name, by_id);
    spill regclass := pgmq._default_partition(cfg.table_name);
    wanted numeric[] := '{}';
    spilled numeric[];
    bucket numeric;
    bucket_end numeric;
    threshold numeric;
    old record;
    made record;
BEGIN
    bucket := pgmq._partition_floor(by_id, step, cur);
    FOR i IN 0..cfg.premake LOOP
        wanted := wanted || bucket;
        bucket := pgmq._partition_next(by_id, step, bucket);
    END LOOP;
    IF spill IS NOT NULL THEN
        EXECUTE format(
            'SELECT array_agg(DISTINCT pgmq._partition_floor($1, $2, %s)) FROM %s',
            CASE WHEN by_id THEN format('%I::numeric', cfg.partition_column)
                 ELSE format('extract(epoch FROM %I)', cfg.partition_column) END,
            spill
        ) INTO spilled USING by_id, step;
    END IF;

    FOR bucket IN SELECT DISTINCT w FROM unnest(wanted || coalesce(spilled, '{}')) AS w ORDER BY w LOOP
        CONTINUE WHEN EXISTS (
            SELECT 1 FROM pgmq._partitions(cfg.table_name, by_id) p
            WHERE NOT p.is_default AND p.lo <= bucket AND bucket < p.hi
        );
        -- Never overlap a partition made with other bounds (a converted archive's history).
        SELECT least(pgmq._partition_next(by_id, step, bucket), min(p.lo)) INTO bucket_end
        FROM pgmq._partitions(cfg.table_name, by_id) p
        WHERE NOT p.is_default AND p.lo > bucket;
        SELECT * INTO made FROM pgmq._create_partition(cfg, bucket, bucket_end);
        RETURN QUERY SELECT 'created', made.partition_name, pgmq._partition_bound(by_id, bucket),
                            pgmq._partition_bound(by_id, bucket_end), made.rows_moved;
    END LOOP;

    IF cfg.retention_interval IS NOT NULL THEN
        threshold := CASE WHEN by_id THEN cur - cfg.retention_interval::bigint
            ELSE extract(epoch FROM ((clock_timestamp() AT TIME ZONE 'UTC')
                                     - cfg.retention_interval::interval) AT TIME ZONE 'UTC')
        END;
        FOR old IN
            SELECT * FROM pgmq._partitions(cfg.table_name, by_id) p
            WHERE NOT p.is_default AND p.hi <= threshold
        LOOP
            EXECUTE format('DROP TABLE pgmq.%I', old.partition_name);
            RETURN QUERY SELECT 'dropped', old.partition_name,
                                pgmq._partition_bound(by_id, old.lo),
                                pgmq._partition_bound(by_id, old.hi), NULL::bigint;
        END LOOP;
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._maintain_table(pgmq.partition_config) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._maintain_table(pgmq.partition_config) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._want_queue_index(queue_name text, kind text)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
DECLARE
    stored text := pgmq._require_queue(queue_name);
    wanted text := pgmq._queue_index_name(stored, kind);
BEGIN
    IF kind IS NULL OR kind NOT IN ('priority', 'fifo') THEN
        RAISE EXCEPTION 'index kind must be priority or fifo, got %', coalesce(kind, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    IF EXISTS (SELECT 1 FROM pg_index i WHERE i.indexrelid = to_regclass(format('pgmq.%I', wanted))
               AND i.indisvalid) THEN
        RETURN true;
    END IF;
    INSERT INTO pgmq.queue_index_wanted (index_name, queue_name, kind)
    VALUES (wanted, stored, kind)
    ON CONFLICT (index_name) DO NOTHING;
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
    PERFORM pgmq._want_queue_index(queue_name, 'fifo');
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
    cfg pgmq.partition_config;
BEGIN
    IF $1 IS NOT NULL THEN
        target := pgmq._require_queue($1);
        IF NOT EXISTS (SELECT 1 FROM pgmq.partition_config c WHERE c.queue_name = target) THEN
            RAISE EXCEPTION 'queue "%" is not partitioned: it has no partitions to maintain', $1
                USING ERRCODE = 'PQ004',
                      HINT = 'Create it with pgmq.create_partitioned(), or convert its archive '
                             'with pgmq.convert_archive_partitioned().';
        END IF;
    END IF;
    FOR stored IN
        SELECT DISTINCT c.queue_name FROM pgmq.partition_config c
        WHERE target IS NULL OR c.queue_name = target
        ORDER BY 1
    LOOP
        PERFORM pgmq.acquire_queue_lock(stored);
        -- Read the configuration after the lock: a drop_queue may have just committed.
        FOR cfg IN
            SELECT * FROM pgmq.partition_config c WHERE c.queue_name = stored ORDER BY c.table_name DESC
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
AS $function$
BEGIN
    DELETE FROM pgmq.queue_index_wanted w
    WHERE NOT EXISTS (SELECT 1 FROM pgmq.meta m WHERE m.queue_name = w.queue_name)
       OR EXISTS (SELECT 1 FROM pg_index i
                  WHERE i.indexrelid = to_regclass(format('pgmq.%I', w.index_name))
                    AND i.indisvalid);
    RETURN QUERY
    SELECT w.queue_name, w.index_name, w.kind,
           to_regclass(format('pgmq.%I', w.index_name)) IS NOT NULL,
           format('DROP INDEX CONCURRENTLY IF EXISTS pgmq.%I', w.index_name),
           format('CREATE INDEX CONCURRENTLY IF NOT EXISTS %I ON pgmq.%I (%s)',
                  w.index_name, pgmq.format_table_name(w.queue_name, 'q'),
                  CASE w.kind WHEN 'priority' THEN 'pgmq._task_priority(headers) DESC, msg_id'
                              WHEN 'fifo' THEN 'pgmq._fifo_group(headers), msg_id' END)
    FROM pgmq.queue_index_wanted w
    ORDER BY w.wanted_at, w.index_name;
END
$function$
;
COMMENT ON FUNCTION pgmq.pending_indexes() IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.pending_indexes() TO PUBLIC;

