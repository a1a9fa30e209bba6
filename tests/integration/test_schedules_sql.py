"""Periodic schedules through the SQL API (psycopg, named arguments), as any pgmq client calls them.

cronsim is the reference for cron fields and for Debian cron's daylight-saving rules.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import psycopg
import pytest
from cronsim import CronSim
from psycopg.types.json import Jsonb

pytestmark = pytest.mark.usefixtures("django_db_setup")

T0 = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture
def db(pg_connect) -> psycopg.Connection:
    conn = pg_connect()
    conn.execute("SET lock_timeout = '20s'")
    return conn


@pytest.fixture
def q(db, queue_name) -> Iterator[str]:
    db.execute("SELECT pgmq.create(queue_name => %s)", [queue_name])
    yield queue_name
    db.execute("SELECT pgmq.drop_queue(queue_name => %s)", [queue_name])


def next_ticks(db, cron: str, zone: str, after: datetime, n: int) -> list[datetime]:
    rows = db.execute(
        "SELECT * FROM pgmq.next_ticks(cron => %s, time_zone => %s, after => %s, n => %s)",
        [cron, zone, after, n],
    ).fetchall()
    return [row[0] for row in rows]


def reference(cron: str, zone: str, after: datetime, n: int) -> list[datetime]:
    it = CronSim(cron, after.astimezone(ZoneInfo(zone)))
    return [next(it).astimezone(UTC) for _ in range(n)]


def create(db, name: str, cron: str, queue: str, **kw) -> None:
    args = ", ".join(f"{k} => %s" for k in kw)
    db.execute(
        "SELECT pgmq.create_schedule(schedule_name => %s, cron => %s, queue_name => %s"
        + (", " + args if args else "")
        + ")",
        [name, cron, queue, *(Jsonb(v) if isinstance(v, dict) else v for v in kw.values())],
    )


def due(db, at: datetime) -> list[tuple]:
    return db.execute(
        "SELECT schedule_name, queue_name, tick, msg_id FROM pgmq.enqueue_due_schedules(at => %s)",
        [at],
    ).fetchall()


def set_next_tick(db, name: str, tick: datetime) -> None:
    """Start a schedule at a chosen tick (create_schedule starts after now())."""
    db.execute("UPDATE pgmq.schedules SET next_tick = %s WHERE schedule_name = %s", [tick, name])


def messages(db, queue: str) -> list[tuple]:
    return db.execute(
        "SELECT message, headers FROM pgmq.read(queue_name => %s, vt => 0, qty => 1000)"
        " ORDER BY msg_id",
        [queue],
    ).fetchall()


# -- every field form, against cronsim ------------------------------------------------------

FIELD_FORMS = [
    "* * * * *",
    "0 * * * *",
    "5,10,55 * * * *",
    "10-20 * * * *",
    "*/7 * * * *",
    "5/20 * * * *",
    "10-40/15 */5 * * *",
    "0 9-17/2 * * *",
    "30 4 1,15 * *",
    "0 0 L * *" if False else "0 0 28-31 * *",
    "0 12 * jan,jul *",
    "0 12 1 JAN-MAR *",
    "0 12 * */3 *",
    "15 8 * * mon-fri",
    "15 8 * * SAT,sun",
    "0 0 * * 7",
    "0 0 * * 0-7/3",
    "0 6 13 * 5",  # both day fields restricted: the 13th OR a Friday
    "0 6 */10 * mon",
    "0 6 * * */2",
    "0 0 29 2 *",
    "59 23 31 12 *",
]


@pytest.mark.parametrize("cron", FIELD_FORMS)
def test_every_field_form_gives_cronsims_ticks(db, cron):
    assert next_ticks(db, cron, "UTC", T0, 40) == reference(cron, "UTC", T0, 40)


@pytest.mark.parametrize(
    ("macro", "fields"),
    [
        ("@yearly", "0 0 1 1 *"),
        ("@annually", "0 0 1 1 *"),
        ("@monthly", "0 0 1 * *"),
        ("@weekly", "0 0 * * 0"),
        ("@daily", "0 0 * * *"),
        ("@midnight", "0 0 * * *"),
        ("@hourly", "0 * * * *"),
        ("  @Daily ", "0 0 * * *"),
    ],
)
def test_macros_are_their_five_fields(db, macro, fields):
    after = datetime(2026, 5, 17, 13, 27, tzinfo=UTC)
    assert next_ticks(db, macro, "Europe/Berlin", after, 6) == reference(
        fields, "Europe/Berlin", after, 6
    )


@pytest.mark.parametrize(
    ("every", "seconds"),
    [
        ("@every 1 second", 1),
        ("@every 45 seconds", 45),
        ("@every 7 minutes", 420),
        ("@every 7m", 420),
        ("@every 90 min", 5400),
        ("@every 5 hours", 18000),
        ("@every 3h", 10800),
    ],
)
def test_every_counts_from_the_unix_epoch(db, every, seconds):
    after = datetime(2026, 3, 29, 0, 59, 59, 500000, tzinfo=UTC)
    ticks = next_ticks(db, every, "America/New_York", after, 5)
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    first = epoch + timedelta(seconds=((after - epoch).total_seconds() // seconds + 1) * seconds)
    assert ticks == [first + timedelta(seconds=seconds * i) for i in range(5)]


def test_next_ticks_after_is_exclusive(db):
    tick = datetime(2026, 1, 1, 10, 0, tzinfo=UTC)
    assert next_ticks(db, "0 * * * *", "UTC", tick, 1) == [tick + timedelta(hours=1)]
    assert next_ticks(db, "@every 1 hours", "UTC", tick, 1) == [tick + timedelta(hours=1)]
    assert next_ticks(db, "0 * * * *", "UTC", tick, 0) == []


# -- daylight saving, Debian cron's rules (2026 change dates) ---------------------------------

DST_DAYS = [
    ("Europe/Berlin", datetime(2026, 3, 28, 12, tzinfo=UTC)),  # 29 Mar: 02:00 -> 03:00
    ("Europe/Berlin", datetime(2026, 10, 24, 12, tzinfo=UTC)),  # 25 Oct: 03:00 -> 02:00
    ("America/New_York", datetime(2026, 3, 7, 12, tzinfo=UTC)),  # 8 Mar: 02:00 -> 03:00
    ("America/New_York", datetime(2026, 10, 31, 12, tzinfo=UTC)),  # 1 Nov: 02:00 -> 01:00
]
DST_CRONS = [
    "0 * * * *",
    "30 * * * *",
    "*/20 * * * *",
    "0 */2 * * *",
    "30 2 * * *",
    "0,30 2 * * *",
    "15 1 * * *",
    "30 1,2,3 * * *",
    "0 3 * * *",
    "59 1 * * *",
    "* 2 * * *",
    "*/15 1-3 * * *",
    "0 0 * * *",
    "45 2 * * sun",
]


@pytest.mark.parametrize(("zone", "after"), DST_DAYS)
@pytest.mark.parametrize("cron", DST_CRONS)
def test_daylight_saving_changes_follow_debian_cron(db, zone, after, cron):
    assert next_ticks(db, cron, zone, after, 30) == reference(cron, zone, after, 30)


def local(zone: str, ticks: list[datetime]) -> list[str]:
    return [t.astimezone(ZoneInfo(zone)).strftime("%d %H:%M %Z") for t in ticks]


def test_ticks_in_a_skipped_hour_fire_once_together_after_the_gap(db):
    after = datetime(2026, 3, 28, 23, tzinfo=UTC)  # Berlin, 29 Mar 00:00 CET
    ticks = next_ticks(db, "0,30 2 * * *", "Europe/Berlin", after, 3)
    assert local("Europe/Berlin", ticks) == ["29 03:00 CEST", "30 02:00 CEST", "30 02:30 CEST"]
    ticks = next_ticks(db, "30 2 * * *", "America/New_York", datetime(2026, 3, 8, 5, tzinfo=UTC), 2)
    assert local("America/New_York", ticks) == ["08 03:00 EDT", "09 02:30 EDT"]


def test_a_specific_tick_in_a_repeated_hour_fires_at_its_first_occurrence(db):
    after = datetime(2026, 11, 1, 3, tzinfo=UTC)  # New York, 31 Oct 23:00 EDT
    ticks = next_ticks(db, "30 1 * * *", "America/New_York", after, 2)
    assert local("America/New_York", ticks) == ["01 01:30 EDT", "02 01:30 EST"]
    # from inside the second occurrence, the tick of that night is gone already
    ticks = next_ticks(
        db, "30 1 * * *", "America/New_York", datetime(2026, 11, 1, 6, 10, tzinfo=UTC), 1
    )
    assert local("America/New_York", ticks) == ["02 01:30 EST"]


def test_an_hourly_schedule_fires_in_both_occurrences_of_a_repeated_hour(db):
    after = datetime(2026, 10, 24, 23, 30, tzinfo=UTC)  # Berlin, 25 Oct 01:30 CEST
    ticks = next_ticks(db, "0 * * * *", "Europe/Berlin", after, 3)
    assert local("Europe/Berlin", ticks) == ["25 02:00 CEST", "25 02:00 CET", "25 03:00 CET"]
    assert ticks[1] - ticks[0] == timedelta(hours=1)


# -- bad input: an error naming it, nothing written -------------------------------------------

BAD = [
    ({"cron": "61 * * * *"}, 'cron field "minute": 61 is out of range 0-59'),
    ({"cron": "* 24 * * *"}, 'cron field "hour": 24 is out of range 0-23'),
    ({"cron": "* * 0 * *"}, 'cron field "day-of-month": 0 is out of range 1-31'),
    ({"cron": "* * * 13 *"}, 'cron field "month": 13 is out of range 1-12'),
    ({"cron": "* * * * 8"}, 'cron field "day-of-week": 8 is out of range 0-7'),
    ({"cron": "* * * foo *"}, 'cron field "month": "foo" is not a number or a name'),
    ({"cron": "* * * * mon-foo"}, 'cron field "day-of-week": "foo" is not a number or a name'),
    ({"cron": "x * * * *"}, 'cron field "minute": "x" is not a number'),
    ({"cron": "*/0 * * * *"}, 'cron field "minute": step 0 in "*/0" must be 1 or more'),
    ({"cron": "5/ * * * *"}, 'cron field "minute": "5/" has a bad step'),
    ({"cron": "1-2-3 * * * *"}, 'cron field "minute": "1-2-3" is not a range'),
    ({"cron": "30-10 * * * *"}, 'cron field "minute": range "30-10" ends before it starts'),
    ({"cron": "1,,2 * * * *"}, 'cron field "minute": empty item in "1,,2"'),
    ({"cron": "* * * *"}, "want 5 fields (minute hour day-of-month month day-of-week), got 4"),
    ({"cron": "* * * * * *"}, "want 5 fields"),
    ({"cron": ""}, "want 5 fields"),
    ({"cron": None}, "cron must not be NULL"),
    ({"cron": "@fortnightly"}, 'cron "@fortnightly": unknown form'),
    ({"cron": "@every 0 seconds"}, "the interval must be 1 or more"),
    ({"cron": "@every 5 days"}, "unknown form"),
    ({"cron": "0 0 31 2 *"}, 'cron field "day-of-month": 31 never occurs in the months of "2"'),
    ({"cron": "0 0 30 2 *"}, "never occurs"),
    ({"time_zone": "Mars/Olympus_Mons"}, 'unknown time zone "Mars/Olympus_Mons"'),
    ({"time_zone": "PST"}, 'unknown time zone "PST"'),
    ({"time_zone": "UTC+3"}, 'unknown time zone "UTC+3"'),
    ({"time_zone": ""}, 'unknown time zone ""'),
    ({"time_zone": None}, 'unknown time zone "NULL"'),
    ({"catch_up": "-1 second"}, "catch_up must be an interval of 0 or more"),
    ({"catch_up": None}, "catch_up must be an interval of 0 or more, got NULL"),
    ({"message": None}, "message must not be NULL"),
    ({"headers": [1]}, "headers must be a JSON object or NULL, got array"),
    ({"enabled": None}, "enabled must be true or false"),
    ({"schedule_name": ""}, "schedule name must be 1 to 200 characters"),
    ({"schedule_name": None}, "schedule name must be 1 to 200 characters, got NULL"),
    ({"schedule_name": "x" * 201}, "schedule name must be 1 to 200 characters"),
]


@pytest.mark.parametrize(("change", "error"), BAD, ids=[e for _, e in BAD])
def test_bad_input_is_refused_naming_it_and_nothing_is_written(db, q, change, error):
    args = {"schedule_name": "bad", "cron": "* * * * *", "queue_name": q} | change
    names = ", ".join(f"{k} => %s" for k in args)
    values = [Jsonb(v) if isinstance(v, list | dict) else v for v in args.values()]
    before = db.execute("SELECT count(*) FROM pgmq.schedules").fetchone()[0]
    with pytest.raises(psycopg.Error) as caught:
        db.execute(f"SELECT pgmq.create_schedule({names})", values)
    assert caught.value.sqlstate == "PQ004"
    assert error in str(caught.value)
    assert db.execute("SELECT count(*) FROM pgmq.schedules").fetchone()[0] == before


def test_a_missing_queue_is_refused_by_name(db):
    with pytest.raises(psycopg.Error) as caught:
        create(db, "orphan", "* * * * *", "no_such_queue")
    assert caught.value.sqlstate == "PQ002"
    assert 'schedule "orphan": queue "no_such_queue" does not exist' in str(caught.value)
    assert (
        db.execute("SELECT count(*) FROM pgmq.schedules WHERE schedule_name = 'orphan'").fetchone()[
            0
        ]
        == 0
    )


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (
            "pgmq.next_ticks(cron => '* * * * *', time_zone => 'UTC', after => now(), n => -1)",
            "n must be from 0 to 10000",
        ),
        (
            "pgmq.next_ticks(cron => '* * * * *', time_zone => 'UTC', after => NULL, n => 1)",
            "after must not be NULL",
        ),
        (
            "pgmq.next_ticks(cron => '* * * * *', time_zone => 'Nowhere/Land',"
            " after => now(), n => 1)",
            'unknown time zone "Nowhere/Land"',
        ),
        ("pgmq.enqueue_due_schedules(at => NULL)", "at must not be NULL"),
    ],
)
def test_bad_arguments_of_the_other_functions(db, call, error):
    with pytest.raises(psycopg.Error) as caught:
        db.execute(f"SELECT * FROM {call}")
    assert error in str(caught.value)


def test_unknown_schedules_are_named(db):
    for call in (
        "pgmq.enable_schedule(schedule_name => 'ghost', enabled => true)",
        "pgmq.run_schedule_now(schedule_name => 'ghost')",
    ):
        with pytest.raises(psycopg.Error) as caught:
            db.execute(f"SELECT {call}")
        assert caught.value.sqlstate == "PQ005"
        assert 'schedule "ghost" does not exist' in str(caught.value)
    assert db.execute("SELECT pgmq.drop_schedule(schedule_name => 'ghost')").fetchone()[0] is False


# -- sending ----------------------------------------------------------------------------------


def test_a_due_tick_is_sent_once_with_the_schedule_header(db, q):
    create(
        db,
        "s_header",
        "*/5 * * * *",
        q,
        message={"job": 1},
        headers={"x": "y"},
        time_zone="Europe/Berlin",
    )
    try:
        set_next_tick(db, "s_header", datetime(2026, 6, 1, 8, 5, tzinfo=UTC))
        at = datetime(2026, 6, 1, 8, 6, 30, tzinfo=UTC)
        sent = due(db, at)
        assert [(s[0], s[1], s[2]) for s in sent] == [
            ("s_header", q, datetime(2026, 6, 1, 8, 5, tzinfo=UTC))
        ]
        assert due(db, at) == []  # the same call again sends nothing
        assert messages(db, q) == [
            (
                {"job": 1},
                {"x": "y", "schedule": {"name": "s_header", "tick": "2026-06-01T10:05:00+02:00"}},
            )
        ]
        row = db.execute(
            "SELECT last_tick, next_tick FROM pgmq.list_schedules()"
            " WHERE schedule_name = 's_header'"
        ).fetchone()
        assert row == (
            datetime(2026, 6, 1, 8, 5, tzinfo=UTC),
            datetime(2026, 6, 1, 8, 10, tzinfo=UTC),
        )
    finally:
        db.execute("SELECT pgmq.drop_schedule('s_header')")


def test_an_idle_call_sends_nothing(db, q):
    create(db, "s_idle", "0 0 1 1 *", q)
    try:
        assert [s for s in due(db, datetime.now(UTC)) if s[0] == "s_idle"] == []
    finally:
        db.execute("SELECT pgmq.drop_schedule('s_idle')")


def test_after_a_three_hour_gap_only_the_latest_tick_goes_if_within_catch_up(db, q):
    start = datetime(2026, 6, 1, 8, 0, tzinfo=UTC)
    create(db, "s_gap", "*/5 * * * *", q, catch_up=timedelta(minutes=10))
    create(db, "s_gap_short", "*/5 * * * *", q, catch_up=timedelta(minutes=1))
    try:
        for name in ("s_gap", "s_gap_short"):
            set_next_tick(db, name, start)
        assert {s[0] for s in due(db, start)} == {"s_gap", "s_gap_short"}
        later = start + timedelta(hours=3, minutes=3)  # 11:03: the latest tick is 11:00
        sent = {s[0]: s[2] for s in due(db, later)}
        assert sent == {"s_gap": start + timedelta(hours=3)}  # 3 minutes late, within 10
        skipped = dict(
            db.execute(
                "SELECT schedule_name, skipped FROM pgmq.schedules"
                " WHERE schedule_name LIKE 's_gap%'"
            ).fetchall()
        )
        # 08:05 .. 10:55 skipped (35); the short one also skips 11:00 (3 minutes > 1)
        assert skipped == {"s_gap": 35, "s_gap_short": 36}
        assert len(messages(db, q)) == 3
        nxt = dict(
            db.execute(
                "SELECT schedule_name, next_tick FROM pgmq.list_schedules()"
                " WHERE schedule_name LIKE 's_gap%'"
            ).fetchall()
        )
        assert set(nxt.values()) == {start + timedelta(hours=3, minutes=5)}
    finally:
        db.execute("SELECT pgmq.drop_schedule('s_gap'), pgmq.drop_schedule('s_gap_short')")


def test_the_catch_up_rule_for_every_intervals(db, q):
    create(db, "s_every", "@every 30 seconds", q, catch_up=timedelta(seconds=40))
    try:
        start = datetime(2026, 6, 1, 8, 0, tzinfo=UTC)
        set_next_tick(db, "s_every", start)
        assert [s[2] for s in due(db, start + timedelta(hours=3, seconds=35))] == [
            start + timedelta(hours=3, seconds=30)
        ]
        assert (
            db.execute(
                "SELECT skipped FROM pgmq.schedules WHERE schedule_name = 's_every'"
            ).fetchone()[0]
            == 361
        )
    finally:
        db.execute("SELECT pgmq.drop_schedule('s_every')")


def test_sends_go_through_pgmq_send_so_queue_attributes_apply(db, q):
    db.execute(
        "SELECT pgmq.set_queue_attributes(queue_name => %s, attributes => %s)",
        [q, Jsonb({"max_message_size": 50})],
    )
    create(db, "s_big", "* * * * *", q, message={"blob": "x" * 100})
    create(db, "s_small", "* * * * *", q, message={"n": 1})
    try:
        tick = datetime(2026, 6, 1, 8, 0, tzinfo=UTC)
        for name in ("s_big", "s_small"):
            set_next_tick(db, name, tick)
        sent = due(db, tick)
        assert [s[0] for s in sent] == ["s_small"]  # the refused one does not stop the others
        error = db.execute(
            "SELECT msg_id, error FROM pgmq.schedule_ticks WHERE schedule_name = 's_big'"
        ).fetchone()
        assert error[0] is None and "larger than" in error[1]
        assert due(db, tick) == []  # a refused tick is not tried again
    finally:
        db.execute("SELECT pgmq.drop_schedule('s_big'), pgmq.drop_schedule('s_small')")


def test_disabled_schedules_do_not_send_and_come_back_from_now(db, q):
    create(db, "s_off", "* * * * *", q, enabled=False)
    try:
        assert [s for s in due(db, datetime.now(UTC) + timedelta(hours=1)) if s[0] == "s_off"] == []
        assert (
            db.execute(
                "SELECT next_tick FROM pgmq.list_schedules() WHERE schedule_name = 's_off'"
            ).fetchone()[0]
            is None
        )
        db.execute("SELECT pgmq.enable_schedule(schedule_name => 's_off', enabled => true)")
        nxt = db.execute(
            "SELECT next_tick FROM pgmq.schedules WHERE schedule_name = 's_off'"
        ).fetchone()[0]
        now = db.execute("SELECT now()").fetchone()[0]
        assert now < nxt <= now + timedelta(minutes=1)
    finally:
        db.execute("SELECT pgmq.drop_schedule('s_off')")


def test_replacing_with_the_same_cron_keeps_the_next_tick(db, q):
    create(db, "s_keep", "* * * * *", q, message={"v": 1})
    try:
        set_next_tick(db, "s_keep", T0)
        create(db, "s_keep", "* * * * *", q, message={"v": 2})
        row = db.execute(
            "SELECT next_tick, message FROM pgmq.schedules WHERE schedule_name = 's_keep'"
        ).fetchone()
        assert row == (T0, {"v": 2})
        create(db, "s_keep", "*/2 * * * *", q)
        assert (
            db.execute(
                "SELECT next_tick FROM pgmq.schedules WHERE schedule_name = 's_keep'"
            ).fetchone()[0]
            > T0
        )
    finally:
        db.execute("SELECT pgmq.drop_schedule('s_keep')")


def test_run_now_sends_outside_the_ticks(db, q):
    create(db, "s_now", "0 0 1 1 *", q, message={"now": True})
    try:
        msg_id = db.execute("SELECT pgmq.run_schedule_now(schedule_name => 's_now')").fetchone()[0]
        assert msg_id > 0
        [(message, headers)] = messages(db, q)
        assert message == {"now": True}
        assert headers["schedule"]["name"] == "s_now" and headers["schedule"]["manual"] is True
        assert (
            db.execute(
                "SELECT count(*) FROM pgmq.schedule_ticks WHERE schedule_name = 's_now'"
            ).fetchone()[0]
            == 0
        )
    finally:
        db.execute("SELECT pgmq.drop_schedule('s_now')")


def test_dropping_the_queue_drops_its_schedules(db, queue_name):
    db.execute("SELECT pgmq.create(%s)", [queue_name])
    create(db, "s_dropq", "* * * * *", queue_name)
    db.execute("SELECT pgmq.drop_queue(%s)", [queue_name])
    assert (
        db.execute(
            "SELECT count(*) FROM pgmq.schedules WHERE schedule_name = 's_dropq'"
        ).fetchone()[0]
        == 0
    )


def test_no_schedule_function_writes_a_database_object(db, q):
    def objects() -> int:
        return (
            db.execute(
                "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                " WHERE n.nspname = 'pgmq'"
            ).fetchone()[0]
            + db.execute(
                "SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
                " WHERE n.nspname = 'pgmq'"
            ).fetchone()[0]
        )

    before = objects()
    create(db, "s_ddl", "* * * * *", q)
    try:
        set_next_tick(db, "s_ddl", T0)
        assert len(due(db, T0)) >= 1
        db.execute("SELECT pgmq.run_schedule_now('s_ddl')")
        db.execute("SELECT * FROM pgmq.list_schedules()")
        db.execute("SELECT pgmq.enable_schedule('s_ddl', false)")
        assert objects() == before
    finally:
        db.execute("SELECT pgmq.drop_schedule('s_ddl')")
