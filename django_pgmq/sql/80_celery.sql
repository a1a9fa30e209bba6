-- Celery (kombu) transport support: which queues Celery declared, how its exchanges
-- route to them, who consumes them, and the steps that must be atomic in the database
-- (routing a publish, releasing held messages, dropping queues nobody uses).
-- Messages themselves live in ordinary pgmq queues and go through the pgmq API.

-- A Celery queue is a pgmq queue; this row keeps what AMQP declares about it.
CREATE TABLE pgmq.celery_queue (
    queue_name varchar PRIMARY KEY REFERENCES pgmq.meta (queue_name) ON DELETE CASCADE,
    celery_name text NOT NULL,
    auto_delete boolean NOT NULL DEFAULT false,
    expires interval,
    message_ttl interval,
    ever_consumed boolean NOT NULL DEFAULT false,
    last_used_at timestamptz NOT NULL DEFAULT now(),
    -- true only when pgmq.celery_declare_queue created the queue: the cleanup drops no
    -- other queue (a queue the owner made and Celery declared stays, whatever its row says)
    created_by_celery boolean NOT NULL DEFAULT false
);

COMMENT ON TABLE pgmq.celery_queue IS
    'Queues declared by Celery through django_pgmq.contrib.celery (name as Celery knows it, '
    'auto-delete, x-expires, x-message-ttl)';

-- Exchange bindings, shared by every process: fanout, direct and topic routing happen here.
CREATE TABLE pgmq.celery_binding (
    exchange text NOT NULL,
    exchange_type text NOT NULL CHECK (exchange_type IN ('direct', 'fanout', 'topic')),
    routing_key text NOT NULL,
    queue_name varchar NOT NULL REFERENCES pgmq.celery_queue (queue_name) ON DELETE CASCADE,
    key_regex text,
    PRIMARY KEY (exchange, queue_name, routing_key)
);
CREATE INDEX celery_binding_queue_idx ON pgmq.celery_binding (queue_name);

-- Live consumers. A session is one transport connection holding a session-level advisory
-- lock, so a consumer is alive exactly as long as its PostgreSQL session is.
CREATE TABLE pgmq.celery_consumer (
    queue_name varchar NOT NULL REFERENCES pgmq.celery_queue (queue_name) ON DELETE CASCADE,
    session_id integer NOT NULL,
    started_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (queue_name, session_id)
);

CREATE SEQUENCE pgmq.celery_session_seq AS integer MINVALUE 1 CYCLE;

-- First key of every advisory lock the transport takes (second key: session id, 0 = cleaner).
CREATE FUNCTION pgmq._celery_lock_space()
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $fn$ SELECT 1885105012 $fn$;

-- Pass when the session's login role may use the Celery transport: a superuser, a member
-- of the owner of schema pgmq, or a member of a role registered in pgmq.app_role
-- (manage.py pgmq_grant); 42501 otherwise. Used by the owner functions below (and the
-- Spark source's, sql/95_spark.sql), which declare and record on the caller's behalf.
CREATE FUNCTION pgmq._require_app_role()
RETURNS void
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
    -- Joined to pg_roles: a recorded role dropped since (without pgmq_grant --revoke)
    -- is no one's, and never an error.
    IF pgmq._session_is_owner()
       OR EXISTS (SELECT 1 FROM pgmq.app_role a
                  JOIN pg_catalog.pg_roles r ON r.rolname = a.role_name
                  WHERE pg_catalog.pg_has_role(SESSION_USER, r.oid, 'MEMBER'::text)) THEN
        RETURN;
    END IF;
    RAISE EXCEPTION 'role "%" is not an application role of pgmq', SESSION_USER
        USING ERRCODE = '42501',
              HINT = pg_catalog.format('manage.py pgmq_grant %s', SESSION_USER);
END
$fn$;

-- Whether session sid is alive and held by a connection of the session's own login role
-- (the transport holds it on its listener connection and consumes on another).
CREATE FUNCTION pgmq._celery_own_session(sid integer)
RETURNS boolean
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
    SELECT EXISTS (
        SELECT 1 FROM pg_catalog.pg_locks l
        JOIN pg_catalog.pg_stat_activity a ON a.pid = l.pid
        WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
          AND l.database = (SELECT d.oid FROM pg_catalog.pg_database d
                            WHERE d.datname = pg_catalog.current_database())
          AND l.classid = pgmq._celery_lock_space()::oid
          AND l.objid = sid::oid
          AND a.usename = SESSION_USER
    );
$fn$;

-- Start a consumer session on the calling connection; it ends when the connection does.
CREATE FUNCTION pgmq.celery_open_session()
RETURNS integer
LANGUAGE plpgsql
AS $fn$
DECLARE
    sid integer;
BEGIN
    LOOP
        sid := pg_catalog.nextval('pgmq.celery_session_seq');
        -- After the sequence wraps, skip ids whose session is still alive.
        EXIT WHEN pg_catalog.pg_try_advisory_lock(pgmq._celery_lock_space(), sid);
    END LOOP;
    RETURN sid;
END
$fn$;

CREATE FUNCTION pgmq._celery_session_alive(sid integer)
RETURNS boolean
LANGUAGE sql STABLE
AS $fn$
    SELECT EXISTS (
        SELECT 1 FROM pg_catalog.pg_locks l
        WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
          AND l.database = (SELECT d.oid FROM pg_catalog.pg_database d WHERE d.datname = pg_catalog.current_database())
          AND l.classid = pgmq._celery_lock_space()::oid
          AND l.objid = sid::oid
    );
$fn$;

-- AMQP topic pattern ('*' one word, '#' any number of words) as a regular expression
-- matched against '.' || routing_key.
CREATE FUNCTION pgmq._celery_topic_regex(pattern text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $fn$
    SELECT CASE WHEN pattern = '' THEN '^\.$' ELSE
        '^' || pg_catalog.string_agg(
            CASE w.word
                WHEN '#' THEN '(\.[^.]*)*'
                WHEN '*' THEN '\.[^.]*'
                ELSE '\.' || pg_catalog.regexp_replace(w.word, '([^A-Za-z0-9_])', '\\\1', 'g')
            END, '' ORDER BY w.pos) || '$'
    END
    FROM pg_catalog.unnest(pg_catalog.string_to_array(pattern, '.')) WITH ORDINALITY AS w(word, pos);
$fn$;

-- Create the queue if needed (unlogged when not durable) and record its AMQP arguments.
-- Existence is checked first so a declare never waits on locks held by a transaction
-- that is sending to the same queue.
-- An owner function: any registered application role may declare (the transport does on
-- every publish), the queue it creates is the owner's, and its row says that Celery
-- created it (created_by_celery): only such a queue may ever be dropped by the cleanup,
-- so declaring a queue the owner made (auto-delete, a short x-expires) never gets it
-- dropped. Application roles have no write right on the Celery registry tables.
CREATE FUNCTION pgmq.celery_declare_queue(
    queue text,
    original_name text,
    durable boolean DEFAULT true,
    is_auto_delete boolean DEFAULT false,
    expires_ms bigint DEFAULT NULL,
    ttl_ms bigint DEFAULT NULL
)
RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    created boolean := false;
BEGIN
    PERFORM pgmq._require_app_role();
    IF expires_ms IS NOT NULL AND expires_ms <= 0 OR ttl_ms IS NOT NULL AND ttl_ms < 0 THEN
        RAISE EXCEPTION 'queue "%": x-expires must be positive and x-message-ttl not negative',
            queue USING ERRCODE = 'PQ004';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pgmq.meta m WHERE m.queue_name::text = queue) THEN
        IF durable THEN
            PERFORM pgmq."create"(queue);
        ELSE
            PERFORM pgmq.create_unlogged(queue);
        END IF;
        created := true;
    END IF;
    INSERT INTO pgmq.celery_queue AS c (queue_name, celery_name, auto_delete, expires, message_ttl,
                                        created_by_celery)
    VALUES (queue, original_name, is_auto_delete,
            pg_catalog.make_interval(secs => expires_ms / 1000.0),
            pg_catalog.make_interval(secs => ttl_ms / 1000.0), created)
    ON CONFLICT (queue_name) DO UPDATE
    SET celery_name = EXCLUDED.celery_name,
        auto_delete = EXCLUDED.auto_delete,
        expires = EXCLUDED.expires,
        message_ttl = EXCLUDED.message_ttl,
        last_used_at = pg_catalog.now(),
        -- A redeclared auto-delete queue without live consumers starts afresh.
        ever_consumed = c.ever_consumed AND EXISTS (
            SELECT 1 FROM pgmq.celery_consumer k
            WHERE k.queue_name::text = c.queue_name::text AND pgmq._celery_session_alive(k.session_id));
END
$fn$;

-- A Celery priority queue (x-max-priority): turn the queue's priorities attribute on.
-- Any registered application role may, on a queue Celery created; on any other queue it
-- is a change of that queue's attributes (manage_queues, as pgmq.set_queue_attributes).
CREATE FUNCTION pgmq.celery_enable_priorities(queue text)
RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
    PERFORM pgmq._require_app_role();
    IF (pgmq._queue_attributes(queue) -> 'priorities') = 'true'::jsonb THEN
        RETURN;
    END IF;
    PERFORM pgmq._apply_queue_attributes(
        queue, '{"priorities": true}'::jsonb,
        CASE WHEN EXISTS (SELECT 1 FROM pgmq.celery_queue c
                          WHERE c.queue_name::text = queue AND c.created_by_celery)
             THEN NULL ELSE 'manage_queues' END);
END
$fn$;

-- Send to one queue and wake its consumers (NOTIFY is delivered at commit).
-- Returns the message id, or NULL when no such queue exists (AMQP drops such messages).
-- Through pgmq.send, so the queue's attributes hold: deliver_at NULL (no countdown or
-- eta) is "no delay given" and the queue's delivery_delay applies; headers carry
-- deduplication_id; max_message_size and the priority check refuse as for any send.
CREATE FUNCTION pgmq.celery_send(
    queue text,
    msg jsonb,
    headers jsonb DEFAULT NULL,
    deliver_at timestamptz DEFAULT NULL,
    notify boolean DEFAULT true
)
RETURNS bigint
LANGUAGE plpgsql
AS $fn$
DECLARE
    sent bigint;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pgmq.meta m WHERE m.queue_name::text = queue) THEN
        RETURN NULL;
    END IF;
    SELECT pgmq.send(queue, msg, headers, deliver_at) INTO sent;
    IF notify THEN
        PERFORM pg_catalog.pg_notify(pgmq._queue_channel(queue, 'INSERT'::text), '');
    END IF;
    RETURN sent;
END
$fn$;

-- Route a message through an exchange's bindings; returns how many queues received it.
CREATE FUNCTION pgmq.celery_publish(
    exchange text,
    routing_key text,
    msg jsonb,
    headers jsonb DEFAULT NULL,
    deliver_at timestamptz DEFAULT NULL,
    notify boolean DEFAULT true
)
RETURNS integer
LANGUAGE plpgsql
AS $fn$
DECLARE
    target text;
    delivered integer := 0;
BEGIN
    FOR target IN
        SELECT DISTINCT b.queue_name
        FROM pgmq.celery_binding b
        WHERE b.exchange = $1
          AND (b.exchange_type = 'fanout'
               OR b.exchange_type = 'direct' AND b.routing_key = $2
               OR b.exchange_type = 'topic' AND ('.' || $2) ~ b.key_regex)
        ORDER BY 1
    LOOP
        IF pgmq.celery_send(target, msg, headers, deliver_at, notify) IS NOT NULL THEN
            delivered := delivered + 1;
        END IF;
    END LOOP;
    RETURN delivered;
END
$fn$;

-- Exchange bindings: owner functions any registered application role may call (kombu
-- binds and unbinds as it declares); they only route messages between Celery-declared
-- queues, which such a role may send to anyway.
CREATE FUNCTION pgmq.celery_bind(exchange text, exchange_type text, routing_key text, queue text)
RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
#variable_conflict use_column
BEGIN
    PERFORM pgmq._require_app_role();
    INSERT INTO pgmq.celery_binding (exchange, exchange_type, routing_key, queue_name, key_regex)
    VALUES ($1, $2, $3, $4, CASE WHEN $2 = 'topic' THEN pgmq._celery_topic_regex($3) END)
    ON CONFLICT (exchange, queue_name, routing_key) DO UPDATE
    SET exchange_type = EXCLUDED.exchange_type, key_regex = EXCLUDED.key_regex;
END
$fn$;

CREATE FUNCTION pgmq.celery_unbind(exchange text, routing_key text, queue text)
RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
    PERFORM pgmq._require_app_role();
    DELETE FROM pgmq.celery_binding b
    WHERE b.exchange = $1 AND b.routing_key = $2 AND b.queue_name::text = $3;
END
$fn$;

CREATE FUNCTION pgmq.celery_delete_exchange(exchange text)
RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
    PERFORM pgmq._require_app_role();
    DELETE FROM pgmq.celery_binding b WHERE b.exchange = $1;
END
$fn$;

CREATE FUNCTION pgmq.celery_read(queue text, vt integer, qty integer)
RETURNS SETOF pgmq.message_record
LANGUAGE plpgsql
AS $fn$
BEGIN
    RETURN QUERY SELECT * FROM pgmq.read(queue, vt, qty);
END
$fn$;

CREATE FUNCTION pgmq.celery_pop(queue text, qty integer)
RETURNS SETOF pgmq.message_record
LANGUAGE plpgsql
AS $fn$
BEGIN
    RETURN QUERY SELECT * FROM pgmq.pop(queue, qty);
END
$fn$;

-- Acknowledge: archive (or delete) in one statement; returns how many were settled.
CREATE FUNCTION pgmq.celery_ack(
    queue text, msg_ids bigint[], archive boolean DEFAULT true
)
RETURNS integer
LANGUAGE plpgsql
AS $fn$
DECLARE
    settled integer;
BEGIN
    IF archive THEN
        SELECT pg_catalog.count(*) INTO settled FROM pgmq.archive(queue, msg_ids);
    ELSE
        SELECT pg_catalog.count(*) INTO settled FROM pgmq.delete(queue, msg_ids);
    END IF;
    RETURN settled;
END
$fn$;

-- Push the visibility of held messages forward (the holder is alive).
CREATE FUNCTION pgmq.celery_extend(
    queue text, msg_ids bigint[], vt integer
)
RETURNS integer
LANGUAGE plpgsql
AS $fn$
DECLARE
    extended integer;
BEGIN
    SELECT pg_catalog.count(*) INTO extended FROM pgmq.set_vt(queue, msg_ids, vt);
    RETURN extended;
END
$fn$;

-- Make held messages visible now (reject with requeue, warm shutdown), in place.
CREATE FUNCTION pgmq.celery_release(
    queue text, msg_ids bigint[], notify boolean DEFAULT true
)
RETURNS integer
LANGUAGE plpgsql
AS $fn$
DECLARE
    released integer;
BEGIN
    SELECT pg_catalog.count(*) INTO released FROM pgmq.set_vt(queue, msg_ids, 0);
    IF released > 0 AND notify THEN
        PERFORM pg_catalog.pg_notify(pgmq._queue_channel(queue, 'INSERT'::text), '');
    END IF;
    RETURN released;
END
$fn$;

-- The earliest time one of these queues holds a visible message (NULL: all empty).
-- A queue the claim filter lets hand out nothing (paused, or at a limit) counts as empty.
CREATE FUNCTION pgmq.celery_next_visible(queues text[])
RETURNS timestamptz
LANGUAGE plpgsql STABLE
AS $fn$
DECLARE
    queue text;
    earliest timestamptz;
    candidate timestamptz;
BEGIN
    FOREACH queue IN ARRAY queues LOOP
        CONTINUE WHEN NOT EXISTS (SELECT 1 FROM pgmq.meta m WHERE m.queue_name::text = queue);
        CONTINUE WHEN (pgmq._claim_filter(queue, coalesce(pgmq._queue_attributes(queue), '{}'::jsonb), 1,
                                          take_lock => false)).allowed = 0;
        BEGIN
            EXECUTE pg_catalog.format('SELECT pg_catalog.min(vt) FROM pgmq.%I', pgmq.format_table_name(queue, 'q'::text))
                INTO candidate;
            earliest := least(earliest, candidate);
        EXCEPTION WHEN undefined_table THEN
            NULL;  -- dropped just now
        END;
    END LOOP;
    RETURN earliest;
END
$fn$;

-- A consumer starts on a queue (session: the caller's own, from celery_open_session).
-- Owner function: the consumer rows steer the cleanup, so a caller may add only a live
-- session its own login role holds.
CREATE FUNCTION pgmq.celery_consume(queue text, session integer)
RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
    PERFORM pgmq._require_app_role();
    IF NOT pgmq._celery_own_session(session) THEN
        RAISE EXCEPTION 'Celery session % is not held by a connection of role %', session, SESSION_USER
            USING ERRCODE = 'PQ004', HINT = 'Open one with pgmq.celery_open_session().';
    END IF;
    INSERT INTO pgmq.celery_consumer (queue_name, session_id)
    SELECT c.queue_name, $2 FROM pgmq.celery_queue c WHERE c.queue_name::text = $1
    ON CONFLICT DO NOTHING;
    UPDATE pgmq.celery_queue c SET ever_consumed = true, last_used_at = pg_catalog.now()
    WHERE c.queue_name::text = $1;
END
$fn$;

-- Drop the queue if AMQP would have: auto-delete and its last consumer gone, or unused
-- for longer than x-expires. Dead sessions' consumer rows are forgotten first. Only a
-- queue Celery created (created_by_celery) is ever dropped. Not SECURITY DEFINER: it
-- runs as the owner from the owner functions below; an application role calling it
-- directly may not write these tables or drop the owner's queue.
CREATE FUNCTION pgmq._celery_drop_if_unused(queue text)
RETURNS boolean
LANGUAGE plpgsql
AS $fn$
DECLARE
    q pgmq.celery_queue;
BEGIN
    PERFORM pgmq.acquire_queue_lock(queue);
    SELECT * INTO q FROM pgmq.celery_queue c WHERE c.queue_name::text = queue FOR UPDATE;
    IF NOT FOUND OR NOT q.created_by_celery THEN
        RETURN false;
    END IF;
    DELETE FROM pgmq.celery_consumer k
    WHERE k.queue_name::text = queue AND NOT pgmq._celery_session_alive(k.session_id);
    IF EXISTS (SELECT 1 FROM pgmq.celery_consumer k WHERE k.queue_name::text = queue) THEN
        RETURN false;
    END IF;
    IF q.auto_delete AND q.ever_consumed
       OR q.expires IS NOT NULL AND q.last_used_at + q.expires < pg_catalog.now() THEN
        PERFORM pgmq.drop_queue(queue);
        RETURN true;
    END IF;
    RETURN false;
END
$fn$;

-- kombu's queue_delete of a queue the transport created: drop it (owner function, any
-- registered application role: the queue is the owner's). NULL when Celery did not
-- create the queue: the caller drops it with pgmq.drop_queue, as its own rights allow.
CREATE FUNCTION pgmq.celery_delete_queue(queue text)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
    PERFORM pgmq._require_app_role();
    PERFORM pgmq.acquire_queue_lock(queue);
    IF NOT EXISTS (SELECT 1 FROM pgmq.celery_queue c
                   WHERE c.queue_name::text = queue AND c.created_by_celery) THEN
        RETURN NULL;
    END IF;
    RETURN pgmq.drop_queue(queue);
END
$fn$;

-- A consumer leaves; returns true when that dropped its auto-delete queue. Owner
-- function: a caller removes only a session of its own login role, or a dead one.
CREATE FUNCTION pgmq.celery_cancel(queue text, session integer)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
    PERFORM pgmq._require_app_role();
    IF pgmq._celery_own_session(session) OR NOT pgmq._celery_session_alive(session) THEN
        DELETE FROM pgmq.celery_consumer k
        WHERE k.queue_name::text = queue AND k.session_id = session;
    END IF;
    UPDATE pgmq.celery_queue c SET last_used_at = pg_catalog.now() WHERE c.queue_name::text = queue;
    PERFORM pg_catalog.set_config('lock_timeout', '2s', true);
    BEGIN
        RETURN pgmq._celery_drop_if_unused(queue);
    EXCEPTION WHEN lock_not_available THEN
        RETURN false;  -- busy: the periodic cleanup will drop it
    END;
END
$fn$;

-- The registry half of celery_cleanup (owner function, any registered application role):
-- forget dead consumers, drop the unused auto-delete and expired queues that Celery
-- created. Returns how many were dropped.
CREATE FUNCTION pgmq._celery_cleanup_queues()
RETURNS integer
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    q record;
    dropped integer := 0;
BEGIN
    PERFORM pgmq._require_app_role();
    DELETE FROM pgmq.celery_consumer k WHERE NOT pgmq._celery_session_alive(k.session_id);
    FOR q IN
        SELECT c.queue_name::text AS queue_name FROM pgmq.celery_queue c
        WHERE c.created_by_celery
          AND NOT EXISTS (SELECT 1 FROM pgmq.celery_consumer k WHERE k.queue_name::text = c.queue_name::text)
          AND (c.auto_delete AND c.ever_consumed
               OR c.expires IS NOT NULL AND c.last_used_at + c.expires < pg_catalog.now())
        ORDER BY c.queue_name
    LOOP
        BEGIN
            IF pgmq._celery_drop_if_unused(q.queue_name::text) THEN
                dropped := dropped + 1;
            END IF;
        EXCEPTION WHEN lock_not_available OR undefined_table THEN
            NULL;  -- in use right now, or dropped by someone else; next time
        END;
    END LOOP;
    RETURN dropped;
END
$fn$;

-- Forget dead consumers, drop unused auto-delete and expired queues (only those Celery
-- created), and delete messages older than their queue's x-message-ttl (as the caller:
-- a queue's own table, which an application role may delete from anyway). One cleaner
-- at a time; returns the number of queues dropped.
CREATE FUNCTION pgmq.celery_cleanup()
RETURNS integer
LANGUAGE plpgsql
AS $fn$
DECLARE
    q record;
    dropped integer;
BEGIN
    IF NOT pg_catalog.pg_try_advisory_xact_lock(pgmq._celery_lock_space(), 0) THEN
        RETURN 0;
    END IF;
    PERFORM pg_catalog.set_config('lock_timeout'::text, '1s'::text, true);
    dropped := pgmq._celery_cleanup_queues();
    FOR q IN
        SELECT c.queue_name::text AS queue_name, c.message_ttl FROM pgmq.celery_queue c
        WHERE c.message_ttl IS NOT NULL ORDER BY c.queue_name
    LOOP
        BEGIN
            EXECUTE pg_catalog.format('DELETE FROM pgmq.%I WHERE enqueued_at < pg_catalog.clock_timestamp() - $1',
                                      pgmq.format_table_name(q.queue_name, 'q'::text))
                USING q.message_ttl;
        EXCEPTION WHEN lock_not_available OR undefined_table THEN
            NULL;  -- busy, or dropped since the loop started
        END;
    END LOOP;
    RETURN dropped;
END
$fn$;
