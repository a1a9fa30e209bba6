-- Every named statement django-pgmq's Python sends (django_pgmq/sqlrun.py registers
-- them): first the queue manager's (django_pgmq/manager/) and the internal layer's
-- (django_pgmq/internal/), then, each in its section, the Celery transport's, the Spark
-- source's and the Tasks backend's. Each starts with "-- name: <name>" (named after the
-- SQL function it calls); parameters are psycopg's %(name)s. A comment after a
-- statement belongs to what follows it, not to the statement.

-- name: create
SELECT pgmq.create(queue_name => %(queue)s);

-- name: create_unlogged
SELECT pgmq.create_unlogged(queue_name => %(queue)s);

-- name: drop_queue
SELECT pgmq.drop_queue(queue_name => %(queue)s);

-- name: purge_queue
SELECT pgmq.purge_queue(queue_name => %(queue)s);

-- name: list_queues
SELECT queue_name, is_partitioned, is_unlogged, created_at FROM pgmq.list_queues();

-- name: send
SELECT * FROM pgmq.send(
    queue_name => %(queue)s, msg => %(msg)s::jsonb, headers => %(headers)s::jsonb,
    delay => %(delay)s::integer);

-- name: send_at
SELECT * FROM pgmq.send(
    queue_name => %(queue)s, msg => %(msg)s::jsonb, headers => %(headers)s::jsonb,
    delay => %(delay)s::timestamptz);

-- name: send_batch
SELECT * FROM pgmq.send_batch(
    queue_name => %(queue)s, msgs => %(msgs)s::jsonb[], headers => %(headers)s::jsonb[],
    delay => %(delay)s::integer);

-- name: send_batch_at
SELECT * FROM pgmq.send_batch(
    queue_name => %(queue)s, msgs => %(msgs)s::jsonb[], headers => %(headers)s::jsonb[],
    delay => %(delay)s::timestamptz);

-- name: read
SELECT msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers
FROM pgmq.read(queue_name => %(queue)s, vt => %(vt)s, qty => %(qty)s,
               conditional => %(conditional)s::jsonb);

-- name: read_with_poll
SELECT msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers
FROM pgmq.read_with_poll(queue_name => %(queue)s, vt => %(vt)s, qty => %(qty)s,
                         max_poll_seconds => %(max_poll_seconds)s,
                         poll_interval_ms => %(poll_interval_ms)s,
                         conditional => %(conditional)s::jsonb);

-- name: pop
SELECT msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers
FROM pgmq.pop(queue_name => %(queue)s, qty => %(qty)s);

-- name: queue_ops_client_sql
-- The queue's own statement of read (r), pop (p), archive (a), delete (d) or send (s) at
-- quantity qty, which the manager prepares on its connection when psycopg's prepared
-- statements are on (sqlrun.kept_rows); NULL for an op or qty it does not take.
SELECT pgmq._queue_ops_client_sql(%(queue)s, %(op)s, %(qty)s);

-- name: queue_attributes
-- Whether the queue has attributes (pgmq._queue_attributes): after the queue's own
-- statement came back empty, whether its guard stopped it.
SELECT pgmq._queue_attributes(%(queue)s) IS NOT NULL;

-- name: archive
SELECT * FROM pgmq.archive(queue_name => %(queue)s, msg_ids => %(ids)s::bigint[]);

-- name: delete
SELECT * FROM pgmq.delete(queue_name => %(queue)s, msg_ids => %(ids)s::bigint[]);

-- name: set_vt
SELECT msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers
FROM pgmq.set_vt(queue_name => %(queue)s, msg_ids => %(ids)s::bigint[], vt => %(vt)s::integer);

-- name: set_vt_at
SELECT msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers
FROM pgmq.set_vt(queue_name => %(queue)s, msg_ids => %(ids)s::bigint[],
                 vt => %(vt)s::timestamptz);

-- name: metrics
SELECT * FROM pgmq.metrics(queue_name => %(queue)s);

-- name: metrics_all
SELECT * FROM pgmq.metrics_all();

-- name: archive_count
-- Rows in a queue's archive. The table name is composed in with psycopg.sql.
SELECT pg_catalog.count(*) FROM pgmq.{archive};

-- name: dashboard_all_stats
-- Admin dashboard (sql/90_dashboard.sql): figures of every queue, estimated past exact_limit.
SELECT * FROM pgmq._dashboard_all_stats(
    exact_limit => %(exact_limit)s::bigint, max_receive_count => %(max_receive_count)s::jsonb);

-- name: dashboard_stats_of
-- Admin overview and queue sampler: figures of the named queues only, in their order.
SELECT * FROM pgmq._dashboard_stats_of(
    names => %(names)s::text[], exact_limit => %(exact_limit)s::bigint,
    max_receive_count => %(max_receive_count)s::jsonb);

-- name: dashboard_idle_queues
-- Queue sampler: which of the named queues hold no page at all (their figures are zeros).
SELECT queue_name, idle FROM pgmq._dashboard_idle_queues(names => %(names)s::text[]);

-- name: dashboard_record_samples
-- Queue sampler: one QueueSample row per queue ({sample} is its table) from parallel
-- arrays, in one statement; the oldest message's send time is now() minus its age.
-- Returns how many it wrote. The columns keep their first names (depth, visible,
-- in_flight, delayed: the model's queue_length, queue_visible_length, in_flight_length and
-- delayed_length).
WITH written AS (
INSERT INTO {sample}
    (queue, sampled_at, depth, visible, in_flight, delayed, archive_size, total_messages,
     oldest_enqueued_at)
SELECT s.queue, pg_catalog.now(), s.queue_length, s.queue_visible_length, s.in_flight_length,
       s.delayed_length, s.archive_size, s.total_messages,
       pg_catalog.now() - pg_catalog.make_interval(secs => s.oldest_msg_age_sec)
FROM unnest(%(queues)s::text[], %(queue_lengths)s::bigint[],
            %(queue_visible_lengths)s::bigint[], %(in_flight_lengths)s::bigint[],
            %(delayed_lengths)s::bigint[], %(archive_sizes)s::bigint[], %(totals)s::bigint[],
            %(oldest_ages)s::integer[])
    AS s(queue, queue_length, queue_visible_length, in_flight_length, delayed_length,
         archive_size, total_messages, oldest_msg_age_sec)
RETURNING 1
)
SELECT pg_catalog.count(*) FROM written;

-- name: dashboard_claim_sampler
-- Elects the one sampler of a database for this round: held until the caller's
-- transaction ends; false when another worker (or pgmq_maintain) holds it.
SELECT pg_catalog.pg_try_advisory_xact_lock(pg_catalog.hashtext('django_pgmq.queue_sampler'));

-- name: paused_queues
-- Queues whose "paused" attribute is set (sql/25_attributes.sql): reads return nothing.
SELECT queue_name::text FROM pgmq.queue_attributes WHERE attributes -> 'paused' = 'true'::jsonb;

-- name: redrive_attributes
-- Admin overview: each queue's own max_receive_count and dead_letter_queue attributes
-- (NULL where unset); they rank above QueueConfig and the defaults, as in the worker.
SELECT a.queue_name::text AS queue_name,
       (a.attributes ->> 'max_receive_count')::integer AS max_receive_count,
       (a.attributes ->> 'dead_letter_queue')::text AS dead_letter_queue
FROM pgmq.queue_attributes a;

-- name: dashboard_queue_stats
SELECT * FROM pgmq._dashboard_queue_stats(
    queue_name => %(queue)s, exact_limit => %(exact_limit)s::bigint,
    max_receive_count => %(max_receive_count)s::integer);

-- name: dashboard_throughput
SELECT bucket_start, archived, p50_sec, p95_sec, p99_sec, truncated, latency_truncated
FROM pgmq._dashboard_throughput(
    queue_name => %(queue)s, window_size => %(window)s::interval,
    bucket_size => %(bucket)s::interval, row_limit => %(row_limit)s::bigint,
    latency_limit => %(latency_limit)s::bigint);

-- name: browse_messages
SELECT msg_id, read_ct, enqueued_at, last_read_at, vt, archived_at, message, headers
FROM pgmq._browse_messages(
    queue_name => %(queue)s, from_archive => %(from_archive)s::boolean,
    newest_first => %(newest_first)s::boolean, min_read_ct => %(min_read_ct)s::integer,
    header_key => %(header_key)s::text, header_value => %(header_value)s::text,
    contains => %(contains)s::jsonb, after_id => %(after_id)s::bigint,
    before_id => %(before_id)s::bigint, page_size => %(page_size)s::integer);

-- name: dashboard_requeue
SELECT * FROM pgmq._dashboard_requeue(
    source_queue => %(source)s, target_queue => %(target)s, msg_ids => %(ids)s::bigint[],
    from_archive => %(from_archive)s::boolean);

-- name: dashboard_match_count
-- Admin bulk actions (sql/92_dashboard_bulk.sql): how many match, and the last id.
SELECT matched, last_id FROM pgmq._dashboard_match_count(
    queue_name => %(queue)s, from_archive => %(from_archive)s::boolean,
    min_read_ct => %(min_read_ct)s::integer, header_key => %(header_key)s::text,
    header_value => %(header_value)s::text, contains => %(contains)s::jsonb);

-- name: dashboard_match_batch
SELECT * FROM pgmq._dashboard_match_batch(
    queue_name => %(queue)s, from_archive => %(from_archive)s::boolean,
    min_read_ct => %(min_read_ct)s::integer, header_key => %(header_key)s::text,
    header_value => %(header_value)s::text, contains => %(contains)s::jsonb,
    after_id => %(after_id)s::bigint, up_to_id => %(up_to_id)s::bigint,
    max_rows => %(max_rows)s::integer);

-- name: hide_failed
-- Worker (sql/71_worker_failures.sql): hide a failed message for its retry backoff, the
-- error kept in the headers. Statement, SQL function and Python method share the name.
SELECT pgmq._hide_failed(
    queue_name => %(queue)s, msg_id => %(id)s::bigint,
    seconds => %(seconds)s::double precision, error => %(error)s::text);

-- name: set_vt_seconds
-- Worker (sql/70_worker.sql): heartbeat and release, in fractional seconds (a failed
-- message's retry backoff is hide_failed).
SELECT * FROM pgmq._set_vt_seconds(
    queue_name => %(queue)s, msg_ids => %(ids)s::bigint[],
    seconds => %(seconds)s::double precision, unread => %(unread)s::boolean);

-- name: dead_letter
SELECT pgmq._dead_letter(
    queue_name => %(queue)s, msg_id => %(id)s::bigint,
    dead_letter_queue => %(dlq)s, error => %(error)s::text);

-- name: enable_notify_insert
SELECT pgmq.enable_notify_insert(
    queue_name => %(queue)s, throttle_interval_ms => %(throttle)s::integer);

-- name: rearm_notify
-- The worker found the queue empty: the next insert notifies at once, whatever the
-- throttle window (sql/40_notify.sql), so an idle worker is not left waiting it out.
-- Writes only when a notification was sent since the last re-arm (the owner's helper:
-- the worker's role has no write right on pgmq.notify_insert_throttle).
SELECT pgmq._rearm_notify(queue_name => %(queue)s::text);

-- name: listen
-- {channel}: a notification channel, quoted by psycopg.sql.Identifier (the listeners:
-- the worker's, Celery's).
LISTEN {channel};

-- name: unlisten
UNLISTEN {channel};

-- name: worker_listener_probe
-- The worker's listener notifies itself to check that notifications still arrive.
SELECT pg_catalog.pg_notify(%(channel)s, '');

-- name: disable_notify_insert
SELECT pgmq.disable_notify_insert(queue_name => %(queue)s);

-- name: lock_messages
-- The worker locks the messages of its atomic handlers (in msg_id order: no deadlocks).
SELECT msg_id FROM pgmq.{queue} WHERE msg_id = ANY(%(ids)s::bigint[]) ORDER BY msg_id FOR UPDATE;

-- name: acknowledge_and_read_archive
-- The worker acknowledges a batch and reads the next in one round trip. The read's
-- qty is a subquery over the archive, so the archive runs first, exactly once.
SELECT msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers
FROM pgmq.read(
    queue_name => %(queue)s, vt => %(vt)s::integer,
    qty => (SELECT CASE WHEN pg_catalog.count(*) >= 0 THEN %(qty)s::integer END
            FROM pgmq.archive(queue_name => %(queue)s, msg_ids => %(ids)s::bigint[])));

-- name: acknowledge_and_read_delete
SELECT msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers
FROM pgmq.read(
    queue_name => %(queue)s, vt => %(vt)s::integer,
    qty => (SELECT CASE WHEN pg_catalog.count(*) >= 0 THEN %(qty)s::integer END
            FROM pgmq.delete(queue_name => %(queue)s, msg_ids => %(ids)s::bigint[])));

-- name: list_notify_insert_throttles
-- Notifications, FIFO groups, topics and partitions.
SELECT queue_name, throttle_interval_ms, last_notified_at FROM pgmq.list_notify_insert_throttles();

-- name: update_notify_insert
SELECT pgmq.update_notify_insert(
    queue_name => %(queue)s, throttle_interval_ms => %(throttle)s::integer);

-- name: require_queue
-- The queue's name as pgmq.meta keeps it (its notify channel uses that spelling).
SELECT pgmq._require_queue(queue_name => %(queue)s);

-- name: read_grouped
-- {function} is read_grouped, read_grouped_rr or read_grouped_head.
SELECT msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers
FROM pgmq.{function}(queue_name => %(queue)s, vt => %(vt)s, qty => %(qty)s);

-- name: read_grouped_with_poll
SELECT msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers
FROM pgmq.{function}(queue_name => %(queue)s, vt => %(vt)s, qty => %(qty)s,
                     max_poll_seconds => %(max_poll_seconds)s,
                     poll_interval_ms => %(poll_interval_ms)s);

-- name: bind_topic
SELECT pgmq.bind_topic(pattern => %(pattern)s, queue_name => %(queue)s);

-- name: unbind_topic
SELECT pgmq.unbind_topic(pattern => %(pattern)s, queue_name => %(queue)s);

-- name: send_topic
SELECT pgmq.send_topic(
    routing_key => %(key)s, msg => %(msg)s::jsonb, headers => %(headers)s::jsonb,
    delay => %(delay)s::integer);

-- name: send_batch_topic
SELECT queue_name, msg_id FROM pgmq.send_batch_topic(
    routing_key => %(key)s, msgs => %(msgs)s::jsonb[], headers => %(headers)s::jsonb[],
    delay => %(delay)s::integer);

-- name: send_batch_topic_at
SELECT queue_name, msg_id FROM pgmq.send_batch_topic(
    routing_key => %(key)s, msgs => %(msgs)s::jsonb[], headers => %(headers)s::jsonb[],
    delay => %(delay)s::timestamptz);

-- name: list_topic_bindings
SELECT pattern, queue_name, bound_at, compiled_regex FROM pgmq.list_topic_bindings();

-- name: list_queue_topic_bindings
SELECT pattern, queue_name, bound_at, compiled_regex
FROM pgmq.list_topic_bindings(queue_name => %(queue)s);

-- name: test_routing
SELECT pattern, queue_name, compiled_regex FROM pgmq.test_routing(routing_key => %(key)s);

-- name: create_partitioned
SELECT pgmq.create_partitioned(
    queue_name => %(queue)s, partition_interval => %(partition_interval)s::text,
    retention_interval => %(retention_interval)s::text, premake => %(premake)s::integer);

-- name: convert_archive_partitioned
SELECT pgmq.convert_archive_partitioned(
    table_name => %(queue)s, partition_interval => %(partition_interval)s::text,
    retention_interval => %(retention_interval)s::text,
    leading_partition => %(premake)s::integer);

-- name: partitioned_queues
SELECT DISTINCT queue_name FROM pgmq.partition_config ORDER BY 1;

-- name: maintain_partitions
SELECT queue, partitioned_table, action, partition_name, range_start, range_end, rows_moved
FROM pgmq.maintain_partitions(queue_name => %(queue)s);

-- name: set_local_lock_timeout
-- For the rest of the transaction: give up on a lock after this long (e.g. '5s').
SELECT pg_catalog.set_config('lock_timeout', %(timeout)s, true);

-- name: list_partitions
SELECT partitioned_table, partition_name, range_start, range_end, is_default
FROM pgmq.list_partitions(queue_name => %(queue)s);


-- name: dashboard_spark_stats
-- Admin dashboard (sql/91_dashboard_stats.sql): long-range charts from pgmq.spark_stats.
SELECT bucket_start, archived, p50_sec, p95_sec, p99_sec, retries, last_minute
FROM pgmq._dashboard_spark_stats(
    queue_name => %(queue)s, window_size => %(window)s::interval,
    bucket_size => %(bucket)s::interval);

-- name: prometheus_scrape
-- Prometheus endpoint (dashboard/prometheus.py): every queue's dashboard figures (the
-- admin's, from the one source pgmq._queue_figures, bounded by exact_limit), its
-- dead-letter queue and live workers, and the live workers in all, in one statement per
-- scrape. {config} and {worker} are the QueueConfig and Worker tables. Poison counts
-- against each queue's max_receive_count (its own attribute, else QueueConfig's, whose
-- column keeps the name max_reads; default_max_receive_count with neither), dead-letter
-- queues excepted, as the admin does; the dead-letter queue likewise, else
-- <queue><dead_letter_suffix> (names.py). Always one row at least: with no queue, its
-- queue columns are NULL.
WITH queues AS (
    SELECT m.queue_name::text AS queue_name,
           coalesce((a.attributes ->> 'max_receive_count')::integer, c.max_reads,
                    %(default_max_receive_count)s::integer) AS max_receive_count,
           coalesce(nullif(a.attributes ->> 'dead_letter_queue', ''), nullif(c.dead_letter_queue, ''),
                    m.queue_name::text || %(dead_letter_suffix)s::text)::text AS dead_letter
    FROM pgmq.meta m LEFT JOIN {config} c ON c.queue = m.queue_name::text
    LEFT JOIN pgmq.queue_attributes a ON a.queue_name::text = m.queue_name::text
), limits AS (
    SELECT coalesce(pg_catalog.jsonb_object_agg(q.queue_name::text, q.max_receive_count), pg_catalog.jsonb_build_object())
           AS max_receive_count
    FROM queues q
    WHERE q.max_receive_count > 0 AND q.queue_name::text NOT IN (SELECT dead_letter FROM queues)
), live AS (
    SELECT w.queues FROM {worker} w WHERE w.expires_at > pg_catalog.now()
), consumers AS (
    SELECT name AS queue_name, pg_catalog.count(*) AS workers
    FROM live, pg_catalog.jsonb_array_elements_text(live.queues) AS name
    GROUP BY name
)
SELECT s.*, q.dead_letter, coalesce(c.workers, 0) AS workers,
       (SELECT pg_catalog.count(*) FROM live) AS live_workers
FROM (SELECT 1) AS one
LEFT JOIN (
    SELECT s.* FROM limits,
        pgmq._dashboard_all_stats(exact_limit => %(exact_limit)s::bigint,
                                  max_receive_count => limits.max_receive_count) s
) s ON true
LEFT JOIN queues q ON q.queue_name::text = s.queue_name::text
LEFT JOIN consumers c ON c.queue_name::text = s.queue_name::text;

-- name: get_queue_attributes
SELECT pgmq.get_queue_attributes(queue_name => %(queue)s);

-- name: set_queue_attributes
SELECT pgmq.set_queue_attributes(queue_name => %(queue)s, attributes => %(attributes)s::jsonb);

-- name: enforce_retention
SELECT queue_name, expired, archive_deleted FROM pgmq.enforce_retention(queue_name => %(queue)s);

-- name: redrive
SELECT source_queue, moved, skipped FROM pgmq.redrive(
    dead_letter_queue => %(queue)s, conditional => %(conditional)s::jsonb,
    max_messages => %(limit)s::integer);

-- name: queue_limits
SELECT * FROM pgmq.queue_limits(queue_name => %(queue)s);

-- name: dead_letter_sources
SELECT a.queue_name::text FROM pgmq.queue_attributes a
WHERE pg_catalog.lower(a.attributes ->> 'dead_letter_queue') = pg_catalog.lower(%(queue)s)
ORDER BY a.queue_name;

-- name: grant_app_role
SELECT pgmq.grant_app_role(role => %(role)s, create_queues => %(create_queues)s,
                           tables => %(tables)s::regclass[], manage_queues => %(manage_queues)s);

-- name: revoke_app_role
SELECT pgmq.revoke_app_role(role => %(role)s, tables => %(tables)s::regclass[]);

-- name: retention_queues
SELECT queue_name, reported FROM pgmq._retention_queues(only_queue => %(queue)s);

-- name: retention_batch
SELECT expired, archive_deleted FROM pgmq._retention_batch(
    queue_name => %(queue)s, batch_size => %(batch_size)s);

-- name: create_fifo_index
SELECT pgmq.create_fifo_index(queue_name => %(queue)s);

-- name: defer_index_builds
-- For the rest of the transaction: pgmq._want_queue_index records the wish, never builds
-- in it (a build's SHARE lock would hold the queue's writers until the commit).
SELECT pg_catalog.set_config('pgmq.defer_index_builds', 'on', true);

-- Schedules (sql/65_schedules.sql; manager/schedule_ops.py) ---------------------------

-- name: create_schedule
SELECT pgmq.create_schedule(
    schedule_name => %(name)s, cron => %(cron)s, queue_name => %(queue)s,
    message => %(message)s::jsonb, headers => %(headers)s::jsonb, time_zone => %(time_zone)s,
    catch_up => %(catch_up)s::interval, enabled => %(enabled)s);

-- name: drop_schedule
SELECT pgmq.drop_schedule(schedule_name => %(name)s);

-- name: enable_schedule
SELECT pgmq.enable_schedule(schedule_name => %(name)s, enabled => %(enabled)s);

-- name: run_schedule_now
SELECT pgmq.run_schedule_now(schedule_name => %(name)s);

-- name: list_schedules
SELECT l.schedule_name, l.cron, l.time_zone, l.queue_name, l.message, l.headers, l.catch_up,
       l.enabled, l.last_tick, l.next_tick, s.skipped, s.origin
FROM pgmq.list_schedules() l JOIN pgmq.schedules s USING (schedule_name);

-- name: next_ticks
SELECT t FROM pgmq.next_ticks(
    cron => %(cron)s, time_zone => %(time_zone)s, after => %(after)s::timestamptz, n => %(n)s) t;

-- name: enqueue_due_schedules
SELECT schedule_name, queue_name, tick, msg_id
FROM pgmq.enqueue_due_schedules(at => coalesce(%(at)s::timestamptz, pg_catalog.now()));

-- name: schedule_ticks
SELECT tick, queue_name, msg_id, error, sent_at FROM pgmq.schedule_ticks
WHERE schedule_name = %(name)s ORDER BY tick DESC LIMIT %(limit)s;

-- name: set_schedule_origin
-- Who declared these schedules: 'settings' (PGMQ["SCHEDULES"]) or NULL (anyone else).
SELECT s FROM pgmq.set_schedule_origin(%(names)s::text[], %(origin)s::text) s;

-- name: settings_schedule_names
SELECT schedule_name FROM pgmq.schedules WHERE origin = 'settings' ORDER BY schedule_name;

-- name: schedules_installed
-- The schedule API this code syncs through (set_schedule_origin came with 0045): a
-- database migrated back before it is left alone by the settings sync.
SELECT EXISTS (SELECT FROM pg_catalog.pg_proc p
               JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
               WHERE n.nspname = 'pgmq' AND p.proname = 'set_schedule_origin');

-- name: refuse_foreign_schema
-- Migrate's pre-flight (django_pgmq/schema_guard.py): catalogue reads only, so they run
-- before the schema exists. Whether the pgmq extension is installed, whether a schema
-- pgmq exists, and its comment (ours carries migration 0001's).
SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_extension WHERE extname = 'pgmq') AS has_extension,
       pg_catalog.to_regnamespace('pgmq') IS NOT NULL AS has_schema,
       coalesce(pg_catalog.obj_description(pg_catalog.to_regnamespace('pgmq'), 'pg_namespace'), '') AS comment;

-- name: queue_attributes_installed
SELECT pg_catalog.to_regclass('pgmq.queue_attributes') IS NOT NULL;

-- name: queues_with_attributes
-- The queues a downgrade past 0013 would take the attributes of (run only once
-- queue_attributes_installed said the table is there).
SELECT coalesce(pg_catalog.array_agg(a.queue_name::text ORDER BY a.queue_name), '{}')
FROM pgmq.queue_attributes a;

-- ==== The Celery transport ==================================================
-- Named statements of the Celery transport (django_pgmq/contrib/celery).
-- The pgmq API statements it shares with the queue manager are above;
-- the functions called here are installed by 80_celery.sql.

-- name: celery_open_session
SELECT pgmq.celery_open_session();

-- name: celery_declare_queue
SELECT pgmq.celery_declare_queue(
    queue => %(queue)s, original_name => %(celery_name)s, durable => %(durable)s,
    is_auto_delete => %(auto_delete)s, expires_ms => %(expires_ms)s::bigint,
    ttl_ms => %(ttl_ms)s::bigint);

-- name: celery_enable_priorities
SELECT pgmq.celery_enable_priorities(queue => %(queue)s::text);

-- name: celery_queue_exists
SELECT EXISTS (SELECT 1 FROM pgmq.meta m WHERE m.queue_name::text = %(queue)s);

-- name: celery_queue_length
SELECT queue_visible_length FROM pgmq.metrics(queue_name => %(queue)s);

-- name: celery_consumer_count
SELECT pg_catalog.count(*) FROM pgmq.celery_consumer k
WHERE k.queue_name::text = %(queue)s AND pgmq._celery_session_alive(k.session_id);

-- name: celery_delete_queue
-- NULL: not a queue the transport created (drop_queue it, as the caller's rights allow).
SELECT pgmq.celery_delete_queue(queue => %(queue)s::text);

-- name: celery_send
SELECT pgmq.celery_send(
    queue => %(queue)s, msg => %(msg)s::jsonb, headers => %(headers)s::jsonb,
    deliver_at => %(deliver_at)s::timestamptz, notify => %(notify)s);

-- name: celery_publish
SELECT pgmq.celery_publish(
    exchange => %(exchange)s, routing_key => %(routing_key)s, msg => %(msg)s::jsonb,
    headers => %(headers)s::jsonb, deliver_at => %(deliver_at)s::timestamptz,
    notify => %(notify)s);

-- name: celery_bind
SELECT pgmq.celery_bind(
    exchange => %(exchange)s, exchange_type => %(exchange_type)s,
    routing_key => %(routing_key)s, queue => %(queue)s);

-- name: celery_unbind
SELECT pgmq.celery_unbind(
    exchange => %(exchange)s, routing_key => %(routing_key)s, queue => %(queue)s);

-- name: celery_delete_exchange
SELECT pgmq.celery_delete_exchange(exchange => %(exchange)s);

-- name: celery_read
SELECT msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers
FROM pgmq.celery_read(queue => %(queue)s, vt => %(vt)s, qty => %(qty)s);

-- name: celery_pop
SELECT msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers
FROM pgmq.celery_pop(queue => %(queue)s, qty => %(qty)s);

-- name: celery_ack
SELECT pgmq.celery_ack(
    queue => %(queue)s, msg_ids => %(ids)s::bigint[], archive => %(archive)s);

-- name: celery_release
SELECT pgmq.celery_release(
    queue => %(queue)s, msg_ids => %(ids)s::bigint[], notify => %(notify)s);

-- name: celery_extend
SELECT pgmq.celery_extend(
    queue => %(queue)s, msg_ids => %(ids)s::bigint[], vt => %(vt)s);

-- name: celery_next_visible
SELECT extract(epoch FROM pgmq.celery_next_visible(queues => %(queues)s::text[]) - pg_catalog.clock_timestamp());

-- name: celery_consume
SELECT pgmq.celery_consume(queue => %(queue)s, session => %(session)s);

-- name: celery_cancel
SELECT pgmq.celery_cancel(queue => %(queue)s, session => %(session)s);

-- name: celery_cleanup
SELECT pgmq.celery_cleanup();

-- ==== The Spark data source =================================================
-- Named statements of the Spark data source and pipeline (django_pgmq/contrib/spark).
-- Slots in braces are filled by psycopg.sql (identifiers, literals, composed lists),
-- never by string gluing. COPY cannot take parameters, so its values come in as
-- psycopg.sql.Literal.

-- name: spark_checked_send
-- A writing task's time, and whether its rows must go through pgmq.send_batch's checks.
SELECT pg_catalog.now() AS now, pgmq._spark_checked_send(%(queue)s) AS checked;

-- name: temp_stage
-- A task's rows bound for a queue with send-side attributes (see send_staged).
CREATE TEMP TABLE pgmq_spark_rows (
    part integer NOT NULL, attempt bigint NOT NULL, seq bigint GENERATED ALWAYS AS IDENTITY,
    vt timestamptz, message jsonb, headers jsonb
) ON COMMIT DROP;

-- name: spark_send_staged
SELECT pgmq._spark_send_staged(%(queue)s, %(stage)s::regclass, NULL);

-- name: utc_session
SET LOCAL TIME ZONE 'UTC';

-- name: msg_id_bounds
SELECT pg_catalog.min(msg_id) AS lo, pg_catalog.max(msg_id) AS hi FROM {table} WHERE {where};

-- name: max_msg_id
SELECT coalesce(pg_catalog.max(msg_id), 0) FROM {table};

-- name: copy_out
COPY (SELECT {columns} FROM {table} WHERE {where} ORDER BY msg_id) TO STDOUT (FORMAT csv);

-- name: copy_out_claimed
COPY (
    SELECT {columns} FROM {table} q
    JOIN pgmq.spark_stream_batch b
      ON b.queue_name::text = {queue} AND b.consumer = {consumer}
     AND b.batch > {after} AND b.batch <= {upto}
     AND q.msg_id = ANY (b.msg_ids) AND q.last_read_at = b.claimed_at
    WHERE q.msg_id = ANY ({ids})
    ORDER BY q.msg_id
) TO STDOUT (FORMAT csv);

-- name: epoch_us
(extract(epoch FROM {column}) * 1000000)::bigint

-- name: copy_in
COPY {table} ({columns}) FROM STDIN (FORMAT csv);

-- name: stream_initial
SELECT coalesce(pg_catalog.max(batch), 0) FROM pgmq.spark_stream_batch
WHERE queue_name = %(queue)s AND consumer = %(consumer)s AND acked_at IS NOT NULL;

-- name: stream_pending
SELECT pg_catalog.max(batch) FROM pgmq.spark_stream_batch
WHERE queue_name = %(queue)s AND consumer = %(consumer)s AND batch > %(after)s
  AND acked_at IS NULL;

-- name: stream_batches
SELECT batch, msg_ids FROM pgmq.spark_stream_batch
WHERE queue_name = %(queue)s AND consumer = %(consumer)s
  AND batch > %(after)s AND batch <= %(upto)s
ORDER BY batch;

-- name: spark_claim
SELECT pgmq.spark_claim(%(queue)s, %(consumer)s, %(vt)s, %(qty)s, %(max_msg_id)s, %(min_batch)s);

-- name: spark_hold
SELECT pgmq.spark_hold(%(queue)s, %(consumer)s, %(after)s, %(upto)s, %(vt)s);

-- name: spark_ack
SELECT pgmq.spark_ack(%(queue)s, %(consumer)s, %(upto)s, %(mode)s);

-- name: consumer_try_lock
SELECT pg_catalog.pg_try_advisory_lock(pg_catalog.hashtext('pgmq.spark.run.' || pg_catalog.lower(%(queue)s) || '.' || %(consumer)s));

-- name: spark_stage_create
SELECT pgmq.spark_stage_create(%(queue)s, %(writer_id)s);

-- name: spark_stage_commit
SELECT pgmq.spark_stage_commit(%(stage)s, %(attempts)s::bigint[], %(batch_id)s);

-- name: spark_stage_abort
SELECT pgmq.spark_stage_abort(%(stage)s);

-- name: spark_stage_drop_stale
SELECT pgmq.spark_stage_drop_stale(pg_catalog.make_interval(hours => %(hours)s));

-- name: export_open_run
SELECT run_id, cutoff, max_msg_id, exported, stage FROM pgmq.spark_export_run
WHERE queue_name = %(queue)s AND path = %(path)s AND stage <> 'done'
ORDER BY created_at LIMIT 1;

-- name: spark_export_run
SELECT r.run_id, r.cutoff, r.max_msg_id, r.exported, r.stage
FROM pgmq._spark_export_run(%(queue)s::text, %(path)s::text, %(older_than)s::double precision) r;

-- name: spark_export_set_stage
SELECT pgmq._spark_export_set_stage(
    %(run_id)s::uuid, %(stage)s::text, %(exported)s::bigint, %(removed)s::bigint);

-- name: export_remove
DELETE FROM {table} WHERE archived_at < %(cutoff)s AND msg_id <= %(max_msg_id)s;

-- name: stats_since
SELECT pg_catalog.max(minute) FROM pgmq.spark_stats WHERE queue_name = %(queue)s;

-- name: spark_stats_upsert
SELECT pgmq._spark_stats_upsert(
    %(queue)s::text, %(minute)s::timestamptz, %(archived)s::bigint, %(p50)s::double precision,
    %(p95)s::double precision, %(p99)s::double precision, %(retries)s::bigint);

-- ==== The Django Tasks backend ==============================================
-- Named statements of the Django Tasks backend (django_pgmq/internal/task_ops.py);
-- the functions are in sql/75_tasks.sql.

-- name: enable_task_queue
SELECT pgmq._enable_task_queue(queue_name => %(queue)s);

-- name: read_by_priority
SELECT msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers
FROM pgmq._read_by_priority(queue_name => %(queue)s, vt => %(vt)s::integer, qty => %(qty)s::integer);

-- name: read_by_priority_async_commit
-- read_by_priority whose commit does not wait for its WAL flush: the Tasks backend's
-- OPTIONS "synchronous_commit": False, run only in autocommit (the statement is its own
-- transaction). set_config(..., true) is SET LOCAL: this transaction only. The
-- uncorrelated sub-select is a one-time filter, run before the read, whatever it returns.
SELECT msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers
FROM pgmq._read_by_priority(queue_name => %(queue)s, vt => %(vt)s::integer, qty => %(qty)s::integer)
WHERE (SELECT pg_catalog.set_config('synchronous_commit', 'off', true)) IS NOT NULL;

-- name: task_enqueue
-- enqueue: the task's message and its result row in one call, on the caller's connection
-- (so in the caller's transaction). Returns the msg_id.
SELECT pgmq._task_enqueue(
    %(queue)s, %(msg)s::jsonb, %(headers)s::jsonb, %(delay)s::timestamptz, %(id)s::uuid,
    %(backend)s, %(task_path)s, %(priority)s::integer, %(args)s::jsonb, %(kwargs)s::jsonb,
    %(run_after)s::timestamptz, %(enqueued_at)s::timestamptz, %(max_attempts)s::integer);

-- name: task_finish_and_start
-- The worker: a finished task's verdict and its message's delete, and/or the next task's
-- result RUNNING (its row back; none when it was not READY). Either half may be NULL.
SELECT * FROM pgmq._task_finish_and_start(
    %(queue)s, %(done_id)s::uuid, %(done_msg_id)s::bigint, %(done_status)s::text,
    %(done_finished_at)s::timestamptz, %(done_return_value)s::jsonb, %(done_errors)s::jsonb,
    %(id)s::uuid, %(now)s::timestamptz, %(worker)s::text);

-- name: task_finish_and_start_async_commit
-- task_finish_and_start whose commit does not wait for its WAL flush (OPTIONS
-- "synchronous_commit": False; autocommit only): SET LOCAL as read_by_priority_async_commit.
SELECT * FROM pgmq._task_finish_and_start(
    %(queue)s, %(done_id)s::uuid, %(done_msg_id)s::bigint, %(done_status)s::text,
    %(done_finished_at)s::timestamptz, %(done_return_value)s::jsonb, %(done_errors)s::jsonb,
    %(id)s::uuid, %(now)s::timestamptz, %(worker)s::text)
WHERE (SELECT pg_catalog.set_config('synchronous_commit', 'off', true)) IS NOT NULL;

-- ==== Isolation of consumers =================================================
-- django_pgmq/isolation.py: consumers read at READ COMMITTED whatever the project's level.

-- name: default_transaction_isolation
-- The level a session's transactions (autocommit statements included) run at by default.
SHOW default_transaction_isolation;

-- name: session_read_committed
-- A consumer's own connection, when the server's default level is higher.
SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL READ COMMITTED;

-- Workflows (sql/55-57_workflow*.sql) -----------------------------------------------

-- name: create_workflow
SELECT pgmq.create_workflow(steps => %(steps)s::jsonb, on_failure => %(on_failure)s::text);

-- name: complete
SELECT pgmq.complete(queue_name => %(queue)s::text, msg_id => %(msg_id)s::bigint, result => %(result)s::jsonb);

-- name: fail
SELECT pgmq.fail(queue_name => %(queue)s::text, msg_id => %(msg_id)s::bigint, error => %(error)s::jsonb);

-- name: workflow_settle
-- The worker records its handler's return value on a workflow step before acknowledging it.
SELECT pgmq._workflow_settle(queue_name => %(queue)s::text, msg_id => %(msg_id)s::bigint,
                             result => %(result)s::jsonb, error => NULL::jsonb);

-- name: workflow_status
SELECT step, queue_name, msg_id, status, result, error, sent_at, finished_at
FROM pgmq.workflow_status(workflow_id => %(workflow_id)s::bigint);

-- name: workflow_graph
-- The admin's page of one workflow: its steps with message, headers and "after".
SELECT step, queue_name, msg_id, status, message, headers, after, result, error, sent_at,
       finished_at
FROM pgmq._workflow_graph(workflow_id => %(workflow_id)s::bigint);

-- name: cancel_workflow
SELECT pgmq.cancel_workflow(workflow_id => %(workflow_id)s::bigint);

-- name: list_workflows
SELECT workflow_id, status, on_failure, steps_done, steps_total, created_at, finished_at
FROM pgmq.list_workflows(status => %(status)s::text, max_rows => %(max_rows)s::integer,
                         before_id => %(before_id)s::bigint);

-- name: workflow_retention
SELECT pgmq._workflow_retention(keep_seconds => %(keep_seconds)s::double precision, batch => %(batch)s::integer);
