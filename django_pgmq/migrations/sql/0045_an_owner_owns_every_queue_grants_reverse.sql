-- 0045_an_owner_owns_every_queue_grants: an owner owns every queue, grants recorded
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
-- BEGIN HAND sec
-- Back to the old grant model for every registered role (as the old
-- pgmq.grant_app_role gave it: every table and sequence of pgmq, present and future,
-- CREATE on pgmq for create_queues), then the registry goes. Queue tables stay the
-- schema owner's.
DO $sec$
DECLARE
    rec record;
BEGIN
    FOR rec IN
        SELECT a.role_name, a.create_queues FROM pgmq.app_role a
        JOIN pg_catalog.pg_roles r ON r.rolname = a.role_name
        ORDER BY 1
    LOOP
        EXECUTE pg_catalog.format(
            'GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON ALL TABLES IN SCHEMA pgmq TO %I', rec.role_name);
        EXECUTE pg_catalog.format('GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA pgmq TO %I', rec.role_name);
        EXECUTE pg_catalog.format(
            'ALTER DEFAULT PRIVILEGES IN SCHEMA pgmq '
            'GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON TABLES TO %I', rec.role_name);
        EXECUTE pg_catalog.format(
            'ALTER DEFAULT PRIVILEGES IN SCHEMA pgmq GRANT USAGE, SELECT ON SEQUENCES TO %I', rec.role_name);
        IF rec.create_queues THEN
            EXECUTE pg_catalog.format('GRANT CREATE ON SCHEMA pgmq TO %I', rec.role_name);
        ELSE
            EXECUTE pg_catalog.format(
                'REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON pgmq.meta FROM %I', rec.role_name);
        END IF;
    END LOOP;
END
$sec$;
DROP TABLE pgmq.app_role;
DROP TABLE pgmq.queue_creator;
-- END HAND sec
-- (done in HAND sec above: table pgmq.app_role goes, its primary key with it)
-- (done in HAND sec above: table pgmq.queue_creator goes, its primary key with it)
DROP FUNCTION IF EXISTS pgmq._drop_queue(text);
DROP FUNCTION IF EXISTS pgmq._grant_queue(text,name);
DROP FUNCTION IF EXISTS pgmq._grant_queue_table(regclass,name);
DROP FUNCTION IF EXISTS pgmq._record_creator(text);
DROP FUNCTION IF EXISTS pgmq._refuse_foreign_tables(text);
DROP FUNCTION IF EXISTS pgmq._require_privilege(text);
DROP FUNCTION IF EXISTS pgmq._session_is_owner();
DROP FUNCTION IF EXISTS pgmq.grant_app_role(name,boolean,regclass[],boolean);
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

CREATE OR REPLACE FUNCTION pgmq._create_queue(queue_name text, unlogged boolean)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
    PERFORM pgmq.validate_queue_name(queue_name);
    PERFORM pgmq.acquire_queue_lock(queue_name);
    IF (pgmq._same_name_queue(queue_name)).queue_name IS NOT NULL
       AND to_regclass(format('pgmq.%I', pgmq.format_table_name(queue_name, 'q'))) IS NOT NULL THEN
        RETURN;
    END IF;
    PERFORM pgmq._create_queue_tables(queue_name, unlogged, NULL, NULL);
    INSERT INTO pgmq.meta (queue_name, is_partitioned, is_unlogged)
    VALUES (queue_name, false, unlogged)
    ON CONFLICT DO NOTHING;
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
    IF unlogged THEN
        -- The ids go on into the (logged) archive: an id sequence reset by a crash would
        -- hand out ids the archive holds already. Only the messages are unlogged.
        EXECUTE format('ALTER SEQUENCE %s SET LOGGED',
                       pg_get_serial_sequence(format('pgmq.%I', qtable), 'msg_id'));
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
    PERFORM pgmq._share_queue_with_owner(queue_name);
END
$function$
;
COMMENT ON FUNCTION pgmq._create_queue_tables(text,boolean,text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._create_queue_tables(text,boolean,text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._share_queue_with_owner(queue_name text)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q');
    atable text := pgmq.format_table_name(queue_name, 'a');
    owner oid := (SELECT n.nspowner FROM pg_namespace n WHERE n.nspname = 'pgmq');
BEGIN
    IF pg_has_role(owner, 'USAGE') OR NOT pg_has_role(
        (SELECT c.relowner FROM pg_class c WHERE c.oid = format('pgmq.%I', qtable)::regclass),
        'USAGE') THEN
        RETURN;  -- the owner made it, or it is not ours to share
    END IF;
    EXECUTE format('GRANT ALL ON pgmq.%I, pgmq.%I TO %s', qtable, atable, owner::regrole);
    EXECUTE format('GRANT ALL ON SEQUENCE %s TO %s',
                   pg_get_serial_sequence(format('pgmq.%I', qtable), 'msg_id'), owner::regrole);
END
$function$
;
COMMENT ON FUNCTION pgmq._share_queue_with_owner(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._share_queue_with_owner(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.convert_archive_partitioned(table_name text, partition_interval text DEFAULT '10000'::text, retention_interval text DEFAULT '100000'::text, leading_partition integer DEFAULT 10)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    stored text;
    atable text := pgmq.format_table_name(table_name, 'a');
    history text := pgmq._fit_name(atable, '_history');
    index_name text := 'archived_at_idx_' || lower(table_name);
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
    IF (SELECT c.relkind FROM pg_class c WHERE c.oid = to_regclass(format('pgmq.%I', atable))) = 'p' THEN
        -- pgmq's own notice, its stray 's' included ("Table a_orderss is already partitioned").
        RAISE NOTICE 'Table %s is already partitioned', atable;
        RETURN;
    END IF;
    PERFORM pgmq._check_partition_args(
        partition_interval, retention_interval, leading_partition, 'leading_partition');

    by_id := pgmq._partition_by_id(partition_interval);
    acol := CASE WHEN by_id THEN 'msg_id' ELSE 'archived_at' END;
    -- Free the names the new table takes: the table, its primary key and its index.
    EXECUTE format('ALTER TABLE pgmq.%I RENAME TO %I', atable, history);
    SELECT k.conname INTO pkey FROM pg_constraint k
    WHERE k.conrelid = format('pgmq.%I', history)::regclass AND k.contype = 'p';
    IF pkey IS NOT NULL AND by_id THEN
        EXECUTE format('ALTER TABLE pgmq.%I RENAME CONSTRAINT %I TO %I',
                       history, pkey, pgmq._fit_name(history, '_pkey'));
    ELSIF pkey IS NOT NULL THEN
        -- The new key is (msg_id, archived_at); attaching builds it on the old rows.
        EXECUTE format('ALTER TABLE pgmq.%I DROP CONSTRAINT %I', history, pkey);
    END IF;
    EXECUTE format('ALTER INDEX IF EXISTS pgmq.%I RENAME TO %I',
                   index_name, pgmq._fit_name(history, '_archived_at_idx'));
    quiet := current_setting('client_min_messages');
    PERFORM set_config('client_min_messages', 'warning', true);  -- "q_<name> already exists"
    PERFORM pgmq._create_queue_tables(stored, false, NULL, acol);
    PERFORM set_config('client_min_messages', quiet, true);
    EXECUTE format('CREATE TABLE pgmq.%I PARTITION OF pgmq.%I DEFAULT', atable || '_default', atable);

    EXECUTE format(
        'SELECT max(%s) FROM pgmq.%I',
        CASE WHEN by_id THEN format('%I::numeric', acol) ELSE format('extract(epoch FROM %I)', acol) END,
        history
    ) INTO newest;
    IF newest IS NULL THEN
        EXECUTE format('DROP TABLE pgmq.%I', history);
    ELSE
        EXECUTE format(
            'ALTER TABLE pgmq.%I ATTACH PARTITION pgmq.%I FOR VALUES FROM (MINVALUE) TO (%s)',
            atable, history,
            pgmq._partition_literal(by_id, pgmq._partition_next(
                by_id, partition_interval, pgmq._partition_floor(by_id, partition_interval, newest)))
        );
    END IF;

    INSERT INTO pgmq.partition_config AS c
        (table_name, queue_name, partition_column, partition_interval, retention_interval, premake)
    VALUES (atable, stored, acol, btrim(partition_interval), btrim(retention_interval), leading_partition)
    RETURNING c.* INTO cfg;
    PERFORM pgmq._maintain_table(cfg);
END
$function$
;
COMMENT ON FUNCTION pgmq.convert_archive_partitioned(text,text,text,integer) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.convert_archive_partitioned(text,text,text,integer) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.create_partitioned(queue_name text, partition_interval text DEFAULT '10000'::text, retention_interval text DEFAULT '100000'::text, premake integer DEFAULT 4)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q');
    atable text := pgmq.format_table_name(queue_name, 'a');
    by_id boolean;
    existing pgmq.meta;
    cfg pgmq.partition_config;
BEGIN
    PERFORM pgmq._check_partition_args(partition_interval, retention_interval, premake, 'premake');
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
    EXECUTE format('CREATE TABLE pgmq.%I PARTITION OF pgmq.%I DEFAULT', qtable || '_default', qtable);
    PERFORM pgmq._tune_live_table(qtable || '_default');
    EXECUTE format('CREATE TABLE pgmq.%I PARTITION OF pgmq.%I DEFAULT', atable || '_default', atable);
    INSERT INTO pgmq.meta (queue_name, is_partitioned, is_unlogged) VALUES (queue_name, true, false);

    FOR cfg IN
        INSERT INTO pgmq.partition_config AS c
            (table_name, queue_name, partition_column, partition_interval, retention_interval, premake)
        VALUES
            (qtable, queue_name, CASE WHEN by_id THEN 'msg_id' ELSE 'enqueued_at' END,
             btrim(partition_interval), btrim(retention_interval), premake),
            (atable, queue_name, CASE WHEN by_id THEN 'msg_id' ELSE 'archived_at' END,
             btrim(partition_interval), btrim(retention_interval), premake)
        RETURNING c.*
    LOOP
        PERFORM pgmq._maintain_table(cfg);
    END LOOP;
END
$function$
;
COMMENT ON FUNCTION pgmq.create_partitioned(text,text,text,integer) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.create_partitioned(text,text,text,integer) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.drop_queue(queue_name text)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q');
    atable text := pgmq.format_table_name(queue_name, 'a');
BEGIN
    PERFORM pgmq.acquire_queue_lock(queue_name);
    PERFORM pgmq._lock_queue_table(queue_name);  -- waits for an index build to give way
    IF to_regclass(format('pgmq.%I', qtable)) IS NULL
       AND NOT EXISTS (SELECT 1 FROM pgmq.meta m WHERE lower(m.queue_name) = lower($1)) THEN
        RAISE NOTICE 'pgmq queue `%` does not exist', queue_name;
        RETURN false;
    END IF;
    EXECUTE format('DROP TABLE IF EXISTS pgmq.%I', qtable);
    EXECUTE format('DROP TABLE IF EXISTS pgmq.%I', atable);
    DELETE FROM pgmq.meta m WHERE lower(m.queue_name) = lower($1);
    RETURN true;
END
$function$
;
COMMENT ON FUNCTION pgmq.drop_queue(text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.drop_queue(text) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.grant_app_role(role name, create_queues boolean DEFAULT false, tables regclass[] DEFAULT '{}'::regclass[])
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    IF role IS NULL OR to_regrole(quote_ident(role)) IS NULL THEN
        RAISE EXCEPTION 'role "%" does not exist', role
            USING ERRCODE = 'PQ004', HINT = 'Create it first: CREATE ROLE ... LOGIN.';
    END IF;
    EXECUTE format('GRANT USAGE ON SCHEMA pgmq TO %I', role);
    EXECUTE format('GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA pgmq TO %I', role);
    EXECUTE format(
        'GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON ALL TABLES IN SCHEMA pgmq TO %I', role);
    EXECUTE format('GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA pgmq TO %I', role);
    EXECUTE format('ALTER DEFAULT PRIVILEGES IN SCHEMA pgmq GRANT EXECUTE ON FUNCTIONS TO %I', role);
    EXECUTE format(
        'ALTER DEFAULT PRIVILEGES IN SCHEMA pgmq '
        'GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON TABLES TO %I', role);
    EXECUTE format(
        'ALTER DEFAULT PRIVILEGES IN SCHEMA pgmq GRANT USAGE, SELECT ON SEQUENCES TO %I', role);
    IF create_queues THEN
        EXECUTE format('GRANT CREATE ON SCHEMA pgmq TO %I', role);
    ELSE
        EXECUTE format('REVOKE CREATE ON SCHEMA pgmq FROM %I', role);
        EXECUTE format('REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON pgmq.meta FROM %I', role);
    END IF;
    FOR i IN 1 .. coalesce(cardinality(tables), 0) LOOP
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %s TO %I', tables[i], role);
    END LOOP;
END
$function$
;
COMMENT ON FUNCTION pgmq.grant_app_role(name,boolean,regclass[]) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.grant_app_role(name,boolean,regclass[]) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.revoke_app_role(role name, tables regclass[] DEFAULT '{}'::regclass[])
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    IF role IS NULL OR to_regrole(quote_ident(role)) IS NULL THEN
        RAISE EXCEPTION 'role "%" does not exist', role USING ERRCODE = 'PQ004';
    END IF;
    EXECUTE format('ALTER DEFAULT PRIVILEGES IN SCHEMA pgmq REVOKE ALL ON FUNCTIONS FROM %I', role);
    EXECUTE format('ALTER DEFAULT PRIVILEGES IN SCHEMA pgmq REVOKE ALL ON TABLES FROM %I', role);
    EXECUTE format('ALTER DEFAULT PRIVILEGES IN SCHEMA pgmq REVOKE ALL ON SEQUENCES FROM %I', role);
    EXECUTE format('REVOKE ALL ON ALL FUNCTIONS IN SCHEMA pgmq FROM %I', role);
    EXECUTE format('REVOKE ALL ON ALL TABLES IN SCHEMA pgmq FROM %I', role);
    EXECUTE format('REVOKE ALL ON ALL SEQUENCES IN SCHEMA pgmq FROM %I', role);
    EXECUTE format('REVOKE ALL ON SCHEMA pgmq FROM %I', role);
    FOR i IN 1 .. coalesce(cardinality(tables), 0) LOOP
        EXECUTE format('REVOKE ALL ON %s FROM %I', tables[i], role);
    END LOOP;
END
$function$
;
COMMENT ON FUNCTION pgmq.revoke_app_role(name,regclass[]) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.revoke_app_role(name,regclass[]) TO PUBLIC;

-- BY HAND: index pgmq.app_role_pkey
-- BY HAND: index pgmq.queue_creator_pkey
-- BY HAND: table pgmq.app_role
-- BY HAND: table pgmq.queue_creator
