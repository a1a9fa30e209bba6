-- 0034_browse_messages_is_the_one_name_for: browse_messages is the one name for message browsing
-- Frozen when written; never edit a released migration.
-- Renamed in place: the body, its grants and its comment stay as they were.
ALTER FUNCTION pgmq._dashboard_messages(text,boolean,boolean,integer,text,text,jsonb,bigint,bigint,integer) RENAME TO _browse_messages;
