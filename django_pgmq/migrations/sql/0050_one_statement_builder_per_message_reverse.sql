-- 0050_one_statement_builder_per_message: one statement builder per message operation
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._ack_sql(text,boolean,text,text);
DROP FUNCTION IF EXISTS pgmq._kept_guard_sql(text);
DROP FUNCTION IF EXISTS pgmq._read_pick_sql(text,text,text,text,text,text);
DROP FUNCTION IF EXISTS pgmq._read_sql(text,boolean,text,text,text,text,boolean,integer,text);
DROP FUNCTION IF EXISTS pgmq._record_rest_sql();
DROP FUNCTION IF EXISTS pgmq._send_sql(text,boolean,text,text,text,text,text);
DROP FUNCTION IF EXISTS pgmq._set_vt_sql(text);
CREATE OR REPLACE FUNCTION pgmq._queue_ops_attr_sql(queue_name text, op "char", low text, attrs jsonb)
 RETURNS text
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q'::text);
    checks text := nullif(pgmq._send_checks_sql(attrs), '');
    gate text := 'TRUE';
    msg text := 'u.msg';
    vt text := 'coalesce($4, pg_catalog.clock_timestamp())';
    -- Only the ordering and redrive matter here: the limits are the caller's (no lock).
    f record := pgmq._claim_filter(queue_name, attrs - pgmq._limit_keys(), NULL);
    window_ text := (attrs ->> 'deduplication_window') || ' seconds';
    order_by text;
    pick text;
BEGIN
    IF op = 's' OR op = 'S' THEN
        IF checks IS NOT NULL THEN
            -- Valid messages pass an inline test; pgmq._checked_message raises the error
            -- that names what is wrong with the first of the others.
            gate := pg_catalog.format(
                '(SELECT pg_catalog.count(pgmq._checked_message(%L, u.msg, u.hdr, %s, %L, %L)) '
                'FROM unnest($6, $7) AS u(msg, hdr) WHERE (%s) IS NOT TRUE) >= 0',
                queue_name, coalesce(attrs ->> 'max_message_size', 'NULL'), f.by_priority,
                window_ IS NOT NULL AND (attrs ->> 'deduplication_window')::integer > 0, checks);
        END IF;
        IF coalesce((attrs ->> 'delivery_delay')::integer, 0) > 0 THEN
            vt := pg_catalog.format('coalesce($4, pg_catalog.clock_timestamp() + interval %L)',
                         (attrs ->> 'delivery_delay') || ' seconds');
        END IF;
        IF coalesce((attrs ->> 'deduplication_window')::integer, 0) = 0 THEN
            RETURN pg_catalog.format(
                $sql$
        INSERT INTO pgmq.%1$I AS q (vt, message, headers)
        SELECT %2$s, %3$s, u.hdr FROM unnest($6, $7) AS u(msg, hdr)
        WHERE %4$s
        RETURNING q.msg_id, NULL::integer, NULL::timestamptz, NULL::timestamptz,
                  NULL::timestamptz, NULL::jsonb, NULL::jsonb
                $sql$, qtable, vt, msg, gate);
        END IF;
        IF op = 'S' THEN
            -- The fast send: two plain inserts, the ids claimed in the order the statement
            -- below claims them (so no two batches, fast or not, wait on each other's ids
            -- crosswise). Any id already claimed, by an earlier send, a concurrent one
            -- (after its commit) or this batch itself, raises unique_violation, and the
            -- caller runs the statement below instead.
            RETURN pg_catalog.format(
                $sql$
        WITH m AS (
            INSERT INTO pgmq.%1$I AS q (vt, message, headers)
            SELECT %2$s, %3$s, u.hdr FROM unnest($6, $7) AS u(msg, hdr)
            WHERE %5$s
            RETURNING q.msg_id, q.headers ->> 'deduplication_id' AS dedup
        ), claimed AS (
            -- the owner's helper records the ids (pgmq._dedup_record)
            SELECT pgmq._dedup_record(%4$L::text,
                                      pg_catalog.array_agg(m.dedup ORDER BY m.dedup),
                                      pg_catalog.array_agg(m.msg_id ORDER BY m.dedup)) AS n
            FROM m WHERE m.dedup IS NOT NULL
        )
        SELECT (SELECT pg_catalog.array_agg(m.msg_id ORDER BY m.msg_id) FROM m) FROM claimed
                $sql$, qtable, vt, msg, pg_catalog.lower(queue_name), gate);
        END IF;
        -- Deduplication: a message takes a new msg_id only when it may be enqueued: it
        -- has no deduplication id, or it is its id's first in the batch and no send within
        -- the window holds that id (as this statement's snapshot sees it). Each such id is
        -- claimed in pgmq.queue_deduplication; a conflict (a concurrent sender waits there
        -- for the first one's commit) keeps the row of a send within the window, so only
        -- a claim that kept our new msg_id enqueues its message (the loser of that race
        -- is the one case where an id is used up without a message). Every message of the
        -- batch returns its id's msg_id.
        RETURN pg_catalog.format(
            $sql$
        WITH input AS MATERIALIZED (
            SELECT u.ord, %3$s AS msg, u.hdr, u.hdr ->> 'deduplication_id' AS dedup
            FROM unnest($6, $7) WITH ORDINALITY AS u(msg, hdr, ord)
            WHERE %7$s
        ),
        numbered AS MATERIALIZED (
            SELECT i.ord, i.msg, i.hdr, i.dedup,
                   CASE WHEN i.dedup IS NULL
                          OR (i.first AND NOT EXISTS (
                                SELECT 1 FROM pgmq.queue_deduplication d
                                WHERE d.queue_name::text = %5$L AND d.deduplication_id = i.dedup
                                  AND d.sent_at > pg_catalog.clock_timestamp() - interval %6$L))
                        THEN pg_catalog.nextval(%4$L::regclass) END AS new_id
            FROM (SELECT x.*, pg_catalog.row_number() OVER (PARTITION BY x.dedup ORDER BY x.ord) = 1 AS first
                  FROM input x) i
            ORDER BY i.ord
        ),
        claimed AS MATERIALIZED (
            -- the owner's helper claims the ids (pgmq._dedup_claim)
            SELECT c.deduplication_id, c.msg_id
            FROM (SELECT pg_catalog.array_agg(n.dedup ORDER BY n.dedup) AS dedups,
                         pg_catalog.array_agg(n.new_id ORDER BY n.dedup) AS ids
                  FROM numbered n WHERE n.dedup IS NOT NULL AND n.new_id IS NOT NULL) x,
                 pgmq._dedup_claim(%5$L::text, x.dedups, x.ids) c
        ),
        inserted AS (
            INSERT INTO pgmq.%1$I AS q (msg_id, vt, message, headers) OVERRIDING SYSTEM VALUE
            SELECT n.new_id, %2$s, n.msg, n.hdr
            FROM numbered n
            WHERE n.dedup IS NULL OR n.new_id IN (SELECT c.msg_id FROM claimed c)
            ORDER BY n.ord
            RETURNING q.msg_id
        )
        SELECT coalesce(c.msg_id,
                        (SELECT d.msg_id FROM pgmq.queue_deduplication d
                         WHERE d.queue_name::text = %5$L AND d.deduplication_id = n.dedup),
                        n.new_id),
               NULL::integer, NULL::timestamptz, NULL::timestamptz,
               NULL::timestamptz, NULL::jsonb, NULL::jsonb
        FROM numbered n
        LEFT JOIN claimed c ON c.deduplication_id = n.dedup
        ORDER BY n.ord
            $sql$,
            qtable, vt, msg,
            pg_catalog.pg_get_serial_sequence(pg_catalog.format('pgmq.%I', qtable), 'msg_id'),
            pg_catalog.lower(queue_name), window_, gate);
    END IF;

    IF op <> 'r' AND op <> 'p' THEN
        RETURN pgmq._queue_ops_sql(queue_name, op, low);
    END IF;
    IF NOT f.by_priority AND f.dead_letter_queue IS NULL THEN
        RETURN pgmq._queue_ops_sql(queue_name, op, low);
    END IF;

    order_by := CASE WHEN f.by_priority THEN 'pgmq._task_priority(%1$s.headers) DESC, %1$s.msg_id'
                     ELSE '%1$s.msg_id' END;
    -- Only messages that may still be delivered are picked, so redrive never uses up
    -- the qty; the over-read ones among those the pick walked past (all
    -- of them when it found fewer than qty) move to the dead-letter queue, at most
    -- max(qty, 100) per call.
    pick := pg_catalog.format(
        $pick$
            SELECT q.msg_id FROM pgmq.%I q
            WHERE q.msg_id >= %s AND q.vt <= pg_catalog.clock_timestamp()
              AND ($8 IS NULL OR $8 = '{}'::jsonb OR q.message @> $8)
              %s
            ORDER BY %s
            LIMIT $2
            FOR UPDATE SKIP LOCKED
        $pick$,
        qtable, low,
        CASE WHEN f.dead_letter_queue IS NULL THEN ''
             ELSE pg_catalog.format('AND q.read_ct < %s', f.max_receive_count) END,
        pg_catalog.format(order_by, 'q'));
    RETURN pg_catalog.format(
        $sql$
        WITH picked AS MATERIALIZED (%2$s),
        %3$s
        done AS (
            %4$s
            WHERE m.msg_id = ANY(ARRAY(SELECT p.msg_id FROM picked p))
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message, m.headers
        )
        SELECT * FROM done d ORDER BY %5$s
        $sql$,
        qtable, pick,
        CASE WHEN f.dead_letter_queue IS NULL THEN '' ELSE pg_catalog.format(
            $dead$
        dead AS (
            DELETE FROM pgmq.%1$I m
            WHERE m.msg_id = ANY(ARRAY(
                SELECT q.msg_id FROM pgmq.%1$I q
                WHERE q.msg_id >= %3$s AND q.vt <= pg_catalog.clock_timestamp()
                  AND ($8 IS NULL OR $8 = '{}'::jsonb OR q.message @> $8)
                  AND q.read_ct >= %2$s
                  AND ((SELECT pg_catalog.count(*) FROM picked) < $2
                       OR q.msg_id < (SELECT pg_catalog.max(p.msg_id) FROM picked p))
                ORDER BY q.msg_id
                LIMIT greatest($2, 100)
                FOR UPDATE SKIP LOCKED))
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.message, m.headers,
                      NULL::text AS error
        ),
            $dead$,
            qtable, f.max_receive_count, low)
            -- the name as stored, as the worker's dead letters write it, whatever the
            -- caller's spelling
            || pgmq._dead_letter_move_sql(pgmq._stored_queue_name(queue_name),
                                          f.dead_letter_queue) || ',' END,
        CASE WHEN op = 'r' THEN pg_catalog.format(
            $upd$
            UPDATE pgmq.%I m
            SET vt = pg_catalog.clock_timestamp() + pg_catalog.make_interval(secs => $3),
                read_ct = m.read_ct + 1,
                last_read_at = pg_catalog.clock_timestamp()
            $upd$, qtable)
        ELSE pg_catalog.format('DELETE FROM pgmq.%I m', qtable) END,
        pg_catalog.format(order_by, 'd'));
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_attr_sql(text,"char",text,jsonb) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_attr_sql(text,"char",text,jsonb) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_ids_sql(qtable text, op "char", cond text DEFAULT ''::text, ids text DEFAULT '$5'::text, vt text DEFAULT '$4'::text, msgs text DEFAULT '$6'::text, hdrs text DEFAULT '$7'::text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT pg_catalog.format(
        CASE op
        -- A function scan yields the arrays in order and the insert numbers rows as they
        -- come, so ids follow the array order; unnest pads a NULL headers array with NULLs.
        WHEN 's' THEN $sql$
        INSERT INTO pgmq.%1$I AS q (vt, message, headers)
        SELECT coalesce(%5$s, pg_catalog.clock_timestamp()), u.msg, u.hdr
        FROM unnest(%6$s, %7$s) AS u(msg, hdr)%3$s
        RETURNING q.msg_id$sql$
        -- one message: a VALUES row plans in less time than a function scan
        WHEN '1' THEN $sql$
        INSERT INTO pgmq.%1$I AS q (vt, message, headers)
        VALUES (coalesce(%5$s, pg_catalog.clock_timestamp()), (%6$s)[1], (%7$s)[1])
        RETURNING q.msg_id$sql$
        WHEN 'a' THEN $sql$
        WITH moved AS (
            DELETE FROM pgmq.%1$I q WHERE q.msg_id = ANY(%4$s)%3$s
            RETURNING q.msg_id, q.read_ct, q.enqueued_at, q.last_read_at, q.vt, q.message, q.headers
        )
        INSERT INTO pgmq.%2$I AS a (msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers)
        SELECT * FROM moved
        RETURNING a.msg_id$sql$
        WHEN 'd' THEN $sql$
        DELETE FROM pgmq.%1$I q WHERE q.msg_id = ANY(%4$s)%3$s
        RETURNING q.msg_id$sql$
        END,
        qtable,
        'a' || pg_catalog.substr(qtable, 2),
        cond,
        ids,
        vt,
        msgs,
        hdrs);
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_ids_sql(text,"char",text,text,text,text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_ids_sql(text,"char",text,text,text,text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_kept_sql(qtable text, op "char", low text DEFAULT '$9'::text, qty text DEFAULT '$2'::text, secs text DEFAULT '$3'::text, cond text DEFAULT '$8'::text, ids text DEFAULT '$5'::text, vt text DEFAULT '$4'::text, msgs text DEFAULT '$6'::text, hdrs text DEFAULT '$7'::text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT CASE WHEN op IN ('a', 'd')
                THEN pgmq._queue_ops_ids_sql(qtable, op, ' AND ' || pgmq._limit_wake_sql(qtable), ids)
                -- 'l': a limited queue's read, run by the router after the claim filter
                -- capped its quantity (sql/25_attributes.sql): the plain read, no guard
                WHEN op = 'l'
                THEN pgmq._queue_ops_sql_for(qtable, 'r', low, qty, secs, cond)
                WHEN op = 's'
                THEN pgmq._queue_ops_ids_sql(qtable, op, ' WHERE ' || g.guard, ids, vt, msgs, hdrs)
                ELSE pgmq._queue_ops_sql_for(qtable, op, low || ' AND ' || g.guard, qty, secs, cond)
           END
    FROM (SELECT pg_catalog.format(
              'NOT EXISTS (SELECT FROM pgmq.queue_attributes x WHERE pg_catalog.lower(x.queue_name::text) = %L)',
              pg_catalog.substr(qtable, 3)) AS guard) g;
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_kept_sql(text,"char",text,text,text,text,text,text,text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_kept_sql(text,"char",text,text,text,text,text,text,text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_sql_for(qtable text, op "char", low text, qty text DEFAULT '$2'::text, secs text DEFAULT '$3'::text, cond text DEFAULT '$8'::text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT CASE
        WHEN op IN ('s', '1', 'a', 'd') THEN
            -- the statement pgmq._queue_ops_ids_sql gives, with the record's other columns
            pgmq._queue_ops_ids_sql(qtable, op) || $cols$, NULL::integer, NULL::timestamptz,
                  NULL::timestamptz, NULL::timestamptz, NULL::jsonb, NULL::jsonb$cols$
        ELSE pg_catalog.format(
        CASE op
        WHEN 'r' THEN $sql$
        WITH claimed AS (
            UPDATE pgmq.%1$I m
            SET vt = pg_catalog.clock_timestamp() + pg_catalog.make_interval(secs => %3$s),
                read_ct = m.read_ct + 1,
                last_read_at = pg_catalog.clock_timestamp()
            WHERE m.msg_id = ANY(ARRAY(%2$s))
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message, m.headers
        )
        SELECT * FROM claimed c ORDER BY c.msg_id
        $sql$
        WHEN 'p' THEN $sql$
        WITH removed AS (
            DELETE FROM pgmq.%1$I m
            WHERE m.msg_id = ANY(ARRAY(%2$s))
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message, m.headers
        )
        SELECT * FROM removed r ORDER BY r.msg_id
        $sql$
        WHEN 'v' THEN $sql$
        WITH moved AS (
            UPDATE pgmq.%1$I q SET vt = $4 WHERE q.msg_id = ANY($5)
            RETURNING q.msg_id, q.read_ct, q.enqueued_at, q.last_read_at, q.vt, q.message, q.headers
        )
        SELECT * FROM moved m ORDER BY m.msg_id
        $sql$
        END,
        qtable,
        -- read's and pop's pick: the oldest visible messages from the mark up, locked; the
        -- rows are then claimed with "= ANY(ARRAY(pick))", so the update looks up exactly
        -- the picked rows by key, whatever the plan's row estimates (a join could walk
        -- the table)
        pg_catalog.format(
            $pick$
                SELECT q.msg_id FROM pgmq.%1$I q
                WHERE q.msg_id >= %2$s AND q.vt <= pg_catalog.clock_timestamp()
                  AND (%3$s IS NULL OR %3$s = '{}'::jsonb OR q.message @> %3$s)
                ORDER BY q.msg_id
                LIMIT %4$s
                FOR UPDATE SKIP LOCKED
            $pick$,
            qtable, low, cond, qty),
        secs)
        END;
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_sql_for(text,"char",text,text,text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_sql_for(text,"char",text,text,text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.send(queue_name text, msg jsonb)
 RETURNS SETOF bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text := pgmq._message_table_name(queue_name, 'q'::text);
BEGIN
    IF NOT EXISTS (SELECT FROM pgmq.queue_attributes a WHERE pg_catalog.lower(a.queue_name::text) = pg_catalog.lower($1)) THEN
        RETURN QUERY EXECUTE pgmq._queue_ops_ids_sql(qtable, '1')
            USING NULL::"char", NULL::integer, NULL::integer, NULL::timestamptz, NULL::bigint[],
                  ARRAY[msg], ARRAY[NULL::jsonb], NULL::jsonb, 0::bigint;
        RETURN;
    END IF;
    RETURN QUERY SELECT * FROM pgmq._queue_ops_route_ids(
        queue_name, 's'::"char", NULL::timestamptz, NULL::bigint[], ARRAY[msg], ARRAY[NULL::jsonb]);
END
$function$
;
COMMENT ON FUNCTION pgmq.send(text,jsonb) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.send(text,jsonb) TO PUBLIC;

