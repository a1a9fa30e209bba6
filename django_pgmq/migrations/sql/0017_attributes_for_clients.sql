-- 0017_attributes_for_clients: attributes for clients
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
CREATE OR REPLACE FUNCTION pgmq._read_by_priority(queue_name text, vt integer, qty integer)
 RETURNS SETOF pgmq.message_record
 LANGUAGE plpgsql
AS $function$
DECLARE
    stored text := pgmq._require_queue(queue_name);
    attrs jsonb := coalesce(pgmq._queue_attributes(stored), '{}'::jsonb);
BEGIN
    IF vt IS NULL OR vt < 0 OR qty IS NULL OR qty < 1 THEN
        RAISE EXCEPTION 'vt must be 0 or more and qty 1 or more, got vt % and qty %',
            coalesce(vt::text, 'NULL'), coalesce(qty::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    IF attrs ? 'dead_letter_queue' THEN
        PERFORM pgmq._ensure_dead_letter_queue(attrs ->> 'dead_letter_queue');
    END IF;
    RETURN QUERY EXECUTE pgmq._queue_ops_attr_sql(
        stored, 'r', '0', attrs || '{"priorities": true}'::jsonb)
    USING 'r'::"char", qty, vt, NULL::timestamptz, NULL::bigint[], NULL::jsonb[],
          NULL::jsonb[], '{}'::jsonb;
END
$function$
;
COMMENT ON FUNCTION pgmq._read_by_priority(text,integer,integer) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._spark_checked_send(queue_name text)
 RETURNS boolean
 LANGUAGE sql
 STABLE
AS $function$
    SELECT coalesce(
        coalesce((a ->> 'delivery_delay')::integer, 0) > 0
        OR coalesce((a ->> 'deduplication_window')::integer, 0) > 0
        OR a ? 'max_message_size'
        OR (a -> 'priorities') = 'true'::jsonb, false)
    FROM (SELECT pgmq._queue_attributes(queue_name) AS a) x;
$function$
;
COMMENT ON FUNCTION pgmq._spark_checked_send(text) IS NULL;

CREATE OR REPLACE FUNCTION pgmq._spark_send_staged(queue_name text, stage regclass, attempts bigint[])
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    run record;
    sent bigint := 0;
BEGIN
    FOR run IN EXECUTE format(
        $q$
        WITH ordered AS (
            SELECT s.vt, s.message, s.headers,
                   row_number() OVER (ORDER BY s.part, s.seq) AS n,
                   row_number() OVER (PARTITION BY s.vt ORDER BY s.part, s.seq) AS k
            FROM %s s WHERE $1 IS NULL OR s.attempt = ANY ($1)
        )
        SELECT o.vt, array_agg(o.message ORDER BY o.n) AS msgs,
               array_agg(o.headers ORDER BY o.n) AS hdrs
        FROM ordered o
        GROUP BY o.vt, o.n - o.k, (o.k - 1) / 10000
        ORDER BY min(o.n)
        $q$, stage) USING attempts
    LOOP
        PERFORM count(*) FROM pgmq.send_batch(queue_name, run.msgs, run.hdrs, run.vt);
        sent := sent + cardinality(run.msgs);
    END LOOP;
    RETURN sent;
END
$function$
;
COMMENT ON FUNCTION pgmq._spark_send_staged(text,regclass,bigint[]) IS NULL;

CREATE OR REPLACE FUNCTION pgmq.celery_next_visible(queues text[])
 RETURNS timestamp with time zone
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
    queue text;
    earliest timestamptz;
    candidate timestamptz;
BEGIN
    FOREACH queue IN ARRAY queues LOOP
        CONTINUE WHEN NOT EXISTS (SELECT 1 FROM pgmq.meta m WHERE m.queue_name = queue);
        CONTINUE WHEN (pgmq._queue_attributes(queue) -> 'paused') = 'true'::jsonb;
        BEGIN
            EXECUTE format('SELECT min(vt) FROM pgmq.%I', pgmq.format_table_name(queue, 'q'))
                INTO candidate;
            earliest := least(earliest, candidate);
        EXCEPTION WHEN undefined_table THEN
            NULL;  -- dropped just now
        END;
    END LOOP;
    RETURN earliest;
END
$function$
;
COMMENT ON FUNCTION pgmq.celery_next_visible(text[]) IS NULL;

CREATE OR REPLACE FUNCTION pgmq.celery_send(queue text, msg jsonb, headers jsonb DEFAULT NULL::jsonb, deliver_at timestamp with time zone DEFAULT NULL::timestamp with time zone, notify boolean DEFAULT true)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    sent bigint;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pgmq.meta m WHERE m.queue_name = queue) THEN
        RETURN NULL;
    END IF;
    SELECT pgmq.send(queue, msg, headers, deliver_at) INTO sent;
    IF notify THEN
        PERFORM pg_notify('pgmq.q_' || queue || '.INSERT', '');
    END IF;
    RETURN sent;
END
$function$
;
COMMENT ON FUNCTION pgmq.celery_send(text,jsonb,jsonb,timestamp with time zone,boolean) IS NULL;

CREATE OR REPLACE FUNCTION pgmq.spark_claim(queue_name text, consumer text, vt integer, qty integer, max_msg_id bigint, min_batch bigint)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q');
    stamp timestamptz := clock_timestamp();
    attrs jsonb;
    held bigint[];
    ids bigint[];
    dead bigint[];
    next_batch bigint;
BEGIN
    PERFORM pgmq._require_queue(queue_name);
    IF vt IS NULL OR vt < 1 THEN
        RAISE EXCEPTION 'vt must be at least 1 second, got %', vt USING ERRCODE = 'PQ004';
    END IF;
    attrs := coalesce(pgmq._queue_attributes(queue_name), '{}'::jsonb);
    IF (attrs -> 'paused') = 'true'::jsonb THEN
        RETURN NULL;
    END IF;
    PERFORM pgmq._spark_consumer_lock(queue_name, consumer);
    SELECT coalesce(array_agg(id), '{}') INTO held
    FROM pgmq.spark_stream_batch b, unnest(b.msg_ids) AS id
    WHERE b.queue_name = $1 AND b.consumer = $2 AND b.acked_at IS NULL;

    -- $6: max_receive_count when the queue has a dead-letter queue, else NULL (none dead).
    EXECUTE format(
        $q$
        WITH picked AS MATERIALIZED (
            SELECT msg_id, read_ct FROM pgmq.%I
            WHERE vt <= $1 AND ($2::bigint IS NULL OR msg_id <= $2) AND msg_id <> ALL ($3)
            ORDER BY msg_id
            LIMIT $4
            FOR UPDATE SKIP LOCKED
        ), claimed AS (
            UPDATE pgmq.%I q
            SET vt = $1 + make_interval(secs => $5), read_ct = q.read_ct + 1, last_read_at = $1
            FROM picked
            WHERE q.msg_id = picked.msg_id AND NOT coalesce(picked.read_ct >= $6, false)
            RETURNING q.msg_id
        )
        SELECT (SELECT array_agg(c.msg_id ORDER BY c.msg_id) FROM claimed c),
               (SELECT array_agg(p.msg_id ORDER BY p.msg_id) FROM picked p WHERE p.read_ct >= $6)
        $q$,
        qtable, qtable
    ) INTO ids, dead
    USING stamp, max_msg_id, held, qty, vt,
          CASE WHEN attrs ? 'dead_letter_queue' THEN (attrs ->> 'max_receive_count')::integer END;
    IF dead IS NOT NULL THEN
        PERFORM pgmq._dead_letter_ids(queue_name, dead, 0);
    END IF;

    IF ids IS NULL THEN
        RETURN NULL;
    END IF;
    SELECT greatest(coalesce(max(b.batch), 0), coalesce(min_batch, 0)) + 1 INTO next_batch
    FROM pgmq.spark_stream_batch b WHERE b.queue_name = $1 AND b.consumer = $2;
    INSERT INTO pgmq.spark_stream_batch (queue_name, consumer, batch, msg_ids, claimed_at)
    VALUES ($1, $2, next_batch, ids, stamp);
    RETURN next_batch;
END
$function$
;
COMMENT ON FUNCTION pgmq.spark_claim(text,text,integer,integer,bigint,bigint) IS NULL;

CREATE OR REPLACE FUNCTION pgmq.spark_stage_commit(stage text, attempts bigint[], batch_id bigint DEFAULT NULL::bigint)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    entry pgmq.spark_stage;
    moved bigint;
BEGIN
    SELECT * INTO entry FROM pgmq.spark_stage s WHERE s.stage_table = stage FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'staging table pgmq.% does not exist (already committed or dropped)', stage
            USING ERRCODE = 'PQ004';
    END IF;
    IF entry.writer_id IS NOT NULL AND batch_id IS NOT NULL AND EXISTS (
        SELECT 1 FROM pgmq.spark_sink_batch k
        WHERE k.queue_name = entry.queue_name AND k.writer_id = entry.writer_id
          AND k.batch_id >= $3
    ) THEN
        EXECUTE format('TRUNCATE pgmq.%I', stage);
        RETURN -1;
    END IF;
    IF pgmq._spark_checked_send(entry.queue_name) THEN
        moved := pgmq._spark_send_staged(entry.queue_name, format('pgmq.%I', stage)::regclass,
                                         coalesce(attempts, '{}'));
    ELSE
        EXECUTE format(
            'INSERT INTO pgmq.%I (vt, message, headers) '
            'SELECT coalesce(vt, clock_timestamp()), message, headers FROM pgmq.%I '
            'WHERE attempt = ANY ($1) ORDER BY part, seq',
            pgmq.format_table_name(entry.queue_name, 'q'), stage
        ) USING attempts;
        GET DIAGNOSTICS moved = ROW_COUNT;
    END IF;
    IF entry.writer_id IS NULL THEN
        EXECUTE format('DROP TABLE pgmq.%I', stage);
        DELETE FROM pgmq.spark_stage s WHERE s.stage_table = stage;
    ELSE
        EXECUTE format('TRUNCATE pgmq.%I', stage);
        IF batch_id IS NOT NULL THEN
            INSERT INTO pgmq.spark_sink_batch AS k (queue_name, writer_id, batch_id)
            VALUES (entry.queue_name, entry.writer_id, batch_id)
            ON CONFLICT (queue_name, writer_id)
            DO UPDATE SET batch_id = excluded.batch_id, committed_at = now();
        END IF;
    END IF;
    RETURN moved;
END
$function$
;
COMMENT ON FUNCTION pgmq.spark_stage_commit(text,bigint[],bigint) IS NULL;

CREATE OR REPLACE FUNCTION pgmq.spark_stage_create(queue_name text, writer_id text DEFAULT NULL::text)
 RETURNS text
 LANGUAGE plpgsql
AS $function$
DECLARE
    stored text := pgmq._require_queue(queue_name);
    stage text;
BEGIN
    IF writer_id IS NOT NULL THEN
        PERFORM pg_advisory_xact_lock(hashtext('pgmq.spark.stage.' || lower(stored) || '.' || writer_id));
        SELECT s.stage_table INTO stage FROM pgmq.spark_stage s
        WHERE s.queue_name = stored AND s.writer_id = $2;
        IF stage IS NOT NULL AND to_regclass(format('pgmq.%I', stage)) IS NOT NULL THEN
            RETURN stage;
        END IF;
        DELETE FROM pgmq.spark_stage s WHERE s.queue_name = stored AND s.writer_id = $2;
    END IF;
    stage := 'spark_stage_' || replace(gen_random_uuid()::text, '-', '');
    EXECUTE format(
        'CREATE UNLOGGED TABLE pgmq.%I (part integer NOT NULL, attempt bigint NOT NULL, '
        'seq bigint GENERATED ALWAYS AS IDENTITY, vt timestamptz, message jsonb, headers jsonb)',
        stage
    );
    INSERT INTO pgmq.spark_stage (stage_table, queue_name, writer_id) VALUES (stage, stored, $2);
    RETURN stage;
END
$function$
;
COMMENT ON FUNCTION pgmq.spark_stage_create(text,text) IS NULL;

-- BY HAND: staging tables (pgmq.spark_stage_create) now take a row without vt (no delay
-- given: the queue's delivery_delay applies when it is sent); existing ones follow.
DO $by_hand$
DECLARE
    stage text;
BEGIN
    FOR stage IN SELECT s.stage_table FROM pgmq.spark_stage s ORDER BY 1 LOOP
        IF to_regclass(format('pgmq.%I', stage)) IS NOT NULL THEN
            EXECUTE format('ALTER TABLE pgmq.%I ALTER COLUMN vt DROP NOT NULL', stage);
        END IF;
    END LOOP;
END
$by_hand$;
