-- 0050_one_statement_builder_per_message: one statement builder per message operation
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
CREATE OR REPLACE FUNCTION pgmq._ack_sql(qtable text, archive boolean, cond text DEFAULT ''::text, ids text DEFAULT '$5'::text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT pg_catalog.format(
        CASE WHEN archive THEN $sql$
        WITH moved AS (
            DELETE FROM pgmq.%1$I q WHERE q.msg_id = ANY(%4$s)%3$s
            RETURNING q.msg_id, q.read_ct, q.enqueued_at, q.last_read_at, q.vt, q.message, q.headers
        )
        INSERT INTO pgmq.%2$I AS a (msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers)
        SELECT * FROM moved
        RETURNING a.msg_id$sql$
        ELSE $sql$
        DELETE FROM pgmq.%1$I q WHERE q.msg_id = ANY(%4$s)%3$s
        RETURNING q.msg_id$sql$ END,
        qtable, 'a' || pg_catalog.substr(qtable, 2), cond, ids);
$function$
;
COMMENT ON FUNCTION pgmq._ack_sql(text,boolean,text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._ack_sql(text,boolean,text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._kept_guard_sql(qtable text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT pg_catalog.format(
        'NOT EXISTS (SELECT FROM pgmq.queue_attributes x WHERE pg_catalog.lower(x.queue_name::text) = %L)',
        pg_catalog.substr(qtable, 3));
$function$
;
COMMENT ON FUNCTION pgmq._kept_guard_sql(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._kept_guard_sql(text) FROM PUBLIC;

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
    delay text := '';
    -- Only the ordering and redrive matter here: the limits are the caller's (no lock).
    f record := pgmq._claim_filter(queue_name, attrs - pgmq._limit_keys(), NULL);
    window_ text := (attrs ->> 'deduplication_window') || ' seconds';
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
            delay := pg_catalog.format(' + interval %L', (attrs ->> 'delivery_delay') || ' seconds');
            vt := 'coalesce($4, pg_catalog.clock_timestamp()' || delay || ')';
        END IF;
        IF coalesce((attrs ->> 'deduplication_window')::integer, 0) = 0 THEN
            RETURN pgmq._send_sql(qtable, false, CASE WHEN gate = 'TRUE' THEN '' ELSE ' WHERE ' || gate END,
                                  '$4', '$6', '$7', delay) || pgmq._record_rest_sql();
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
    RETURN pgmq._read_sql(
        qtable, op = 'p', low, '$2', '$3', '$8', f.by_priority, f.max_receive_count,
        -- the name as stored, as the worker's dead letters write it, whatever the
        -- caller's spelling
        CASE WHEN f.dead_letter_queue IS NOT NULL
             THEN pgmq._dead_letter_move_sql(pgmq._stored_queue_name(queue_name), f.dead_letter_queue) END);
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
    SELECT CASE WHEN op IN ('s', '1') THEN pgmq._send_sql(qtable, op = '1', cond, vt, msgs, hdrs)
                WHEN op IN ('a', 'd') THEN pgmq._ack_sql(qtable, op = 'a', cond, ids)
           END;
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
                THEN pgmq._queue_ops_ids_sql(qtable, op, ' WHERE ' || pgmq._kept_guard_sql(qtable), ids, vt, msgs, hdrs)
                ELSE pgmq._queue_ops_sql_for(qtable, op, low || ' AND ' || pgmq._kept_guard_sql(qtable), qty, secs, cond)
           END;
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
        WHEN op IN ('s', '1', 'a', 'd') THEN pgmq._queue_ops_ids_sql(qtable, op) || pgmq._record_rest_sql()
        WHEN op IN ('r', 'p') THEN pgmq._read_sql(qtable, op = 'p', low, qty, secs, cond)
        WHEN op = 'v' THEN pgmq._set_vt_sql(qtable)
    END;
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_sql_for(text,"char",text,text,text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_sql_for(text,"char",text,text,text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._read_pick_sql(qtable text, low text, qty text, cond text, extra text DEFAULT ''::text, order_by text DEFAULT 'q.msg_id'::text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT pg_catalog.format(
        $pick$
                SELECT q.msg_id FROM pgmq.%1$I q
                WHERE q.msg_id >= %2$s AND q.vt <= pg_catalog.clock_timestamp()
                  AND (%3$s IS NULL OR %3$s = '{}'::jsonb OR q.message @> %3$s)%5$s
                ORDER BY %6$s
                LIMIT %4$s
                FOR UPDATE SKIP LOCKED
            $pick$,
        qtable, low, cond, qty, extra, order_by);
$function$
;
COMMENT ON FUNCTION pgmq._read_pick_sql(text,text,text,text,text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._read_pick_sql(text,text,text,text,text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._read_sql(qtable text, pops boolean, low text, qty text DEFAULT '$2'::text, secs text DEFAULT '$3'::text, cond text DEFAULT '$8'::text, by_priority boolean DEFAULT false, max_receive_count integer DEFAULT NULL::integer, dead_move text DEFAULT NULL::text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT pg_catalog.format(
        CASE WHEN dead_move IS NULL THEN $sql$
        WITH $sql$ ELSE $dead$
        WITH picked AS MATERIALIZED (%3$s),
        dead AS (
            DELETE FROM pgmq.%1$I m
            WHERE m.msg_id = ANY(ARRAY(%5$s))
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.message, m.headers,
                      NULL::text AS error
        ),
        %6$s,
        $dead$ END
        || $sql$claimed AS (
            %2$s
            WHERE m.msg_id = ANY(ARRAY($sql$
        || CASE WHEN dead_move IS NULL THEN '%3$s' ELSE 'SELECT p.msg_id FROM picked p' END
        || $sql$))
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message, m.headers
        )
        SELECT * FROM claimed c ORDER BY %4$s
        $sql$,
        qtable,
        CASE WHEN pops THEN pg_catalog.format('DELETE FROM pgmq.%I m', qtable)
        ELSE pg_catalog.format($upd$UPDATE pgmq.%I m
            SET vt = pg_catalog.clock_timestamp() + pg_catalog.make_interval(secs => %s),
                read_ct = m.read_ct + 1,
                last_read_at = pg_catalog.clock_timestamp()$upd$, qtable, secs) END,
        pgmq._read_pick_sql(
            qtable, low, qty, cond,
            CASE WHEN dead_move IS NOT NULL THEN ' AND q.read_ct < ' || max_receive_count::text ELSE '' END,
            CASE WHEN by_priority THEN 'pgmq._task_priority(q.headers) DESC, q.msg_id' ELSE 'q.msg_id' END),
        CASE WHEN by_priority THEN 'pgmq._task_priority(c.headers) DESC, c.msg_id' ELSE 'c.msg_id' END,
        CASE WHEN dead_move IS NOT NULL THEN pgmq._read_pick_sql(
            qtable, low, 'greatest(' || qty || ', 100)', cond,
            pg_catalog.format(
                $x$ AND q.read_ct >= %s
                  AND ((SELECT pg_catalog.count(*) FROM picked) < %s
                       OR q.msg_id < (SELECT pg_catalog.max(p.msg_id) FROM picked p))$x$,
                max_receive_count, qty)) END,
        dead_move);
$function$
;
COMMENT ON FUNCTION pgmq._read_sql(text,boolean,text,text,text,text,boolean,integer,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._read_sql(text,boolean,text,text,text,text,boolean,integer,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._record_rest_sql()
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
    SELECT $cols$, NULL::integer, NULL::timestamptz,
                  NULL::timestamptz, NULL::timestamptz, NULL::jsonb, NULL::jsonb$cols$::text;
$function$
;
COMMENT ON FUNCTION pgmq._record_rest_sql() IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._record_rest_sql() FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._send_sql(qtable text, one boolean DEFAULT false, cond text DEFAULT ''::text, vt text DEFAULT '$4'::text, msgs text DEFAULT '$6'::text, hdrs text DEFAULT '$7'::text, delay text DEFAULT ''::text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT pg_catalog.format(
        CASE WHEN one THEN $sql$
        INSERT INTO pgmq.%1$I AS q (vt, message, headers)
        VALUES (coalesce(%2$s, pg_catalog.clock_timestamp()%6$s), (%3$s)[1], (%4$s)[1])
        RETURNING q.msg_id$sql$
        ELSE $sql$
        INSERT INTO pgmq.%1$I AS q (vt, message, headers)
        SELECT coalesce(%2$s, pg_catalog.clock_timestamp()%6$s), u.msg, u.hdr
        FROM unnest(%3$s, %4$s) AS u(msg, hdr)%5$s
        RETURNING q.msg_id$sql$ END,
        qtable, vt, msgs, hdrs, cond, delay);
$function$
;
COMMENT ON FUNCTION pgmq._send_sql(text,boolean,text,text,text,text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._send_sql(text,boolean,text,text,text,text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._set_vt_sql(qtable text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
    SELECT pg_catalog.format($sql$
        WITH moved AS (
            UPDATE pgmq.%1$I q SET vt = $4 WHERE q.msg_id = ANY($5)
            RETURNING q.msg_id, q.read_ct, q.enqueued_at, q.last_read_at, q.vt, q.message, q.headers
        )
        SELECT * FROM moved m ORDER BY m.msg_id
        $sql$, qtable);
$function$
;
COMMENT ON FUNCTION pgmq._set_vt_sql(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._set_vt_sql(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.send(queue_name text, msg jsonb)
 RETURNS SETOF bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text := pgmq._message_table_name(queue_name, 'q'::text);
BEGIN
    IF NOT EXISTS (SELECT FROM pgmq.queue_attributes a WHERE pg_catalog.lower(a.queue_name::text) = pg_catalog.lower($1)) THEN
        RETURN QUERY EXECUTE pgmq._send_sql(qtable, true)
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

