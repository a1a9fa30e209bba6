-- Partitioned queues on PostgreSQL's declarative partitioning (no pg_partman).
--
-- pgmq.create_partitioned makes q_<name> and a_<name> range-partitioned: by
-- msg_id when partition_interval is an integer (pgmq's rule), otherwise by time
-- (enqueued_at for the queue, archived_at for the archive). Each partitioned
-- table has a DEFAULT partition that catches rows no partition covers yet, and a
-- row in pgmq.partition_config. pgmq.maintain_partitions creates partitions
-- ahead and drops those past retention; run it from cron (manage.py pgmq_maintain).
--
-- Internally a position on the partition key is a numeric: the msg_id itself, or
-- epoch seconds for time. Time buckets are aligned in UTC from 2000-01-01, so the
-- session's TimeZone never changes where a boundary falls.

CREATE TABLE pgmq.partition_config (
    table_name text PRIMARY KEY,
    queue_name varchar NOT NULL
        CONSTRAINT partition_config_meta_queue_name_fk
            REFERENCES pgmq.meta (queue_name) ON DELETE CASCADE,
    partition_column text NOT NULL
        CONSTRAINT partition_config_column_check
            CHECK (partition_column IN ('msg_id', 'enqueued_at', 'archived_at')),
    partition_interval text NOT NULL,
    retention_interval text,
    premake integer NOT NULL CONSTRAINT partition_config_premake_check CHECK (premake >= 1)
);

-- pgmq's rule: an interval that casts to integer partitions by msg_id, anything else by time.
CREATE FUNCTION pgmq._partition_by_id(partition_interval text)
RETURNS boolean
LANGUAGE plpgsql IMMUTABLE
AS $fn$
BEGIN
    PERFORM partition_interval::integer;
    RETURN true;
EXCEPTION WHEN invalid_text_representation OR numeric_value_out_of_range THEN
    RETURN false;
END
$fn$;

CREATE FUNCTION pgmq._partition_arg_error(what text, expected text, got text)
RETURNS void
LANGUAGE plpgsql IMMUTABLE
AS $fn$
BEGIN
    RAISE EXCEPTION '% must be %, got: %', what, expected, coalesce(pg_catalog.quote_literal(got), 'NULL')
        USING ERRCODE = 'PQ004';
END
$fn$;

-- A time step: positive, at least a second, and either whole months or a fixed length.
CREATE FUNCTION pgmq._time_step(what text, step text)
RETURNS interval
LANGUAGE plpgsql IMMUTABLE
AS $fn$
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
$fn$;

-- Check create_partitioned's (or convert_archive_partitioned's) arguments, with pgmq's texts.
CREATE FUNCTION pgmq._check_partition_args(
    partition_interval text, retention_interval text, premake integer, premake_name text
)
RETURNS void
LANGUAGE plpgsql IMMUTABLE
AS $fn$
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
$fn$;

-- The start of the bucket holding pos.
CREATE FUNCTION pgmq._partition_floor(by_id boolean, step text, pos numeric)
RETURNS numeric
LANGUAGE plpgsql IMMUTABLE
AS $fn$
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
$fn$;

-- The start of the bucket after the one starting at lo.
CREATE FUNCTION pgmq._partition_next(by_id boolean, step text, lo numeric)
RETURNS numeric
LANGUAGE sql IMMUTABLE
AS $fn$
    SELECT CASE WHEN by_id THEN lo + step::bigint
                ELSE extract(epoch FROM ((pg_catalog.to_timestamp(lo::double precision) AT TIME ZONE 'UTC')
                                         + step::interval) AT TIME ZONE 'UTC')
           END;
$fn$;

-- A position as a partition bound: a msg_id, an ISO 8601 time in UTC, or
-- MINVALUE/MAXVALUE for the infinities.
CREATE FUNCTION pgmq._partition_bound(by_id boolean, pos numeric)
RETURNS text
LANGUAGE sql STABLE
AS $fn$
    SELECT CASE
        WHEN pos = '-Infinity'::numeric THEN 'MINVALUE'
        WHEN pos = 'Infinity'::numeric THEN 'MAXVALUE'
        WHEN by_id THEN (pos::bigint)::text
        ELSE pg_catalog.to_char(pg_catalog.to_timestamp(pos::double precision) AT TIME ZONE 'UTC',
                     CASE WHEN pos = pg_catalog.trunc(pos) THEN 'YYYY-MM-DD"T"HH24:MI:SS"+00"'
                          ELSE 'YYYY-MM-DD"T"HH24:MI:SS.US"+00"' END)
    END;
$fn$;

-- The same, as SQL for a FOR VALUES clause.
CREATE FUNCTION pgmq._partition_literal(by_id boolean, pos numeric)
RETURNS text
LANGUAGE sql STABLE
AS $fn$
    SELECT CASE WHEN pg_catalog.abs(pos) = 'Infinity'::numeric THEN pgmq._partition_bound(by_id, pos)
                ELSE pg_catalog.quote_literal(pgmq._partition_bound(by_id, pos)) END;
$fn$;

-- A partition bound as PostgreSQL prints it, back to a position.
CREATE FUNCTION pgmq._partition_position(by_id boolean, bound text)
RETURNS numeric
LANGUAGE sql STABLE
AS $fn$
    SELECT CASE
        WHEN bound = 'MINVALUE' THEN '-Infinity'::numeric
        WHEN bound = 'MAXVALUE' THEN 'Infinity'::numeric
        WHEN by_id THEN pg_catalog.btrim(bound, '''')::numeric
        ELSE extract(epoch FROM pg_catalog.btrim(bound, '''')::timestamptz)
    END;
$fn$;

-- An identifier of at most 63 bytes: base || suffix, or a shortened base plus a
-- hash of it when that is too long (two long names never shorten to the same one).
CREATE FUNCTION pgmq._fit_name(base text, suffix text)
RETURNS text
LANGUAGE sql STABLE
AS $fn$
    SELECT CASE
        WHEN pg_catalog.octet_length(base || suffix) <= 63 THEN base || suffix
        ELSE pg_catalog.left(base, 63 - pg_catalog.octet_length(suffix) - 9) || '_'
             || pg_catalog.left(pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(base, 'UTF8')), 'hex'), 8) || suffix
    END;
$fn$;

-- The name of the partition whose range starts at lo.
CREATE FUNCTION pgmq._partition_name(parent text, by_id boolean, step text, lo numeric)
RETURNS text
LANGUAGE sql STABLE
AS $fn$
    SELECT pgmq._fit_name(parent, '_p' || CASE
        WHEN by_id THEN (lo::bigint)::text
        WHEN step::interval = pg_catalog.date_trunc('day', step::interval)
            THEN pg_catalog.to_char(pg_catalog.to_timestamp(lo::double precision) AT TIME ZONE 'UTC', 'YYYYMMDD')
        ELSE pg_catalog.to_char(pg_catalog.to_timestamp(lo::double precision) AT TIME ZONE 'UTC', 'YYYYMMDD"_"HH24MISS')
    END);
$fn$;

-- The partitions of pgmq.<parent>: name, range [lo, hi) as positions, and whether it is the default.
CREATE FUNCTION pgmq._partitions(parent text, by_id boolean)
RETURNS TABLE (partition_name text, lo numeric, hi numeric, is_default boolean)
LANGUAGE sql STABLE
AS $fn$
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
$fn$;

-- The DEFAULT partition of pgmq.<parent>, if it has one.
CREATE FUNCTION pgmq._default_partition(parent text)
RETURNS regclass
LANGUAGE sql STABLE
AS $fn$
    SELECT nullif(p.partdefid, 0)::regclass FROM pg_catalog.pg_partitioned_table p
    WHERE p.partrelid = pg_catalog.to_regclass(pg_catalog.format('pgmq.%I', parent));
$fn$;

-- Where the partition key of the table stands now: the next msg_id, or the clock.
CREATE FUNCTION pgmq._partition_now(queue_name text, by_id boolean)
RETURNS numeric
LANGUAGE sql VOLATILE
AS $fn$
    SELECT CASE WHEN by_id
        THEN coalesce(pg_catalog.pg_sequence_last_value(pg_catalog.pg_get_serial_sequence(
                 pg_catalog.format('pgmq.%I', pgmq.format_table_name(queue_name, 'q'::text)), 'msg_id')::regclass), 0) + 1
        ELSE extract(epoch FROM pg_catalog.clock_timestamp())
    END;
$fn$;

-- Create the partition [lo, hi) of cfg's table. Rows of that range waiting in the
-- default partition move into it first, so they get their proper place. Locks: ACCESS
-- SHARE on the parent (LIKE), row locks on the moved rows, and for the ATTACH, SHARE
-- UPDATE EXCLUSIVE on the parent and ACCESS EXCLUSIVE on the default partition; the
-- caller bounds each wait (pgmq._maintain_table).
CREATE FUNCTION pgmq._create_partition(cfg pgmq.partition_config, lo numeric, hi numeric)
RETURNS TABLE (partition_name text, rows_moved bigint)
LANGUAGE plpgsql
AS $fn$
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
$fn$;

-- Bring one partitioned table up to date: partitions for the current bucket, premake
-- buckets ahead and every bucket with rows in the default partition; then drop the
-- partitions wholly past retention. The caller holds the queue's lock.
--
-- Each step (one partition created, one dropped) runs in a subtransaction that waits
-- for its locks at most pgmq._maintenance_lock_timeout(): a step whose locks are not
-- granted by then (a transaction that read or wrote the queue is still open) is undone
-- and reported as 'create skipped' or 'drop skipped', with a NOTICE, and the next run
-- tries it again. The table's later steps are then skipped too without waiting (the
-- same open transaction holds them up), so one table costs at most one wait.
CREATE FUNCTION pgmq._maintain_table(cfg pgmq.partition_config)
RETURNS TABLE (action text, partition_name text, range_start text, range_end text, rows_moved bigint)
LANGUAGE plpgsql
AS $fn$
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
$fn$;

-- Maintain the partitions of one queue, or of every partitioned queue (NULL).
-- Safe to run at any frequency and from several sessions at once: each queue is
-- maintained under its queue lock, which create/drop_queue also take. No wait here is
-- longer than pgmq._maintenance_lock_timeout(): a queue whose lock another session
-- holds (a second run, a create or drop in an open transaction) is reported as
-- 'queue skipped' with a NOTICE, and a step whose table locks wait that long as
-- 'create skipped' or 'drop skipped' (pgmq._maintain_table). Run it in READ COMMITTED.
CREATE FUNCTION pgmq.maintain_partitions(queue_name text DEFAULT NULL)
RETURNS TABLE (
    queue text, partitioned_table text, action text, partition_name text,
    range_start text, range_end text, rows_moved bigint
)
LANGUAGE plpgsql
AS $fn$
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
$fn$;

-- The partitions of a queue's tables, by table then range.
CREATE FUNCTION pgmq.list_partitions(queue_name text)
RETURNS TABLE (
    partitioned_table text, partition_name text, range_start text, range_end text,
    is_default boolean
)
LANGUAGE plpgsql STABLE
AS $fn$
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
$fn$;

-- pgmq.create_partitioned, natively. Creating it again is a no-op.
CREATE FUNCTION pgmq.create_partitioned(
    queue_name text,
    partition_interval text DEFAULT '10000',
    retention_interval text DEFAULT '100000',
    premake integer DEFAULT 4
)
RETURNS void
LANGUAGE plpgsql
AS $fn$
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
$fn$;

-- pgmq.convert_archive_partitioned, natively: a_<name> becomes a partitioned table.
-- Its rows stay where they are: the old table becomes the first partition
-- (MINVALUE up to the end of the bucket of its newest row), dropped by retention
-- like any other. leading_partition is how many partitions to keep ahead.
CREATE FUNCTION pgmq.convert_archive_partitioned(
    table_name text,
    partition_interval text DEFAULT '10000',
    retention_interval text DEFAULT '100000',
    leading_partition integer DEFAULT 10
)
RETURNS void
LANGUAGE plpgsql
AS $fn$
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
$fn$;

-- Rows in the default partitions of a queue's tables, or NULL when it has none.
-- Exact up to 10000 rows per table, the planner's estimate beyond (a non-zero value
-- means maintenance is not keeping up: run pgmq.maintain_partitions).
CREATE FUNCTION pgmq._default_partition_length(queue_name text)
RETURNS bigint
LANGUAGE plpgsql STABLE
AS $fn$
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
$fn$;
