-- 0052_limit_slots_walked_by_their_key_the: limit slots walked by their key: the index by t holds only tokens
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP INDEX IF EXISTS pgmq.queue_limit_slots_free;
CREATE INDEX queue_limit_slots_free ON pgmq.queue_limit_slots USING btree (queue_name, kind, t) WHERE (kind = 'r'::"char");

