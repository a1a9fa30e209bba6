-- 0030_index_builds_give_way_to_queue_ddl: index_builds_give_way_to_queue_ddl
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._lock_queue_table(text);
DROP FUNCTION IF EXISTS pgmq._queue_table_lock_key(text);
CREATE OR REPLACE FUNCTION pgmq._install_notify_trigger(queue_name text)
 RETURNS void
 LANGUAGE plpgsql
 SET client_min_messages TO 'warning'
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q');
    trigger_name text := pgmq._notify_trigger_name(queue_name);
BEGIN
    EXECUTE format('DROP TRIGGER IF EXISTS %I ON pgmq.%I', trigger_name, qtable);
    EXECUTE format(
        $ddl$
        CREATE CONSTRAINT TRIGGER %I
        AFTER INSERT ON pgmq.%I
        DEFERRABLE INITIALLY DEFERRED
        FOR EACH ROW
        EXECUTE FUNCTION pgmq.notify_queue_listeners(%L)
        $ddl$,
        trigger_name, qtable, queue_name
    );
    EXECUTE format('COMMENT ON TRIGGER %I ON pgmq.%I IS %L',
                   trigger_name, qtable, pgmq._notify_trigger_hash());
END
$function$
;
COMMENT ON FUNCTION pgmq._install_notify_trigger(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._install_notify_trigger(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._remove_notify_trigger(queue_name text)
 RETURNS void
 LANGUAGE plpgsql
 SET client_min_messages TO 'warning'
AS $function$
BEGIN
    EXECUTE format(
        'DROP TRIGGER IF EXISTS %I ON pgmq.%I',
        pgmq._notify_trigger_name(queue_name), pgmq.format_table_name(queue_name, 'q')
    );
END
$function$
;
COMMENT ON FUNCTION pgmq._remove_notify_trigger(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._remove_notify_trigger(text) FROM PUBLIC;

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
    DELETE FROM pgmq.meta m WHERE lower(m.queue_name) = lower($1);
    RETURN true;
END
$function$
;
COMMENT ON FUNCTION pgmq.drop_queue(text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.drop_queue(text) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.purge_queue(queue_name text)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q');
    removed bigint;
BEGIN
    PERFORM pgmq._require_queue(queue_name);
    -- Lock first so the count and the truncate see the same rows.
    EXECUTE format('LOCK TABLE pgmq.%I IN ACCESS EXCLUSIVE MODE', qtable);
    EXECUTE format('SELECT count(*) FROM pgmq.%I', qtable) INTO removed;
    EXECUTE format('TRUNCATE TABLE pgmq.%I', qtable);
    RETURN removed;
END
$function$
;
COMMENT ON FUNCTION pgmq.purge_queue(text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.purge_queue(text) TO PUBLIC;

