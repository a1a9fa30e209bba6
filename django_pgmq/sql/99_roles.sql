-- Two roles: the owner (runs migrate, owns schema pgmq and what it holds) and
-- application roles granted exactly what message operations need. Applied last, so the
-- rule below covers every function the other files made.

-- What an application role may do, granted by rule (every table, sequence and function
-- of schema pgmq, present and future), not by a list of names:
--   USAGE on the schema; EXECUTE on every function; SELECT, INSERT, UPDATE, DELETE and
--   TRUNCATE (purge) on every table but pgmq.meta, which it may only read; USAGE and
--   SELECT on every sequence (metrics read them). The same for objects the granting role
--   makes later (ALTER DEFAULT PRIVILEGES, e.g. queues the owner creates after this).
-- create_queues adds CREATE on the schema and writing pgmq.meta: the role may then create
-- queues (it owns their tables) and drop those, never the owner's.
-- tables: tables outside pgmq the role also reads and writes (manage.py pgmq_grant passes
-- the app's Django tables: worker records, samples, task results).
-- Run by the owner; idempotent; a role granted without create_queues loses them.
CREATE FUNCTION pgmq.grant_app_role(
    role name, create_queues boolean DEFAULT false, tables regclass[] DEFAULT '{}'
)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
    IF role IS NULL OR pg_catalog.to_regrole(pg_catalog.quote_ident(role)) IS NULL THEN
        RAISE EXCEPTION 'role "%" does not exist', role
            USING ERRCODE = 'PQ004', HINT = 'Create it first: CREATE ROLE ... LOGIN.';
    END IF;
    EXECUTE pg_catalog.format('GRANT USAGE ON SCHEMA pgmq TO %I', role);
    EXECUTE pg_catalog.format('GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA pgmq TO %I', role);
    EXECUTE pg_catalog.format(
        'GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON ALL TABLES IN SCHEMA pgmq TO %I', role);
    EXECUTE pg_catalog.format('GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA pgmq TO %I', role);
    EXECUTE pg_catalog.format('ALTER DEFAULT PRIVILEGES IN SCHEMA pgmq GRANT EXECUTE ON FUNCTIONS TO %I', role);
    EXECUTE pg_catalog.format(
        'ALTER DEFAULT PRIVILEGES IN SCHEMA pgmq '
        'GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON TABLES TO %I', role);
    EXECUTE pg_catalog.format(
        'ALTER DEFAULT PRIVILEGES IN SCHEMA pgmq GRANT USAGE, SELECT ON SEQUENCES TO %I', role);
    IF create_queues THEN
        EXECUTE pg_catalog.format('GRANT CREATE ON SCHEMA pgmq TO %I', role);
    ELSE
        EXECUTE pg_catalog.format('REVOKE CREATE ON SCHEMA pgmq FROM %I', role);
        EXECUTE pg_catalog.format('REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON pgmq.meta FROM %I', role);
    END IF;
    FOR i IN 1 .. coalesce(pg_catalog.cardinality(tables), 0) LOOP
        EXECUTE pg_catalog.format('GRANT SELECT, INSERT, UPDATE, DELETE ON %s TO %I', tables[i], role);
    END LOOP;
END
$fn$;

-- Take back everything pgmq.grant_app_role gave the role (present and default privileges).
-- Queues the role created stay, owned by it.
CREATE FUNCTION pgmq.revoke_app_role(role name, tables regclass[] DEFAULT '{}')
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
    IF role IS NULL OR pg_catalog.to_regrole(pg_catalog.quote_ident(role)) IS NULL THEN
        RAISE EXCEPTION 'role "%" does not exist', role USING ERRCODE = 'PQ004';
    END IF;
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
