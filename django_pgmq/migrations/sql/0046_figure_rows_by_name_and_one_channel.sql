-- 0046_figure_rows_by_name_and_one_channel: figure rows by name and one channel spelling
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._claim_filter(text,jsonb,integer,boolean,boolean);
CREATE OR REPLACE FUNCTION pgmq._claim_filter(queue_name text, attrs jsonb, qty integer, pops boolean DEFAULT false, take_lock boolean DEFAULT true, OUT allowed integer, OUT max_receive_count integer, OUT dead_letter_queue text, OUT by_priority boolean, OUT held tid[], OUT stamps timestamp with time zone[], OUT counts tid[])
 RETURNS record
 LANGUAGE plpgsql
AS $function$
BEGIN
    allowed := CASE WHEN (attrs -> 'paused') = 'true'::jsonb THEN 0 ELSE qty END;
    max_receive_count := CASE WHEN attrs ? 'dead_letter_queue'
                              THEN (attrs ->> 'max_receive_count')::integer END;
    dead_letter_queue := attrs ->> 'dead_letter_queue';
    by_priority := coalesce((attrs -> 'priorities') = 'true'::jsonb, false);
    IF allowed IS DISTINCT FROM 0 AND (attrs ? 'max_in_flight' OR attrs ? 'rate_limit') THEN
        -- held: the max_in_flight slots taken for the claim; counts: the rate_limit
        -- tokens (their rows' ctids); stamps: '{}' when the queue has a rate limit
        -- (sql/26_limits.sql).
        SELECT l.allowed, l.slots,
               CASE WHEN l.tokens IS NOT NULL THEN '{}'::timestamptz[] END, l.tokens
        INTO allowed, held, stamps, counts
        FROM pgmq._claim_limits(queue_name, allowed, pops, take_lock) l;
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._claim_filter(text,jsonb,integer,boolean,boolean) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._claim_filter(text,jsonb,integer,boolean,boolean) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._dashboard_stats_of(names text[], exact_limit bigint DEFAULT 50000, max_receive_count jsonb DEFAULT '{}'::jsonb)
 RETURNS SETOF pgmq._dashboard_stats
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF exact_limit IS NULL OR exact_limit < 1 THEN
        RAISE EXCEPTION 'exact_limit must be a positive number of rows, got %', exact_limit
            USING ERRCODE = 'PQ004';
    END IF;
    -- Each row by column name (pgmq._dashboard_stats_row); the builder inlines and (r).*
    -- flattens, so the plan selects the plain columns.
    RETURN QUERY
    SELECT (r).* FROM (
        SELECT pgmq._dashboard_stats_row(
                   queue_name => f.queue_name,
                   queue_length => f.queue_length,
                   queue_visible_length => f.queue_visible_length,
                   in_flight_length => f.in_flight_length,
                   delayed_length => f.delayed_length,
                   oldest_msg_age_sec => f.oldest_msg_age_sec,
                   newest_msg_age_sec => f.newest_msg_age_sec,
                   oldest_visible_age_sec => f.oldest_visible_age_sec,
                   archive_size => a.archive_size,
                   archived_hour => a.archived_hour,
                   archived_day => a.archived_day,
                   poison_length => f.poison_length,
                   total_messages => f.total_messages,
                   estimated => f.estimated || a.estimated
               ) AS r, u.o
        FROM pg_catalog.unnest(names) WITH ORDINALITY AS u(n, o)
        -- The real time, not the transaction's start (see the top of 30_metrics.sql).
        JOIN pgmq._queue_figures(names, exact_limit, max_receive_count, pg_catalog.clock_timestamp()) f
            ON f.queue_name::text = u.n
        CROSS JOIN LATERAL pgmq._dashboard_archive_figures(f.queue_name::text, exact_limit, f.scrape_time) a
    ) s
    ORDER BY s.o;
END
$function$
;
COMMENT ON FUNCTION pgmq._dashboard_stats_of(text[],bigint,jsonb) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._dashboard_stats_of(text[],bigint,jsonb) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._dashboard_stats_row(queue_name text DEFAULT NULL::text, queue_length bigint DEFAULT NULL::bigint, queue_visible_length bigint DEFAULT NULL::bigint, in_flight_length bigint DEFAULT NULL::bigint, delayed_length bigint DEFAULT NULL::bigint, oldest_msg_age_sec integer DEFAULT NULL::integer, newest_msg_age_sec integer DEFAULT NULL::integer, oldest_visible_age_sec integer DEFAULT NULL::integer, archive_size bigint DEFAULT NULL::bigint, archived_hour bigint DEFAULT NULL::bigint, archived_day bigint DEFAULT NULL::bigint, poison_length bigint DEFAULT NULL::bigint, total_messages bigint DEFAULT NULL::bigint, estimated text[] DEFAULT NULL::text[])
 RETURNS pgmq._dashboard_stats
 LANGUAGE sql
 IMMUTABLE
AS $function$
    SELECT ROW(queue_name, queue_length, queue_visible_length, in_flight_length, delayed_length,
               oldest_msg_age_sec, newest_msg_age_sec, oldest_visible_age_sec, archive_size,
               archived_hour, archived_day, poison_length, total_messages,
               estimated)::pgmq._dashboard_stats
$function$
;
COMMENT ON FUNCTION pgmq._dashboard_stats_row(text,bigint,bigint,bigint,bigint,integer,integer,integer,bigint,bigint,bigint,bigint,bigint,text[]) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._dashboard_stats_row(text,bigint,bigint,bigint,bigint,integer,integer,integer,bigint,bigint,bigint,bigint,bigint,text[]) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._limit_channel(queue_name text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$ SELECT pgmq._queue_channel(queue_name, 'FREE'::text) $function$
;
COMMENT ON FUNCTION pgmq._limit_channel(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._limit_channel(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_channel(queue_name text, event text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$ SELECT 'pgmq.q_' || queue_name || '.' || event $function$
;
COMMENT ON FUNCTION pgmq._queue_channel(text,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_channel(text,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_figures(names text[], exact_limit bigint DEFAULT NULL::bigint, max_receive_count jsonb DEFAULT NULL::jsonb, at timestamp with time zone DEFAULT now())
 RETURNS SETOF pgmq.queue_figures
 LANGUAGE plpgsql
AS $function$
DECLARE
    bounded constant boolean := exact_limit IS NOT NULL;
    limits constant jsonb := coalesce(max_receive_count, '{}');
    answered pgmq.queue_figures[];
    part pgmq.queue_figures[];
    busy text[];
    tables text[];
    seqs oid[];
    idle_seqs oid[];
    totals bigint[];
    spills boolean[];
    caps integer[];
    chunk constant integer := 200;
    first integer := 1;
    upto integer;
BEGIN
    at := coalesce(at, pg_catalog.now());
    IF bounded AND exact_limit < 1 THEN
        RAISE EXCEPTION 'exact_limit must be a positive number of rows, got %', exact_limit
            USING ERRCODE = 'PQ004';
    END IF;
    IF bounded THEN
        names := ARRAY(SELECT m.queue_name::text FROM pg_catalog.unnest(names) AS u(n)
                       JOIN pgmq.meta m ON m.queue_name::text = u.n);
    END IF;
    -- One pass over the catalogue: the idle queues' rows (zeros and the sequence; the
    -- figures not named are NULL), and what the others need.
    SELECT coalesce(pg_catalog.array_agg(pgmq._queue_figures_row(
               queue_name => f.n, queue_length => 0::bigint,
               total_messages => CASE WHEN NOT bounded
                                      THEN coalesce(pg_catalog.pg_sequence_last_value(f.seq), 0) END,
               scrape_time => at, queue_visible_length => 0::bigint,
               in_flight_length => CASE WHEN bounded THEN 0::bigint END,
               delayed_length => CASE WHEN bounded THEN 0::bigint END,
               poison_length => CASE WHEN bounded AND limits ? f.n THEN 0::bigint END,
               estimated => '{}'::text[]
           ) ORDER BY f.o) FILTER (WHERE f.idle), '{}'),
           pg_catalog.array_agg(f.seq ORDER BY f.o) FILTER (WHERE f.idle),
           pg_catalog.array_agg(f.n ORDER BY f.o) FILTER (WHERE NOT f.idle),
           pg_catalog.array_agg(f.qtable ORDER BY f.o) FILTER (WHERE NOT f.idle),
           pg_catalog.array_agg(f.seq ORDER BY f.o) FILTER (WHERE NOT f.idle),
           pg_catalog.array_agg(f.spill ORDER BY f.o) FILTER (WHERE NOT f.idle),
           pg_catalog.array_agg((limits ->> f.n)::integer ORDER BY f.o) FILTER (WHERE NOT f.idle)
    INTO answered, idle_seqs, busy, tables, seqs, spills, caps
    FROM pgmq._metrics_facts(names) f
    WHERE NOT bounded OR f.qoid IS NOT NULL;
    IF bounded THEN  -- the idle queues' totals, by SELECT (see the top of this file)
        BEGIN
            totals := pgmq._queue_totals(idle_seqs);
        EXCEPTION WHEN undefined_table THEN
            -- An idle queue was dropped since its sequence was named: read them again
            -- (a dropped queue's total is NULL, its row left out below).
            totals := pgmq._queue_totals(idle_seqs);
        END;
        FOR i IN 1 .. coalesce(pg_catalog.cardinality(answered), 0) LOOP
            answered[i].total_messages := totals[i];
        END LOOP;
        answered := ARRAY(SELECT a FROM pg_catalog.unnest(answered) AS a WHERE a.total_messages IS NOT NULL);
    END IF;
    WHILE first <= coalesce(pg_catalog.cardinality(busy), 0) LOOP
        upto := least(first + chunk - 1, pg_catalog.cardinality(busy));
        IF NOT bounded THEN
            part := pgmq._queue_figures_chunk(busy[first:upto], tables[first:upto], seqs[first:upto],
                                              spills[first:upto], caps[first:upto], at, NULL);
        ELSE
            BEGIN
                part := pgmq._queue_figures_chunk(busy[first:upto], tables[first:upto],
                                                  seqs[first:upto], spills[first:upto],
                                                  caps[first:upto], at, exact_limit);
            EXCEPTION WHEN undefined_table THEN
                -- A queue of the chunk was dropped since the catalogue pass: the others
                -- one by one, the dropped one left out.
                part := '{}';
                FOR i IN first .. upto LOOP
                    BEGIN
                        part := part || pgmq._queue_figures_chunk(
                            ARRAY[busy[i]], ARRAY[tables[i]], ARRAY[seqs[i]], ARRAY[spills[i]],
                            ARRAY[caps[i]], at, exact_limit);
                    EXCEPTION WHEN undefined_table THEN
                        NULL;
                    END;
                END LOOP;
            END;
        END IF;
        answered := answered || part;
        first := first + chunk;
    END LOOP;
    RETURN QUERY SELECT * FROM pg_catalog.unnest(answered);
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_figures(text[],bigint,jsonb,timestamp with time zone) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_figures(text[],bigint,jsonb,timestamp with time zone) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_figures_counted(names text[], tables text[], seqs oid[], spills boolean[], caps integer[], at timestamp with time zone, bounded boolean)
 RETURNS SETOF pgmq.queue_figures
 LANGUAGE plpgsql
AS $function$
BEGIN
    -- Each row by column name (pgmq._queue_figures_row); the builder inlines and (r).*
    -- flattens, so the plan selects the plain columns.
    RETURN QUERY EXECUTE
        'SELECT (r).* FROM (SELECT pgmq._queue_figures_row('
        || 'queue_name => $1[b.i], queue_length => b.len, '
        || 'newest_msg_age_sec => extract(epoch FROM $5 - b.newest)::integer, '
        || 'oldest_msg_age_sec => extract(epoch FROM $5 - b.oldest)::integer, '
        || 'total_messages => '
        || CASE WHEN bounded THEN 'b.total' ELSE 'coalesce(pg_catalog.pg_sequence_last_value($2[b.i]), 0)' END
        || ', scrape_time => $5, queue_visible_length => b.visible, '
        || 'default_partition_length => CASE WHEN $3[b.i] THEN pgmq._default_partition_length($1[b.i]) END, '
        || 'in_flight_length => b.in_flight, delayed_length => b.len - b.visible - b.in_flight, '
        || 'oldest_visible_age_sec => extract(epoch FROM $5 - b.oldest_vt)::integer, '
        || 'poison_length => CASE WHEN $4[b.i] IS NOT NULL THEN b.poison END, '
        || 'estimated => ''{}''::text[]) AS r FROM ('
        || (SELECT pg_catalog.string_agg(pg_catalog.format('SELECT %s, pg_catalog.count(*), pg_catalog.max(enqueued_at), pg_catalog.min(enqueued_at), '
                                     'pg_catalog.count(*) FILTER (WHERE vt <= $5), %s FROM pgmq.%I',
                                     u.i,
                                     CASE WHEN bounded
                                          THEN pg_catalog.format('pg_catalog.count(*) FILTER (WHERE vt > $5 AND read_ct > 0), '
                                                      'pg_catalog.min(vt) FILTER (WHERE vt <= $5), '
                                                      'pg_catalog.count(*) FILTER (WHERE read_ct >= $4[%s]), %s',
                                                      u.i, pgmq._sequence_read_sql(seqs[u.i]))
                                          ELSE 'NULL::bigint, NULL::timestamptz, NULL::bigint, NULL::bigint' END,
                                     u.t), ' UNION ALL ')
            FROM pg_catalog.unnest(tables) WITH ORDINALITY AS u(t, i))
        || ') AS b(i, len, newest, oldest, visible, in_flight, oldest_vt, poison, total)) s'
    USING names, seqs, spills, caps, at;
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_figures_counted(text[],text[],oid[],boolean[],integer[],timestamp with time zone,boolean) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_figures_counted(text[],text[],oid[],boolean[],integer[],timestamp with time zone,boolean) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_figures_row(queue_name text DEFAULT NULL::text, queue_length bigint DEFAULT NULL::bigint, newest_msg_age_sec integer DEFAULT NULL::integer, oldest_msg_age_sec integer DEFAULT NULL::integer, total_messages bigint DEFAULT NULL::bigint, scrape_time timestamp with time zone DEFAULT NULL::timestamp with time zone, queue_visible_length bigint DEFAULT NULL::bigint, default_partition_length bigint DEFAULT NULL::bigint, in_flight_length bigint DEFAULT NULL::bigint, delayed_length bigint DEFAULT NULL::bigint, oldest_visible_age_sec integer DEFAULT NULL::integer, poison_length bigint DEFAULT NULL::bigint, estimated text[] DEFAULT NULL::text[])
 RETURNS pgmq.queue_figures
 LANGUAGE sql
 IMMUTABLE
AS $function$
    SELECT ROW(queue_name, queue_length, newest_msg_age_sec, oldest_msg_age_sec, total_messages,
               scrape_time, queue_visible_length, default_partition_length, in_flight_length,
               delayed_length, oldest_visible_age_sec, poison_length, estimated)::pgmq.queue_figures
$function$
;
COMMENT ON FUNCTION pgmq._queue_figures_row(text,bigint,integer,integer,bigint,timestamp with time zone,bigint,bigint,bigint,bigint,integer,bigint,text[]) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_figures_row(text,bigint,integer,integer,bigint,timestamp with time zone,bigint,bigint,bigint,bigint,integer,bigint,text[]) FROM PUBLIC;

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
    f record := pgmq._claim_filter(queue_name, attrs - 'max_in_flight' - 'rate_limit', NULL);
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

CREATE OR REPLACE FUNCTION pgmq._require_row_builder(builder regproc)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    columns text;
    arguments text;
    wanted_body text;
    body text;
BEGIN
    SELECT pg_catalog.string_agg(a.attname::text || ' ' || pg_catalog.format_type(a.atttypid, NULL::integer), ', '
                                 ORDER BY a.attnum),
           'SELECTROW(' || pg_catalog.string_agg(a.attname::text, ',' ORDER BY a.attnum) || ')::'
           || pg_catalog.format('%I.%I', n.nspname, t.typname)
    INTO columns, wanted_body
    FROM pg_catalog.pg_proc p
    JOIN pg_catalog.pg_type t ON t.oid = p.prorettype
    JOIN pg_catalog.pg_namespace n ON n.oid = t.typnamespace
    JOIN pg_catalog.pg_attribute a ON a.attrelid = t.typrelid AND a.attnum > 0 AND NOT a.attisdropped
    WHERE p.oid = builder
    GROUP BY n.nspname, t.typname;
    SELECT pg_catalog.string_agg(x.name || ' ' || pg_catalog.format_type(x.type, NULL::integer), ', ' ORDER BY x.i),
           pg_catalog.regexp_replace(pg_catalog.min(p.prosrc), '\s+', '', 'g')
    INTO arguments, body
    FROM pg_catalog.pg_proc p
    CROSS JOIN LATERAL ROWS FROM (pg_catalog.unnest(p.proargnames), pg_catalog.unnest(p.proargtypes::oid[]))
        WITH ORDINALITY AS x(name, type, i)
    WHERE p.oid = builder;
    IF arguments IS DISTINCT FROM columns THEN
        RAISE EXCEPTION '%: its arguments must be its result type''s columns in order (%), got (%)',
            builder, columns, arguments
            USING ERRCODE = 'PQ000';
    END IF;
    IF body IS DISTINCT FROM wanted_body THEN
        RAISE EXCEPTION '%: its body must be SELECT ROW(<its arguments in order>)::<its result type>', builder
            USING ERRCODE = 'PQ000';
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._require_row_builder(regproc) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._require_row_builder(regproc) FROM PUBLIC;

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
$function$
;
COMMENT ON FUNCTION pgmq.celery_next_visible(text[]) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.celery_next_visible(text[]) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.celery_release(queue text, msg_ids bigint[], notify boolean DEFAULT true)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
DECLARE
    released integer;
BEGIN
    SELECT pg_catalog.count(*) INTO released FROM pgmq.set_vt(queue, msg_ids, 0);
    IF released > 0 AND notify THEN
        PERFORM pg_catalog.pg_notify(pgmq._queue_channel(queue, 'INSERT'::text), '');
    END IF;
    RETURN released;
END
$function$
;
COMMENT ON FUNCTION pgmq.celery_release(text,bigint[],boolean) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.celery_release(text,bigint[],boolean) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.celery_send(queue text, msg jsonb, headers jsonb DEFAULT NULL::jsonb, deliver_at timestamp with time zone DEFAULT NULL::timestamp with time zone, notify boolean DEFAULT true)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
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
$function$
;
COMMENT ON FUNCTION pgmq.celery_send(text,jsonb,jsonb,timestamp with time zone,boolean) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.celery_send(text,jsonb,jsonb,timestamp with time zone,boolean) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.notify_queue_listeners()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
DECLARE
    queue text := coalesce(TG_ARGV[0], substring(TG_TABLE_NAME FROM 3));
    -- Transaction-local marker: the first row of a commit decides, the others skip.
    decided text := 'pgmq_notify.t' || TG_RELID;
    throttle integer;
    last_at timestamptz;
BEGIN
    IF pg_catalog.current_setting(decided, true) = 'yes' THEN
        RETURN NULL;
    END IF;
    PERFORM pg_catalog.set_config(decided, 'yes', true);

    SELECT t.throttle_interval_ms, t.last_notified_at INTO throttle, last_at
    FROM pgmq.notify_insert_throttle t
    WHERE t.queue_name::text = queue;

    -- Throttle 0 (or no row) notifies every commit without touching the row, so
    -- concurrent producers never queue up on its lock.
    IF coalesce(throttle, 0) > 0 THEN
        IF pg_catalog.clock_timestamp() - last_at < throttle * interval '1 millisecond' THEN
            RETURN NULL;
        END IF;
        -- Re-checked under the row lock: of two commits racing past the window, one
        -- notifies. The owner's helper writes the row (the inserting role may not).
        IF NOT pgmq._notify_throttle_pass(queue) THEN
            RETURN NULL;
        END IF;
    END IF;

    PERFORM pg_catalog.pg_notify(pgmq._queue_channel(queue, 'INSERT'::text), NULL);
    RETURN NULL;
END
$function$
;
COMMENT ON FUNCTION pgmq.notify_queue_listeners() IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.notify_queue_listeners() TO PUBLIC;

