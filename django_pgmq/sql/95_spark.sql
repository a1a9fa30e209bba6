-- The Spark data source and pipeline (django_pgmq/contrib/spark): streaming claims,
-- write staging, export runs and per-minute archive statistics.

-- A streaming query's offsets are batch numbers: each row is one batch of messages
-- the query claimed (vt pushed forward, read_ct + 1, last_read_at = claimed_at).
-- Never a msg_id high-water mark: ids are assigned at insert but commit in another
-- order, so a mark would skip messages that commit late.
CREATE TABLE pgmq.spark_stream_batch (
    queue_name text NOT NULL,
    consumer text NOT NULL,
    batch bigint NOT NULL,
    msg_ids bigint[] NOT NULL,
    claimed_at timestamptz NOT NULL,
    acked_at timestamptz,
    PRIMARY KEY (queue_name, consumer, batch)
);

COMMENT ON TABLE pgmq.spark_stream_batch IS
    'Batches claimed by Spark streaming queries (django_pgmq.contrib.spark); offsets of the pgmq source';

-- Staging tables of all-or-nothing writes: one per batch write, one per streaming writer id.
CREATE TABLE pgmq.spark_stage (
    stage_table text PRIMARY KEY,
    queue_name text NOT NULL,
    writer_id text,
    created_at timestamptz NOT NULL DEFAULT now(),
    -- the role granted INSERT and SELECT on the table (it alone, and the owner, may commit
    -- or abort it); NULL for a stage made before staging became the owner's
    writer_role name,
    UNIQUE (queue_name, writer_id)
);

-- The last micro-batch each exactly-once streaming writer committed.
CREATE TABLE pgmq.spark_sink_batch (
    queue_name text NOT NULL,
    writer_id text NOT NULL,
    batch_id bigint NOT NULL,
    committed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (queue_name, writer_id)
);

-- Runs of pgmq_spark_export: which rows (archived before cutoff, msg_id <= max_msg_id)
-- go to which path, and how far the run got, so a rerun resumes it.
CREATE TABLE pgmq.spark_export_run (
    run_id uuid PRIMARY KEY,
    queue_name text NOT NULL,
    path text NOT NULL,
    cutoff timestamptz NOT NULL,
    max_msg_id bigint NOT NULL,
    exported bigint,
    removed bigint,
    stage text NOT NULL DEFAULT 'started'
        CHECK (stage IN ('started', 'written', 'published', 'done')),
    created_at timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz
);
CREATE INDEX spark_export_run_open ON pgmq.spark_export_run (queue_name, path) WHERE stage <> 'done';

-- Written by pgmq_spark_stats, read by the admin's charts: one row per queue and minute.
CREATE TABLE pgmq.spark_stats (
    queue_name text NOT NULL,
    minute timestamptz NOT NULL,
    archived bigint NOT NULL,
    wait_p50 double precision,
    wait_p95 double precision,
    wait_p99 double precision,
    retries bigint NOT NULL,
    computed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (queue_name, minute)
);

COMMENT ON TABLE pgmq.spark_stats IS
    'Per queue and minute: archived messages, wait (archived_at - enqueued_at, seconds) p50/p95/p99, '
    'retries (read_ct > 1); written by manage.py pgmq_spark_stats';

-- Serialises claim and acknowledgement of one streaming consumer.
CREATE FUNCTION pgmq._spark_consumer_lock(queue_name text, consumer text)
RETURNS void
LANGUAGE sql
AS $fn$
    SELECT pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('pgmq.spark.' || pg_catalog.lower(queue_name) || '.' || consumer));
$fn$;

-- Record a streaming consumer's claimed batch: the next batch number (after its last
-- and after min_batch) for the messages ids, claimed at `claimed_at`. Owner helper of
-- pgmq.spark_claim (application roles have no write right on pgmq.spark_stream_batch):
-- it records only messages the caller really claimed at that instant (their
-- last_read_at), so no caller can make another consumer hold messages it never read.
CREATE FUNCTION pgmq._spark_batch_record(queue_name text, consumer text, min_batch bigint,
                                         ids bigint[], claimed_at timestamptz)
RETURNS bigint
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    stored text := pgmq._require_queue(queue_name);
    claimed bigint;
    next_batch bigint;
BEGIN
    IF ids IS NULL OR consumer IS NULL OR claimed_at IS NULL THEN
        RETURN NULL;
    END IF;
    EXECUTE pg_catalog.format('SELECT pg_catalog.count(*) FROM pgmq.%I q WHERE q.msg_id = ANY ($1) '
                              'AND q.last_read_at = $2', pgmq.format_table_name(stored, 'q'::text))
        INTO claimed USING ids, claimed_at;
    IF claimed <> pg_catalog.cardinality(ids) THEN
        RAISE EXCEPTION 'queue "%": not every message of the batch was claimed at %', stored, claimed_at
            USING ERRCODE = 'PQ004';
    END IF;
    SELECT greatest(coalesce(pg_catalog.max(b.batch), 0), coalesce(min_batch, 0)) + 1 INTO next_batch
    FROM pgmq.spark_stream_batch b WHERE b.queue_name::text = $1 AND b.consumer = $2;
    INSERT INTO pgmq.spark_stream_batch (queue_name, consumer, batch, msg_ids, claimed_at)
    VALUES ($1, $2, next_batch, ids, claimed_at);
    RETURN next_batch;
END
$fn$;

-- Mark a consumer's batches up to upto_batch acknowledged and keep only the last marked
-- row. Owner helper of pgmq.spark_ack (acknowledging someone else's batch at most makes
-- its messages deliverable again once visible, as archiving them could do anyway).
CREATE FUNCTION pgmq._spark_batch_ack(queue_name text, consumer text, upto_batch bigint)
RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    last_acked bigint;
BEGIN
    UPDATE pgmq.spark_stream_batch b SET acked_at = pg_catalog.clock_timestamp()
    WHERE b.queue_name::text = $1 AND b.consumer = $2 AND b.batch <= upto_batch AND b.acked_at IS NULL;
    SELECT pg_catalog.max(b.batch) INTO last_acked FROM pgmq.spark_stream_batch b
    WHERE b.queue_name::text = $1 AND b.consumer = $2 AND b.acked_at IS NOT NULL;
    DELETE FROM pgmq.spark_stream_batch b
    WHERE b.queue_name::text = $1 AND b.consumer = $2 AND b.acked_at IS NOT NULL AND b.batch < last_acked;
END
$fn$;

-- Claim up to qty visible messages (all when qty is NULL; only msg_id <= max_msg_id when
-- given) for a consumer and record them as its next batch; NULL when nothing was visible.
-- Messages already in the consumer's unacknowledged batches are never claimed twice.
-- The queue's attributes hold as for pgmq.read, through the claim filter
-- (pgmq._claim_filter): a paused queue hands out nothing, a visible message already
-- delivered max_receive_count times goes to the dead-letter queue without using up qty,
-- with priorities a batch takes the highest priorities first, and max_in_flight and
-- rate_limit cap qty (the claim is recorded against them).
CREATE FUNCTION pgmq.spark_claim(
    queue_name text, consumer text, vt integer, qty integer, max_msg_id bigint, min_batch bigint
)
RETURNS bigint
LANGUAGE plpgsql
AS $fn$
DECLARE
    qtable text := pgmq.format_table_name(queue_name, 'q'::text);
    stamp timestamptz := pg_catalog.clock_timestamp();
    f record;
    held bigint[];
    ids bigint[];
    dead bigint[];
BEGIN
    PERFORM pgmq._require_queue(queue_name);
    IF vt IS NULL OR vt < 1 THEN
        RAISE EXCEPTION 'vt must be at least 1 second, got %', vt USING ERRCODE = 'PQ004';
    END IF;
    f := pgmq._claim_filter(queue_name, coalesce(pgmq._queue_attributes(queue_name), '{}'::jsonb), qty);
    IF f.allowed = 0 THEN
        RETURN NULL;
    END IF;
    -- Taken after the filter, which may have waited for a limited queue's state row: the
    -- claim's last_read_at then follows every earlier claim's (rate_limit's windows).
    stamp := pg_catalog.clock_timestamp();
    PERFORM pgmq._spark_consumer_lock(queue_name, consumer);
    SELECT coalesce(pg_catalog.array_agg(id), '{}') INTO held
    FROM pgmq.spark_stream_batch b, pg_catalog.unnest(b.msg_ids) AS id
    WHERE b.queue_name::text = $1 AND b.consumer = $2 AND b.acked_at IS NULL;

    -- $6: max_receive_count when the queue has a dead-letter queue, else NULL (none dead).
    -- Only deliverable messages are picked; the over-read ones the pick walked past (all
    -- of them when it found fewer than qty) are locked to be dead-lettered.
    -- The pick and the claim are every read's (sql/15_queue_ops.sql), at the claim's stamp.
    EXECUTE pg_catalog.format(
        $q$
        WITH picked AS MATERIALIZED (%1$s),
        over_read AS MATERIALIZED (%2$s),
        claimed AS (
            %3$s
        )
        SELECT (SELECT pg_catalog.array_agg(c.msg_id ORDER BY c.msg_id) FROM claimed c),
               (SELECT pg_catalog.array_agg(o.msg_id ORDER BY o.msg_id) FROM over_read o)
        $q$,
        pgmq._read_pick_sql(
            qtable, '0', '$4', 'NULL::jsonb',
            ' AND ($2::bigint IS NULL OR q.msg_id <= $2) AND q.msg_id <> ALL ($3)'
            ' AND NOT coalesce(q.read_ct >= $6, false)',
            CASE WHEN f.by_priority THEN 'pgmq._task_priority(q.headers) DESC, q.msg_id' ELSE 'q.msg_id' END,
            '$1'),
        pgmq._read_pick_sql(
            qtable, '0', 'greatest($4, 100)', 'NULL::jsonb',
            ' AND $6 IS NOT NULL AND q.read_ct >= $6'
            ' AND ($2::bigint IS NULL OR q.msg_id <= $2) AND q.msg_id <> ALL ($3)'
            ' AND ($4 IS NULL OR (SELECT pg_catalog.count(*) FROM picked) < $4'
            ' OR q.msg_id < (SELECT pg_catalog.max(p.msg_id) FROM picked p))',
            'q.msg_id', '$1'),
        pgmq._read_claim_sql(qtable, false, '$5', 'SELECT p.msg_id FROM picked p', '$1', 'm.msg_id')
    ) INTO ids, dead
    USING stamp, max_msg_id, held, f.allowed, vt, f.max_receive_count;
    IF dead IS NOT NULL THEN
        PERFORM pgmq._dead_letter_ids(queue_name, dead, 0);
    END IF;
    IF f.held IS NOT NULL OR f.stamps IS NOT NULL THEN
        -- a limited queue only (as pgmq.read): an unlimited one has no state to record
        PERFORM pgmq._claim_record(queue_name, f.held, f.stamps, f.counts, ids);
    END IF;

    IF ids IS NULL THEN
        RETURN NULL;
    END IF;
    -- The owner's helper records the batch (application roles may not write the table).
    RETURN pgmq._spark_batch_record(queue_name::text, consumer::text, min_batch::bigint, ids, stamp);
END
$fn$;

-- Keep the consumer's unacknowledged batches in (after_batch, upto_batch] invisible for vt
-- more seconds; only messages still carrying its claim (last_read_at = claimed_at) are touched.
CREATE FUNCTION pgmq.spark_hold(
    queue_name text, consumer text, after_batch bigint, upto_batch bigint, vt integer
)
RETURNS bigint
LANGUAGE plpgsql
AS $fn$
DECLARE
    held bigint;
BEGIN
    PERFORM pgmq._require_queue(queue_name);
    EXECUTE pg_catalog.format(
        $q$
        WITH touched AS (
            UPDATE pgmq.%I q SET vt = pg_catalog.clock_timestamp() + pg_catalog.make_interval(secs => $5)
            FROM pgmq.spark_stream_batch b
            WHERE b.queue_name::text = $1 AND b.consumer = $2 AND b.batch > $3 AND b.batch <= $4
              AND b.acked_at IS NULL AND q.msg_id = ANY (b.msg_ids) AND q.last_read_at = b.claimed_at
            RETURNING 1
        )
        SELECT pg_catalog.count(*) FROM touched
        $q$,
        pgmq.format_table_name(queue_name, 'q'::text)
    ) INTO held USING queue_name, consumer, after_batch, upto_batch, vt;
    RETURN held;
END
$fn$;

-- Acknowledge the consumer's batches up to upto_batch (Spark committed them): archive,
-- delete or leave ('none') their messages, mark them, and keep only the last marked row.
CREATE FUNCTION pgmq.spark_ack(queue_name text, consumer text, upto_batch bigint, mode text)
RETURNS integer
LANGUAGE plpgsql
AS $fn$
DECLARE
    ids bigint[];
    batches integer;
BEGIN
    IF mode IS NULL OR mode NOT IN ('archive', 'delete', 'none') THEN
        RAISE EXCEPTION 'ack must be archive, delete or none, got %', coalesce(mode, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    PERFORM pgmq._spark_consumer_lock(queue_name, consumer);
    SELECT pg_catalog.array_agg(id), pg_catalog.count(DISTINCT b.batch) INTO ids, batches
    FROM pgmq.spark_stream_batch b, pg_catalog.unnest(b.msg_ids) AS id
    WHERE b.queue_name::text = $1 AND b.consumer = $2 AND b.batch <= upto_batch AND b.acked_at IS NULL;
    IF ids IS NULL THEN
        RETURN 0;
    END IF;
    IF mode = 'archive' THEN
        PERFORM pg_catalog.count(*) FROM pgmq.archive(queue_name, ids);
    ELSIF mode = 'delete' THEN
        PERFORM pg_catalog.count(*) FROM pgmq.delete(queue_name, ids);
    END IF;
    PERFORM pgmq._spark_batch_ack(queue_name::text, consumer::text, upto_batch::bigint);
    RETURN batches;
END
$fn$;

-- Whether a send to queue_name must go through pgmq.send_batch's checks: the queue has a
-- send-side attribute (delivery_delay, deduplication_window, max_message_size,
-- priorities). Otherwise rows may be copied straight into its table.
CREATE FUNCTION pgmq._spark_checked_send(queue_name text)
RETURNS boolean
LANGUAGE sql STABLE
AS $fn$
    SELECT coalesce(
        coalesce((a ->> 'delivery_delay')::integer, 0) > 0
        OR coalesce((a ->> 'deduplication_window')::integer, 0) > 0
        OR a ? 'max_message_size'
        OR (a -> 'priorities') = 'true'::jsonb, false)
    FROM (SELECT pgmq._queue_attributes(queue_name) AS a) x;
$fn$;

-- Send the rows of a staging table (those of the given task attempts; all when NULL) to
-- queue_name through pgmq.send_batch, so the queue's attributes hold: runs of rows with
-- the same vt (NULL: no delay given, the queue's delivery_delay applies), in their
-- order, at most 10,000 rows a call. One message refused refuses them all (the caller's
-- transaction). Returns how many rows were sent (duplicates included).
CREATE FUNCTION pgmq._spark_send_staged(queue_name text, stage regclass, attempts bigint[])
RETURNS bigint
LANGUAGE plpgsql
AS $fn$
DECLARE
    run record;
    sent bigint := 0;
BEGIN
    FOR run IN EXECUTE pg_catalog.format(
        $q$
        WITH ordered AS (
            SELECT s.vt, s.message, s.headers,
                   pg_catalog.row_number() OVER (ORDER BY s.part, s.seq) AS n,
                   pg_catalog.row_number() OVER (PARTITION BY s.vt ORDER BY s.part, s.seq) AS k
            FROM %s s WHERE $1 IS NULL OR s.attempt = ANY ($1)
        )
        SELECT o.vt, pg_catalog.array_agg(o.message ORDER BY o.n) AS msgs,
               pg_catalog.array_agg(o.headers ORDER BY o.n) AS hdrs
        FROM ordered o
        GROUP BY o.vt, o.n - o.k, (o.k - 1) / 10000
        ORDER BY pg_catalog.min(o.n)
        $q$, stage) USING attempts
    LOOP
        PERFORM pg_catalog.count(*) FROM pgmq.send_batch(queue_name, run.msgs, run.hdrs, run.vt);
        sent := sent + pg_catalog.cardinality(run.msgs);
    END LOOP;
    RETURN sent;
END
$fn$;

-- The staging table `stage` names, when it is one: a name pgmq.spark_stage_create makes
-- ('spark_stage_' and 32 hex digits) of a plain table in pgmq with the staging columns.
-- PQ004 otherwise: a row of pgmq.spark_stage naming any other table (a queue's, written
-- there by a role that may write that catalogue) never makes a caller drop, empty or read
-- it. A missing table is NULL when missing_ok, PQ004 otherwise.
CREATE FUNCTION pgmq._spark_stage_table(stage text, missing_ok boolean DEFAULT false)
RETURNS regclass
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    rel regclass;
BEGIN
    IF stage IS NULL OR stage !~ '^spark_stage_[0-9a-f]{32}$' THEN
        RAISE EXCEPTION 'pgmq.% is not a Spark staging table: their names are spark_stage_ '
            'and 32 hexadecimal digits', coalesce(stage, 'NULL') USING ERRCODE = 'PQ004';
    END IF;
    rel := pg_catalog.to_regclass(pg_catalog.format('pgmq.%I', stage));
    IF rel IS NULL THEN
        IF missing_ok THEN
            RETURN NULL;
        END IF;
        RAISE EXCEPTION 'staging table pgmq.% does not exist (already committed or dropped)', stage
            USING ERRCODE = 'PQ004';
    END IF;
    IF (SELECT c.relkind FROM pg_catalog.pg_class c WHERE c.oid = rel) <> 'r'
       OR (SELECT pg_catalog.string_agg(a.attname || ' ' || pg_catalog.format_type(a.atttypid, a.atttypmod), ', '
                             ORDER BY a.attnum)
           FROM pg_catalog.pg_attribute a WHERE a.attrelid = rel AND a.attnum > 0 AND NOT a.attisdropped)
          IS DISTINCT FROM 'part integer, attempt bigint, seq bigint, '
                           'vt timestamp with time zone, message jsonb, headers jsonb' THEN
        RAISE EXCEPTION 'pgmq.% is not a Spark staging table: not the table '
            'pgmq.spark_stage_create makes', stage USING ERRCODE = 'PQ004';
    END IF;
    RETURN rel;
END
$fn$;

-- Who may use a staging table: the owner (and a superuser), or a member of the role it
-- was made for (writer_role; any registered application role for a stage made before).
CREATE FUNCTION pgmq._spark_stage_entry(stage text)
RETURNS pgmq.spark_stage
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    entry pgmq.spark_stage;
BEGIN
    SELECT * INTO entry FROM pgmq.spark_stage s WHERE s.stage_table = stage FOR UPDATE;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    IF entry.writer_role IS NULL THEN
        PERFORM pgmq._require_app_role();
    ELSIF NOT (pg_catalog.to_regrole(pg_catalog.quote_ident(entry.writer_role::text)) IS NOT NULL
               AND pg_catalog.pg_has_role(SESSION_USER, entry.writer_role, 'MEMBER')) THEN
        PERFORM pgmq._require_privilege('manage_queues'::text);
    END IF;
    RETURN entry;
END
$fn$;

-- A staging table for an all-or-nothing write into a queue. A streaming writer passes its
-- writer_id and gets the same table back after a restart.
-- Staging tables are the owner's: application roles have no CREATE on schema pgmq. Any
-- registered application role may ask for one (pgmq._spark_stage_make, an owner
-- function); the table is made UNLOGGED by the owner, under a name the function draws,
-- and only the calling role (current_user) gets INSERT and SELECT on it.
CREATE FUNCTION pgmq.spark_stage_create(queue_name text, writer_id text DEFAULT NULL)
RETURNS text
LANGUAGE sql
AS $fn$
    SELECT pgmq._spark_stage_make($1::text, $2::text, CURRENT_USER::name);
$fn$;

-- The owner's half of spark_stage_create: grantee must be a role the session may act as.
CREATE FUNCTION pgmq._spark_stage_make(queue_name text, writer_id text, grantee name)
RETURNS text
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    stored text;
    stage text;
    other oid;
BEGIN
    PERFORM pgmq._require_app_role();
    IF grantee IS NULL OR pg_catalog.to_regrole(pg_catalog.quote_ident(grantee::text)) IS NULL
       OR NOT pg_catalog.pg_has_role(SESSION_USER, grantee, 'MEMBER') THEN
        RAISE EXCEPTION 'role "%" may not write a staging table for role "%"', SESSION_USER,
            coalesce(grantee::text, 'NULL') USING ERRCODE = '42501';
    END IF;
    stored := pgmq._require_queue(queue_name);
    IF writer_id IS NOT NULL THEN
        PERFORM pg_catalog.pg_advisory_xact_lock(
            pg_catalog.hashtext('pgmq.spark.stage.' || pg_catalog.lower(stored) || '.' || writer_id));
        SELECT s.stage_table INTO stage FROM pgmq.spark_stage s
        WHERE s.queue_name::text = stored AND s.writer_id = $2 AND s.writer_role IS NOT DISTINCT FROM grantee;
        IF stage IS NOT NULL AND pgmq._spark_stage_table(stage, true) IS NOT NULL THEN
            RETURN stage;
        END IF;
        stage := (SELECT s.stage_table FROM pgmq.spark_stage s
                  WHERE s.queue_name::text = stored AND s.writer_id = $2);
        IF stage IS NOT NULL AND pgmq._spark_stage_table(stage, true) IS NOT NULL THEN
            EXECUTE pg_catalog.format('DROP TABLE pgmq.%I', stage);  -- another role's, replaced
        END IF;
        DELETE FROM pgmq.spark_stage s WHERE s.queue_name::text = stored AND s.writer_id = $2;
    END IF;
    stage := 'spark_stage_' || pg_catalog.replace(pg_catalog.gen_random_uuid()::text, '-', '');
    EXECUTE pg_catalog.format(
        'CREATE UNLOGGED TABLE pgmq.%I (part integer NOT NULL, attempt bigint NOT NULL, '
        'seq bigint GENERATED ALWAYS AS IDENTITY, vt timestamptz, message jsonb, headers jsonb)',
        stage
    );
    -- Only the writer's role: the owner's default privileges (a grant to every application
    -- role, for queue tables) are taken back from this table.
    FOR other IN
        SELECT DISTINCT a.grantee FROM pg_catalog.pg_class c,
               LATERAL pg_catalog.aclexplode(c.relacl) a
        WHERE c.oid = pg_catalog.format('pgmq.%I', stage)::regclass AND a.grantee <> c.relowner
    LOOP
        EXECUTE pg_catalog.format('REVOKE ALL ON pgmq.%I FROM %s', stage,
            CASE WHEN other = 0 THEN 'PUBLIC'
                 ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(other)::text) END);
    END LOOP;
    EXECUTE pg_catalog.format('GRANT SELECT, INSERT ON pgmq.%I TO %I', stage, grantee);
    INSERT INTO pgmq.spark_stage (stage_table, queue_name, writer_id, writer_role)
    VALUES (stage, stored, $2, grantee);
    RETURN stage;
END
$fn$;

-- The owner's half of commit and abort: drop a batch write's staging table (and its row),
-- empty a streaming writer's; with batch_id, record it as the writer's last committed.
CREATE FUNCTION pgmq._spark_stage_finish(stage text, batch_id bigint, drop_batch_stage boolean)
RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    entry pgmq.spark_stage := pgmq._spark_stage_entry(stage);
BEGIN
    IF entry.stage_table IS NULL THEN
        RAISE EXCEPTION 'staging table pgmq.% does not exist (already committed or dropped)', stage
            USING ERRCODE = 'PQ004';
    END IF;
    IF pgmq._spark_stage_table(stage, true) IS NULL THEN
        DELETE FROM pgmq.spark_stage s WHERE s.stage_table = stage;  -- its table is gone
        RETURN;
    END IF;
    IF entry.writer_id IS NULL AND drop_batch_stage THEN
        EXECUTE pg_catalog.format('DROP TABLE pgmq.%I', stage);
        DELETE FROM pgmq.spark_stage s WHERE s.stage_table = stage;
    ELSE
        EXECUTE pg_catalog.format('TRUNCATE pgmq.%I', stage);
        IF entry.writer_id IS NOT NULL AND batch_id IS NOT NULL THEN
            INSERT INTO pgmq.spark_sink_batch AS k (queue_name, writer_id, batch_id)
            VALUES (entry.queue_name, entry.writer_id, batch_id)
            ON CONFLICT (queue_name, writer_id)
            DO UPDATE SET batch_id = excluded.batch_id, committed_at = pg_catalog.now();
        END IF;
    END IF;
END
$fn$;

-- Move the rows of the given task attempts from a staging table into its queue, in one
-- transaction (through pgmq.send_batch's checks when the queue has send-side attributes;
-- a row with no vt was given no delay). A batch write's stage is dropped. A streaming
-- writer's stage is emptied, and its batch_id recorded: a batch it already committed is
-- skipped (returns -1), so a replayed micro-batch is written once.
-- The rows go into the queue as the caller (its statement, its triggers); locking the
-- stage's row, emptying or dropping the table and recording the batch are the owner's
-- (pgmq._spark_stage_entry, pgmq._spark_stage_finish).
CREATE FUNCTION pgmq.spark_stage_commit(stage text, attempts bigint[], batch_id bigint DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    entry pgmq.spark_stage;
    moved bigint;
BEGIN
    entry := pgmq._spark_stage_lock(stage);
    IF entry.stage_table IS NULL THEN
        RAISE EXCEPTION 'staging table pgmq.% does not exist (already committed or dropped)', stage
            USING ERRCODE = 'PQ004';
    END IF;
    PERFORM pgmq._spark_stage_table(stage);
    IF entry.writer_id IS NOT NULL AND batch_id IS NOT NULL AND EXISTS (
        SELECT 1 FROM pgmq.spark_sink_batch k
        WHERE k.queue_name::text = entry.queue_name::text AND k.writer_id = entry.writer_id
          AND k.batch_id >= $3
    ) THEN
        PERFORM pgmq._spark_stage_finish(stage, NULL::bigint, false);
        RETURN -1;
    END IF;
    IF pgmq._spark_checked_send(entry.queue_name) THEN
        moved := pgmq._spark_send_staged(entry.queue_name, pg_catalog.format('pgmq.%I', stage)::regclass,
                                         coalesce(attempts, '{}'));
    ELSE
        EXECUTE pg_catalog.format(
            'INSERT INTO pgmq.%I (vt, message, headers) '
            'SELECT coalesce(vt, pg_catalog.clock_timestamp()), message, headers FROM pgmq.%I '
            'WHERE attempt = ANY ($1) ORDER BY part, seq',
            pgmq.format_table_name(entry.queue_name, 'q'::text), stage
        ) USING attempts;
        GET DIAGNOSTICS moved = ROW_COUNT;
    END IF;
    PERFORM pgmq._spark_stage_finish(stage, batch_id, true);
    RETURN moved;
END
$fn$;

-- Lock a staging table's row for its commit (the owner's: FOR UPDATE needs a write right
-- on pgmq.spark_stage); NULL when there is none. Only its role or the owner may.
CREATE FUNCTION pgmq._spark_stage_lock(stage text)
RETURNS pgmq.spark_stage
LANGUAGE sql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
    SELECT pgmq._spark_stage_entry($1::text);
$fn$;

-- Abort: drop a batch write's staging table, empty a streaming writer's. False if unknown.
CREATE FUNCTION pgmq.spark_stage_abort(stage text)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    entry pgmq.spark_stage := pgmq._spark_stage_entry(stage);
BEGIN
    IF entry.stage_table IS NULL THEN
        RETURN false;
    END IF;
    PERFORM pgmq._spark_stage_finish(stage, NULL::bigint, true);
    RETURN true;
END
$fn$;

-- Drop the staging tables of batch writes started longer ago than older_than: jobs whose
-- driver died between the tasks and commit/abort. Returns how many were dropped. A row
-- naming a table that is not a staging table (pgmq._spark_stage_table) is removed with a
-- warning; that table is never touched. An owner function: any registered application
-- role may (every batch write's driver calls it first), with older_than at least an hour;
-- a shorter one could drop another job's live stage, so it takes manage_queues.
CREATE FUNCTION pgmq.spark_stage_drop_stale(older_than interval)
RETURNS integer
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    stale text;
    dropped integer := 0;
BEGIN
    PERFORM pgmq._require_app_role();
    IF older_than IS NULL OR older_than < interval '1 hour' THEN
        PERFORM pgmq._require_privilege('manage_queues'::text);
    END IF;
    FOR stale IN
        SELECT s.stage_table FROM pgmq.spark_stage s
        WHERE s.writer_id IS NULL AND s.created_at < pg_catalog.now() - older_than
        FOR UPDATE SKIP LOCKED
    LOOP
        BEGIN
            IF pgmq._spark_stage_table(stale, true) IS NOT NULL THEN
                EXECUTE pg_catalog.format('DROP TABLE pgmq.%I', stale);
                dropped := dropped + 1;
            END IF;
        EXCEPTION WHEN SQLSTATE 'PQ004' THEN
            -- Not a staging table: only the catalogue row goes, the table stays.
            RAISE WARNING 'pgmq.spark_stage_drop_stale: %; its row of pgmq.spark_stage is removed, '
                'the table is left alone', SQLERRM;
        END;
        DELETE FROM pgmq.spark_stage s WHERE s.stage_table = stale;
    END LOOP;
    RETURN dropped;
END
$fn$;

-- The pipeline jobs' bookkeeping (pgmq_spark_export, pgmq_spark_stats), through owner
-- functions any registered application role may call: a run row decides what a later
-- export removes from the archive (cutoff, max_msg_id), so only these functions write
-- it, from the clock and the archive itself, never from a caller's values.

-- Start an export run for (queue, path): rows archived more than older_than seconds ago
-- with msg_id up to the archive's current highest.
CREATE FUNCTION pgmq._spark_export_run(queue_name text, path text, older_than double precision)
RETURNS TABLE(run_id uuid, cutoff timestamptz, max_msg_id bigint, exported bigint, stage text)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
#variable_conflict use_column
DECLARE
    stored text;
    top bigint;
BEGIN
    PERFORM pgmq._require_app_role();
    stored := pgmq._require_queue(queue_name);
    IF path IS NULL OR older_than IS NULL OR older_than < 0 THEN
        RAISE EXCEPTION 'queue "%": an export needs a path and older_than of 0 or more', stored
            USING ERRCODE = 'PQ004';
    END IF;
    EXECUTE pg_catalog.format('SELECT coalesce(pg_catalog.max(a.msg_id), 0) FROM pgmq.%I a',
                              pgmq.format_table_name(stored, 'a'::text)) INTO top;
    RETURN QUERY
        INSERT INTO pgmq.spark_export_run AS r (run_id, queue_name, path, cutoff, max_msg_id)
        VALUES (pg_catalog.gen_random_uuid(), $1, $2,
                pg_catalog.now() - pg_catalog.make_interval(secs => $3), top)
        RETURNING r.run_id, r.cutoff, r.max_msg_id, r.exported, r.stage;
END
$fn$;

-- Move an export run to its next stage, with the counts so far.
CREATE FUNCTION pgmq._spark_export_set_stage(run_id uuid, stage text, exported bigint, removed bigint)
RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
    PERFORM pgmq._require_app_role();
    UPDATE pgmq.spark_export_run r
    SET stage = $2, exported = coalesce($3, r.exported), removed = coalesce($4, r.removed),
        finished_at = CASE WHEN $2 = 'done' THEN pg_catalog.now() END
    WHERE r.run_id = $1;
END
$fn$;

-- Store one queue-minute of archive statistics (the admin's charts read them).
CREATE FUNCTION pgmq._spark_stats_upsert(queue_name text, minute timestamptz, archived bigint,
                                         p50 double precision, p95 double precision,
                                         p99 double precision, retries bigint)
RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
    PERFORM pgmq._require_app_role();  -- no queue check: statistics outlive a dropped queue
    INSERT INTO pgmq.spark_stats AS s
        (queue_name, minute, archived, wait_p50, wait_p95, wait_p99, retries, computed_at)
    VALUES ($1, $2, $3, $4, $5, $6, $7, pg_catalog.now())
    ON CONFLICT ON CONSTRAINT spark_stats_pkey DO UPDATE
    SET archived = excluded.archived, wait_p50 = excluded.wait_p50, wait_p95 = excluded.wait_p95,
        wait_p99 = excluded.wait_p99, retries = excluded.retries, computed_at = excluded.computed_at;
END
$fn$;
