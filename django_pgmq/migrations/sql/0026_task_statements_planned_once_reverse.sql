-- 0026_task_statements_planned_once: task statements planned once
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._task_enqueue(text,jsonb,jsonb,timestamp with time zone,uuid,text,text,integer,jsonb,jsonb,timestamp with time zone,timestamp with time zone,integer);
DROP FUNCTION IF EXISTS pgmq._task_finish_and_start(text,uuid,bigint,text,timestamp with time zone,jsonb,jsonb,uuid,timestamp with time zone,text);
