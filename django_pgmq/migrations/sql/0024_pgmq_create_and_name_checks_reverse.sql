-- 0024_pgmq_create_and_name_checks: pgmq create and name checks
-- Frozen when written; never edit a released migration.
SET LOCAL check_function_bodies = off;
DROP FUNCTION IF EXISTS pgmq._message_name_error(text,text);
DROP FUNCTION IF EXISTS pgmq._message_table_name(text,text);
CREATE OR REPLACE FUNCTION pgmq._create_queue(queue_name text, unlogged boolean)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
    PERFORM pgmq.validate_queue_name(queue_name);
    PERFORM pgmq.acquire_queue_lock(queue_name);
    PERFORM pgmq._same_name_queue(queue_name);
    PERFORM pgmq._create_queue_tables(queue_name, unlogged, NULL, NULL);
    INSERT INTO pgmq.meta (queue_name, is_partitioned, is_unlogged)
    VALUES (queue_name, false, unlogged)
    ON CONFLICT DO NOTHING;
END
$function$
;
COMMENT ON FUNCTION pgmq._create_queue(text,boolean) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._create_queue(text,boolean) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._low_water_mark(queue_name text)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q');
    -- '-' may not appear in a setting's name, '$' may, and never appears in a queue name
    key text := 'pgmq.low_' || replace(qtable, '-', '$');
    mark text := current_setting(key, true);
    rel oid := to_regclass(format('pgmq.%I', qtable));
    now_s float8 := extract(epoch FROM clock_timestamp());
    low bigint;
BEGIN
    IF rel IS NULL THEN
        RETURN 0;
    END IF;
    IF coalesce(split_part(mark, ' ', 1), '') = rel::text
       AND split_part(mark, ' ', 2)::float8 >= now_s THEN
        RETURN split_part(mark, ' ', 3)::bigint;
    END IF;
    EXECUTE format('SELECT q.msg_id FROM pgmq.%I q ORDER BY q.msg_id LIMIT 1', qtable) INTO low;
    low := coalesce(low, pg_sequence_last_value(pg_get_serial_sequence(format('pgmq.%I', qtable), 'msg_id')::regclass), 0);
    PERFORM set_config(key, concat_ws(' ', rel, now_s + 1, low), false);
    RETURN low;
END
$function$
;
COMMENT ON FUNCTION pgmq._low_water_mark(text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._low_water_mark(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_route(queue_name text, p_op "char", p_qty integer, p_secs integer, p_vt timestamp with time zone, p_ids bigint[], p_msgs jsonb[], p_headers jsonb[], p_cond jsonb)
 RETURNS SETOF pgmq.message_record
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q');  -- checks the name first
    attrs jsonb;
    low bigint := 0;
BEGIN
    IF p_op = 'r' OR p_op = 'p' THEN
        low := pgmq._low_water_mark(queue_name);
    END IF;
    SELECT a.attributes INTO attrs
    FROM pgmq.queue_attributes a WHERE lower(a.queue_name) = lower($1);
    IF attrs IS NULL THEN
        RETURN QUERY EXECUTE pgmq._queue_ops_sql_for(
                qtable, CASE WHEN p_op = 's' AND cardinality(p_msgs) = 1 THEN '1' ELSE p_op END, '$9')
            USING p_op, p_qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond, low;
        RETURN;
    END IF;
    RETURN QUERY SELECT * FROM pgmq._queue_ops_with_attributes(
        queue_name, attrs, p_op, p_qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond, low);
END
$function$
;
COMMENT ON FUNCTION pgmq._queue_ops_route(text,"char",integer,integer,timestamp with time zone,bigint[],jsonb[],jsonb[],jsonb) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._queue_ops_route(text,"char",integer,integer,timestamp with time zone,bigint[],jsonb[],jsonb[],jsonb) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq._read_grouped(queue_name text, vt integer, qty integer, mode text)
 RETURNS SETOF pgmq.message_record
 LANGUAGE plpgsql
AS $function$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q');
    lock_space integer := hashtext(qtable);
    grp text;
    groups text[] := '{}';
    ready bigint;
    budget integer;
    f record;
    wanted integer;
    claim text;
    rec pgmq.message_record;
    dead bigint[];
    given bigint[] := '{}';
    limited boolean;
BEGIN
    IF qty IS NULL OR qty < 0 THEN
        RAISE EXCEPTION 'qty must be zero or more, got: %', coalesce(qty::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    f := pgmq._claim_filter(queue_name, coalesce(pgmq._queue_attributes(queue_name), '{}'::jsonb), qty);
    wanted := f.allowed;
    IF wanted = 0 THEN
        RETURN;
    END IF;
    limited := f.held IS NOT NULL OR f.stamps IS NOT NULL;
    -- Over-read messages moved to the dead-letter queue do not count: read again for
    -- the rest (each round moves at least one, so this ends).
    LOOP
    groups := '{}';
    budget := wanted;
    dead := '{}';

    -- Groups whose first message looks visible, oldest first. Only a hint: each
    -- is checked again below, after its lock is held.
    FOR grp IN EXECUTE format(
        $q$
        SELECT h.grp
        FROM (
            SELECT DISTINCT ON (pgmq._fifo_group(headers))
                   pgmq._fifo_group(headers) AS grp, msg_id, vt
            FROM pgmq.%I
            ORDER BY pgmq._fifo_group(headers), msg_id
        ) h
        WHERE h.vt <= clock_timestamp()
        ORDER BY h.msg_id
        $q$,
        qtable
    )
    LOOP
        -- Another reader holds this group until it commits: leave it alone.
        CONTINUE WHEN NOT pg_try_advisory_xact_lock(lock_space, hashtext(grp));
        -- A new statement, so a new snapshot: it sees what the last holder committed.
        EXECUTE format(
            $q$
            SELECT count(*) FILTER (WHERE ok)
            FROM (
                SELECT bool_and(vt <= clock_timestamp()) OVER (ORDER BY msg_id) AS ok
                FROM (
                    SELECT msg_id, vt FROM pgmq.%I
                    WHERE pgmq._fifo_group(headers) = $1
                    ORDER BY msg_id
                    LIMIT $2
                ) front
            ) run
            $q$,
            qtable
        ) INTO ready USING grp, CASE WHEN mode = 'fill' THEN budget ELSE 1 END;
        CONTINUE WHEN ready = 0;
        groups := groups || grp;
        budget := budget - CASE WHEN mode = 'fill' THEN ready::integer ELSE 1 END;
        EXIT WHEN budget <= 0;
    END LOOP;

    EXIT WHEN cardinality(groups) = 0;

    claim := format(
        $q$
        WITH wanted AS MATERIALIZED (
            -- The readable front of each locked group, ranked, then chosen by mode.
            SELECT g.prio, r.msg_id, r.rnk
            FROM unnest($1::text[]) WITH ORDINALITY AS g(grp, prio)
            CROSS JOIN LATERAL (
                SELECT f.msg_id,
                       row_number() OVER w AS rnk,
                       bool_and(f.vt <= clock_timestamp()) OVER w AS ok
                FROM (
                    SELECT msg_id, vt FROM pgmq.%1$I
                    WHERE pgmq._fifo_group(headers) = g.grp
                    ORDER BY msg_id
                    LIMIT $5
                ) f
                WINDOW w AS (ORDER BY f.msg_id)
            ) r
            WHERE r.ok AND ($4 <> 'head' OR r.rnk = 1)
            ORDER BY CASE WHEN $4 = 'rr' THEN r.rnk ELSE g.prio END,
                     CASE WHEN $4 = 'rr' THEN g.prio ELSE r.rnk END
            LIMIT $2
        ),
        locked AS MATERIALIZED (
            SELECT m.msg_id FROM pgmq.%1$I m
            WHERE m.msg_id IN (SELECT msg_id FROM wanted) AND m.vt <= clock_timestamp()
              AND m.msg_id <> ALL ($6)  -- handed out by an earlier round of this call
            FOR UPDATE SKIP LOCKED
        ),
        usable AS (
            -- A row someone else holds (a plain read, a delete) ends its group's share.
            SELECT w.msg_id, w.prio, w.rnk
            FROM wanted w
            WHERE NOT EXISTS (
                SELECT 1 FROM wanted e
                WHERE e.prio = w.prio AND e.rnk <= w.rnk
                  AND NOT EXISTS (SELECT 1 FROM locked l WHERE l.msg_id = e.msg_id)
            )
        ),
        claimed AS (
            UPDATE pgmq.%1$I m
            SET vt = clock_timestamp() + $3,
                read_ct = m.read_ct + 1,
                last_read_at = clock_timestamp()
            FROM usable u
            WHERE m.msg_id = u.msg_id
            RETURNING m.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message,
                      m.headers, u.prio, u.rnk
        )
        SELECT msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers
        FROM claimed
        -- Round-robin keeps its rounds (as pgmq does); the others come in msg_id order.
        ORDER BY CASE WHEN $4 = 'rr' THEN rnk ELSE 0 END,
                 CASE WHEN $4 = 'rr' THEN prio ELSE 0 END,
                 msg_id
        $q$,
        qtable
    );
    IF f.max_receive_count IS NULL AND NOT limited THEN
        RETURN QUERY EXECUTE claim
            USING groups, wanted, make_interval(secs => coalesce(vt, 0)), mode,
            -- The most one group can contribute: every other group gives at least one.
            CASE WHEN mode = 'head' THEN 1 ELSE wanted - cardinality(groups) + 1 END, given;
        RETURN;
    END IF;
    FOR rec IN EXECUTE claim
        USING groups, wanted, make_interval(secs => coalesce(vt, 0)), mode,
        CASE WHEN mode = 'head' THEN 1 ELSE wanted - cardinality(groups) + 1 END, given
    LOOP
        IF rec.read_ct > f.max_receive_count THEN  -- NULL (no redrive): never
            dead := dead || rec.msg_id;
        ELSE
            RETURN NEXT rec;
            given := given || rec.msg_id;
            wanted := wanted - 1;
        END IF;
    END LOOP;
    PERFORM pgmq._dead_letter_ids(queue_name, dead, 1);
    EXIT WHEN cardinality(dead) = 0 OR wanted <= 0;
    END LOOP;
    IF limited THEN
        PERFORM pgmq._claim_record(queue_name, f.held, f.stamps, f.counts, given);
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq._read_grouped(text,integer,integer,text) IS NULL;
REVOKE EXECUTE ON FUNCTION pgmq._read_grouped(text,integer,integer,text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.convert_archive_partitioned(table_name text, partition_interval text DEFAULT '10000'::text, retention_interval text DEFAULT '100000'::text, leading_partition integer DEFAULT 10)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    stored text;
    atable text := pgmq.format_table_name(table_name, 'a');
    history text := pgmq._fit_name(atable, '_history');
    index_name text := 'archived_at_idx_' || lower(table_name);
    by_id boolean;
    acol text;
    pkey text;
    quiet text;
    newest numeric;
    cfg pgmq.partition_config;
BEGIN
    stored := pgmq._require_queue(table_name);
    PERFORM pgmq.acquire_queue_lock(stored);
    IF (SELECT c.relkind FROM pg_class c WHERE c.oid = to_regclass(format('pgmq.%I', atable))) = 'p' THEN
        RAISE NOTICE 'Table % is already partitioned', atable;
        RETURN;
    END IF;
    PERFORM pgmq._check_partition_args(
        partition_interval, retention_interval, leading_partition, 'leading_partition');

    by_id := pgmq._partition_by_id(partition_interval);
    acol := CASE WHEN by_id THEN 'msg_id' ELSE 'archived_at' END;
    -- Free the names the new table takes: the table, its primary key and its index.
    EXECUTE format('ALTER TABLE pgmq.%I RENAME TO %I', atable, history);
    SELECT k.conname INTO pkey FROM pg_constraint k
    WHERE k.conrelid = format('pgmq.%I', history)::regclass AND k.contype = 'p';
    IF pkey IS NOT NULL AND by_id THEN
        EXECUTE format('ALTER TABLE pgmq.%I RENAME CONSTRAINT %I TO %I',
                       history, pkey, pgmq._fit_name(history, '_pkey'));
    ELSIF pkey IS NOT NULL THEN
        -- The new key is (msg_id, archived_at); attaching builds it on the old rows.
        EXECUTE format('ALTER TABLE pgmq.%I DROP CONSTRAINT %I', history, pkey);
    END IF;
    EXECUTE format('ALTER INDEX IF EXISTS pgmq.%I RENAME TO %I',
                   index_name, pgmq._fit_name(history, '_archived_at_idx'));
    quiet := current_setting('client_min_messages');
    PERFORM set_config('client_min_messages', 'warning', true);  -- "q_<name> already exists"
    PERFORM pgmq._create_queue_tables(stored, false, NULL, acol);
    PERFORM set_config('client_min_messages', quiet, true);
    EXECUTE format('CREATE TABLE pgmq.%I PARTITION OF pgmq.%I DEFAULT', atable || '_default', atable);

    EXECUTE format(
        'SELECT max(%s) FROM pgmq.%I',
        CASE WHEN by_id THEN format('%I::numeric', acol) ELSE format('extract(epoch FROM %I)', acol) END,
        history
    ) INTO newest;
    IF newest IS NULL THEN
        EXECUTE format('DROP TABLE pgmq.%I', history);
    ELSE
        EXECUTE format(
            'ALTER TABLE pgmq.%I ATTACH PARTITION pgmq.%I FOR VALUES FROM (MINVALUE) TO (%s)',
            atable, history,
            pgmq._partition_literal(by_id, pgmq._partition_next(
                by_id, partition_interval, pgmq._partition_floor(by_id, partition_interval, newest)))
        );
    END IF;

    INSERT INTO pgmq.partition_config AS c
        (table_name, queue_name, partition_column, partition_interval, retention_interval, premake)
    VALUES (atable, stored, acol, btrim(partition_interval), btrim(retention_interval), leading_partition)
    RETURNING c.* INTO cfg;
    PERFORM pgmq._maintain_table(cfg);
END
$function$
;
COMMENT ON FUNCTION pgmq.convert_archive_partitioned(text,text,text,integer) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.convert_archive_partitioned(text,text,text,integer) TO PUBLIC;

CREATE OR REPLACE FUNCTION pgmq.validate_queue_name(queue_name text)
 RETURNS void
 LANGUAGE plpgsql
 IMMUTABLE PARALLEL SAFE
AS $function$
BEGIN
    IF queue_name IS NULL OR queue_name = '' THEN
        RAISE EXCEPTION 'queue name must not be empty' USING ERRCODE = 'PQ001';
    END IF;
    IF length(queue_name) > 47 THEN
        RAISE EXCEPTION 'queue name is too long, maximum length is 47 characters: "%" has %',
            left(queue_name, 57), length(queue_name)
            USING ERRCODE = 'PQ001';
    END IF;
    IF queue_name ~ '[$;'']|--' THEN
        RAISE EXCEPTION 'queue name contains invalid characters: $, ;, --, or '': "%"', queue_name
            USING ERRCODE = 'PQ001';
    END IF;
    IF queue_name !~ '^[A-Za-z0-9_][A-Za-z0-9_-]*$' THEN
        RAISE EXCEPTION 'queue name "%" is invalid: use ASCII letters, digits, ''_'' and ''-'' (not first)',
            queue_name
            USING ERRCODE = 'PQ001';
    END IF;
END
$function$
;
COMMENT ON FUNCTION pgmq.validate_queue_name(text) IS NULL;
GRANT EXECUTE ON FUNCTION pgmq.validate_queue_name(text) TO PUBLIC;

