-- Insert notifications: pgmq.enable_notify_insert and friends.
--
-- A queue with notifications enabled has one deferred constraint trigger on its
-- live table. At commit it sends pg_notify('pgmq.q_<name as stored>.INSERT', '')
-- at most once per transaction, and at most once per throttle window per queue,
-- so a rolled-back send never wakes anybody.
--
-- The trigger is the one django_pgmq/notify.py defines as a django-pgtrigger
-- Trigger: same name, function, definition and comment, so `manage.py pgtrigger
-- ls` shows it INSTALLED whichever path installed it (tests compare the two).

-- One row per queue with notifications on. Kept in a logged table so the
-- setting survives a crash and reaches replicas; the row goes with the queue.
CREATE TABLE pgmq.notify_insert_throttle (
    queue_name varchar UNIQUE NOT NULL
        CONSTRAINT notify_insert_throttle_meta_queue_name_fk
            REFERENCES pgmq.meta (queue_name) ON DELETE CASCADE,
    throttle_interval_ms integer NOT NULL DEFAULT 0,
    last_notified_at timestamptz NOT NULL DEFAULT to_timestamp(0)
);

-- The queue's name as stored in pgmq.meta, or pgmq's "does not exist" error.
-- subject is the word pgmq's text uses there: 'it' or 'the queue'.
CREATE FUNCTION pgmq._existing_queue(queue_name text, subject text)
RETURNS text
LANGUAGE plpgsql STABLE
AS $fn$
DECLARE
    stored text := pgmq._stored_queue_name(queue_name);
BEGIN
    IF stored IS NULL THEN
        RAISE EXCEPTION 'Queue "%" does not exist. Create % first using pgmq.create()',
            queue_name, subject
            USING ERRCODE = 'PQ002';
    END IF;
    RETURN stored;
END
$fn$;

CREATE FUNCTION pgmq._check_throttle(throttle_interval_ms integer)
RETURNS void
LANGUAGE plpgsql IMMUTABLE
AS $fn$
BEGIN
    IF throttle_interval_ms IS NULL OR throttle_interval_ms < 0 THEN
        RAISE EXCEPTION 'throttle_interval_ms must be non-negative, got: %',
            coalesce(throttle_interval_ms::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
END
$fn$;

-- Whether a throttled queue's window has passed, taking it when so (the row's
-- last_notified_at becomes now). Owner helper of the notify trigger: application roles
-- have no write right on pgmq.notify_insert_throttle. It can only move the window of a
-- queue whose notifications are on, which a send to that queue does anyway.
CREATE FUNCTION pgmq._notify_throttle_pass(queue_name text)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
    UPDATE pgmq.notify_insert_throttle t
    SET last_notified_at = pg_catalog.clock_timestamp()
    WHERE t.queue_name::text = $1
      AND pg_catalog.clock_timestamp() - t.last_notified_at
          >= t.throttle_interval_ms * interval '1 millisecond';
    RETURN FOUND;
END
$fn$;

-- Re-arm a queue's throttle (the worker found it empty: the next insert notifies at
-- once); writes only when a notification was sent since the last re-arm. Returns how
-- many rows changed (0 or 1). Owner helper, as above.
CREATE FUNCTION pgmq._rearm_notify(queue_name text)
RETURNS bigint
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    n bigint;
BEGIN
    UPDATE pgmq.notify_insert_throttle t SET last_notified_at = pg_catalog.to_timestamp(0::double precision)
    WHERE pg_catalog.lower(t.queue_name::text) = pg_catalog.lower($1)
      AND t.throttle_interval_ms > 0
      AND t.last_notified_at > pg_catalog.to_timestamp(0::double precision);
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$fn$;

-- The trigger body. TG_ARGV[0] is the queue name as stored, so the channel keeps
-- its case; without an argument the name comes from the table (pgmq's way).
CREATE FUNCTION pgmq.notify_queue_listeners()
RETURNS trigger
LANGUAGE plpgsql
AS $fn$
DECLARE
    queue text := coalesce(TG_ARGV[0], substring(TG_TABLE_NAME FROM 3));
    -- Transaction-local marker: the first row of a commit decides, the others skip.
    decided text := 'pgmq_notify.t' || TG_RELID;
    throttle integer;
    last_at timestamptz;
BEGIN
    IF pg_catalog.current_setting(decided, true) = 'yes' THEN
        RETURN NULL;
    END IF;
    PERFORM pg_catalog.set_config(decided, 'yes', true);

    SELECT t.throttle_interval_ms, t.last_notified_at INTO throttle, last_at
    FROM pgmq.notify_insert_throttle t
    WHERE t.queue_name::text = queue;

    -- Throttle 0 (or no row) notifies every commit without touching the row, so
    -- concurrent producers never queue up on its lock.
    IF coalesce(throttle, 0) > 0 THEN
        IF pg_catalog.clock_timestamp() - last_at < throttle * interval '1 millisecond' THEN
            RETURN NULL;
        END IF;
        -- Re-checked under the row lock: of two commits racing past the window, one
        -- notifies. The owner's helper writes the row (the inserting role may not).
        IF NOT pgmq._notify_throttle_pass(queue) THEN
            RETURN NULL;
        END IF;
    END IF;

    PERFORM pg_catalog.pg_notify(pgmq._queue_channel(queue, 'INSERT'::text), NULL);
    RETURN NULL;
END
$fn$;

-- The trigger's name on the queue's table (django-pgtrigger's "pgid", unique per
-- queue as pgtrigger's registry requires): q_<name>_notify_insert, or, for a name
-- that is not a plain identifier (it has a '-'), pgmq_notify_<hash>. Never starting
-- with 'pgtrigger_', it is never a candidate for `manage.py pgtrigger prune`.
CREATE FUNCTION pgmq._notify_trigger_name(queue_name text)
RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
AS $fn$
    SELECT CASE
        WHEN pg_catalog.lower(queue_name) ~ '^[a-z0-9_]+$' THEN 'q_' || pg_catalog.lower(queue_name) || '_notify_insert'
        ELSE 'pgmq_notify_' || pg_catalog.left(pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(pg_catalog.lower(queue_name), 'UTF8')), 'hex'), 20)
    END;
$fn$;

-- The trigger's comment: the "hash" django-pgtrigger compares to tell INSTALLED from
-- OUTDATED. A version: change it (and notify.NOTIFY_TRIGGER_HASH) with the trigger.
CREATE FUNCTION pgmq._notify_trigger_hash()
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $fn$ SELECT 'django_pgmq.notify_insert.v1' $fn$;

-- The one place in SQL that creates a queue's notify trigger (re-created if present).
CREATE FUNCTION pgmq._install_notify_trigger(queue_name text)
RETURNS void
LANGUAGE plpgsql
SET client_min_messages = warning  -- no "does not exist, skipping" notice
AS $fn$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q'::text);
    trigger_name text := pgmq._notify_trigger_name(queue_name);
BEGIN
    PERFORM pgmq._lock_queue_table(queue_name);  -- not while an index build runs on it
    EXECUTE pg_catalog.format('DROP TRIGGER IF EXISTS %I ON pgmq.%I', trigger_name, qtable);
    EXECUTE pg_catalog.format(
        $ddl$
        CREATE CONSTRAINT TRIGGER %I
        AFTER INSERT ON pgmq.%I
        DEFERRABLE INITIALLY DEFERRED
        FOR EACH ROW
        EXECUTE FUNCTION pgmq.notify_queue_listeners(%L)
        $ddl$,
        trigger_name, qtable, queue_name
    );
    EXECUTE pg_catalog.format('COMMENT ON TRIGGER %I ON pgmq.%I IS %L',
                   trigger_name, qtable, pgmq._notify_trigger_hash());
END
$fn$;

CREATE FUNCTION pgmq._remove_notify_trigger(queue_name text)
RETURNS void
LANGUAGE plpgsql
SET client_min_messages = warning
AS $fn$
BEGIN
    PERFORM pgmq._lock_queue_table(queue_name);
    EXECUTE pg_catalog.format(
        'DROP TRIGGER IF EXISTS %I ON pgmq.%I',
        pgmq._notify_trigger_name(queue_name), pgmq.format_table_name(queue_name, 'q'::text)
    );
END
$fn$;

-- Turn notifications on (or change the throttle when already on).
CREATE FUNCTION pgmq.enable_notify_insert(queue_name text, throttle_interval_ms integer DEFAULT 250)
RETURNS void
LANGUAGE plpgsql
AS $fn$
DECLARE
    stored text;
BEGIN
    PERFORM pgmq._check_throttle(throttle_interval_ms);
    PERFORM pgmq.acquire_queue_lock(queue_name);
    stored := pgmq._existing_queue(queue_name, 'it'::text);
    INSERT INTO pgmq.notify_insert_throttle (queue_name, throttle_interval_ms)
    VALUES (stored, throttle_interval_ms)
    ON CONFLICT ON CONSTRAINT notify_insert_throttle_queue_name_key DO UPDATE
        SET throttle_interval_ms = excluded.throttle_interval_ms,
            last_notified_at = pg_catalog.to_timestamp(0);
    PERFORM pgmq._install_notify_trigger(stored);
END
$fn$;

-- Turn notifications off; a no-op when they are already off.
CREATE FUNCTION pgmq.disable_notify_insert(queue_name text)
RETURNS void
LANGUAGE plpgsql
AS $fn$
DECLARE
    stored text;
BEGIN
    PERFORM pgmq.acquire_queue_lock(queue_name);
    stored := pgmq._existing_queue(queue_name, 'it'::text);
    PERFORM pgmq._remove_notify_trigger(stored);
    DELETE FROM pgmq.notify_insert_throttle t WHERE t.queue_name::text = stored;
END
$fn$;

-- Change the throttle of a queue whose notifications are on.
CREATE FUNCTION pgmq.update_notify_insert(queue_name text, throttle_interval_ms integer)
RETURNS void
LANGUAGE plpgsql
AS $fn$
DECLARE
    stored text;
BEGIN
    PERFORM pgmq._check_throttle(throttle_interval_ms);
    stored := pgmq._existing_queue(queue_name, 'the queue'::text);
    UPDATE pgmq.notify_insert_throttle t
    SET throttle_interval_ms = $2,
        last_notified_at = pg_catalog.to_timestamp(0)
    WHERE t.queue_name::text = stored;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'Queue "%" does not have notify_insert enabled. '
            'Enable it first using pgmq.enable_notify_insert()', queue_name
            USING ERRCODE = 'PQ004';
    END IF;
END
$fn$;

CREATE FUNCTION pgmq.list_notify_insert_throttles()
RETURNS TABLE (queue_name text, throttle_interval_ms integer, last_notified_at timestamptz)
LANGUAGE sql STABLE
AS $fn$
    SELECT t.queue_name, t.throttle_interval_ms, t.last_notified_at
    FROM pgmq.notify_insert_throttle t
    ORDER BY t.queue_name;
$fn$;
