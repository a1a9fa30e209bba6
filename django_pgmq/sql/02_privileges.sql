-- STAND-IN (helper "side"): the minimal privilege registry that helper "sec" defines in
-- full (same table, same function, same contract); at merge sec's file replaces this one.
-- An application role is registered here by the owner; create_queues and manage_queues
-- are the rights a role may hold beyond message operations.
CREATE TABLE pgmq.app_role (
    role_name name PRIMARY KEY,
    create_queues boolean NOT NULL DEFAULT false,
    manage_queues boolean NOT NULL DEFAULT false
);

-- Pass when the session's login role is a superuser, a member of the owner of schema
-- pgmq, or a member of a registered role holding the right `what` ('create_queues' or
-- 'manage_queues'); else 42501 naming the role and the right.
CREATE FUNCTION pgmq._require_privilege(what text)
RETURNS void
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
    IF what IS NULL OR what NOT IN ('create_queues', 'manage_queues') THEN
        RAISE EXCEPTION 'unknown privilege "%"', coalesce(what, 'NULL') USING ERRCODE = 'PQ004';
    END IF;
    IF EXISTS (SELECT 1 FROM pg_catalog.pg_roles r WHERE r.rolname = SESSION_USER AND r.rolsuper)
       OR pg_catalog.pg_has_role(SESSION_USER,
                                 (SELECT n.nspowner FROM pg_catalog.pg_namespace n
                                  WHERE n.nspname = 'pgmq'), 'MEMBER')
       OR EXISTS (SELECT 1 FROM pgmq.app_role a
                  WHERE CASE what WHEN 'create_queues' THEN a.create_queues ELSE a.manage_queues END
                    AND pg_catalog.to_regrole(pg_catalog.quote_ident(a.role_name::text)) IS NOT NULL
                    AND pg_catalog.pg_has_role(SESSION_USER, a.role_name, 'MEMBER')) THEN
        RETURN;
    END IF;
    RAISE EXCEPTION 'role "%" may not %: it lacks the % right', SESSION_USER,
        CASE what WHEN 'create_queues' THEN 'create or drop queues'
             ELSE 'change queue policy (attributes, schedules, bindings)' END, what
        USING ERRCODE = '42501',
              HINT = pg_catalog.format('manage.py pgmq_grant %s --%s', SESSION_USER,
                                       pg_catalog.replace(what, '_', '-'));
END
$fn$;
