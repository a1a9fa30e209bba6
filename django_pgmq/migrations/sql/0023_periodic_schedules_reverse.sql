-- 0023_periodic_schedules: periodic schedules
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._check_time_zone(text);
DROP FUNCTION IF EXISTS pgmq._cron_count(pgmq._cron_spec,text,timestamp with time zone,timestamp with time zone);
DROP FUNCTION IF EXISTS pgmq._cron_day_matches(pgmq._cron_spec,date);
DROP FUNCTION IF EXISTS pgmq._cron_field(text,text,integer,integer,text[]);
DROP FUNCTION IF EXISTS pgmq._cron_next(pgmq._cron_spec,text,timestamp with time zone);
DROP FUNCTION IF EXISTS pgmq._cron_next_elapsed(pgmq._cron_spec,text,timestamp with time zone);
DROP FUNCTION IF EXISTS pgmq._cron_next_local(pgmq._cron_spec,timestamp without time zone);
DROP FUNCTION IF EXISTS pgmq._cron_parse(text);
DROP FUNCTION IF EXISTS pgmq._cron_value(text,text,integer,integer,text[]);
DROP FUNCTION IF EXISTS pgmq._iso_time(timestamp with time zone,text);
DROP FUNCTION IF EXISTS pgmq._local_to_instant(timestamp without time zone,text);
DROP FUNCTION IF EXISTS pgmq._require_schedule(text);
DROP FUNCTION IF EXISTS pgmq._schedule_due_tick(pgmq._cron_spec,text,timestamp with time zone,interval,timestamp with time zone);
DROP FUNCTION IF EXISTS pgmq._utc_offset(timestamp with time zone,text);
DROP FUNCTION IF EXISTS pgmq.create_schedule(text,text,text,jsonb,jsonb,text,interval,boolean);
DROP FUNCTION IF EXISTS pgmq.drop_schedule(text);
DROP FUNCTION IF EXISTS pgmq.enable_schedule(text,boolean);
DROP FUNCTION IF EXISTS pgmq.enqueue_due_schedules(timestamp with time zone);
DROP FUNCTION IF EXISTS pgmq.list_schedules();
DROP FUNCTION IF EXISTS pgmq.next_ticks(text,text,timestamp with time zone,integer);
DROP FUNCTION IF EXISTS pgmq.run_schedule_now(text);
DROP INDEX IF EXISTS pgmq.schedules_due;
DROP INDEX IF EXISTS pgmq.schedules_queue;
-- BY HAND: the new tables and type go (their indexes and constraints with them).
DROP TABLE IF EXISTS pgmq.schedule_ticks;
DROP TABLE IF EXISTS pgmq.schedules;
DROP TYPE IF EXISTS pgmq._cron_spec;
