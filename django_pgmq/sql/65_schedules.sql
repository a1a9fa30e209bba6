-- Periodic schedules (cron in SQL, for every pgmq client): pgmq.create_schedule,
-- drop_schedule, enable_schedule, run_schedule_now, list_schedules, next_ticks and
-- enqueue_due_schedules. Not part of pgmq's API, but callable by any of its clients.
--
-- A schedule sends its message to its queue through pgmq.send at every tick of its cron
-- expression, read in its IANA time zone. enqueue_due_schedules may be called by any
-- number of sessions at any times: the primary key of pgmq.schedule_ticks (schedule,
-- tick) decides which call sends a tick, so each tick is sent once (a call also skips,
-- never waits for, a schedule another call is working on). After downtime only the
-- latest missed tick is sent, and only if it is no older than the schedule's catch_up;
-- the older ones are counted in pgmq.schedules.skipped.
--
-- Daylight saving, as Debian's cron (and cronsim) do: when both the minute and the hour
-- field are specific (neither starts with "*"), a schedule fires once per local
-- wall-clock tick; ticks inside a skipped hour fire once, together, at the first instant
-- after the gap, and a tick inside a repeated hour fires at its first occurrence.
-- Otherwise the schedule fires by elapsed time (an hourly one fires in both occurrences
-- of a repeated hour). "@every <n> seconds|minutes|hours" ticks at whole multiples of
-- the interval since the Unix epoch, so every database agrees on the ticks.
--
-- No function here writes a database object: only rows of the two tables below.

-- One row per schedule. next_tick is the first tick not handled yet: a call of
-- enqueue_due_schedules finds the due schedules by it (the partial index), so an idle
-- call reads one index page.
CREATE TABLE pgmq.schedules (
    schedule_name text PRIMARY KEY
        CHECK (length(schedule_name) BETWEEN 1 AND 200),
    cron text NOT NULL,
    queue_name varchar NOT NULL
        REFERENCES pgmq.meta (queue_name) ON DELETE CASCADE ON UPDATE CASCADE,
    message jsonb NOT NULL DEFAULT '{}',
    headers jsonb CHECK (headers IS NULL OR jsonb_typeof(headers) = 'object'),
    time_zone text NOT NULL DEFAULT 'UTC',
    catch_up interval NOT NULL DEFAULT '10 minutes' CHECK (catch_up >= interval '0'),
    enabled boolean NOT NULL DEFAULT true,
    next_tick timestamptz NOT NULL,
    skipped bigint NOT NULL DEFAULT 0,
    -- 'settings' for a schedule PGMQ["SCHEDULES"] declares (Django keeps those in step)
    origin text,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX schedules_due ON pgmq.schedules (next_tick) WHERE enabled;
CREATE INDEX schedules_queue ON pgmq.schedules (queue_name);

-- The ticks sent (or tried: error holds why pgmq.send refused), the last 100 of each
-- schedule. Its primary key is what makes a tick go out once. Older rows are deleted
-- as new ones come: they lie before the schedule's next_tick and can never be due again.
CREATE TABLE pgmq.schedule_ticks (
    schedule_name text NOT NULL
        REFERENCES pgmq.schedules (schedule_name) ON DELETE CASCADE ON UPDATE CASCADE,
    tick timestamptz NOT NULL,
    queue_name text NOT NULL,
    msg_id bigint,
    error text,
    sent_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (schedule_name, tick)
);

-- A parsed cron expression. every_seconds is set for "@every"; the arrays hold the
-- values each field allows (weekdays 0-6, Sunday 0).
CREATE TYPE pgmq._cron_spec AS (
    every_seconds bigint,
    minutes integer[],
    hours integer[],
    days integer[],
    months integer[],
    weekdays integer[],
    days_or boolean,
    wall_clock boolean
);

-- Parsing -----------------------------------------------------------------------

-- One value of a cron field: a number in lo..hi, or a name (names[1] is lo).
CREATE FUNCTION pgmq._cron_value(field text, token text, lo integer, hi integer, names text[])
RETURNS integer
LANGUAGE plpgsql IMMUTABLE
AS $fn$
DECLARE
    pos integer := pg_catalog.array_position(names, pg_catalog.upper(token));
    v integer;
BEGIN
    IF pos IS NOT NULL THEN
        RETURN lo + pos - 1;
    END IF;
    IF token !~ '^[0-9]{1,9}$' THEN
        RAISE EXCEPTION 'cron field "%": "%" is not a number%', field, token,
            CASE WHEN names IS NULL THEN '' ELSE ' or a name (' || pg_catalog.array_to_string(names, ' ') || ')' END
            USING ERRCODE = 'PQ004';
    END IF;
    v := token::integer;
    IF v < lo OR v > hi THEN
        RAISE EXCEPTION 'cron field "%": % is out of range %-%', field, v, lo, hi
            USING ERRCODE = 'PQ004';
    END IF;
    RETURN v;
END
$fn$;

-- The sorted values a cron field allows: "*", numbers, names, lists, ranges, steps.
CREATE FUNCTION pgmq._cron_field(field text, spec text, lo integer, hi integer,
                                 names text[] DEFAULT NULL)
RETURNS integer[]
LANGUAGE plpgsql IMMUTABLE
AS $fn$
DECLARE
    item text;
    span text;
    step integer;
    first_v integer;
    last_v integer;
    vals integer[] := '{}';
BEGIN
    FOREACH item IN ARRAY pg_catalog.string_to_array(spec, ',') LOOP
        IF item = '' THEN
            RAISE EXCEPTION 'cron field "%": empty item in "%"', field, spec USING ERRCODE = 'PQ004';
        END IF;
        span := item;
        step := NULL;
        IF position('/' IN item) > 0 THEN
            IF item !~ '^[^/]+/[0-9]{1,9}$' THEN
                RAISE EXCEPTION 'cron field "%": "%" has a bad step (want <range>/<number>)', field, item
                    USING ERRCODE = 'PQ004';
            END IF;
            span := pg_catalog.split_part(item, '/', 1);
            step := pg_catalog.split_part(item, '/', 2)::integer;
            IF step < 1 THEN
                RAISE EXCEPTION 'cron field "%": step % in "%" must be 1 or more', field, step, item
                    USING ERRCODE = 'PQ004';
            END IF;
        END IF;
        IF span = '*' THEN
            first_v := lo;
            last_v := hi;
        ELSIF position('-' IN span) > 0 THEN
            IF span !~ '^[^-]+-[^-]+$' THEN
                RAISE EXCEPTION 'cron field "%": "%" is not a range (want <from>-<to>)', field, span
                    USING ERRCODE = 'PQ004';
            END IF;
            first_v := pgmq._cron_value(field, pg_catalog.split_part(span, '-', 1), lo, hi, names);
            last_v := pgmq._cron_value(field, pg_catalog.split_part(span, '-', 2), lo, hi, names);
            IF last_v < first_v THEN
                RAISE EXCEPTION 'cron field "%": range "%" ends before it starts', field, span
                    USING ERRCODE = 'PQ004';
            END IF;
        ELSE
            first_v := pgmq._cron_value(field, span, lo, hi, names);
            last_v := CASE WHEN step IS NULL THEN first_v ELSE hi END;  -- "5/15": 5 to hi
        END IF;
        vals := vals || ARRAY(SELECT pg_catalog.generate_series(first_v, last_v, coalesce(step, 1)));
    END LOOP;
    RETURN ARRAY(SELECT DISTINCT v FROM pg_catalog.unnest(vals) v ORDER BY v);
END
$fn$;

-- A cron expression, parsed and checked; the error names the field and the value.
CREATE FUNCTION pgmq._cron_parse(cron text)
RETURNS pgmq._cron_spec
LANGUAGE plpgsql IMMUTABLE
AS $fn$
DECLARE
    expr text := pg_catalog.lower(pg_catalog.btrim(pg_catalog.regexp_replace(coalesce(cron, ''), '\s+', ' ', 'g')));
    f text[];
    every text[];
    spec pgmq._cron_spec;
    month_days CONSTANT integer[] := '{31,29,31,30,31,30,31,31,30,31,30,31}';
BEGIN
    IF cron IS NULL THEN
        RAISE EXCEPTION 'cron must not be NULL' USING ERRCODE = 'PQ004';
    END IF;
    expr := CASE expr
        WHEN '@yearly' THEN '0 0 1 1 *'
        WHEN '@annually' THEN '0 0 1 1 *'
        WHEN '@monthly' THEN '0 0 1 * *'
        WHEN '@weekly' THEN '0 0 * * 0'
        WHEN '@daily' THEN '0 0 * * *'
        WHEN '@midnight' THEN '0 0 * * *'
        WHEN '@hourly' THEN '0 * * * *'
        ELSE expr
    END;
    IF pg_catalog.left(expr, 1) = '@' THEN
        every := pg_catalog.regexp_match(expr,
            '^@every ([0-9]{1,9}) ?(s|sec|secs|second|seconds|m|min|mins|minute|minutes|h|hour|hours)$');
        IF every IS NULL THEN
            RAISE EXCEPTION 'cron "%": unknown form (use five fields, @yearly, @monthly, @weekly, '
                '@daily, @hourly, or @every <n> seconds|minutes|hours)', cron
                USING ERRCODE = 'PQ004';
        END IF;
        spec.every_seconds := every[1]::bigint
            * CASE pg_catalog.left(every[2], 1) WHEN 's' THEN 1 WHEN 'm' THEN 60 ELSE 3600 END;
        IF spec.every_seconds < 1 THEN
            RAISE EXCEPTION 'cron "%": the interval must be 1 or more', cron USING ERRCODE = 'PQ004';
        END IF;
        RETURN spec;
    END IF;
    f := pg_catalog.string_to_array(expr, ' ');
    IF coalesce(pg_catalog.array_length(f, 1), 0) <> 5 THEN
        RAISE EXCEPTION 'cron "%": want 5 fields (minute hour day-of-month month day-of-week), got %',
            cron, coalesce(pg_catalog.array_length(f, 1), 0) USING ERRCODE = 'PQ004';
    END IF;
    spec.minutes := pgmq._cron_field('minute'::text, f[1], 0, 59);
    spec.hours := pgmq._cron_field('hour'::text, f[2], 0, 23);
    spec.days := pgmq._cron_field('day-of-month'::text, f[3], 1, 31);
    spec.months := pgmq._cron_field('month'::text, f[4], 1, 12,
        '{JAN,FEB,MAR,APR,MAY,JUN,JUL,AUG,SEP,OCT,NOV,DEC}'::text[]);
    spec.weekdays := ARRAY(SELECT DISTINCT v % 7 FROM pg_catalog.unnest(
        pgmq._cron_field('day-of-week'::text, f[5], 0, 7, '{SUN,MON,TUE,WED,THU,FRI,SAT}'::text[])) v ORDER BY 1);
    -- cron's rule: when both day fields are restricted, a day matching either one fires.
    spec.days_or := pg_catalog.left(f[3], 1) <> '*' AND pg_catalog.left(f[5], 1) <> '*';
    spec.wall_clock := pg_catalog.left(f[1], 1) <> '*' AND pg_catalog.left(f[2], 1) <> '*';
    IF NOT spec.days_or AND spec.days[1] > (SELECT pg_catalog.max(month_days[m]) FROM pg_catalog.unnest(spec.months) m) THEN
        RAISE EXCEPTION 'cron field "day-of-month": % never occurs in the months of "%"',
            spec.days[1], f[4] USING ERRCODE = 'PQ004';
    END IF;
    RETURN spec;
END
$fn$;

-- Time zones ----------------------------------------------------------------------

-- The IANA time zone name, checked; the error names it.
CREATE FUNCTION pgmq._check_time_zone(time_zone text)
RETURNS text
LANGUAGE plpgsql STABLE
AS $fn$
DECLARE
    known boolean;
BEGIN
    -- PostgreSQL also takes POSIX specs ("UTC+3") and abbreviations ("PST") after AT
    -- TIME ZONE; a schedule takes only names of the tz database. An Area/Location name
    -- PostgreSQL can load is one; a name without "/" is looked up in the (slow) list.
    BEGIN
        known := time_zone ~ '^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$'
                 AND (pg_catalog.now() AT TIME ZONE time_zone) IS NOT NULL
                 AND (time_zone IN ('UTC', 'GMT') OR position('/' IN time_zone) > 0
                      OR EXISTS (SELECT 1 FROM pg_catalog.pg_timezone_names z WHERE z.name = time_zone));
    EXCEPTION WHEN invalid_parameter_value THEN
        known := false;
    END;
    IF NOT coalesce(known, false) THEN
        RAISE EXCEPTION 'unknown time zone "%" (want an IANA name such as Europe/Berlin or UTC)',
            coalesce(time_zone, 'NULL') USING ERRCODE = 'PQ004';
    END IF;
    RETURN time_zone;
END
$fn$;

-- The UTC offset in force at an instant in a time zone.
CREATE FUNCTION pgmq._utc_offset(at_instant timestamptz, time_zone text)
RETURNS interval
LANGUAGE sql STABLE
AS $fn$
    SELECT (at_instant AT TIME ZONE time_zone) - (at_instant AT TIME ZONE 'UTC')
$fn$;

-- The first instant whose wall-clock time in time_zone is local_time; for a time
-- inside a daylight-saving gap, the first instant after the gap.
CREATE FUNCTION pgmq._local_to_instant(local_time timestamp, time_zone text)
RETURNS timestamptz
LANGUAGE plpgsql STABLE
AS $fn$
DECLARE
    guess timestamptz;
    candidate timestamptz;
    best timestamptz;
    offs interval;
BEGIN
    FOR i IN 0..1440 LOOP
        guess := local_time AT TIME ZONE time_zone;
        -- the offsets in force a day either side: a repeated hour has two instants
        FOREACH offs IN ARRAY ARRAY[pgmq._utc_offset(guess - interval '1 day', time_zone),
                                    pgmq._utc_offset(guess + interval '1 day', time_zone),
                                    pgmq._utc_offset(guess, time_zone)] LOOP
            candidate := (local_time - offs) AT TIME ZONE 'UTC';
            IF candidate AT TIME ZONE time_zone = local_time
               AND (best IS NULL OR candidate < best) THEN
                best := candidate;
            END IF;
        END LOOP;
        IF best IS NOT NULL THEN
            RETURN best;
        END IF;
        local_time := local_time + interval '1 minute';  -- in a gap: walk to its end
    END LOOP;
    RETURN guess;
END
$fn$;

-- An instant as ISO 8601 with the time zone's offset, e.g. 2026-03-29T03:00:00+02:00.
CREATE FUNCTION pgmq._iso_time(at_instant timestamptz, time_zone text)
RETURNS text
LANGUAGE sql STABLE
AS $fn$
    SELECT pg_catalog.to_char(at_instant AT TIME ZONE time_zone,
                   CASE WHEN pg_catalog.date_trunc('second', at_instant) = at_instant
                        THEN 'YYYY-MM-DD"T"HH24:MI:SS' ELSE 'YYYY-MM-DD"T"HH24:MI:SS.US' END)
        || CASE WHEN o < interval '0' THEN '-' ELSE '+' END
        || pg_catalog.to_char(CASE WHEN o < interval '0' THEN -o ELSE o END, 'HH24:MI')
    FROM (SELECT pgmq._utc_offset(at_instant, time_zone) AS o) x
$fn$;

-- Next ticks ----------------------------------------------------------------------

-- Whether a local date matches the day-of-month and day-of-week fields.
CREATE FUNCTION pgmq._cron_day_matches(spec pgmq._cron_spec, day date)
RETURNS boolean
LANGUAGE sql IMMUTABLE
AS $fn$
    SELECT CASE WHEN spec.days_or
        THEN extract(day FROM day)::integer = ANY (spec.days)
             OR extract(dow FROM day)::integer = ANY (spec.weekdays)
        ELSE extract(day FROM day)::integer = ANY (spec.days)
             AND extract(dow FROM day)::integer = ANY (spec.weekdays)
    END
$fn$;

-- The first wall-clock minute after local_time that the fields allow (NULL if none
-- within 30 years).
CREATE FUNCTION pgmq._cron_next_local(spec pgmq._cron_spec, local_time timestamp)
RETURNS timestamp
LANGUAGE plpgsql IMMUTABLE
AS $fn$
DECLARE
    t timestamp := pg_catalog.date_trunc('minute', local_time) + interval '1 minute';
    give_up CONSTANT timestamp := local_time + interval '30 years';
    v integer;
    nxt integer;
BEGIN
    WHILE t < give_up LOOP
        IF NOT extract(month FROM t)::integer = ANY (spec.months) THEN
            t := pg_catalog.date_trunc('month', t) + interval '1 month';
            CONTINUE;
        END IF;
        IF NOT pgmq._cron_day_matches(spec, t::date) THEN
            t := pg_catalog.date_trunc('day', t) + interval '1 day';
            CONTINUE;
        END IF;
        v := extract(hour FROM t)::integer;
        IF NOT v = ANY (spec.hours) THEN
            SELECT pg_catalog.min(h) INTO nxt FROM pg_catalog.unnest(spec.hours) h WHERE h > v;
            t := pg_catalog.date_trunc('day', t) + CASE WHEN nxt IS NULL THEN interval '1 day'
                                            ELSE pg_catalog.make_interval(hours => nxt) END;
            CONTINUE;
        END IF;
        v := extract(minute FROM t)::integer;
        IF NOT v = ANY (spec.minutes) THEN
            SELECT pg_catalog.min(m) INTO nxt FROM pg_catalog.unnest(spec.minutes) m WHERE m > v;
            t := pg_catalog.date_trunc('hour', t) + CASE WHEN nxt IS NULL THEN interval '1 hour'
                                             ELSE pg_catalog.make_interval(mins => nxt) END;
            CONTINUE;
        END IF;
        RETURN t;
    END LOOP;
    RETURN NULL;
END
$fn$;

-- The first tick after an instant, by elapsed time: the local fields are checked at
-- each real minute, so an hour that occurs twice is matched twice.
CREATE FUNCTION pgmq._cron_next_elapsed(spec pgmq._cron_spec, time_zone text, after timestamptz)
RETURNS timestamptz
LANGUAGE plpgsql STABLE
AS $fn$
DECLARE
    t timestamptz := pg_catalog.date_trunc('minute', after, 'UTC') + interval '1 minute';
    give_up CONSTANT timestamptz := after + interval '30 years';
    lt timestamp;
    v integer;
    nxt integer;
BEGIN
    WHILE t < give_up LOOP
        lt := t AT TIME ZONE time_zone;
        IF NOT extract(month FROM lt)::integer = ANY (spec.months) THEN
            t := pgmq._local_to_instant(pg_catalog.date_trunc('month', lt) + interval '1 month', time_zone);
            CONTINUE;
        END IF;
        IF NOT pgmq._cron_day_matches(spec, lt::date) THEN
            t := pgmq._local_to_instant(pg_catalog.date_trunc('day', lt) + interval '1 day', time_zone);
            CONTINUE;
        END IF;
        v := extract(minute FROM lt)::integer;
        IF NOT extract(hour FROM lt)::integer = ANY (spec.hours) THEN
            t := t + pg_catalog.make_interval(mins => 60 - v);  -- the next hour, in elapsed time
            CONTINUE;
        END IF;
        IF NOT v = ANY (spec.minutes) THEN
            SELECT pg_catalog.min(m) INTO nxt FROM pg_catalog.unnest(spec.minutes) m WHERE m > v;
            t := t + pg_catalog.make_interval(mins => coalesce(nxt, 60) - v);
            CONTINUE;
        END IF;
        RETURN t;
    END LOOP;
    RETURN NULL;
END
$fn$;

-- The first tick of a parsed expression after an instant (exclusive); NULL if none
-- within 30 years.
CREATE FUNCTION pgmq._cron_next(spec pgmq._cron_spec, time_zone text, after timestamptz)
RETURNS timestamptz
LANGUAGE plpgsql STABLE
AS $fn$
DECLARE
    lt timestamp;
    t timestamptz;
BEGIN
    IF spec.every_seconds IS NOT NULL THEN
        RETURN pg_catalog.to_timestamp(
            ((pg_catalog.floor(extract(epoch FROM after) / spec.every_seconds) + 1) * spec.every_seconds)::double precision);
    END IF;
    IF NOT spec.wall_clock THEN
        RETURN pgmq._cron_next_elapsed(spec, time_zone, after);
    END IF;
    lt := after AT TIME ZONE time_zone;
    LOOP
        lt := pgmq._cron_next_local(spec, lt);
        IF lt IS NULL THEN
            RETURN NULL;
        END IF;
        t := pgmq._local_to_instant(lt, time_zone);
        -- a tick in a gap moves to its end, where others may land too: once
        IF t > after THEN
            RETURN t;
        END IF;
    END LOOP;
END
$fn$;

-- How many ticks lie in [from_tick, before): exact for @every, counted one by one (at
-- most 10,000) for a cron expression.
CREATE FUNCTION pgmq._cron_count(spec pgmq._cron_spec, time_zone text,
                                 from_tick timestamptz, before timestamptz)
RETURNS bigint
LANGUAGE plpgsql STABLE
AS $fn$
DECLARE
    n bigint := 0;
    t timestamptz := from_tick;
BEGIN
    IF from_tick IS NULL OR from_tick >= before THEN
        RETURN 0;
    END IF;
    IF spec.every_seconds IS NOT NULL THEN
        RETURN pg_catalog.ceil(extract(epoch FROM before - from_tick) / spec.every_seconds)::bigint;
    END IF;
    WHILE t IS NOT NULL AND t < before AND n < 10000 LOOP
        n := n + 1;
        t := pgmq._cron_next(spec, time_zone, t);
    END LOOP;
    RETURN n;
END
$fn$;

-- The public API ------------------------------------------------------------------

-- The next n ticks of a cron expression in a time zone after an instant (exclusive).
CREATE FUNCTION pgmq.next_ticks(cron text, time_zone text, after timestamptz, n integer)
RETURNS SETOF timestamptz
LANGUAGE plpgsql STABLE
AS $fn$
DECLARE
    spec pgmq._cron_spec := pgmq._cron_parse(cron);
    t timestamptz := after;
BEGIN
    PERFORM pgmq._check_time_zone(time_zone);
    IF after IS NULL THEN
        RAISE EXCEPTION 'after must not be NULL' USING ERRCODE = 'PQ004';
    END IF;
    IF n IS NULL OR n < 0 OR n > 10000 THEN
        RAISE EXCEPTION 'n must be from 0 to 10000, got %', coalesce(n::text, 'NULL')
            USING ERRCODE = 'PQ004';
    END IF;
    FOR i IN 1..n LOOP
        t := pgmq._cron_next(spec, time_zone, t);
        EXIT WHEN t IS NULL;
        RETURN NEXT t;
    END LOOP;
END
$fn$;

-- Create a schedule, or replace the one of that name. Replacing it with the same cron
-- and time zone, enabled before and after, keeps its next tick (so applying the same
-- settings again neither skips nor repeats one); otherwise the schedule starts with
-- the first tick after now (and after the last tick it sent). Bad input is refused with
-- an error naming it, and nothing is written.
CREATE FUNCTION pgmq.create_schedule(
    schedule_name text,
    cron text,
    queue_name text,
    message jsonb DEFAULT '{}',
    headers jsonb DEFAULT NULL,
    time_zone text DEFAULT 'UTC',
    catch_up interval DEFAULT '10 minutes',
    enabled boolean DEFAULT true)
RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
#variable_conflict use_variable
DECLARE
    spec pgmq._cron_spec;
    stored text;
    first_tick timestamptz;
    last_sent timestamptz;
BEGIN
    IF schedule_name IS NULL OR pg_catalog.length(schedule_name) NOT BETWEEN 1 AND 200 THEN
        RAISE EXCEPTION 'schedule name must be 1 to 200 characters, got %',
            coalesce(pg_catalog.quote_literal(schedule_name), 'NULL') USING ERRCODE = 'PQ004';
    END IF;
    BEGIN
        spec := pgmq._cron_parse(cron::text);
    EXCEPTION WHEN SQLSTATE 'PQ004' THEN
        RAISE EXCEPTION 'schedule "%": %', schedule_name, SQLERRM USING ERRCODE = 'PQ004';
    END;
    PERFORM pgmq._check_time_zone(time_zone);
    SELECT m.queue_name INTO stored FROM pgmq.meta m WHERE pg_catalog.lower(m.queue_name::text) = pg_catalog.lower(queue_name);
    IF stored IS NULL THEN
        RAISE EXCEPTION 'schedule "%": queue "%" does not exist', schedule_name, queue_name
            USING ERRCODE = 'PQ002', HINT = 'Create it first with pgmq.create().';
    END IF;
    IF message IS NULL THEN
        RAISE EXCEPTION 'schedule "%": message must not be NULL', schedule_name USING ERRCODE = 'PQ004';
    END IF;
    IF headers IS NOT NULL AND pg_catalog.jsonb_typeof(headers) <> 'object' THEN
        RAISE EXCEPTION 'schedule "%": headers must be a JSON object or NULL, got %',
            schedule_name, pg_catalog.jsonb_typeof(headers) USING ERRCODE = 'PQ004';
    END IF;
    IF catch_up IS NULL OR catch_up < interval '0' THEN
        RAISE EXCEPTION 'schedule "%": catch_up must be an interval of 0 or more, got %',
            schedule_name, coalesce(catch_up::text, 'NULL') USING ERRCODE = 'PQ004';
    END IF;
    IF enabled IS NULL THEN
        RAISE EXCEPTION 'schedule "%": enabled must be true or false', schedule_name
            USING ERRCODE = 'PQ004';
    END IF;
    -- The same schedule again (a worker's start applies the settings' schedules): nothing
    -- to change, so no right needed; any change is policy (manage_queues).
    IF EXISTS (SELECT 1 FROM pgmq.schedules s
               WHERE s.schedule_name = schedule_name AND s.cron = cron
                 AND s.queue_name::text = stored AND s.message = message
                 AND s.headers IS NOT DISTINCT FROM headers AND s.time_zone = time_zone
                 AND s.catch_up = catch_up AND s.enabled = enabled) THEN
        RETURN;
    END IF;
    PERFORM pgmq._require_privilege('manage_queues'::text);
    SELECT pg_catalog.max(k.tick) INTO last_sent FROM pgmq.schedule_ticks k WHERE k.schedule_name = schedule_name;
    first_tick := pgmq._cron_next(spec, time_zone, greatest(pg_catalog.now(), last_sent));
    IF first_tick IS NULL THEN
        RAISE EXCEPTION 'schedule "%": cron "%" never fires', schedule_name, cron USING ERRCODE = 'PQ004';
    END IF;
    INSERT INTO pgmq.schedules AS s (schedule_name, cron, queue_name, message, headers,
                                     time_zone, catch_up, enabled, next_tick)
    VALUES (schedule_name, cron, stored, message, headers, time_zone, catch_up, enabled, first_tick)
    ON CONFLICT ON CONSTRAINT schedules_pkey DO UPDATE SET
        cron = EXCLUDED.cron,
        queue_name = EXCLUDED.queue_name,
        message = EXCLUDED.message,
        headers = EXCLUDED.headers,
        time_zone = EXCLUDED.time_zone,
        catch_up = EXCLUDED.catch_up,
        enabled = EXCLUDED.enabled,
        next_tick = CASE
            WHEN s.cron = EXCLUDED.cron AND s.time_zone = EXCLUDED.time_zone
                 AND s.enabled AND EXCLUDED.enabled THEN s.next_tick
            ELSE EXCLUDED.next_tick END,
        updated_at = pg_catalog.now();
END
$fn$;

-- Schedules are policy: create_schedule, drop_schedule, enable_schedule and
-- set_schedule_origin are owner functions that only the owner and roles granted
-- manage_queues may call with effect (42501 otherwise; a call that changes nothing
-- passes, so a worker's start applying the settings' schedules works as any role);
-- application roles have no write right on pgmq.schedules.
-- Delete a schedule and its ticks; false when there was none of that name.
CREATE FUNCTION pgmq.drop_schedule(schedule_name text)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
    PERFORM pgmq._require_privilege('manage_queues'::text);
    DELETE FROM pgmq.schedules s WHERE s.schedule_name = drop_schedule.schedule_name;
    RETURN FOUND;
END
$fn$;

-- The stored schedule row of that name, or an error naming it.
CREATE FUNCTION pgmq._require_schedule(schedule_name text)
RETURNS pgmq.schedules
LANGUAGE plpgsql STABLE
AS $fn$
DECLARE
    found_row pgmq.schedules;
BEGIN
    SELECT * INTO found_row FROM pgmq.schedules s WHERE s.schedule_name = _require_schedule.schedule_name;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'schedule "%" does not exist', coalesce(schedule_name, 'NULL')
            USING ERRCODE = 'PQ005';
    END IF;
    RETURN found_row;
END
$fn$;

-- Turn a schedule on or off. Turned on, it starts with the first tick after now: the
-- ticks missed while it was off are not sent.
CREATE FUNCTION pgmq.enable_schedule(schedule_name text, enabled boolean)
RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    s pgmq.schedules;
BEGIN
    s := pgmq._require_schedule(schedule_name);
    IF enabled IS NULL THEN
        RAISE EXCEPTION 'schedule "%": enabled must be true or false', schedule_name
            USING ERRCODE = 'PQ004';
    END IF;
    IF s.enabled = enabled THEN
        RETURN;  -- no change: no right needed
    END IF;
    PERFORM pgmq._require_privilege('manage_queues'::text);
    UPDATE pgmq.schedules x
    SET enabled = enable_schedule.enabled,
        next_tick = CASE WHEN enable_schedule.enabled
            THEN coalesce(pgmq._cron_next(pgmq._cron_parse(x.cron), x.time_zone,
                                          greatest(pg_catalog.now(), (SELECT pg_catalog.max(k.tick) FROM pgmq.schedule_ticks k
                                                           WHERE k.schedule_name = x.schedule_name))),
                          x.next_tick)
            ELSE x.next_tick END,
        updated_at = pg_catalog.now()
    WHERE x.schedule_name = s.schedule_name;
END
$fn$;

-- Who declared these schedules: 'settings' (PGMQ["SCHEDULES"], kept in step by Django)
-- or NULL (anyone else); returns the names changed. Policy like the schedules
-- themselves: a change takes manage_queues, a call that changes nothing passes.
CREATE FUNCTION pgmq.set_schedule_origin(schedule_names text[], origin text)
RETURNS SETOF text
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pgmq.schedules s
                   WHERE s.schedule_name = ANY ($1) AND s.origin IS DISTINCT FROM $2) THEN
        RETURN;
    END IF;
    PERFORM pgmq._require_privilege('manage_queues'::text);
    RETURN QUERY
        UPDATE pgmq.schedules s SET origin = $2
        WHERE s.schedule_name = ANY ($1) AND s.origin IS DISTINCT FROM $2
        RETURNING s.schedule_name;
END
$fn$;

-- Send a schedule's message now, outside its ticks (header "schedule" says "manual");
-- its ticks are unchanged. Returns the message id.
CREATE FUNCTION pgmq.run_schedule_now(schedule_name text)
RETURNS bigint
LANGUAGE plpgsql
AS $fn$
DECLARE
    s pgmq.schedules := pgmq._require_schedule(schedule_name);
    sent bigint;
BEGIN
    SELECT * INTO sent FROM pgmq.send(
        queue_name => s.queue_name::text,
        msg => s.message,
        headers => coalesce(s.headers, '{}'::jsonb) || pg_catalog.jsonb_build_object('schedule', pg_catalog.jsonb_build_object(
            'name', s.schedule_name,
            'tick', pgmq._iso_time(pg_catalog.clock_timestamp(), s.time_zone),
            'manual', true)));
    RETURN sent;
END
$fn$;

-- Every schedule, with its last tick sent and its next tick.
CREATE FUNCTION pgmq.list_schedules()
RETURNS TABLE(schedule_name text, cron text, time_zone text, queue_name text, message jsonb,
              headers jsonb, catch_up interval, enabled boolean, last_tick timestamptz,
              next_tick timestamptz)
LANGUAGE sql STABLE
AS $fn$
    SELECT s.schedule_name, s.cron, s.time_zone, s.queue_name::text, s.message, s.headers,
           s.catch_up, s.enabled,
           (SELECT pg_catalog.max(k.tick) FROM pgmq.schedule_ticks k WHERE k.schedule_name = s.schedule_name),
           CASE WHEN s.enabled THEN s.next_tick END
    FROM pgmq.schedules s
    ORDER BY s.schedule_name
$fn$;

-- The tick a due schedule sends at `at`: the latest tick in [next_tick, at] that is
-- no older than catch_up (NULL if none), and how many earlier ticks are skipped.
CREATE FUNCTION pgmq._schedule_due_tick(spec pgmq._cron_spec, time_zone text, next_tick timestamptz,
                                        catch_up interval, at_instant timestamptz,
                                        OUT tick timestamptz, OUT skipped bigint)
LANGUAGE plpgsql STABLE
AS $fn$
DECLARE
    window_start timestamptz := at_instant - catch_up;
    -- the first tick not handled yet (next_tick is one, unless someone wrote another)
    first_tick timestamptz := pgmq._cron_next(spec, time_zone, next_tick - interval '1 microsecond');
    t timestamptz;
    later timestamptz;
BEGIN
    IF spec.every_seconds IS NOT NULL THEN
        t := pg_catalog.to_timestamp((pg_catalog.floor(extract(epoch FROM at_instant) / spec.every_seconds) * spec.every_seconds)::double precision);
    ELSE
        t := CASE WHEN first_tick >= window_start THEN first_tick
                  ELSE pgmq._cron_next(spec, time_zone, window_start - interval '1 microsecond') END;
        LOOP
            later := pgmq._cron_next(spec, time_zone, t);
            EXIT WHEN later IS NULL OR later > at_instant;
            t := later;
        END LOOP;
    END IF;
    IF t IS NULL OR t > at_instant OR t < window_start OR t < first_tick THEN
        tick := NULL;
        skipped := pgmq._cron_count(spec, time_zone, first_tick, at_instant + interval '1 microsecond');
    ELSE
        tick := t;
        skipped := pgmq._cron_count(spec, time_zone, first_tick, t);
    END IF;
END
$fn$;

-- Claim the due ticks at `at` (the owner's half of enqueue_due_schedules): each due
-- schedule not being handled by another call (SKIP LOCKED: never waited for) gets its
-- next_tick moved on and its tick row inserted (the primary key decides which call
-- sends a tick); returns the ticks this call must send. An application role has no
-- write right on pgmq.schedules or pgmq.schedule_ticks; what it can do through this
-- helper is what any enqueue_due_schedules call does. An `at` more than a minute
-- ahead of now would move every schedule's next tick far ahead (skipping ticks), so it
-- takes manage_queues (tests and the owner pass it).
CREATE FUNCTION pgmq._schedule_claim_due(at_instant timestamptz)
RETURNS TABLE(schedule_name text, queue_name text, message jsonb, headers jsonb,
              time_zone text, tick timestamptz)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
#variable_conflict use_column
DECLARE
    s pgmq.schedules;
    spec pgmq._cron_spec;
    due record;
BEGIN
    IF at_instant IS NULL THEN
        RAISE EXCEPTION 'at must not be NULL' USING ERRCODE = 'PQ004';
    END IF;
    IF at_instant > pg_catalog.now() + interval '1 minute' THEN
        PERFORM pgmq._require_privilege('manage_queues'::text);
    END IF;
    FOR s IN
        SELECT * FROM pgmq.schedules x
        WHERE x.enabled AND x.next_tick <= at_instant
        ORDER BY x.next_tick
        FOR UPDATE SKIP LOCKED
    LOOP
        spec := pgmq._cron_parse(s.cron);
        SELECT * INTO due FROM pgmq._schedule_due_tick(spec, s.time_zone, s.next_tick, s.catch_up,
                                                       at_instant);
        UPDATE pgmq.schedules x
        SET next_tick = coalesce(pgmq._cron_next(spec, s.time_zone, at_instant), 'infinity'),
            skipped = x.skipped + due.skipped
        WHERE x.schedule_name = s.schedule_name;
        CONTINUE WHEN due.tick IS NULL;
        INSERT INTO pgmq.schedule_ticks AS k (schedule_name, tick, queue_name)
        VALUES (s.schedule_name, due.tick, s.queue_name::text)
        ON CONFLICT ON CONSTRAINT schedule_ticks_pkey DO NOTHING;
        CONTINUE WHEN NOT FOUND;  -- sent by another call
        schedule_name := s.schedule_name;
        queue_name := s.queue_name::text;
        message := s.message;
        headers := s.headers;
        time_zone := s.time_zone;
        tick := due.tick;
        RETURN NEXT;
    END LOOP;
END
$fn$;

-- Record how a claimed tick went (the message sent, or why pgmq.send refused it) and
-- keep the schedule's last 100 ticks. Owner helper: it writes only a tick still
-- pending (neither sent nor failed), so a recorded tick is never rewritten.
CREATE FUNCTION pgmq._schedule_tick_done(schedule_name text, tick timestamptz, msg_id bigint,
                                         error text)
RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
    UPDATE pgmq.schedule_ticks k SET msg_id = $3, error = $4
    WHERE k.schedule_name = $1 AND k.tick = $2 AND k.msg_id IS NULL AND k.error IS NULL;
    DELETE FROM pgmq.schedule_ticks k
    WHERE k.schedule_name = $1
      AND k.tick < (SELECT o.tick FROM pgmq.schedule_ticks o
                    WHERE o.schedule_name = $1
                    ORDER BY o.tick DESC OFFSET 99 LIMIT 1);
END
$fn$;

-- Send every due tick not sent before, once, whoever calls; returns what it sent.
-- A schedule another session is handling right now is skipped, not waited for; a tick
-- that pgmq.send refuses (a full queue, a message too large) is recorded with its error
-- in pgmq.schedule_ticks and not tried again. The schedule bookkeeping is the owner's
-- (pgmq._schedule_claim_due, pgmq._schedule_tick_done); the sends are the caller's own,
-- so a queue's triggers run as they do for any send.
CREATE FUNCTION pgmq.enqueue_due_schedules(at timestamptz DEFAULT now())
RETURNS TABLE(schedule_name text, queue_name text, tick timestamptz, msg_id bigint)
LANGUAGE plpgsql
AS $fn$
#variable_conflict use_column
DECLARE
    due record;
    sent bigint;
    failure text;
BEGIN
    IF enqueue_due_schedules.at IS NULL THEN
        RAISE EXCEPTION 'at must not be NULL' USING ERRCODE = 'PQ004';
    END IF;
    FOR due IN SELECT * FROM pgmq._schedule_claim_due(enqueue_due_schedules.at) LOOP
        sent := NULL;
        failure := NULL;
        BEGIN
            SELECT * INTO sent FROM pgmq.send(
                queue_name => due.queue_name::text,
                msg => due.message::jsonb,
                headers => (coalesce(due.headers, '{}'::jsonb) || pg_catalog.jsonb_build_object(
                    'schedule'::text,
                    pg_catalog.jsonb_build_object('name'::text, due.schedule_name::text,
                                                  'tick'::text, pgmq._iso_time(due.tick, due.time_zone::text)))
                           )::jsonb);
        EXCEPTION WHEN OTHERS THEN
            failure := SQLERRM;
        END;
        PERFORM pgmq._schedule_tick_done(due.schedule_name::text, due.tick, sent, failure);
        CONTINUE WHEN sent IS NULL;
        schedule_name := due.schedule_name;
        queue_name := due.queue_name::text;
        tick := due.tick;
        msg_id := sent;
        RETURN NEXT;
    END LOOP;
END
$fn$;
