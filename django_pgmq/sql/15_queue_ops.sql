-- How send, read, pop, archive, delete and set_vt reach a queue's tables: through
-- pgmq._queue_ops_route (and _route_ids), static functions installed by the migrations,
-- except the fast paths (migrations 0042 and 0052): read, pop, archive and delete (of an
-- array of ids) on a session's kept statement, and send and send_batch to a queue
-- without attributes, do the router's work in the public function itself (archive and
-- delete of one id take theirs at the top of _route_ids).
-- It writes the statement for the queue and the operation (pgmq._queue_ops_sql for a
-- queue without attributes, pgmq._queue_ops_attr_sql in sql/25_attributes.sql for one
-- with some) and runs it with EXECUTE, parsed and planned on each call, as pgmq does;
-- read, pop, archive and delete on a queue without attributes run it prepared in the
-- session instead, once it is used often ("Kept plans, per session" below).
-- No message operation creates, replaces or drops a database object: a queue is its
-- tables, indexes and sequences, nothing else, and the functions in schema pgmq are
-- exactly what migrate installed, in every session and at every isolation level. Each
-- call sees the queue's attributes as its own statement's snapshot does: nothing is
-- remembered from an earlier transaction.
--
-- Why no generated functions (docs/internals/message-path.md, "How a message operation
-- reaches a queue"): up to migration 0019 a busy queue got a generated access function whose plans
-- each session kept. It was faster at batch 10, and wrong: a function built inside a
-- REPEATABLE READ transaction carried that transaction's old view of the attributes,
-- a role able to create objects in pgmq could plant a function the router then called,
-- promotion and drop_queue could deadlock, and a second role could not own what the
-- first had generated.
--
-- Low-water mark: read and pop walk the primary key from the oldest message. Archived
-- and deleted messages leave index entries behind until VACUUM removes them, and in a
-- busy queue autovacuum (at most once a minute per table) leaves hundreds of thousands,
-- so a walk from the start of the index would slow every read as the minute goes on.
-- So each session keeps, per queue it reads, the smallest msg_id alive when it last
-- looked (a session setting pgmq.low_<table>: set_config writes no database object)
-- and the statements start there ($9), looking again once a second and whenever the
-- table is a new one (dropped and made again). Every message alive then has an id at
-- or above the mark and ids only grow, so no message is skipped; the one exception is
-- a message whose sending transaction was still open when the mark was taken and which
-- had a lower id than every message alive: this session sees it at its next look,
-- within a second. The setting is trusted only as this file writes it (migration 0045,
-- see pgmq._low_water_mark_for): a planted or stale mark hides nothing for longer.

-- One statement builder per message operation: _send_sql, _read_sql (with its pick,
-- _read_pick_sql, and its claim, _read_claim_sql), _ack_sql (archive and delete) and
-- _set_vt_sql write every statement text of those operations on a queue, for every path
-- that runs one: the routers' EXECUTE, the session's kept statements, a client's own
-- prepared statements (pgmq._queue_ops_client_sql, the Python manager's), a queue with
-- attributes (pgmq._queue_ops_attr_sql, its deduplicating sends included), the FIFO group
-- readers and pgmq.spark_claim. The functions after them only say
-- which builder and with which inputs, so a change to how, say, a read claims its rows
-- is one edit (tests/integration/test_statement_builders.py proves every path runs it).
-- The inputs are SQL expressions: the router's parameters by default ($1 op, $2 qty,
-- $3 vt seconds, $4 vt timestamp, $5 msg_ids, $6 messages, $7 headers, $8 read
-- condition, $9 the low-water mark), constants or $1.. in a client's own statement.
-- These builders are STABLE, as format() is: PostgreSQL never inlines an SQL function
-- declared IMMUTABLE whose body calls a STABLE one, and then parses and plans its body on
-- every call (up to migration 0039 that cost a send about a tenth of its server time;
-- tests/integration/test_sql_inlining.py keeps them inlined).

-- The columns a statement that returns only msg_id adds to be a message_record row:
-- callers that want the record (the router, a queue with attributes) append it; pgmq.send,
-- send_batch, archive and delete run the statements without (a RETURNING list padded with
-- six typed NULLs costs a send about a third of its time).
CREATE OR REPLACE FUNCTION pgmq._record_rest_sql()
RETURNS text
LANGUAGE sql IMMUTABLE
AS $fn$
    SELECT $cols$, NULL::integer, NULL::timestamptz,
                  NULL::timestamptz, NULL::timestamptz, NULL::jsonb, NULL::jsonb$cols$::text;
$fn$;

-- The send of messages msgs with headers hdrs (SQL expressions of jsonb[]; unnest pads a
-- NULL headers array with NULLs) to the live table qtable, visible at vt, else now plus
-- delay (an SQL interval term such as " + interval '5 seconds'", '' for none); cond is
-- SQL appended to the SELECT of the rows (' WHERE ...': the kept statements' attribute
-- guard, a queue's send checks), '' for none. one: a send of one message, a VALUES row,
-- which plans in less time than a function scan (cond does not apply). A function scan
-- yields the arrays in order and the insert numbers rows as they come, so ids follow the
-- array order. Returns the columns cols, msg_id by default (a deduplicating queue's fast
-- send adds the deduplication id). rows, when given, is the FROM item of the rows
-- u(msg, hdr, id) to insert in place of the arrays, each with its msg_id id taken
-- beforehand (a deduplicating queue's send within the window: pgmq._queue_ops_attr_sql).
CREATE OR REPLACE FUNCTION pgmq._send_sql(
    qtable text, one boolean DEFAULT false, cond text DEFAULT '', vt text DEFAULT '$4',
    msgs text DEFAULT '$6', hdrs text DEFAULT '$7', delay text DEFAULT '',
    cols text DEFAULT 'q.msg_id', rows text DEFAULT NULL
)
RETURNS text
LANGUAGE sql STABLE
AS $fn$
    SELECT pg_catalog.format(
        CASE WHEN one THEN $sql$
        INSERT INTO pgmq.%1$I AS q (vt, message, headers)
        VALUES (coalesce(%2$s, pg_catalog.clock_timestamp()%6$s), (%3$s)[1], (%4$s)[1])
        RETURNING %7$s$sql$
        WHEN rows IS NULL THEN $sql$
        INSERT INTO pgmq.%1$I AS q (vt, message, headers)
        SELECT coalesce(%2$s, pg_catalog.clock_timestamp()%6$s), u.msg, u.hdr
        FROM unnest(%3$s, %4$s) AS u(msg, hdr)%5$s
        RETURNING %7$s$sql$
        ELSE $sql$
        INSERT INTO pgmq.%1$I AS q (msg_id, vt, message, headers) OVERRIDING SYSTEM VALUE
        SELECT u.id, coalesce(%2$s, pg_catalog.clock_timestamp()%6$s), u.msg, u.hdr
        FROM %8$s%5$s
        RETURNING %7$s$sql$ END,
        qtable, vt, msgs, hdrs, cond, delay, cols, rows);
$fn$;

-- The pick of a read or pop: the oldest visible messages (by order_by, over q) from the
-- mark low up that match the condition cond, at most qty, locked, skipping rows another
-- claim holds; extra is SQL ANDed to the test (' AND ...', '' for none). The rows are
-- then claimed with "= ANY(ARRAY(pick))", so the update looks up exactly the picked rows
-- by key, whatever the plan's row estimates (a join could walk the table). now: the
-- expression of the time a message must be visible at (a Spark claim's own stamp).
CREATE OR REPLACE FUNCTION pgmq._read_pick_sql(
    qtable text, low text, qty text, cond text, extra text DEFAULT '', order_by text DEFAULT 'q.msg_id',
    now text DEFAULT 'pg_catalog.clock_timestamp()'
)
RETURNS text
LANGUAGE sql STABLE
AS $fn$
    SELECT pg_catalog.format(
        $pick$
                SELECT q.msg_id FROM pgmq.%1$I q
                WHERE q.msg_id >= %2$s AND q.vt <= %7$s
                  AND (%3$s IS NULL OR %3$s = '{}'::jsonb OR q.message @> %3$s)%5$s
                ORDER BY %6$s
                LIMIT %4$s
                FOR UPDATE SKIP LOCKED
            $pick$,
        qtable, low, cond, qty, extra, order_by, now);
$fn$;

-- The claim of the picked messages ids (an SQL query of msg_id) of the live table qtable
-- by a read (pops false: visible again secs seconds, an SQL expression, after now, read
-- once more) or a pop (pops true: deleted), returning the columns cols of the
-- claimed rows (m). Every read, pop, FIFO group read and Spark claim updates its rows
-- with this text.
CREATE OR REPLACE FUNCTION pgmq._read_claim_sql(
    qtable text, pops boolean, secs text, ids text,
    now text DEFAULT 'pg_catalog.clock_timestamp()',
    cols text DEFAULT 'm.msg_id, m.read_ct, m.enqueued_at, m.last_read_at, m.vt, m.message, m.headers'
)
RETURNS text
LANGUAGE sql STABLE
AS $fn$
    SELECT pg_catalog.format(
        CASE WHEN pops THEN 'DELETE FROM pgmq.%1$I m' ELSE $upd$UPDATE pgmq.%1$I m
            SET vt = %5$s + pg_catalog.make_interval(secs => %2$s),
                read_ct = m.read_ct + 1,
                last_read_at = %5$s$upd$ END
        || $sql$
            WHERE m.msg_id = ANY(ARRAY(%3$s))
            RETURNING %4$s$sql$,
        qtable, secs, ids, cols, now);
$fn$;

-- The read (pops false) or pop (pops true) of the live table qtable, as message_record
-- rows: low, qty, secs and cond are the expressions of the low-water mark (it may carry
-- further conditions ANDed to the pick: the kept statements' attribute guard), the
-- quantity, the visibility timeout in seconds and the read condition. A queue's
-- read-side attributes (pgmq._claim_filter) set the rest: by_priority claims by header
-- "priority" (highest first), then msg_id; dead_move, the statement text that moves the
-- over-read messages to the dead-letter queue (pgmq._dead_letter_move_sql over the CTE
-- "dead"), with max_receive_count: only messages read fewer times are picked, so redrive
-- never uses up the qty, and the over-read ones among those the pick walked past (all of
-- them when it found fewer than qty) move there, at most max(qty, 100) per call.
-- slots (since migration 0010): the lower-cased name of a max_in_flight queue whose read
-- holds slots of its short claim (pgmq._limit_lock, sql/26_limits.sql), their ctids given
-- as $10: the statement reads those rows (as locked: its snapshot is taken after the
-- lock) and probes which are free (no message, reclaimed, or its message no longer in
-- flight under that read: gone, visible again, read again), claims at most that many
-- and records them (pgmq._limit_record) before it returns them. The free slots' ctids
-- are one array, built once: its cardinality is the pick's limit
-- and the array the record's argument (a count and a second scan of the free slots cost
-- 18,000 instructions a claim of 10 more).
CREATE OR REPLACE FUNCTION pgmq._read_sql(
    qtable text, pops boolean, low text, qty text DEFAULT '$2', secs text DEFAULT '$3',
    cond text DEFAULT '$8', by_priority boolean DEFAULT false,
    max_receive_count integer DEFAULT NULL, dead_move text DEFAULT NULL, slots text DEFAULT NULL
)
RETURNS text
LANGUAGE sql STABLE
AS $fn$
    SELECT pg_catalog.format(
        CASE WHEN slots IS NOT NULL THEN $free$
        WITH free AS MATERIALIZED (
            SELECT ARRAY(
                SELECT l.ctid FROM pgmq.queue_limit_slots l
                WHERE l.ctid = ANY ($10::tid[])
                  AND (l.msg_id IS NULL OR l.read_ct = -1 OR NOT EXISTS (
                       SELECT FROM pgmq.%1$I f
                       WHERE f.msg_id = l.msg_id AND f.read_ct = l.read_ct AND f.vt > pg_catalog.clock_timestamp()))
            ) AS tids
        ),
        $free$ WHEN dead_move IS NULL THEN $sql$
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
        )
        SELECT * FROM claimed c$sql$
        || CASE WHEN slots IS NOT NULL THEN $rec$
        WHERE (SELECT pgmq._limit_record(%7$L::text, $2, (SELECT f.tids FROM free f),
                                         pg_catalog.array_agg(x.msg_id), pg_catalog.array_agg(x.read_ct))
               FROM claimed x) IS NOT NULL$rec$ ELSE '' END
        || $sql$ ORDER BY %4$s
        $sql$,
        qtable,
        pgmq._read_claim_sql(qtable, pops, secs,
            CASE WHEN dead_move IS NULL THEN pgmq._read_pick_sql(
                qtable, low,
                CASE WHEN slots IS NOT NULL
                     THEN 'LEAST(' || qty || ', (SELECT pg_catalog.cardinality(f.tids) FROM free f))' ELSE qty END,
                cond, '',
                CASE WHEN by_priority THEN 'pgmq._task_priority(q.headers) DESC, q.msg_id' ELSE 'q.msg_id' END)
            ELSE 'SELECT p.msg_id FROM picked p' END),
        CASE WHEN dead_move IS NOT NULL THEN pgmq._read_pick_sql(
            qtable, low, qty, cond, ' AND q.read_ct < ' || max_receive_count::text,
            CASE WHEN by_priority THEN 'pgmq._task_priority(q.headers) DESC, q.msg_id' ELSE 'q.msg_id' END) END,
        CASE WHEN by_priority THEN 'pgmq._task_priority(c.headers) DESC, c.msg_id' ELSE 'c.msg_id' END,
        CASE WHEN dead_move IS NOT NULL THEN pgmq._read_pick_sql(
            qtable, low, 'greatest(' || qty || ', 100)', cond,
            pg_catalog.format(
                $x$ AND q.read_ct >= %s
                  AND ((SELECT pg_catalog.count(*) FROM picked) < %s
                       OR q.msg_id < (SELECT pg_catalog.max(p.msg_id) FROM picked p))$x$,
                max_receive_count, qty)) END,
        dead_move, slots);
$fn$;

-- The archive (archive true: moved to the archive table) or delete of the messages ids
-- (an SQL expression of bigint[]) from the live table qtable; cond is SQL ANDed to the
-- WHERE (' AND ...': the kept statements' wake of a full queue's readers), '' for none.
-- Returns msg_id only.
CREATE OR REPLACE FUNCTION pgmq._ack_sql(
    qtable text, archive boolean, cond text DEFAULT '', ids text DEFAULT '$5'
)
RETURNS text
LANGUAGE sql STABLE
AS $fn$
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
$fn$;

-- The set_vt of the messages $5 of the live table qtable to $4, as message_record rows.
CREATE OR REPLACE FUNCTION pgmq._set_vt_sql(qtable text)
RETURNS text
LANGUAGE sql STABLE
AS $fn$
    SELECT pg_catalog.format($sql$
        WITH moved AS (
            UPDATE pgmq.%1$I q SET vt = $4 WHERE q.msg_id = ANY($5)
            RETURNING q.msg_id, q.read_ct, q.enqueued_at, q.last_read_at, q.vt, q.message, q.headers
        )
        SELECT * FROM moved m ORDER BY m.msg_id
        $sql$, qtable);
$fn$;

-- The statement of an operation that returns only msg_id (s send, 1 send of one message,
-- a archive, d delete) on a plain queue, returning only it: pgmq.send, send_batch,
-- archive and delete run it as it is. cond, ids, vt, msgs and hdrs as the builders'.
CREATE OR REPLACE FUNCTION pgmq._queue_ops_ids_sql(
    qtable text, op "char", cond text DEFAULT '', ids text DEFAULT '$5',
    vt text DEFAULT '$4', msgs text DEFAULT '$6', hdrs text DEFAULT '$7'
)
RETURNS text
LANGUAGE sql STABLE
AS $fn$
    SELECT CASE WHEN op IN ('s', '1') THEN pgmq._send_sql(qtable, op = '1', cond, vt, msgs, hdrs)
                WHEN op IN ('a', 'd') THEN pgmq._ack_sql(qtable, op = 'a', cond, ids)
           END;
$fn$;

-- The statement of one operation on one plain queue as message_record rows, with the
-- router's parameters (above). low is the SQL expression read and pop start from ('$9'
-- in the router, '0' for a caller without one); qty, secs and cond the read's. Ops: s
-- send, 1 send of one message, r read, p pop, a archive, d delete, v set_vt; s, 1, a and
-- d fill only msg_id (the rest NULL). A send's $4 NULL means "no delay given". A queue
-- with attributes runs pgmq._queue_ops_attr_sql's (sql/25_attributes.sql).
-- For the live table qtable (the name format_table_name gave, which checked the queue's
-- name), so the router checks the name once per call. One SQL expression, so a caller's
-- plan inlines it: nothing to compile in a new session.
CREATE OR REPLACE FUNCTION pgmq._queue_ops_sql_for(
    qtable text, op "char", low text, qty text DEFAULT '$2', secs text DEFAULT '$3',
    cond text DEFAULT '$8'
)
RETURNS text
LANGUAGE sql STABLE
AS $fn$
    SELECT CASE
        WHEN op IN ('s', '1', 'a', 'd') THEN pgmq._queue_ops_ids_sql(qtable, op) || pgmq._record_rest_sql()
        WHEN op IN ('r', 'p') THEN pgmq._read_sql(qtable, op = 'p', low, qty, secs, cond)
        WHEN op = 'v' THEN pgmq._set_vt_sql(qtable)
    END;
$fn$;

-- The statement of op on queue_name (the name checked): the router's, for callers that
-- have only the name.
CREATE OR REPLACE FUNCTION pgmq._queue_ops_sql(queue_name text, op "char", low text DEFAULT '0')
RETURNS text
LANGUAGE sql STABLE
AS $fn$
    SELECT pgmq._queue_ops_sql_for(pgmq.format_table_name(queue_name, 'q'::text), op, low);
$fn$;

-- The smallest msg_id this session may start a read or pop of the live table qtable at
-- (see the top of this file): the session's mark while it is fresh and for the same
-- table, else looked up again and kept as
-- "<table oid> <next look> <msg_id> <next full look>" (epoch seconds).
-- The setting is session state any code on the connection can write (set_config, or an
-- earlier client of a pooled connection), so it is trusted only as far as this function
-- would have written it: a value of another shape (a number past bigint, a malformed
-- time) counts as none, never an error, and one whose next look is more than 50 ms away
-- or whose next full look is more than a second away (a time in the future, planted or
-- left by a clock that stepped back) is looked up again at once. So a wrong mark, even a
-- msg_id within the ids given, hides messages for at most the full look's period (one
-- second): the next full look walks the primary key from its start. A mark past the id
-- sequence's last value (never written here) is looked up again at once. A look finds the
-- oldest live message (else the id sequence's last value). A full look, once a second,
-- walks the primary key from its start; the looks between, every 50 ms, walk it from
-- the session's mark, so the dead entries a read walks past are at most 50 ms of
-- traffic, not a second's, and a look costs no more than that walk. Every message alive
-- at a look has an id at or above the mark it finds, so the short look keeps the
-- guarantee above; the full look is what catches, within a second, a message whose
-- sending transaction was open at an earlier look. 0 when the table is missing (the
-- statement then fails as pgmq's does).
CREATE OR REPLACE FUNCTION pgmq._low_water_mark_for(qtable text)
RETURNS bigint
LANGUAGE plpgsql
AS $fn$
DECLARE
    -- '-' may not appear in a setting's name, '$' may, and never appears in a queue name
    kept text := pg_catalog.current_setting('pgmq.low_' || pg_catalog.replace(qtable, '-', '$'), true);
    -- a value of another shape than this function writes (set by hand) counts as none:
    -- never an error (80 characters keep the times within float8; the msg_id is checked
    -- for bigint below; a regular expression with counted repeats costs 15 us a call)
    mark text[] := CASE
        WHEN pg_catalog.octet_length(kept) <= 80
             AND kept ~ '^[0-9]+ [0-9]+(\.[0-9]+)? [0-9]+ [0-9]+(\.[0-9]+)?$'
        THEN pg_catalog.string_to_array(kept, ' ') END;
    now_s float8 := pg_catalog.date_part('epoch', pg_catalog.clock_timestamp());
    key text;
    rel oid;
    full_look boolean;
    low bigint;
    given bigint;  -- the id sequence's last value
BEGIN
    -- the common case first, in one test (each PL/pgSQL expression is set up again in
    -- every transaction): a mark of this table whose next look is not due
    IF mark[2]::float8 >= now_s AND mark[2]::float8 <= now_s + 0.05
       AND mark[4]::float8 >= now_s AND mark[4]::float8 <= now_s + 1
       AND pg_catalog.octet_length(mark[3]) <= 18
       AND mark[1] = pg_catalog.to_regclass(pg_catalog.format('pgmq.%I', qtable))::oid::text THEN
        RETURN mark[3]::bigint;
    END IF;
    key := 'pgmq.low_' || pg_catalog.replace(qtable, '-', '$');
    rel := pg_catalog.to_regclass(pg_catalog.format('pgmq.%I', qtable));
    IF rel IS NULL THEN
        RETURN 0;
    END IF;
    IF pg_catalog.octet_length(mark[3]) > 18 THEN  -- past bigint
        mark := NULL;
    END IF;
    -- a full look when there is no mark, another table's, one past its full look's time,
    -- or one whose times lie further ahead than this function ever writes them
    full_look := mark IS NULL OR mark[1] <> rel::text OR mark[4]::float8 < now_s
        OR mark[4]::float8 > now_s + 1 OR mark[2]::float8 > now_s + 0.05;
    IF NOT full_look THEN
        EXECUTE pg_catalog.format('SELECT q.msg_id FROM pgmq.%I q WHERE q.msg_id >= $1 ORDER BY q.msg_id LIMIT 1', qtable)
            INTO low USING mark[3]::bigint;
        IF low IS NULL THEN
            given := pg_catalog.pg_sequence_last_value(
                pg_catalog.pg_get_serial_sequence(pg_catalog.format('pgmq.%I', qtable), 'msg_id')::regclass);
            -- a mark past every id the sequence gave was not written by this function (or
            -- the sequence was restarted): look from the start
            full_look := mark[3]::bigint > coalesce(given, 0);
        END IF;
    END IF;
    IF full_look THEN
        EXECUTE pg_catalog.format('SELECT q.msg_id FROM pgmq.%I q ORDER BY q.msg_id LIMIT 1', qtable) INTO low;
    END IF;
    IF low IS NULL AND given IS NULL THEN
        given := pg_catalog.pg_sequence_last_value(
            pg_catalog.pg_get_serial_sequence(pg_catalog.format('pgmq.%I', qtable), 'msg_id')::regclass);
    END IF;
    low := coalesce(low, given, 0);
    PERFORM pg_catalog.set_config(key, pg_catalog.concat_ws(' ', rel, now_s + 0.05, low,
                                      CASE WHEN full_look THEN (now_s + 1)::text ELSE mark[4] END), false);
    RETURN low;
END
$fn$;

-- The mark of queue_name (its name checked): for callers that have only the name.
CREATE OR REPLACE FUNCTION pgmq._low_water_mark(queue_name text)
RETURNS bigint
LANGUAGE sql
AS $fn$
    SELECT pgmq._low_water_mark_for(pgmq._message_table_name(queue_name, 'q'::text));
$fn$;

-- Kept plans, per session (docs/internals/message-path.md, "Plans kept per session"): EXECUTE parses
-- and plans the statement on every call, which cost read+archive at batch 10 about a
-- third of its speed. So after three uses in a session of read, pop, archive or delete
-- on a queue without attributes, the router PREPAREs that statement and from then on
-- runs it with EXECUTE of the prepared statement, planned once. A prepared statement
-- is state of the session (like a setting), not a database object: nothing is created
-- in any schema, and it is gone when the session ends or runs DEALLOCATE / DISCARD ALL.
-- - Every kept read and pop carries the attribute guard: "no row in
--   pgmq.queue_attributes for this queue", checked in the statement's own snapshot. So a
--   queue that gets attributes (or is paused) takes the other path at once, at every
--   isolation level: the guard makes the kept statement touch no row, and the caller
--   then looks the attributes up and goes the router's way (pgmq._queue_ops_kept_missed).
--   Archive and delete are kept for every queue, attributes or not (migration 0046): no
--   attribute changes them, and in place of the guard they carry the wake of a full
--   max_in_flight queue (pgmq._limit_wake_sql, the same one index lookup).
-- - The fast path (migration 0042): once a session holds a queue's statement ('p'
--   below), read, pop, archive and delete run it themselves (pgmq._queue_ops_kept_stmt,
--   then _queue_ops_run_prepared or _run_prepared_ids), without the router's layer
--   (archive and delete of one id at the top of pgmq._queue_ops_route_ids); neither
--   looks the attributes up first, and a read
--   or pop that comes back empty looks them up once. Before that (the first three uses),
--   the router counts and prepares.
-- - Names: pgmq_rg_<table> and pgmq_pg_<table> (the record form of read and pop),
--   pgmq_ag_<table> and pgmq_dg_<table> (archive and delete returning msg_id only),
--   "g" for the guard: a session that prepared 0041's unguarded pgmq_r_/pgmq_p_/
--   pgmq_ai_/pgmq_di_ before 0042 was applied never runs them again. pgmq_lg_<table>
--   (migration 0046): the read of a queue whose attributes only limit it (max_in_flight,
--   rate_limit), run by pgmq._queue_ops_with_attributes with the quantity the claim
--   filter allowed; it counts toward the cap of 32 as the others. pgmq_mg_<table>
--   (migration 0010): the read of a max_in_flight queue at READ COMMITTED on the slots
--   of its short claim (pgmq._limit_lock), with a parameter more ($10, their ctids), which
--   probes the slots, claims and records in one statement (pgmq._read_sql with slots).
-- - The session's state per statement is a setting pgmq.prep_<name without pgmq_>: a
--   count of uses ('1' .. '3'), 'p' once prepared, 'c' when the cap stopped it. A value
--   that is none of these counts as 0, so a bad value never makes a call fail. With 'p'
--   pgmq._queue_ops_prepared still looks in pg_prepared_statements that the statement
--   exists (a client may have run DEALLOCATE ALL, or RESET ALL then DISCARD, as
--   PgBouncer does; psycopg 3 sends DEALLOCATE ALL after every rollback of a connection
--   that holds prepared statements of its own) and prepares it again when it is gone;
--   no exception block, no subtransaction. Neither the state nor the name is trusted
--   (migration 0045): a statement is run only when its text in pg_prepared_statements is
--   the PREPARE this file sends (pgmq._queue_ops_kept_held); another under the name, left
--   by any code on the connection or a pooled connection's earlier client, is deallocated
--   and ours prepared, so 'p' with a planted statement never hides a message.
-- - At most 32 of the session's prepared statements are ours (8 queues with all four
--   ops): looking one up in pg_prepared_statements costs about 0.3 us per statement
--   the session holds, so a larger cap would eat the gain. A queue past the cap stays
--   on EXECUTE ('c', until RESET ALL).
-- - Send and set_vt stay on EXECUTE: EXECUTE of a prepared statement takes its
--   arguments as text (PL/pgSQL's USING does not reach them), and turning messages and
--   timestamps into text and back costs what the plan saves. Measured again on
--   2026-11-27 for a send of one message: no gain at 22 bytes (planning the insert is
--   cheap), 60 us a call lost at 10 KB.
-- - A dropped and re-created queue: PostgreSQL re-analyzes the statement by its name
--   on the next use. Permissions are checked when it runs, under the current role.
-- - The plan is the generic one, made with seqscan and bitmapscan off (the SET clauses
--   of pgmq._queue_ops_run_prepared and _run_prepared_ids, applied whenever PostgreSQL
--   plans it again): a plan made while the table is empty must still walk the primary
--   key once it holds a backlog. Its parameters are the router's, the low-water mark
--   among them. The SET clauses sit on the functions that run the statement only, so
--   the queues with attributes are planned under the caller's settings.
-- - A client that prepares statements itself (the Python manager, when the project turns
--   psycopg's prepared statements on) runs the same kept statement without this file's
--   PL/pgSQL around it: pgmq._queue_ops_client_sql below gives its text (migration 0044).

-- The name of the kept statement of op (r, p, a or d) on qtable.
CREATE OR REPLACE FUNCTION pgmq._queue_ops_kept_name(qtable text, op "char")
RETURNS text
LANGUAGE sql IMMUTABLE
AS $fn$ SELECT 'pgmq_' || op::text || 'g_' || qtable; $fn$;

-- The session setting that holds that statement's state ('-' may not appear in a
-- setting's name, as for the low-water mark).
CREATE OR REPLACE FUNCTION pgmq._queue_ops_kept_key(qtable text, op "char")
RETURNS text
LANGUAGE sql IMMUTABLE
AS $fn$ SELECT 'pgmq.prep_' || pg_catalog.replace(op::text || 'g_' || qtable, '-', '$'); $fn$;

-- The test an acknowledgement's statement ANDs to its WHERE (the kept statements
-- below): true, after waking the readers waiting at the limit of the queue of the live
-- table qtable when a claim marked it full (pgmq._limit_wake, sql/26_limits.sql). An
-- uncorrelated subquery: PostgreSQL runs it once per statement, before the rows; one
-- index lookup that finds nothing for a queue without max_in_flight.
CREATE OR REPLACE FUNCTION pgmq._limit_wake_sql(qtable text)
RETURNS text
LANGUAGE sql STABLE
AS $fn$
    SELECT pg_catalog.format(
        '(SELECT pg_catalog.count(pgmq._limit_wake(w.queue_name::text)) FROM pgmq.queue_limit_slots w '
        'WHERE w.queue_name::text = %L AND w.kind = ''w'' AND w.slot = 0 '
        'AND w.t > ''-infinity''::timestamptz) >= 0',
        pg_catalog.substr(qtable, 3));
$fn$;

-- The attribute guard of the kept statements of the live table qtable: "no attributes
-- row", checked in the statement's own snapshot.
CREATE OR REPLACE FUNCTION pgmq._kept_guard_sql(qtable text)
RETURNS text
LANGUAGE sql STABLE
AS $fn$
    SELECT pg_catalog.format(
        'NOT EXISTS (SELECT FROM pgmq.queue_attributes x WHERE pg_catalog.lower(x.queue_name::text) = %L)',
        pg_catalog.substr(qtable, 3));
$fn$;

-- The kept statement of op (r, p, a, d, l, or s for a client's send) on qtable: the plain
-- statement with the attribute guard (read and pop: in the pick; send: on the SELECT of
-- the rows to insert). Archive and delete need no guard: no attribute changes what they
-- do (max_in_flight slots free lazily, sql/26_limits.sql), so they are the same
-- statement for every queue, with, in the WHERE, the test that wakes the readers
-- waiting at a full queue's limit (pgmq._limit_wake_sql). low, qty, secs, cond, ids, vt,
-- msgs and hdrs are the expressions of its inputs (the router's parameters by default);
-- the session's kept statements and a client's own (pgmq._queue_ops_client_sql) are both
-- this text. One SQL expression, inlined (with the builders it calls) into the plan of
-- the fast path's check (pgmq._queue_ops_kept_ready), which PL/pgSQL keeps for the
-- session: a function that is not inlined is parsed and planned again in every
-- transaction, with every builder it calls (tests/integration/test_sql_inlining.py).
CREATE OR REPLACE FUNCTION pgmq._queue_ops_kept_sql(
    qtable text, op "char", low text DEFAULT '$9', qty text DEFAULT '$2',
    secs text DEFAULT '$3', cond text DEFAULT '$8', ids text DEFAULT '$5',
    vt text DEFAULT '$4', msgs text DEFAULT '$6', hdrs text DEFAULT '$7'
)
RETURNS text
LANGUAGE sql STABLE
AS $fn$
    SELECT CASE WHEN op IN ('a', 'd')
                THEN pgmq._queue_ops_ids_sql(qtable, op, ' AND ' || pgmq._limit_wake_sql(qtable), ids)
                -- 'l': a limited queue's read, run by the router after the claim filter
                -- capped its quantity (sql/25_attributes.sql): the plain read, no guard
                WHEN op = 'l'
                THEN pgmq._queue_ops_sql_for(qtable, 'r', low, qty, secs, cond)
                -- 'm': a max_in_flight queue's read on its short claim's slots ($10,
                -- pgmq._limit_lock): the plain read, at most as many as are free, recorded
                WHEN op = 'm'
                THEN pgmq._read_sql(qtable, false, low, qty, secs, cond, false, NULL::integer, NULL::text,
                                    pg_catalog.substr(qtable, 3))
                WHEN op = 's'
                THEN pgmq._queue_ops_ids_sql(qtable, op, ' WHERE ' || pgmq._kept_guard_sql(qtable), ids, vt, msgs, hdrs)
                ELSE pgmq._queue_ops_sql_for(qtable, op, low || ' AND ' || pgmq._kept_guard_sql(qtable), qty, secs, cond)
           END;
$fn$;

-- The PREPARE command of the kept statement of op on qtable: what pgmq._queue_ops_keep
-- runs, and so exactly what pg_prepared_statements.statement shows for it.
CREATE OR REPLACE FUNCTION pgmq._queue_ops_kept_prepare_sql(qtable text, op "char")
RETURNS text
LANGUAGE sql STABLE
AS $fn$
    SELECT pg_catalog.format(
        'PREPARE %I ("char", integer, integer, timestamptz, bigint[], jsonb[], jsonb[], jsonb, bigint%s) AS %s',
        pgmq._queue_ops_kept_name(qtable, op),
        CASE WHEN op = 'm' THEN ', tid[]' ELSE '' END,
        pgmq._queue_ops_kept_sql(qtable, op));
$fn$;

-- PREPARE the kept statement of op on qtable in this session.
CREATE OR REPLACE FUNCTION pgmq._queue_ops_keep(qtable text, op "char")
RETURNS void
LANGUAGE plpgsql
AS $fn$
BEGIN
    EXECUTE pgmq._queue_ops_kept_prepare_sql(qtable, op);
END
$fn$;

-- Whether this session holds the kept statement of op on qtable: a prepared statement
-- under its name whose text is the one pgmq._queue_ops_keep prepares. A name is no proof:
-- any code on the connection (or an earlier client of a pooled connection) may have
-- prepared something else under it, which would then run in place of the read. So the
-- text is compared (pg_prepared_statements keeps the PREPARE command as it was sent), and
-- a statement of another text under the name is deallocated here, never run; the caller
-- then prepares ours. About 10 us a call, for the text (measured on PostgreSQL 15).
CREATE OR REPLACE FUNCTION pgmq._queue_ops_kept_held(qtable text, op "char")
RETURNS boolean
LANGUAGE plpgsql
AS $fn$
DECLARE
    stmt text := pgmq._queue_ops_kept_name(qtable, op);
    held text;
BEGIN
    SELECT s.statement INTO held FROM pg_catalog.pg_prepared_statements s WHERE s.name = stmt;
    IF held IS NULL THEN
        RETURN false;
    ELSIF held = pgmq._queue_ops_kept_prepare_sql(qtable, op) THEN
        RETURN true;
    END IF;
    EXECUTE pg_catalog.format('DEALLOCATE %I', stmt);
    RETURN false;
END
$fn$;

-- A client's own statement of op on queue_name (its name checked), for a client that
-- prepares statements itself (the Python manager with psycopg's prepared statements on,
-- docs/internals/message-path.md "The manager's own statements"): the kept statement of read (r), pop (p),
-- archive (a), delete (d) or send (s), attribute guard and all, with the low-water mark
-- looked up by the statement itself (an initplan: the session's mark, as the router's),
-- the quantity and the condition (none) as constants, and its parameters from $1: read's
-- visibility timeout in seconds; archive's and delete's message ids (bigint[]); send's
-- messages and headers (jsonb[], the headers NULL or one per message; visible at once);
-- pop has none. With constants where the router has parameters, PostgreSQL's generic
-- plan for the statement is the plan of that quantity, kept for the connection. The
-- guard makes a read, pop or send touch no row when the queue has attributes; a client
-- whose read or pop comes back empty asks pgmq._queue_attributes, and when the queue has
-- some runs the SQL API's function, which applies them (a send that inserted nothing
-- always does). Archive and delete are complete for every queue (no guard): their result
-- stands. NULL for another op or a qty outside 1 .. 100000.
CREATE OR REPLACE FUNCTION pgmq._queue_ops_client_sql(queue_name text, op "char", qty integer DEFAULT 1)
RETURNS text
LANGUAGE sql STABLE
AS $fn$
    SELECT CASE WHEN op IN ('r', 'p', 'a', 'd', 's') AND qty BETWEEN 1 AND 100000 THEN
        pgmq._queue_ops_kept_sql(
            t.qtable, op, pg_catalog.format('(SELECT pgmq._low_water_mark_for(%L::text))', t.qtable),
            qty::text, '$1', 'NULL::jsonb', '$1', 'NULL::timestamptz', '$1::jsonb[]', '$2::jsonb[]')
    END
    FROM (SELECT pgmq._message_table_name(queue_name, 'q'::text) AS qtable) t;
$fn$;

-- The name of the prepared statement of op (r, p, a or d) on qtable to run, or NULL to
-- run the statement with EXECUTE this time.
CREATE OR REPLACE FUNCTION pgmq._queue_ops_prepared(qtable text, op "char")
RETURNS text
LANGUAGE plpgsql
AS $fn$
DECLARE
    stmt text := pgmq._queue_ops_kept_name(qtable, op);
    key text := pgmq._queue_ops_kept_key(qtable, op);
    state text := coalesce(pg_catalog.current_setting(key, true), '');
BEGIN
    IF state = 'p' OR state = '3' THEN
        IF NOT pgmq._queue_ops_kept_held(qtable, op) THEN
            IF pg_catalog.octet_length(stmt) > 63
               OR (SELECT pg_catalog.count(*) FROM pg_catalog.pg_prepared_statements s
                   WHERE s.name LIKE 'pgmq\_%') >= 32 THEN
                state := 'c';
            ELSE
                PERFORM pgmq._queue_ops_keep(qtable, op);
            END IF;
        END IF;
        IF state <> 'p' THEN
            PERFORM pg_catalog.set_config(key, CASE state WHEN 'c' THEN 'c' ELSE 'p' END, false);
        END IF;
        IF state <> 'c' THEN
            RETURN stmt;
        END IF;
    ELSIF state IN ('', '0', '1', '2') THEN
        PERFORM pg_catalog.set_config(key, (coalesce(nullif(state, ''), '0')::integer + 1)::text, false);
    ELSIF state <> 'c' THEN
        PERFORM pg_catalog.set_config(key, '1', false);
    END IF;
    RETURN NULL;
END
$fn$;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_run_prepared(
    stmt text, p_qty integer, p_secs integer, p_ids bigint[], p_cond jsonb, low bigint
)
RETURNS SETOF pgmq.message_record
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
SET enable_bitmapscan = off
AS $fn$
BEGIN
    RETURN QUERY EXECUTE pg_catalog.format(
        'EXECUTE %I(NULL, %L, %L, NULL, %L, NULL, NULL, %L, %L)', stmt, p_qty, p_secs, p_ids, p_cond, low);
END
$fn$;

-- Run the kept limited read stmt ('m') on the slots tids of the short claim
-- (pgmq._limit_lock).
CREATE OR REPLACE FUNCTION pgmq._queue_ops_run_limited(
    stmt text, p_qty integer, p_secs integer, p_cond jsonb, low bigint, tids tid[]
)
RETURNS SETOF pgmq.message_record
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
SET enable_bitmapscan = off
AS $fn$
BEGIN
    RETURN QUERY EXECUTE pg_catalog.format(
        'EXECUTE %I(NULL, %L, %L, NULL, NULL, NULL, NULL, %L, %L, %L)', stmt, p_qty, p_secs, p_cond, low, tids);
END
$fn$;

CREATE OR REPLACE FUNCTION pgmq._queue_ops_run_prepared_ids(stmt text, p_ids bigint[])
RETURNS SETOF bigint
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
SET enable_bitmapscan = off
AS $fn$
BEGIN
    RETURN QUERY EXECUTE pg_catalog.format('EXECUTE %I(NULL, NULL, NULL, NULL, %L, NULL, NULL, NULL, NULL)', stmt, p_ids);
END
$fn$;

-- The name of the kept statement of op on qtable, prepared again first if the session
-- lost it (DEALLOCATE ALL) or holds another statement under its name
-- (pgmq._queue_ops_kept_held): for a session whose state for it is 'p'.
CREATE OR REPLACE FUNCTION pgmq._queue_ops_kept_ready(qtable text, op "char")
RETURNS text
LANGUAGE plpgsql
AS $fn$
DECLARE
    stmt text := pgmq._queue_ops_kept_name(qtable, op);
    held text;
BEGIN
    -- pgmq._queue_ops_kept_held, written out: this runs on every fast-path call
    SELECT s.statement INTO held FROM pg_catalog.pg_prepared_statements s WHERE s.name = stmt;
    IF held IS NULL OR held <> pgmq._queue_ops_kept_prepare_sql(qtable, op) THEN
        IF held IS NOT NULL THEN
            EXECUTE pg_catalog.format('DEALLOCATE %I', stmt);
        END IF;
        PERFORM pgmq._queue_ops_keep(qtable, op);
    END IF;
    RETURN stmt;
END
$fn$;

-- The name of the kept statement of op on qtable, checked as pgmq._queue_ops_kept_ready
-- checks it, in one SQL expression the fast paths of read, pop, archive and delete put
-- in their own statement as "(SELECT k FROM pgmq._queue_ops_kept_stmt(qtable, op) k)":
-- when the session holds our text under the name, the name; else kept_ready's answer
-- (deallocated and prepared again). A set-returning SQL function, so PostgreSQL inlines
-- it with its subquery (a scalar one with a subquery is never inlined) and the caller's
-- plan, kept for the session, holds it: no PL/pgSQL call, no statement of its own, no
-- expressions to set up again in each transaction (about 100,000 instructions a call
-- less than kept_ready's, docs/benchmarks.md 2026-11-28 "The SQL API's PL/pgSQL").
CREATE OR REPLACE FUNCTION pgmq._queue_ops_kept_stmt(qtable text, op "char")
RETURNS SETOF text
LANGUAGE sql STABLE ROWS 1
AS $fn$
    SELECT CASE WHEN (SELECT s.statement FROM pg_catalog.pg_prepared_statements s
                      WHERE s.name = pgmq._queue_ops_kept_name(qtable, op))
                     = pgmq._queue_ops_kept_prepare_sql(qtable, op)
                THEN pgmq._queue_ops_kept_name(qtable, op)
                ELSE pgmq._queue_ops_kept_ready(qtable, op) END;
$fn$;

-- After a fast-path call that came back empty: true when queue_name has no attributes
-- (the empty result stands: nothing visible, or no such ids); false when it has some,
-- after setting the statement's state back to '0' so that the session's next calls go
-- the router's way (which counts again once the attributes are gone). The caller then
-- runs the operation through the router.
CREATE OR REPLACE FUNCTION pgmq._queue_ops_kept_missed(queue_name text, qtable text, op "char")
RETURNS boolean
LANGUAGE plpgsql
AS $fn$
BEGIN
    IF pgmq._queue_attributes(queue_name) IS NULL THEN
        RETURN true;
    END IF;
    PERFORM pg_catalog.set_config(pgmq._queue_ops_kept_key(qtable, op), '0', false);
    RETURN false;
END
$fn$;

-- Run one operation on one queue: the router every message function that returns
-- records calls (read, pop, set_vt; any other op runs its record form). A queue without attributes (no
-- row in pgmq.queue_attributes, one index lookup) runs the plain statement (prepared in
-- this session once it is used often, see above); one with attributes runs the
-- statement written for them, and its reads go through the claim filter
-- (pgmq._claim_filter, sql/25_attributes.sql).
CREATE OR REPLACE FUNCTION pgmq._queue_ops_route(
    queue_name text, p_op "char", p_qty integer, p_secs integer, p_vt timestamptz,
    p_ids bigint[], p_msgs jsonb[], p_headers jsonb[], p_cond jsonb
)
RETURNS SETOF pgmq.message_record
LANGUAGE plpgsql
AS $fn$
DECLARE
    -- checks the name first, as pgmq's per-message functions do (sql/05_names.sql)
    qtable text := pgmq._message_table_name(queue_name, 'q'::text);
    attrs jsonb;
    low bigint := 0;
    stmt text;
BEGIN
    IF p_op = 'r' OR p_op = 'p' THEN
        low := pgmq._low_water_mark_for(qtable);
    END IF;
    SELECT a.attributes INTO attrs
    FROM pgmq.queue_attributes a WHERE pg_catalog.lower(a.queue_name::text) = pg_catalog.lower($1);
    IF attrs IS NOT NULL THEN
        RETURN QUERY SELECT * FROM pgmq._queue_ops_with_attributes(
            queue_name, attrs, p_op, p_qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond, low);
        RETURN;
    END IF;
    IF p_op = 'r' OR p_op = 'p' THEN
        stmt := pgmq._queue_ops_prepared(qtable, p_op);
        IF stmt IS NOT NULL THEN
            RETURN QUERY SELECT * FROM pgmq._queue_ops_run_prepared(stmt, p_qty, p_secs, p_ids, p_cond, low);
            RETURN;
        END IF;
    END IF;
    RETURN QUERY EXECUTE pgmq._queue_ops_sql_for(qtable, p_op, '$9'::text)
        USING p_op, p_qty, p_secs, p_vt, p_ids, p_msgs, p_headers, p_cond, low;
END
$fn$;

-- The router of the operations that return only msg_id (send, send_batch, archive,
-- delete): the same choice as pgmq._queue_ops_route, with the plain statements of
-- pgmq._queue_ops_ids_sql, which return msg_id alone.
CREATE OR REPLACE FUNCTION pgmq._queue_ops_route_ids(
    queue_name text, p_op "char", p_vt timestamptz, p_ids bigint[], p_msgs jsonb[], p_headers jsonb[]
)
RETURNS SETOF bigint
LANGUAGE plpgsql
AS $fn$
DECLARE
    -- checks the name first, as pgmq's per-message functions do (sql/05_names.sql)
    qtable text := pgmq._message_table_name(queue_name, 'q'::text);
    attrs jsonb;
    op "char" := CASE WHEN p_op = 's' AND pg_catalog.cardinality(p_msgs) = 1 THEN '1' ELSE p_op END;
    stmt text;
BEGIN
    -- archive and delete: one statement for every queue, attributes or not (see "Kept
    -- plans"); in a session that keeps it, the fast path (migration 0042)
    IF op = 'a' OR op = 'd' THEN
        IF pg_catalog.current_setting(pgmq._queue_ops_kept_key(qtable, op), true) = 'p' THEN
            -- op written as a constant in each: the check's text is then built from its
            -- own branch only (pgmq._queue_ops_kept_sql's CASE folds when planned)
            IF op = 'a' THEN
                stmt := (SELECT k FROM pgmq._queue_ops_kept_stmt(qtable, 'a'::"char") k);
            ELSE
                stmt := (SELECT k FROM pgmq._queue_ops_kept_stmt(qtable, 'd'::"char") k);
            END IF;
        ELSE
            stmt := pgmq._queue_ops_prepared(qtable, op);
        END IF;
        IF stmt IS NOT NULL THEN
            RETURN QUERY SELECT * FROM pgmq._queue_ops_run_prepared_ids(stmt, p_ids);
        ELSE
            RETURN QUERY EXECUTE pgmq._queue_ops_kept_sql(qtable, op)
                USING p_op, NULL::integer, NULL::integer, p_vt, p_ids, p_msgs, p_headers,
                      NULL::jsonb, 0::bigint;
        END IF;
        RETURN;
    END IF;
    SELECT a.attributes INTO attrs
    FROM pgmq.queue_attributes a WHERE pg_catalog.lower(a.queue_name::text) = pg_catalog.lower($1);
    IF attrs IS NOT NULL THEN
        RETURN QUERY SELECT r.msg_id FROM pgmq._queue_ops_with_attributes(
            queue_name, attrs, p_op, NULL::integer, NULL::integer, p_vt, p_ids, p_msgs, p_headers,
            NULL::jsonb, 0::bigint) r;
        RETURN;
    END IF;
    RETURN QUERY EXECUTE pgmq._queue_ops_ids_sql(qtable, op)
        USING p_op, NULL::integer, NULL::integer, p_vt, p_ids, p_msgs, p_headers, NULL::jsonb, 0::bigint;
END
$fn$;
