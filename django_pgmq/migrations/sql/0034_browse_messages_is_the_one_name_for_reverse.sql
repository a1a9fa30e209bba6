-- 0034_browse_messages_is_the_one_name_for: browse_messages is the one name for message browsing
-- Frozen when written; never edit a released migration.
ALTER FUNCTION pgmq._browse_messages(text,boolean,boolean,integer,text,text,jsonb,bigint,bigint,integer) RENAME TO _dashboard_messages;
