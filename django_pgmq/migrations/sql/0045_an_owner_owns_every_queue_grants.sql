-- 0045_an_owner_owns_every_queue_grants: an owner owns every queue, grants recorded
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
-- BEGIN HAND sec
-- The owner owns every queue; application roles are recorded in pgmq.app_role and
-- granted by the new model (sql/02_privileges.sql, sql/99_roles.sql). For an installed
-- database: the registry tables (their primary keys are added below by the generated
-- part), every role the old grant gave rights registered (create_queues when it had
-- CREATE on pgmq), who created each queue recorded (its live table's owner), queue
-- tables another role owns given to the schema owner (or a WARNING with the command a
-- DBA runs), CREATE on pgmq taken from everyone but the owner, the old rules for every
-- table and sequence (default privileges) and the old writes on the side tables taken
-- back from every role, and every registered role granted every queue's tables.
CREATE TABLE pgmq.app_role (
    role_name name NOT NULL,
    create_queues boolean NOT NULL DEFAULT false,
    manage_queues boolean NOT NULL DEFAULT false
);
CREATE TABLE pgmq.queue_creator (
    queue_name text NOT NULL,
    created_by name NOT NULL
);
DO $sec$
DECLARE
    owner_oid oid := (SELECT n.nspowner FROM pg_catalog.pg_namespace n WHERE n.nspname = 'pgmq'::name);
    superuser boolean := (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = CURRENT_USER);
    rec record;
    grantee name;
    tbl regclass;
BEGIN
    -- 1. The roles the old grant gave rights: USAGE on pgmq and SELECT on pgmq.meta.
    INSERT INTO pgmq.app_role (role_name, create_queues)
    SELECT r.rolname,
           EXISTS (SELECT FROM pg_catalog.pg_namespace n, pg_catalog.aclexplode(n.nspacl) s
                   WHERE n.nspname = 'pgmq'::name AND s.grantee = r.oid AND s.privilege_type = 'CREATE')
    FROM pg_catalog.pg_roles r
    WHERE r.oid <> owner_oid
      AND EXISTS (SELECT FROM pg_catalog.pg_namespace n, pg_catalog.aclexplode(n.nspacl) s
                  WHERE n.nspname = 'pgmq'::name AND s.grantee = r.oid AND s.privilege_type = 'USAGE')
      AND EXISTS (SELECT FROM pg_catalog.pg_class c, pg_catalog.aclexplode(c.relacl) t
                  WHERE c.oid = 'pgmq.meta'::regclass AND t.grantee = r.oid AND t.privilege_type = 'SELECT');

    -- 2. Who created each queue: the owner of its live table (the schema owner when it has none).
    INSERT INTO pgmq.queue_creator (queue_name, created_by)
    SELECT m.queue_name::text, pg_catalog.pg_get_userbyid(coalesce(c.relowner, owner_oid))
    FROM pgmq.meta m
    LEFT JOIN pg_catalog.pg_class c
           ON c.relnamespace = 'pgmq'::regnamespace
          AND c.relname = ('q_'::text || pg_catalog.lower(m.queue_name::text))::name;

    -- 3. Queue tables (and their partitions) another role owns become the schema owner's.
    FOR rec IN
        WITH RECURSIVE queue_table(oid) AS (
            SELECT c.oid FROM pgmq.meta m
            JOIN pg_catalog.pg_class c ON c.relnamespace = 'pgmq'::regnamespace
             AND c.relname IN (('q_'::text || pg_catalog.lower(m.queue_name::text))::name,
                               ('a_'::text || pg_catalog.lower(m.queue_name::text))::name)
            UNION
            SELECT i.inhrelid FROM pg_catalog.pg_inherits i JOIN queue_table q ON i.inhparent = q.oid
        )
        SELECT c.oid::regclass AS tbl, c.relowner, pg_catalog.pg_get_userbyid(c.relowner) AS owner
        FROM queue_table q JOIN pg_catalog.pg_class c ON c.oid = q.oid
        WHERE c.relowner <> owner_oid
        ORDER BY 1
    LOOP
        IF superuser OR pg_catalog.pg_has_role(rec.relowner, 'MEMBER'::text) THEN
            EXECUTE pg_catalog.format('ALTER TABLE %s OWNER TO %I', rec.tbl,
                                      pg_catalog.pg_get_userbyid(owner_oid));
        ELSE
            RAISE WARNING 'django-pgmq: queue table % is owned by role "%", not by the owner of schema pgmq',
                rec.tbl, rec.owner
                USING HINT = pg_catalog.format(
                    'A superuser runs: ALTER TABLE %s OWNER TO %I; then the owner runs: '
                    'manage.py pgmq_grant for each application role (docs/guide/roles.md, "Upgrading").',
                    rec.tbl, pg_catalog.pg_get_userbyid(owner_oid));
        END IF;
    END LOOP;

    -- 4. CREATE on pgmq: the owner's only.
    FOR rec IN
        SELECT DISTINCT s.grantee FROM pg_catalog.pg_namespace n, pg_catalog.aclexplode(n.nspacl) s
        WHERE n.nspname = 'pgmq'::name AND s.privilege_type = 'CREATE' AND s.grantee <> owner_oid
    LOOP
        EXECUTE pg_catalog.format('REVOKE CREATE ON SCHEMA pgmq FROM %s',
            CASE WHEN rec.grantee = 0 THEN 'PUBLIC'
                 ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(rec.grantee)::text) END);
    END LOOP;

    -- 5. The old rules for every table and sequence to come (default privileges).
    FOR rec IN
        SELECT d.defaclrole, d.defaclobjtype, s.grantee
        FROM pg_catalog.pg_default_acl d, pg_catalog.aclexplode(d.defaclacl) s
        WHERE d.defaclnamespace = 'pgmq'::regnamespace AND d.defaclobjtype IN ('r', 'S')
        GROUP BY 1, 2, 3
    LOOP
        IF superuser OR pg_catalog.pg_has_role(rec.defaclrole, 'MEMBER'::text) THEN
            EXECUTE pg_catalog.format(
                'ALTER DEFAULT PRIVILEGES FOR ROLE %I IN SCHEMA pgmq REVOKE ALL ON %s FROM %s',
                pg_catalog.pg_get_userbyid(rec.defaclrole),
                CASE rec.defaclobjtype WHEN 'r' THEN 'TABLES' ELSE 'SEQUENCES' END,
                CASE WHEN rec.grantee = 0 THEN 'PUBLIC'
                     ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(rec.grantee)::text) END);
        ELSE
            RAISE WARNING 'django-pgmq: role "%" gives default privileges on new tables in pgmq',
                pg_catalog.pg_get_userbyid(rec.defaclrole)
                USING HINT = 'That role runs: ALTER DEFAULT PRIVILEGES IN SCHEMA pgmq REVOKE ALL ON TABLES FROM ...';
        END IF;
    END LOOP;

    -- 6. No role but the owner writes a side table (every table of pgmq that is not a
    -- queue's): the old grant gave every application role every table.
    FOR rec IN
        SELECT DISTINCT c.oid::regclass AS tbl, s.grantee
        FROM pg_catalog.pg_class c, pg_catalog.aclexplode(c.relacl) s
        WHERE c.relnamespace = 'pgmq'::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
          AND s.grantee <> owner_oid
          AND s.privilege_type IN ('INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'REFERENCES', 'TRIGGER')
          AND NOT EXISTS (
              SELECT FROM pgmq.meta m
              WHERE c.relname IN (('q_'::text || pg_catalog.lower(m.queue_name::text))::name,
                                  ('a_'::text || pg_catalog.lower(m.queue_name::text))::name))
          AND c.relname !~ '^spark_stage_[0-9a-f]{32}$'
        ORDER BY 1, 2
    LOOP
        EXECUTE pg_catalog.format(
            'REVOKE INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER ON TABLE %s FROM %s', rec.tbl,
            CASE WHEN rec.grantee = 0 THEN 'PUBLIC'
                 ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(rec.grantee)::text) END);
    END LOOP;

    -- 7. Every registered role: no write on the side tables (SELECT stays; the TEMPORARY
    -- list below keeps what message operations still write until side lands), and
    -- every queue's tables, partitions and sequences granted.
    FOR grantee IN SELECT a.role_name FROM pgmq.app_role a ORDER BY 1 LOOP
        FOR tbl IN
            SELECT c.oid::regclass FROM pg_catalog.pg_class c
            WHERE c.relnamespace = 'pgmq'::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
              AND NOT EXISTS (
                  SELECT FROM pgmq.meta m
                  WHERE c.relname IN (('q_'::text || pg_catalog.lower(m.queue_name::text))::name,
                                      ('a_'::text || pg_catalog.lower(m.queue_name::text))::name))
              AND c.relname !~ '^spark_stage_[0-9a-f]{32}$'
        LOOP
            EXECUTE pg_catalog.format(
                'REVOKE INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER ON TABLE %s FROM %I', tbl, grantee);
            IF tbl NOT IN ('pgmq.app_role'::regclass, 'pgmq.queue_creator'::regclass) THEN
                EXECUTE pg_catalog.format('GRANT SELECT ON TABLE %s TO %I', tbl, grantee);
            END IF;
        END LOOP;
        FOR tbl IN
            SELECT s.oid::regclass FROM pg_catalog.pg_class s
            WHERE s.relnamespace = 'pgmq'::regnamespace AND s.relkind = 'S'
              AND NOT EXISTS (
                  SELECT FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_class t ON t.oid = d.refobjid
                  JOIN pgmq.meta m ON t.relname = ('q_'::text || pg_catalog.lower(m.queue_name::text))::name
                  WHERE d.objid = s.oid AND d.classid = 'pg_catalog.pg_class'::regclass
                    AND d.refclassid = 'pg_catalog.pg_class'::regclass)
        LOOP
            EXECUTE pg_catalog.format('REVOKE ALL ON SEQUENCE %s FROM %I', tbl, grantee);
        END LOOP;
        -- TEMPORARY until side lands (as in pgmq.grant_app_role): remove with it.
        FOR tbl IN
            SELECT pg_catalog.to_regclass(t) FROM pg_catalog.unnest(ARRAY[
                'pgmq.queue_deduplication', 'pgmq.notify_insert_throttle', 'pgmq.schedule_ticks',
                'pgmq.celery_queue', 'pgmq.celery_binding', 'pgmq.celery_consumer',
                'pgmq.spark_stream_batch', 'pgmq.spark_stage', 'pgmq.spark_sink_batch',
                'pgmq.spark_export_run', 'pgmq.spark_stats', 'pgmq.queue_limit_state',
                'pgmq.queue_index_wanted']::text[]) AS t
            WHERE pg_catalog.to_regclass(t) IS NOT NULL
        LOOP
            EXECUTE pg_catalog.format('GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE %s TO %I', tbl, grantee);
        END LOOP;
        IF pg_catalog.to_regclass('pgmq.celery_session_seq') IS NOT NULL THEN
            EXECUTE pg_catalog.format('GRANT USAGE, SELECT ON SEQUENCE pgmq.celery_session_seq TO %I', grantee);
        END IF;
        -- END TEMPORARY
        FOR tbl IN
            WITH RECURSIVE queue_table(oid) AS (
                SELECT c.oid FROM pgmq.meta m
                JOIN pg_catalog.pg_class c ON c.relnamespace = 'pgmq'::regnamespace
                 AND c.relname IN (('q_'::text || pg_catalog.lower(m.queue_name::text))::name,
                                   ('a_'::text || pg_catalog.lower(m.queue_name::text))::name)
                UNION
                SELECT i.inhrelid FROM pg_catalog.pg_inherits i JOIN queue_table q ON i.inhparent = q.oid
            )
            SELECT q.oid::regclass FROM queue_table q
        LOOP
            EXECUTE pg_catalog.format(
                'GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON TABLE %s TO %I', tbl, grantee);
        END LOOP;
        FOR tbl IN
            SELECT s.oid::regclass FROM pg_catalog.pg_class s
            JOIN pg_catalog.pg_depend d ON d.objid = s.oid AND d.classid = 'pg_catalog.pg_class'::regclass
             AND d.refclassid = 'pg_catalog.pg_class'::regclass AND d.deptype IN ('a', 'i')
            JOIN pg_catalog.pg_class t ON t.oid = d.refobjid
            JOIN pgmq.meta m ON t.relname = ('q_'::text || pg_catalog.lower(m.queue_name::text))::name
            WHERE s.relkind = 'S' AND t.relnamespace = 'pgmq'::regnamespace
        LOOP
            EXECUTE pg_catalog.format('GRANT USAGE, SELECT ON SEQUENCE %s TO %I', tbl, grantee);
        END LOOP;
    END LOOP;
END
$sec$;
-- END HAND sec
DROP FUNCTION IF EXISTS pgmq._share_queue_with_owner(text);
DROP FUNCTION IF EXISTS pgmq.grant_app_role(name,boolean,regclass[]);
ALTER TABLE pgmq.app_role ADD CONSTRAINT app_role_pkey PRIMARY KEY (role_name);

ALTER TABLE pgmq.queue_creator ADD CONSTRAINT queue_creator_pkey PRIMARY KEY (queue_name);

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
    PERFORM pgmq._grant_queue_table(pg_catalog.format('pgmq.%I', part)::regclass);  -- app roles' rights
    RETURN QUERY SELECT part, moved;
END
$function$
;
COMMENT ON FUNCTION pgmq._create_partition(pgmq.partition_config,numeric,numeric) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._create_partition(pgmq.partition_config,numeric,numeric) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._create_queue(queue_name text, unlogged boolean)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    PERFORM pgmq.validate_queue_name(queue_name);
    IF (pgmq._same_name_queue(queue_name)).queue_name IS NOT NULL
       AND pg_catalog.to_regclass(pg_catalog.format(
               'pgmq.%I', pgmq.format_table_name(queue_name, 'q'::text))) IS NOT NULL THEN
        RETURN;
    END IF;
    PERFORM pgmq._require_privilege('create_queues'::text);
    PERFORM pgmq.acquire_queue_lock(queue_name);
    IF (pgmq._same_name_queue(queue_name)).queue_name IS NOT NULL
       AND pg_catalog.to_regclass(pg_catalog.format(
               'pgmq.%I', pgmq.format_table_name(queue_name, 'q'::text))) IS NOT NULL THEN
        RETURN;
    END IF;
    PERFORM pgmq._create_queue_tables(queue_name, unlogged, NULL::text, NULL::text);
    INSERT INTO pgmq.meta (queue_name, is_partitioned, is_unlogged)
    VALUES (queue_name, false, unlogged)
    ON CONFLICT DO NOTHING;
    PERFORM pgmq._record_creator(queue_name);
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
    PERFORM pgmq._refuse_foreign_tables(queue_name);
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
    PERFORM pgmq._grant_queue(queue_name);
END
$function$
;
COMMENT ON FUNCTION pgmq._create_queue_tables(text,boolean,text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._create_queue_tables(text,boolean,text,text) FROM PUBLIC;

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
        WHERE pg_catalog.lower(c.queue_name) = pg_catalog.lower($1);
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
    DELETE FROM pgmq.queue_creator c WHERE pg_catalog.lower(c.queue_name) = pg_catalog.lower($1);
    RETURN true;
END
$function$
;
COMMENT ON FUNCTION pgmq._drop_queue(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._drop_queue(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._grant_queue(queue_name text, role name DEFAULT NULL::name)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    tbl regclass;
BEGIN
    FOR tbl IN
        WITH RECURSIVE t(oid) AS (
            SELECT c.oid FROM pg_catalog.pg_class c
            WHERE c.relnamespace = 'pgmq'::regnamespace
              AND c.relname IN (pgmq.format_table_name(queue_name, 'q'::text)::name,
                                pgmq.format_table_name(queue_name, 'a'::text)::name)
            UNION
            SELECT i.inhrelid FROM pg_catalog.pg_inherits i JOIN t ON i.inhparent = t.oid
        )
        SELECT t.oid::regclass FROM t ORDER BY 1
    LOOP
        PERFORM pgmq._grant_queue_table(tbl, role);
    END LOOP;
END
$function$
;
COMMENT ON FUNCTION pgmq._grant_queue(text,name) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._grant_queue(text,name) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._grant_queue_table(tbl regclass, role name DEFAULT NULL::name)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    grantee name;
    seq regclass;
BEGIN
    FOR grantee IN
        SELECT a.role_name FROM pgmq.app_role a
        JOIN pg_catalog.pg_roles r ON r.rolname = a.role_name
        WHERE role IS NULL OR a.role_name = role
        ORDER BY 1
    LOOP
        EXECUTE pg_catalog.format(
            'GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON TABLE %s TO %I', tbl, grantee);
        FOR seq IN
            SELECT s.oid::regclass FROM pg_catalog.pg_depend d
            JOIN pg_catalog.pg_class s ON s.oid = d.objid AND s.relkind = 'S'
            WHERE d.classid = 'pg_catalog.pg_class'::regclass AND d.refobjid = tbl
              AND d.refclassid = 'pg_catalog.pg_class'::regclass AND d.deptype IN ('a', 'i')
        LOOP
            EXECUTE pg_catalog.format('GRANT USAGE, SELECT ON SEQUENCE %s TO %I', seq, grantee);
        END LOOP;
    END LOOP;
END
$function$
;
COMMENT ON FUNCTION pgmq._grant_queue_table(regclass,name) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._grant_queue_table(regclass,name) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._record_creator(queue_name text)
 RETURNS void
 LANGUAGE sql
AS $function$
    INSERT INTO pgmq.queue_creator AS c (queue_name, created_by)
    SELECT m.queue_name::text, SESSION_USER FROM pgmq.meta m
    WHERE pg_catalog.lower(m.queue_name::text) = pg_catalog.lower($1)
    ON CONFLICT (queue_name) DO NOTHING;
$function$
;
COMMENT ON FUNCTION pgmq._record_creator(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._record_creator(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._refuse_foreign_tables(queue_name text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    squatter record;
BEGIN
    SELECT c.relname, pg_catalog.pg_get_userbyid(c.relowner) AS owner INTO squatter
    FROM pg_catalog.pg_class c
    JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'pgmq'::name AND c.relowner <> n.nspowner
      AND c.relname IN (pgmq.format_table_name(queue_name, 'q'::text)::name,
                        pgmq.format_table_name(queue_name, 'a'::text)::name,
                        ('archived_at_idx_'::text || pg_catalog.lower(queue_name))::name)
    ORDER BY c.relname
    LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'queue "%": relation pgmq.% already exists and is owned by role "%", not by the owner of schema pgmq',
            queue_name, squatter.relname, squatter.owner
            USING ERRCODE = 'PQ003',
                  HINT = 'A queue is never built on a table another role made. Drop that relation, '
                         'or, if it is a queue of an older install, have a DBA run '
                         'ALTER TABLE ... OWNER TO the owner of schema pgmq.';
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._refuse_foreign_tables(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._refuse_foreign_tables(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._require_privilege(what text)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    IF what IS NULL OR what NOT IN ('create_queues'::text, 'manage_queues'::text) THEN
        RAISE EXCEPTION 'unknown pgmq privilege "%": use create_queues or manage_queues', what
            USING ERRCODE = 'PQ004';
    END IF;
    IF pgmq._session_is_owner() THEN
        RETURN;
    END IF;
    IF EXISTS (
        SELECT FROM pgmq.app_role a
        JOIN pg_catalog.pg_roles r ON r.rolname = a.role_name
        WHERE CASE what WHEN 'create_queues'::text THEN a.create_queues ELSE a.manage_queues END
          AND pg_catalog.pg_has_role(SESSION_USER, r.oid, 'MEMBER'::text)
    ) THEN
        RETURN;
    END IF;
    RAISE EXCEPTION 'permission denied: role "%" does not hold the pgmq privilege %', SESSION_USER, what
        USING ERRCODE = '42501',
              HINT = pg_catalog.format(
                  'The owner grants it with manage.py pgmq_grant %s --%s',
                  pg_catalog.quote_ident(SESSION_USER::text),
                  pg_catalog.replace(what, '_'::text, '-'::text));
END
$function$
;
COMMENT ON FUNCTION pgmq._require_privilege(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._require_privilege(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._session_is_owner()
 RETURNS boolean
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
    SELECT coalesce((SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = SESSION_USER), false)
        OR pg_catalog.pg_has_role(
               SESSION_USER,
               (SELECT n.nspowner FROM pg_catalog.pg_namespace n WHERE n.nspname = 'pgmq'::name),
               'MEMBER'::text);
$function$
;
COMMENT ON FUNCTION pgmq._session_is_owner() IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._session_is_owner() FROM PUBLIC;

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
    PERFORM pgmq._grant_queue(stored);  -- the new archive table and its partitions
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
    PERFORM pgmq._record_creator(queue_name);
    PERFORM pgmq._grant_queue(queue_name);  -- the default partitions too
END
$function$
;
COMMENT ON FUNCTION pgmq.create_partitioned(text,text,text,integer) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.create_partitioned(text,text,text,integer) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.drop_queue(queue_name text)
 RETURNS boolean
 LANGUAGE sql
AS $function$
    SELECT pgmq._drop_queue(queue_name);
$function$
;
COMMENT ON FUNCTION pgmq.drop_queue(text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.drop_queue(text) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.grant_app_role(role name, create_queues boolean DEFAULT false, tables regclass[] DEFAULT '{}'::regclass[], manage_queues boolean DEFAULT false)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    tbl regclass;
    queue text;
BEGIN
    IF role IS NULL OR pg_catalog.to_regrole(pg_catalog.quote_ident(role::text)) IS NULL THEN
        RAISE EXCEPTION 'role "%" does not exist', role
            USING ERRCODE = 'PQ004', HINT = 'Create it first: CREATE ROLE ... LOGIN.';
    END IF;
    IF NOT pgmq._session_is_owner() THEN
        RAISE EXCEPTION 'permission denied: only the owner of schema pgmq grants application roles'
            USING ERRCODE = '42501';
    END IF;
    IF pg_catalog.pg_has_role(role, (SELECT n.nspowner FROM pg_catalog.pg_namespace n
                                     WHERE n.nspname = 'pgmq'::name), 'MEMBER'::text) THEN
        RAISE EXCEPTION 'role "%" is (a member of) the owner of schema pgmq: it needs no grant', role
            USING ERRCODE = 'PQ004',
                  HINT = 'Grant a role of its own to the application (CREATE ROLE ... LOGIN).';
    END IF;
    INSERT INTO pgmq.app_role AS a (role_name, create_queues, manage_queues)
    VALUES (role, coalesce($2, false), coalesce($4, false))
    ON CONFLICT (role_name) DO UPDATE
    SET create_queues = EXCLUDED.create_queues, manage_queues = EXCLUDED.manage_queues;

    EXECUTE pg_catalog.format('GRANT USAGE ON SCHEMA pgmq TO %I', role);
    EXECUTE pg_catalog.format('REVOKE CREATE ON SCHEMA pgmq FROM %I', role);
    EXECUTE pg_catalog.format('GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA pgmq TO %I', role);
    EXECUTE pg_catalog.format(
        'ALTER DEFAULT PRIVILEGES IN SCHEMA pgmq GRANT EXECUTE ON FUNCTIONS TO %I', role);
    -- an older version's rules for every table and sequence, present and future
    EXECUTE pg_catalog.format('ALTER DEFAULT PRIVILEGES IN SCHEMA pgmq REVOKE ALL ON TABLES FROM %I', role);
    EXECUTE pg_catalog.format('ALTER DEFAULT PRIVILEGES IN SCHEMA pgmq REVOKE ALL ON SEQUENCES FROM %I', role);
    EXECUTE pg_catalog.format('REVOKE ALL ON ALL TABLES IN SCHEMA pgmq FROM %I', role);
    EXECUTE pg_catalog.format('REVOKE ALL ON ALL SEQUENCES IN SCHEMA pgmq FROM %I', role);

    FOR tbl IN
        SELECT c.oid::regclass FROM pg_catalog.pg_class c
        WHERE c.relnamespace = 'pgmq'::regnamespace AND c.relkind IN ('r', 'p')
          AND NOT c.relispartition
          AND c.oid NOT IN ('pgmq.app_role'::regclass, 'pgmq.queue_creator'::regclass)
          AND NOT EXISTS (
              SELECT FROM pgmq.meta m
              WHERE c.relname IN (pgmq.format_table_name(m.queue_name::text, 'q'::text)::name,
                                  pgmq.format_table_name(m.queue_name::text, 'a'::text)::name))
          AND c.relname !~ '^spark_stage_[0-9a-f]{32}$'
        ORDER BY 1
    LOOP
        EXECUTE pg_catalog.format('GRANT SELECT ON TABLE %s TO %I', tbl, role);
    END LOOP;
    -- TEMPORARY until side lands: the side tables that application roles' message
    -- operations still write directly (deduplication, the notify throttle, schedule
    -- ticks, the Celery registry, Spark's records, limit state, index wishes). Remove
    -- this loop once those writes go through owner functions.
    FOR tbl IN
        SELECT pg_catalog.to_regclass(t) FROM pg_catalog.unnest(ARRAY[
            'pgmq.queue_deduplication', 'pgmq.notify_insert_throttle', 'pgmq.schedule_ticks',
            'pgmq.celery_queue', 'pgmq.celery_binding', 'pgmq.celery_consumer',
            'pgmq.spark_stream_batch', 'pgmq.spark_stage', 'pgmq.spark_sink_batch',
            'pgmq.spark_export_run', 'pgmq.spark_stats', 'pgmq.queue_limit_state',
            'pgmq.queue_index_wanted']::text[]) AS t
        WHERE pg_catalog.to_regclass(t) IS NOT NULL
    LOOP
        EXECUTE pg_catalog.format('GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE %s TO %I', tbl, role);
    END LOOP;
    IF pg_catalog.to_regclass('pgmq.celery_session_seq') IS NOT NULL THEN
        EXECUTE pg_catalog.format('GRANT USAGE, SELECT ON SEQUENCE pgmq.celery_session_seq TO %I', role);
    END IF;
    -- END TEMPORARY

    FOR queue IN SELECT m.queue_name::text FROM pgmq.meta m ORDER BY 1 LOOP
        PERFORM pgmq._grant_queue(queue, role);
    END LOOP;
    FOR i IN 1 .. coalesce(pg_catalog.cardinality(tables), 0) LOOP
        EXECUTE pg_catalog.format('GRANT SELECT, INSERT, UPDATE, DELETE ON %s TO %I', tables[i], role);
    END LOOP;
END
$function$
;
COMMENT ON FUNCTION pgmq.grant_app_role(name,boolean,regclass[],boolean) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.grant_app_role(name,boolean,regclass[],boolean) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.revoke_app_role(role name, tables regclass[] DEFAULT '{}'::regclass[])
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    IF role IS NULL OR pg_catalog.to_regrole(pg_catalog.quote_ident(role::text)) IS NULL THEN
        RAISE EXCEPTION 'role "%" does not exist', role USING ERRCODE = 'PQ004';
    END IF;
    IF NOT pgmq._session_is_owner() THEN
        RAISE EXCEPTION 'permission denied: only the owner of schema pgmq revokes application roles'
            USING ERRCODE = '42501';
    END IF;
    DELETE FROM pgmq.app_role a WHERE a.role_name = role;
    EXECUTE pg_catalog.format('ALTER DEFAULT PRIVILEGES IN SCHEMA pgmq REVOKE ALL ON FUNCTIONS FROM %I', role);
    EXECUTE pg_catalog.format('ALTER DEFAULT PRIVILEGES IN SCHEMA pgmq REVOKE ALL ON TABLES FROM %I', role);
    EXECUTE pg_catalog.format('ALTER DEFAULT PRIVILEGES IN SCHEMA pgmq REVOKE ALL ON SEQUENCES FROM %I', role);
    EXECUTE pg_catalog.format('REVOKE ALL ON ALL FUNCTIONS IN SCHEMA pgmq FROM %I', role);
    EXECUTE pg_catalog.format('REVOKE ALL ON ALL TABLES IN SCHEMA pgmq FROM %I', role);
    EXECUTE pg_catalog.format('REVOKE ALL ON ALL SEQUENCES IN SCHEMA pgmq FROM %I', role);
    EXECUTE pg_catalog.format('REVOKE ALL ON SCHEMA pgmq FROM %I', role);
    FOR i IN 1 .. coalesce(pg_catalog.cardinality(tables), 0) LOOP
        EXECUTE pg_catalog.format('REVOKE ALL ON %s FROM %I', tables[i], role);
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
