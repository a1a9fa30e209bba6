-- The raw-table limit: a bare table with a queue's columns (primary key only),
-- static statements, no functions. It is what PostgreSQL itself allows.

-- name: create
DROP SCHEMA IF EXISTS raw CASCADE;
CREATE SCHEMA raw;
CREATE TABLE raw.q_bench (
    msg_id bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY,
    read_ct integer NOT NULL DEFAULT 0,
    enqueued_at timestamptz NOT NULL DEFAULT now(),
    last_read_at timestamptz,
    vt timestamptz NOT NULL,
    message jsonb,
    headers jsonb
);
CREATE TABLE raw.a_bench (
    msg_id bigint PRIMARY KEY,
    read_ct integer NOT NULL DEFAULT 0,
    enqueued_at timestamptz NOT NULL DEFAULT now(),
    last_read_at timestamptz,
    vt timestamptz NOT NULL,
    message jsonb,
    headers jsonb,
    archived_at timestamptz NOT NULL DEFAULT now()
);

-- name: send
INSERT INTO raw.q_bench (vt, message) VALUES (clock_timestamp(), %(msg)s::jsonb)
RETURNING msg_id;

-- name: send_batch
INSERT INTO raw.q_bench (vt, message)
SELECT clock_timestamp(), m FROM unnest(%(msgs)s::jsonb[]) AS m
RETURNING msg_id;

-- name: send_notify
WITH sent AS (
    INSERT INTO raw.q_bench (vt, message) VALUES (clock_timestamp(), %(msg)s::jsonb)
    RETURNING msg_id
)
SELECT msg_id, pg_notify('raw_bench', '') FROM sent;

-- name: read
WITH picked AS (
    SELECT msg_id FROM raw.q_bench
    WHERE vt <= clock_timestamp()
    ORDER BY msg_id
    LIMIT %(qty)s::integer
    FOR UPDATE SKIP LOCKED
)
UPDATE raw.q_bench m
SET vt = clock_timestamp() + %(vt)s::integer * interval '1 second',
    read_ct = m.read_ct + 1,
    last_read_at = clock_timestamp()
FROM picked
WHERE m.msg_id = picked.msg_id
RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message, m.headers;

-- name: archive
WITH moved AS (
    DELETE FROM raw.q_bench WHERE msg_id = ANY(%(ids)s::bigint[])
    RETURNING msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers
)
INSERT INTO raw.a_bench (msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers)
SELECT msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers FROM moved
RETURNING msg_id;

-- name: delete
DELETE FROM raw.q_bench WHERE msg_id = ANY(%(ids)s::bigint[]) RETURNING msg_id;
