-- 0008_attributes_limits_schedules_tasks_workflows_and_roles: attributes limits schedules tasks workflows and roles
-- Frozen when written; never edit a released migration.
-- 0008_task_results (reverse)

DROP FUNCTION IF EXISTS pgmq._read_by_priority(text, integer, integer);
DROP FUNCTION IF EXISTS pgmq._enable_task_queue(text);
DO $keep$
BEGIN
    IF pg_catalog.to_regprocedure('pgmq._task_priority(jsonb)') IS NOT NULL
       AND NOT EXISTS (
           SELECT 1 FROM pg_catalog.pg_depend d
           WHERE d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass
             AND d.refclassid = 'pg_catalog.pg_proc'::pg_catalog.regclass
             AND d.refobjid = 'pgmq._task_priority(jsonb)'::pg_catalog.regprocedure)
    THEN
        DROP FUNCTION pgmq._task_priority(jsonb);
    END IF;
END
$keep$;
