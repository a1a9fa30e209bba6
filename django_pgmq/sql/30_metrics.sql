-- Queue figures: lengths, ages and the all-time message count of queues, computed in
-- one place, pgmq._queue_figures, and read from it by pgmq.metrics(), pgmq.metrics_all(),
-- the admin dashboard (90_dashboard.sql), the Prometheus export and pgmq_metrics.
--
-- The choices the figures make, once for every reader:
-- * One instant `at` per call: visibility (vt <= at) and every age are measured against
--   it, and it is scrape_time. pgmq.metrics() and metrics_all() take the transaction's
--   now(), as pgmq does (its clients rely on it). The dashboard, Prometheus and the
--   sampler pass clock_timestamp(): they show the present even inside a caller's
--   transaction (ATOMIC_REQUESTS, a test), where now() would hide the messages sent in it
--   (send sets vt from the clock) and stop the ages; in autocommit the two agree.
-- * total_messages is the queue's identity sequence's last value, 0 before the first
--   send, read in the statement that reads the catalogue or counts the tables (no
--   statement per queue), one of two ways with the same value: exact figures
--   (pgmq.metrics, metrics_all over 10,000 queues) call pg_sequence_last_value(oid), which
--   needs no statement at all; bounded ones (the dashboard, Prometheus, the sampler)
--   SELECT from the sequence, because pg_sequence_last_value's lock lasts until the whole
--   transaction ends, where a SELECT's goes with a rolled-back savepoint (the sampler
--   reads thousands of queues in savepoints so that a round holds no lock; see
--   pgmq._queue_totals).
-- * A queue is idle when its live table is a plain table with no pages: no snapshot can
--   see a row in it, so its figures are zeros with no scan and no plan
--   (pgmq._metrics_facts). Partitioned tables are never idle.
-- * The other queues are counted 200 tables to a statement (a UNION ALL of one small
--   aggregate per table). With exact_limit, a table holding more rows than that is not
--   counted: its figures are estimates, named in the row's `estimated`.

-- What the catalogue says of the queues in names (as stored in pgmq.meta), one row
-- each with its place o in names: the table's oid (NULL when it is missing), its
-- identity sequence's oid, whether a default partition may hold rows (spill,
-- 45_partitions.sql) and whether the queue is idle: a plain table with no pages holds
-- no row any snapshot can see, so an idle queue's figures need no scan and no plan
-- over its table (most of 10,000 queues are idle). pg_relation_size opens the table:
-- that, and reading the sequence, are all an idle queue costs.
-- The sequence is the one pg_depend ties to the table. For up to 64 names it is looked
-- up per table (an index scan of the table's dependents); for more, one pass over
-- pg_sequence and its own pg_depend rows gives every table's sequence at once (keyed by
-- the table's oid), which takes a new session a third of the time per-table look-ups
-- take at 10,000 queues (docs/benchmarks.md, "metrics_all() of 10,000 queues, profiled").
CREATE OR REPLACE FUNCTION pgmq._metrics_facts(names text[])
RETURNS TABLE (n text, o bigint, qtable text, qoid oid, seq oid, spill boolean, idle boolean)
LANGUAGE sql STABLE
AS $fn$
    SELECT f.n, f.o, f.qtable, f.qoid, f.seq, f.spill,
           coalesce(f.relkind = 'r' AND NOT f.spill AND pg_catalog.pg_relation_size(f.qoid) = 0, false)
    FROM (
        SELECT u.n, u.o, u.qtable, c.oid AS qoid, c.relkind,
               coalesce(c.oid = ANY (spilling.oids) OR a.oid = ANY (spilling.oids), false) AS spill,
               CASE WHEN pg_catalog.cardinality(names) > 64
               THEN ((SELECT pg_catalog.jsonb_object_agg(d.refobjid::text, d.objid)
                      FROM pg_catalog.pg_sequence s
                      JOIN pg_catalog.pg_depend d ON d.classid = 'pg_class'::regclass
                                      AND d.objid = s.seqrelid AND d.objsubid = 0
                      WHERE d.refclassid = 'pg_class'::regclass AND d.deptype IN ('a', 'i'))
                     ->> c.oid::text)::oid
               ELSE (SELECT d.objid FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_sequence s ON s.seqrelid = d.objid
                     WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass
                       AND d.refobjid = c.oid AND d.deptype IN ('a', 'i')
                     LIMIT 1)
               END AS seq
        -- OFFSET 0 keeps the name check to once per name: flattened, format_table_name's
        -- regular expression went into the joins' hash keys and was run again for every
        -- probe (a tenth of metrics_all's time at 10,000 queues)
        FROM (SELECT x.n, x.o, pgmq.format_table_name(x.n, 'q'::text) AS qtable
              FROM pg_catalog.unnest(names) WITH ORDINALITY AS x(n, o) OFFSET 0) u
        CROSS JOIN (SELECT pg_catalog.array_agg(p.partrelid) AS oids FROM pg_catalog.pg_partitioned_table p
                    WHERE p.partdefid <> 0) spilling
        LEFT JOIN pg_catalog.pg_class c ON c.relnamespace = 'pgmq'::regnamespace AND c.relname = u.qtable
        LEFT JOIN pg_catalog.pg_class a
            ON a.relnamespace = 'pgmq'::regnamespace AND a.relname = 'a' || pg_catalog.substr(u.qtable, 2)
    ) f;
$fn$;

-- One row of queue figures: pgmq's metrics_result columns (same names, same order), then
-- what the admin dashboard adds. The one declaration of a queue's figures: a figure is
-- added here and computed in pgmq._queue_figures_counted (and _queue_figures_estimated).
CREATE TYPE pgmq.queue_figures AS (
    queue_name text,
    queue_length bigint,
    newest_msg_age_sec integer,
    oldest_msg_age_sec integer,
    total_messages bigint,
    scrape_time timestamptz,
    queue_visible_length bigint,
    default_partition_length bigint,
    -- Figures pgmq.metrics() does not return: NULL unless exact_limit is given.
    in_flight_length bigint,
    delayed_length bigint,
    oldest_visible_age_sec integer,
    -- Messages read at least their queue's max_receive_count times (NULL without one).
    poison_length bigint,
    -- Names of the figures above that are estimates, not counts.
    estimated text[]
);

-- The one way to build a row of a composite type by column name (SQL builds ROW(...)
-- by position, where a value put among neighbours of the same type is silently wrong).
-- A builder is a SQL function whose arguments are the type's columns, same names, same
-- types, same order, each DEFAULT NULL, and whose body is SELECT ROW(<the arguments in
-- order>)::<the type>; callers name every value they give (`queue_length => 0::bigint`)
-- and PostgreSQL checks the names. It inlines, so a row costs what ROW(...) costs.
-- pgmq._require_row_builder fails (at install: the DO blocks after each builder, and in
-- tests/integration/test_figures_by_name.py) when a builder and its type disagree.
CREATE FUNCTION pgmq._require_row_builder(builder regproc)
RETURNS void
LANGUAGE plpgsql
AS $fn$
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
$fn$;

-- A pgmq.queue_figures row by column name (see pgmq._require_row_builder).
CREATE FUNCTION pgmq._queue_figures_row(
    queue_name text DEFAULT NULL, queue_length bigint DEFAULT NULL,
    newest_msg_age_sec integer DEFAULT NULL, oldest_msg_age_sec integer DEFAULT NULL,
    total_messages bigint DEFAULT NULL, scrape_time timestamptz DEFAULT NULL,
    queue_visible_length bigint DEFAULT NULL, default_partition_length bigint DEFAULT NULL,
    in_flight_length bigint DEFAULT NULL, delayed_length bigint DEFAULT NULL,
    oldest_visible_age_sec integer DEFAULT NULL, poison_length bigint DEFAULT NULL,
    estimated text[] DEFAULT NULL
)
RETURNS pgmq.queue_figures
LANGUAGE sql IMMUTABLE
AS $fn$
    SELECT ROW(queue_name, queue_length, newest_msg_age_sec, oldest_msg_age_sec, total_messages,
               scrape_time, queue_visible_length, default_partition_length, in_flight_length,
               delayed_length, oldest_visible_age_sec, poison_length, estimated)::pgmq.queue_figures
$fn$;

DO $check$ BEGIN PERFORM pgmq._require_row_builder('pgmq._queue_figures_row'::regproc); END $check$;

-- Figures of the queues that are not idle, counted by one statement: a UNION ALL of one
-- small aggregate per table, names as literals. The figures around the counts (ages,
-- the sequence, default partitions) are computed once over its rows rather than parsed
-- and planned per table, which halves the cost of a statement over many tables. A
-- missing table fails as pgmq's does (relation "pgmq.q_<name>" does not exist).
-- `bounded` (the dashboard's reading) adds its figures (in flight, oldest visible age,
-- poison against caps, the queues' max_receive_count) to the same pass and reads the
-- sequences by SELECT; without it they are NULL and pgmq.metrics() pays for none of them.
CREATE FUNCTION pgmq._queue_figures_counted(
    names text[], tables text[], seqs oid[], spills boolean[], caps integer[],
    at timestamptz, bounded boolean
)
RETURNS SETOF pgmq.queue_figures
LANGUAGE plpgsql
AS $fn$
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
$fn$;

-- Figures of one queue whose live table holds more than exact_limit rows, without
-- counting it: the length is the planner's estimate (at least exact_limit + 1); the
-- messages not yet visible are counted up to exact_limit (live tables have no vt index,
-- see 10_queues.sql: one bounded pass), past that in flight and delayed come from a
-- block sample of about 10,000 rows, as poison does; ages come through the primary key.
CREATE FUNCTION pgmq._queue_figures_estimated(
    queue_name text, seq oid, spill boolean, exact_limit bigint, cap integer, at timestamptz
)
RETURNS pgmq.queue_figures
LANGUAGE plpgsql
AS $fn$
DECLARE
    r pgmq.queue_figures;
    qtable regclass := pg_catalog.format('pgmq.%I', pgmq.format_table_name(queue_name, 'q'::text))::regclass;
    future bigint;
    future_read bigint;
    sampled bigint;
    s_in_flight bigint;
    s_delayed bigint;
    s_poison bigint;
    oldest timestamptz;
    newest timestamptz;
    oldest_vt timestamptz;
BEGIN
    r.queue_name := queue_name;
    r.scrape_time := at;
    r.queue_length := greatest(exact_limit + 1, pgmq._dashboard_estimate(queue_name, 'q'));
    r.estimated := ARRAY['queue_length', 'queue_visible_length'];
    EXECUTE pg_catalog.format(
        $q$SELECT pg_catalog.count(*), pg_catalog.count(*) FILTER (WHERE read_ct > 0)
           FROM (SELECT read_ct FROM %s WHERE vt > $2 LIMIT $1) s$q$, qtable
    ) INTO future, future_read USING exact_limit + 1, at;
    EXECUTE pg_catalog.format(
        $q$SELECT pg_catalog.count(*),
                  pg_catalog.count(*) FILTER (WHERE vt > $3 AND read_ct > 0),
                  pg_catalog.count(*) FILTER (WHERE vt > $3 AND read_ct = 0),
                  pg_catalog.count(*) FILTER (WHERE read_ct >= $2)
           FROM %s TABLESAMPLE SYSTEM ($1)$q$, qtable
    ) INTO sampled, s_in_flight, s_delayed, s_poison
      USING least(100.0, 1000000.0 / r.queue_length), cap, at;
    sampled := greatest(sampled, 1);
    IF future <= exact_limit THEN
        r.in_flight_length := future_read;
        r.delayed_length := future - future_read;
    ELSE
        r.in_flight_length := pg_catalog.round(r.queue_length::numeric * s_in_flight / sampled);
        r.delayed_length := pg_catalog.round(r.queue_length::numeric * s_delayed / sampled);
        r.estimated := r.estimated || ARRAY['in_flight_length', 'delayed_length'];
    END IF;
    r.queue_visible_length := greatest(r.queue_length - r.in_flight_length - r.delayed_length, 0);
    IF cap IS NOT NULL THEN
        r.poison_length := pg_catalog.round(r.queue_length::numeric * s_poison / sampled);
        r.estimated := r.estimated || 'poison_length'::text;
    END IF;
    EXECUTE pg_catalog.format('SELECT enqueued_at FROM %s ORDER BY msg_id LIMIT 1', qtable) INTO oldest;
    EXECUTE pg_catalog.format('SELECT enqueued_at FROM %s ORDER BY msg_id DESC LIMIT 1', qtable) INTO newest;
    EXECUTE pg_catalog.format('SELECT pg_catalog.min(vt) FROM %s WHERE vt <= $1', qtable) INTO oldest_vt USING at;
    r.oldest_msg_age_sec := extract(epoch FROM at - oldest)::integer;
    r.newest_msg_age_sec := extract(epoch FROM at - newest)::integer;
    r.oldest_visible_age_sec := extract(epoch FROM at - oldest_vt)::integer;
    r.total_messages := (pgmq._queue_totals(ARRAY[seq]))[1];
    IF spill THEN
        r.default_partition_length := pgmq._default_partition_length(queue_name);
    END IF;
    RETURN r;
END
$fn$;

-- SQL text reading the last value of sequence `seq` (0 before its first nextval) by a
-- plain SELECT, whose lock goes with a rolled-back savepoint, where
-- pg_sequence_last_value's lasts until the whole transaction ends (see the top of this
-- file); NULL::bigint when the sequence is gone (its queue dropped meanwhile), so that a
-- statement built from it fails on the missing table by name (undefined_table), never on
-- a bare oid.
CREATE FUNCTION pgmq._sequence_read_sql(seq oid)
RETURNS text
LANGUAGE sql STABLE
AS $fn$
    SELECT coalesce(
        (SELECT pg_catalog.format('(SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM %s)',
                       c.oid::regclass)
         FROM pg_catalog.pg_class c WHERE c.oid = seq),
        'NULL::bigint')
$fn$;

-- The last values of the sequences `seqs` (0 before their first nextval, NULL for one
-- gone), in their order, read by one statement (pgmq._sequence_read_sql).
CREATE FUNCTION pgmq._queue_totals(seqs oid[])
RETURNS bigint[]
LANGUAGE plpgsql
AS $fn$
DECLARE
    totals bigint[];
BEGIN
    IF coalesce(pg_catalog.cardinality(seqs), 0) = 0 THEN
        RETURN '{}';
    END IF;
    EXECUTE 'SELECT pg_catalog.array_agg(t.v ORDER BY t.i) FROM ('
        || (SELECT pg_catalog.string_agg(pg_catalog.format('SELECT %s, %s', u.i, pgmq._sequence_read_sql(u.s)), ' UNION ALL ')
            FROM pg_catalog.unnest(seqs) WITH ORDINALITY AS u(s, i))
        || ') AS t(i, v)'
    INTO totals;
    RETURN totals;
END
$fn$;

-- Figures of some queues that are not idle, in one chunk: without exact_limit, one
-- counting statement; with it, a bounded probe first (a LIMITed scan per table, one
-- statement), then the small tables counted by one statement and each larger one
-- estimated (pgmq._queue_figures_estimated).
CREATE FUNCTION pgmq._queue_figures_chunk(
    names text[], tables text[], seqs oid[], spills boolean[], caps integer[],
    at timestamptz, exact_limit bigint
)
RETURNS pgmq.queue_figures[]
LANGUAGE plpgsql
AS $fn$
DECLARE
    sizes bigint[];
    small integer[];
    large integer[];
    answered pgmq.queue_figures[] := '{}';
BEGIN
    IF exact_limit IS NULL THEN
        RETURN ARRAY(SELECT c FROM pgmq._queue_figures_counted(names, tables, seqs, spills, caps,
                                                               at, false) c);
    END IF;
    EXECUTE 'SELECT pg_catalog.array_agg(b.n ORDER BY b.i) FROM ('
        || (SELECT pg_catalog.string_agg(pg_catalog.format('SELECT %s, pg_catalog.count(*) FROM (SELECT FROM pgmq.%I LIMIT $1) s',
                                     u.i, u.t), ' UNION ALL ')
            FROM pg_catalog.unnest(tables) WITH ORDINALITY AS u(t, i))
        || ') AS b(i, n)'
    INTO sizes USING exact_limit + 1;
    small := ARRAY(SELECT i FROM pg_catalog.generate_subscripts(names, 1) i WHERE sizes[i] <= exact_limit);
    large := ARRAY(SELECT i FROM pg_catalog.generate_subscripts(names, 1) i WHERE sizes[i] > exact_limit);
    IF pg_catalog.cardinality(small) > 0 THEN
        answered := ARRAY(
            SELECT c FROM pgmq._queue_figures_counted(
                ARRAY(SELECT names[i] FROM pg_catalog.unnest(small) i),
                ARRAY(SELECT tables[i] FROM pg_catalog.unnest(small) i),
                ARRAY(SELECT seqs[i] FROM pg_catalog.unnest(small) i),
                ARRAY(SELECT spills[i] FROM pg_catalog.unnest(small) i),
                ARRAY(SELECT caps[i] FROM pg_catalog.unnest(small) i), at, true) c);
    END IF;
    RETURN answered || ARRAY(
        SELECT pgmq._queue_figures_estimated(names[i], seqs[i], spills[i], exact_limit, caps[i], at)
        FROM pg_catalog.unnest(large) i);
END
$fn$;

-- The figures of the queues in `names` (as stored in pgmq.meta), in no particular order;
-- the one source of pgmq.metrics(), pgmq.metrics_all() and the dashboard's figures.
--
-- exact_limit NULL: exact, as pgmq.metrics() reports them; the dashboard's figures
-- (in_flight_length, delayed_length, oldest_visible_age_sec, poison_length) are NULL; a
-- name without a table fails as pgmq's metrics does.
-- exact_limit given (the admin, Prometheus, the sampler): those figures too, a table
-- counted only while it holds at most exact_limit rows, else estimated (named in
-- `estimated`); poison_length counts the messages read at least
-- max_receive_count ->> queue_name times (NULL for a queue not in it). Names not in
-- pgmq.meta, and a queue dropped while this runs, are left out rather than failing the
-- whole page. `at`: the instant of the figures (above); NULL is now().
CREATE FUNCTION pgmq._queue_figures(
    names text[], exact_limit bigint DEFAULT NULL, max_receive_count jsonb DEFAULT NULL,
    at timestamptz DEFAULT now()
)
RETURNS SETOF pgmq.queue_figures
LANGUAGE plpgsql
AS $fn$
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
$fn$;

-- pgmq's metrics of one queue (pgmq.metrics_result: pgmq 1.13's columns and meaning):
-- the exact queue figures' pgmq columns.
CREATE OR REPLACE FUNCTION pgmq.metrics(queue_name text)
RETURNS pgmq.metrics_result
LANGUAGE sql
AS $fn$
    SELECT f.queue_name, f.queue_length, f.newest_msg_age_sec, f.oldest_msg_age_sec,
           f.total_messages, f.scrape_time, f.queue_visible_length, f.default_partition_length
    FROM pgmq._queue_figures(ARRAY[pgmq._require_queue(queue_name)]) f;
$fn$;

-- Every queue's metrics, ordered by name: one pass over the catalogue answers the idle
-- queues, the others are counted 200 queues to a statement (pgmq._queue_figures).
CREATE OR REPLACE FUNCTION pgmq.metrics_all()
RETURNS SETOF pgmq.metrics_result
LANGUAGE sql
AS $fn$
    SELECT f.queue_name, f.queue_length, f.newest_msg_age_sec, f.oldest_msg_age_sec,
           f.total_messages, f.scrape_time, f.queue_visible_length, f.default_partition_length
    FROM pgmq._queue_figures(ARRAY(SELECT m.queue_name::text FROM pgmq.meta m)) f
    ORDER BY f.queue_name;
$fn$;
