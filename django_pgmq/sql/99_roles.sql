-- Two roles: the owner (runs migrate, owns schema pgmq and everything in it, queues
-- included) and application roles granted exactly what message operations need, recorded
-- in pgmq.app_role (sql/02_privileges.sql). Applied last, so the rule below covers every
-- function the other files made.

-- What an application role may do (docs/guide/roles.md, "What the grant gives"):
--   USAGE on the schema, never CREATE (taken back if an older version gave it);
--   EXECUTE on every function (present, and later ones by ALTER DEFAULT PRIVILEGES: the
--   owner functions among them check the caller themselves);
--   SELECT, INSERT, UPDATE, DELETE and TRUNCATE (purge) on every queue's live and archive
--   tables and their partitions, USAGE and SELECT on their sequences (metrics read them):
--   for the queues that exist now, and for each queue created later when it is created
--   (pgmq._grant_queue), never by default privileges, which would also cover the side
--   tables later migrations add;
--   SELECT on the other tables of pgmq (the catalogue, attributes, limits, schedules,
--   topic bindings, the Celery and Spark records: message operations and the admin's read
--   paths read them), except the registry itself; no write to any of them: what changes
--   them goes through functions.
-- create_queues: create queues and drop the ones it created (owner functions, checked by
-- pgmq._require_privilege); manage_queues: change queues' policy through the functions
-- that check it (attributes, schedules, topic bindings).
-- tables: tables outside pgmq the role also reads and writes (manage.py pgmq_grant passes
-- the app's Django tables: worker records, samples, task results).
-- Run by the owner (or a superuser); idempotent; granting again with other flags changes them.
CREATE FUNCTION pgmq.grant_app_role(
    role name, create_queues boolean DEFAULT false, tables regclass[] DEFAULT '{}',
    manage_queues boolean DEFAULT false
)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $fn$
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
    -- The Celery transport numbers its consumer sessions from this sequence
    -- (pgmq.celery_open_session runs as the caller): nextval only, no policy in it.
    EXECUTE pg_catalog.format('GRANT USAGE ON SEQUENCE pgmq.celery_session_seq TO %I', role);

    FOR queue IN SELECT m.queue_name::text FROM pgmq.meta m ORDER BY 1 LOOP
        PERFORM pgmq._grant_queue(queue, role);
    END LOOP;
    FOR i IN 1 .. coalesce(pg_catalog.cardinality(tables), 0) LOOP
        EXECUTE pg_catalog.format('GRANT SELECT, INSERT, UPDATE, DELETE ON %s TO %I', tables[i], role);
    END LOOP;
END
$fn$;

-- Take back everything pgmq.grant_app_role gave the role (present and default privileges,
-- and its registry row). Queues it created stay; they are the owner's.
CREATE FUNCTION pgmq.revoke_app_role(role name, tables regclass[] DEFAULT '{}')
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $fn$
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
$fn$;

-- The `_`-prefixed helpers are not executable by PUBLIC (the public API stays so, as in
-- pgmq; a role still needs USAGE on the schema). PostgreSQL's default privileges cannot
-- take PUBLIC's EXECUTE away per schema, so each migration that makes a helper revokes
-- it (python -m django_pgmq.sqltools.migrate writes the REVOKE; the migration tests check it).
DO $revoke$
DECLARE
    fn regprocedure;
BEGIN
    FOR fn IN
        SELECT p.oid::regprocedure FROM pg_catalog.pg_proc p
        WHERE p.pronamespace = 'pgmq'::regnamespace AND p.proname LIKE '\_%'
    LOOP
        EXECUTE pg_catalog.format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', fn);
    END LOOP;
END
$revoke$;
