-- 0011_admin_bulk_actions_by_filter: admin bulk actions by filter and the worker's record of failed attempts
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._dashboard_match_batch(text,boolean,integer,text,text,jsonb,bigint,bigint,integer);
DROP FUNCTION IF EXISTS pgmq._dashboard_match_count(text,boolean,integer,text,text,jsonb);
DROP FUNCTION IF EXISTS pgmq._retry_later(text,bigint,double precision,text,integer);
