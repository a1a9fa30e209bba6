-- 0020_issue_22_periphery_and_two_roles: issue 22 periphery and two roles
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._share_queue_with_owner(text);
DROP FUNCTION IF EXISTS pgmq.grant_app_role(name,boolean,regclass[]);
DROP FUNCTION IF EXISTS pgmq.revoke_app_role(name,regclass[]);













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
END
$function$
;
COMMENT ON FUNCTION pgmq._create_queue_tables(text,boolean,text,text) IS NULL;
-- BY HAND: the `_`-prefixed helpers are executable by PUBLIC again, as before, by rule.
DO $by_hand$
DECLARE
    fn regprocedure;
BEGIN
    FOR fn IN
        SELECT p.oid::regprocedure FROM pg_proc p
        WHERE p.pronamespace = 'pgmq'::regnamespace AND p.proname LIKE '\_%'
    LOOP
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO PUBLIC', fn);
    END LOOP;
END
$by_hand$;
-- BY HAND: unlogged queues' id sequences are unlogged again, as before.
DO $by_hand_sequences$
DECLARE
    seq text;
BEGIN
    FOR seq IN
        SELECT pg_get_serial_sequence(format('pgmq.%I', pgmq.format_table_name(m.queue_name, 'q')),
                                      'msg_id')
        FROM pgmq.meta m
        WHERE m.is_unlogged
          AND to_regclass(format('pgmq.%I', pgmq.format_table_name(m.queue_name, 'q'))) IS NOT NULL
    LOOP
        EXECUTE format('ALTER SEQUENCE %s SET UNLOGGED', seq);
    END LOOP;
END
$by_hand_sequences$;
