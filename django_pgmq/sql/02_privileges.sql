-- Who may do what beyond message operations: the registry of application roles and the
-- one check every owner function makes (docs/guide/roles.md, "Privileges").
--
-- The owner of schema pgmq owns every object in it: the side tables below, every
-- queue's tables, sequences and indexes, and every function. An application role
-- owns nothing there and never has CREATE on the schema. What it may do beyond the
-- message operations it is granted on the queue tables (creating and dropping queues,
-- changing a queue's policy) it does through owner functions (SECURITY DEFINER, search
-- path pinned, every name qualified) that first call pgmq._require_privilege.

-- The application roles the owner granted (pgmq.grant_app_role, sql/99_roles.sql) and
-- their extra rights: create_queues (create queues, drop the ones it created),
-- manage_queues (queue attributes, schedules, topic bindings: the functions that change
-- a queue's policy). Written by grant_app_role and revoke_app_role, run by the owner;
-- no application role may write it (nor read it: it is granted nothing).
CREATE TABLE pgmq.app_role (
    role_name name PRIMARY KEY,
    create_queues boolean NOT NULL DEFAULT false,
    manage_queues boolean NOT NULL DEFAULT false
);

-- Who created each queue (the session's login role), so that a --create-queues role may
-- drop the queues it created and no other. Not in pgmq.meta, whose columns are pgmq's.
-- Written only by the owner functions that create and drop queues.
CREATE TABLE pgmq.queue_creator (
    queue_name text PRIMARY KEY,
    created_by name NOT NULL
);

-- True when the session's login role is a superuser or a member of the owner of schema
-- pgmq: the owner, who may do everything these functions guard.
CREATE FUNCTION pgmq._session_is_owner()
RETURNS boolean
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
    SELECT coalesce((SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = SESSION_USER), false)
        OR pg_catalog.pg_has_role(
               SESSION_USER,
               (SELECT n.nspowner FROM pg_catalog.pg_namespace n WHERE n.nspname = 'pgmq'::name),
               'MEMBER'::text);
$fn$;

-- Raise 42501 unless the session's login role may do `what` ('create_queues' or
-- 'manage_queues'): a superuser, a member of the schema's owner, or a member of a role
-- registered in pgmq.app_role with that right. SESSION_USER, not current_user: inside a
-- SECURITY DEFINER function current_user is the owner; a session that SET ROLE'd down
-- could RESET ROLE anyway, so this grants nothing the login role does not hold.
CREATE FUNCTION pgmq._require_privilege(what text)
RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
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
$fn$;

-- Grant every registered application role (or only `role`) what message operations
-- need on one table of a queue (its live or archive table, or a partition of one):
-- SELECT, INSERT, UPDATE, DELETE and TRUNCATE (purge) on it, USAGE and SELECT on the
-- sequences it owns (metrics read the id sequence). Run by the owner (directly, or
-- inside the owner functions that create queues and partitions).
CREATE FUNCTION pgmq._grant_queue_table(tbl regclass, role name DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $fn$
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
$fn$;

-- The same for every table of queue_name: its live and archive tables and their
-- partitions. Nothing when the queue has no tables.
CREATE FUNCTION pgmq._grant_queue(queue_name text, role name DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $fn$
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
$fn$;
