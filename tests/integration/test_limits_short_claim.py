"""The short claim of a max_in_flight queue (migration 0010), exact and without waits.

A read at READ COMMITTED of a queue whose only read-side attribute is max_in_flight locks
a window of slots through the owner's ``pgmq._limit_lock``; its kept read (``'m'``) then
probes which of them are free, claims at most that many messages and records them with
the owner's ``pgmq._limit_record``, which takes the caller's word that the slots it is
given are free (docs/internals/attributes.md, "Rights"). These tests run readers at a
barrier at READ COMMITTED and REPEATABLE READ (which claims the checked way), a session
idle in its transaction while holding slots, and a caller that gives the owner's
functions made-up arguments.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterator

import psycopg
import pytest
from psycopg import errors, sql

from tests.integration import test_limits
from tests.integration.test_limits import at_barrier, fill, in_flight, reader, set_attributes

pytestmark = pytest.mark.usefixtures("django_db_setup")

READ = test_limits.READ

# test_limits' fixtures: its session (a lock_timeout of 20 s, for a failed test's open
# transaction) and the queue it makes and drops
db = test_limits.db
q = test_limits.q


def short_claims(conn: psycopg.Connection, queue: str) -> int:
    """How many of this session's reads of ``queue`` went the short claim's way (the
    kept read 'm' counts its uses up to 3, then is prepared: 'p')."""
    row = conn.execute(
        "SELECT current_setting(%s, true)", [f"pgmq.prep_mg_q_{queue}".replace("-", "$")]
    ).fetchone()
    state = row[0] if row else None
    return 4 if state == "p" else int(state or 0)


def slots(db: psycopg.Connection, queue: str) -> list[tuple]:
    """The queue's slot rows as they are: (slot, msg_id, read_ct)."""
    return db.execute(
        "SELECT slot, msg_id, read_ct FROM pgmq.queue_limit_slots"
        " WHERE queue_name = lower(%s) AND kind = 'f' ORDER BY slot",
        [queue],
    ).fetchall()


@pytest.mark.parametrize("isolation", ["READ COMMITTED", "REPEATABLE READ"])
def test_readers_at_a_barrier_never_hold_more_than_max_in_flight(pg_connect, db, q, isolation):
    """Eight sessions read 4 each at once, rounds after rounds, acknowledging some between
    rounds: never more in flight than the limit, no message handed out twice while in
    flight, none lost (every message is read once in the end)."""
    set_attributes(db, q, max_in_flight=30)
    sent = set(fill(db, q, 400))
    held: set[int] = set()
    seen: set[int] = set()
    rng = random.Random(38)
    for _ in range(12):
        got = at_barrier(pg_connect, 8, reader(q, 4), isolation)
        batch = [i for b in got for i in b]
        assert len(batch) == len(set(batch)), "a message handed out twice at once"
        assert not set(batch) & held, "a message in flight handed out again"
        held |= set(batch)
        seen |= set(batch)
        assert len(held) == in_flight(db, q) <= 30
        # No slot is lost: the limit is reached whenever enough was asked. A reader of the
        # round may get fewer than the limit left (it never waits: a free slot another
        # reader held locked at that instant, in a window it did not use, is skipped), so
        # what is left of the limit is read once more, alone.
        left = min(30, len(sent)) - len(held)
        if left > 0:
            extra = [r[0] for r in db.execute(READ, [q, left])]
            assert not set(extra) & held, "a message in flight handed out again"
            held |= set(extra)
            seen |= set(extra)
        assert len(held) == in_flight(db, q) == min(30, len(sent))
        acked = rng.sample(sorted(held), rng.randint(5, 20))
        db.execute("SELECT pgmq.archive(%s, %s::bigint[])", [q, acked])
        held -= set(acked)
        sent -= set(acked)
    # the rest, read until none is left: each message once
    while True:
        got = [r[0] for r in db.execute(READ, [q, 30])]
        if not got:
            break
        assert not set(got) & seen
        seen |= set(got)
        db.execute("SELECT pgmq.archive(%s, %s::bigint[])", [q, got])
    assert len(seen) == 400
    if isolation == "READ COMMITTED":
        assert short_claims(db, q) > 0


def test_the_short_claim_is_taken_at_read_committed_only(pg_connect, db, q):
    set_attributes(db, q, max_in_flight=100)
    fill(db, q, 20)
    rr = pg_connect(autocommit=False)
    rr.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
    assert len(rr.execute(READ, [q, 5]).fetchall()) == 5
    assert short_claims(rr, q) == 0  # the checked way, which refuses a stale snapshot
    rr.commit()
    assert len(db.execute(READ, [q, 5]).fetchall()) == 5
    assert short_claims(db, q) == 1
    # another read-side attribute: the checked way
    set_attributes(db, q, priorities=True)
    assert len(db.execute(READ, [q, 5]).fetchall()) == 5
    assert short_claims(db, q) == 1
    assert in_flight(db, q) == 15


def test_a_window_whose_slots_hold_messages_in_flight_gets_the_rest_the_checked_way(
    pg_connect, db, q
):
    """Slots of the window still in flight: the short claim reads what the free ones
    allow, then the checked way walks the ring for the rest."""
    set_attributes(db, q, max_in_flight=1000)
    fill(db, q, 40)
    first = pg_connect()
    assert len(first.execute(READ, [q, 6]).fetchall()) == 6  # slots 1..6, committed
    other = pg_connect()  # its cursor at slot 1: a window of slots 1..10, 6 in flight
    got = [r[0] for r in other.execute(READ, [q, 10])]
    assert len(got) == 10 and short_claims(other, q) == 1
    assert in_flight(db, q) == 16
    taken = [s for s in slots(db, q) if s[1] is not None and s[2] > 0]
    assert len(taken) == 16


def test_a_session_idle_with_slots_of_the_short_claim_makes_no_one_wait(pg_connect, db, q):
    set_attributes(db, q, max_in_flight=20)
    fill(db, q, 60)
    idle = pg_connect(autocommit=False)
    assert len(idle.execute(READ, [q, 3]).fetchall()) == 3  # holds its slots, idle
    assert short_claims(idle, q) == 1
    other = pg_connect()
    other.execute("SET lock_timeout = '5s'")  # a wait would fail, not pass slowly
    began = time.monotonic()
    assert len(other.execute(READ, [q, 10]).fetchall()) == 10
    assert len(other.execute(READ, [q, 10]).fetchall()) == 7  # the idle session's 3 count
    assert other.execute(READ, [q, 10]).fetchall() == []
    assert time.monotonic() - began < 2.0
    idle.rollback()  # its claim undone: its 3 slots free
    assert len(other.execute(READ, [q, 10]).fetchall()) == 3
    assert in_flight(db, q) == 20


def test_a_session_keeping_the_short_read_sees_attributes_change_at_once(pg_connect, db, q):
    """Each read looks the attributes up (the short claim needs max_in_flight and no other
    read-side key): a queue paused, given a rate limit or its limit removed while a
    session keeps the short claim's read is read as the new attributes say, at once."""
    set_attributes(db, q, max_in_flight=100)
    fill(db, q, 60)
    session = pg_connect()
    got = []
    for _ in range(5):
        got += [r[0] for r in session.execute(READ, [q, 2])]
    assert len(got) == 10 and short_claims(session, q) == 4  # kept: 'p'
    set_attributes(db, q, paused=True)
    assert session.execute(READ, [q, 5]).fetchall() == []
    set_attributes(db, q, paused=None)  # a null removes the key
    for _ in range(4):
        got += [r[0] for r in session.execute(READ, [q, 2])]
    set_attributes(db, q, rate_limit={"count": 3, "seconds": 60})
    assert len(session.execute(READ, [q, 5]).fetchall()) == 3  # the rate limit applies
    assert session.execute(READ, [q, 5]).fetchall() == []
    db.execute(
        "SELECT pgmq.set_queue_attributes(%s, %s::jsonb)",
        [q, json.dumps({"rate_limit": None, "max_in_flight": None})],
    )
    assert len(session.execute(READ, [q, 5]).fetchall()) == 5  # no limit at all
    assert in_flight(db, q) == len(got) + 3 + 5


@pytest.fixture
def other_queue(db, queue_name) -> Iterator[str]:
    name = f"{queue_name}_o"
    db.execute("SELECT pgmq.create(%s)", [name])
    yield name
    db.execute("SELECT pgmq.drop_queue(%s)", [name])


def test_the_record_given_made_up_arguments_writes_only_free_rows_of_its_queue(
    pg_connect, db, q, other_queue
):
    """_limit_record takes the caller's word that its slots are free: made-up ctids can
    fill this queue's slots (past the limit, which a role with message rights can get
    anyway), never another queue's rows, a row another claim holds, or any state."""
    set_attributes(db, q, max_in_flight=4)
    set_attributes(db, other_queue, max_in_flight=4)
    fill(db, q, 10)
    fill(db, other_queue, 10)
    held = [r[0] for r in db.execute(READ, [other_queue, 4])]
    theirs = slots(db, other_queue)
    state_sql = "SELECT * FROM pgmq.queue_limit_state ORDER BY queue_name"
    attrs_sql = "SELECT * FROM pgmq.queue_attributes ORDER BY queue_name"
    state = db.execute(state_sql).fetchall()
    attrs = db.execute(attrs_sql).fetchall()
    other_tids = [
        r[0]
        for r in db.execute(
            "SELECT ctid::text FROM pgmq.queue_limit_slots WHERE queue_name = lower(%s)",
            [other_queue],
        )
    ]
    caller = pg_connect(autocommit=False)
    caller.execute("SET lock_timeout = '2s'")
    # another queue's rows, by their ctids, under this queue's name or theirs...
    row = caller.execute(
        "SELECT pgmq._limit_record(%s, 4, %s::tid[], %s::bigint[], ARRAY[1, 1, 1, 1])",
        [q, other_tids[:4], [1, 2, 3, 4]],
    ).fetchone()
    assert row == (0,)
    # ...a row another claim holds (its own queue's): skipped, not waited for
    holder = pg_connect(autocommit=False)
    holder.execute(
        "SELECT 1 FROM pgmq.queue_limit_slots WHERE queue_name = lower(%s) AND kind = 'f'"
        " AND slot = 1 FOR UPDATE",
        [other_queue],
    )
    slot1 = db.execute(
        "SELECT ctid::text FROM pgmq.queue_limit_slots WHERE queue_name = lower(%s)"
        " AND kind = 'f' AND slot = 1",
        [other_queue],
    ).fetchone()
    began = time.monotonic()
    caller.execute("SAVEPOINT s")
    with pytest.raises(errors.LockNotAvailable):  # as NOWAIT: an error, not a wait
        caller.execute(
            "SELECT pgmq._limit_record(%s, 1, ARRAY[%s]::tid[], ARRAY[1]::bigint[], ARRAY[9])",
            [other_queue, slot1[0]],
        )
    assert time.monotonic() - began < 1.0
    caller.execute("ROLLBACK TO SAVEPOINT s")
    holder.rollback()
    # nonsense: nothing, no error
    for args in (
        [q, None, None, None, None],
        [q, 3, [], [], []],
        [q, 3, ["(0,0)", "(999999,1)"], [1, 2], [1, 1]],
        ["no-such_queue", 3, other_tids[:1], [1], [1]],
    ):
        row = caller.execute(
            "SELECT pgmq._limit_record(%s, %s, %s::tid[], %s::bigint[], %s::integer[])", args
        ).fetchone()
        assert row == (0,), args
    caller.commit()
    assert slots(db, other_queue) == theirs
    assert db.execute(state_sql).fetchall() == state
    assert db.execute(attrs_sql).fetchall() == attrs
    # the other queue's limit holds as before
    assert db.execute(READ, [other_queue, 4]).fetchall() == []
    assert in_flight(db, other_queue) == len(held) == 4


def test_the_lock_given_made_up_arguments_takes_nothing_or_its_window(pg_connect, db, q):
    set_attributes(db, q, max_in_flight=8)
    fill(db, q, 10)
    caller = pg_connect(autocommit=False)
    for want in (None, 0, -5, 9, 2_000_000_000):
        row = caller.execute("SELECT pgmq._limit_lock(%s, %s)", [q, want]).fetchone()
        assert row == (None,), want
    assert caller.execute("SELECT pgmq._limit_lock('no_such_queue', 3)").fetchone() == (None,)
    # a planted cursor is a hint only
    caller.execute("SELECT set_config(%s, '99999999', false)", [f"pgmq.limit_at_{q}"])
    row = caller.execute("SELECT pgmq._limit_lock(%s, 3)", [q]).fetchone()
    assert row is not None and len(row[0]) == 3
    caller.rollback()
    assert len(db.execute(READ, [q, 10]).fetchall()) == 8


@pytest.mark.parametrize(
    ("cursor", "first"),
    [
        ("5", 5),
        ("000000005", 5),
        ("", 1),
        ("x5", 1),
        ("-5", 1),
        (" 5", 1),
        ("5 ", 1),
        ("0000000005", 1),  # ten characters: more than a cursor ever holds
        ("\u0665", 1),  # a digit, but not 0-9
    ],
)
def test_the_lock_starts_at_a_cursor_of_digits_only(pg_connect, db, q, cursor, first):
    """The session's cursor (a setting any code on the connection can write) is taken
    when it is one to nine digits 0-9, else the window starts at slot 1; never an error."""
    set_attributes(db, q, max_in_flight=8)
    fill(db, q, 10)
    caller = pg_connect(autocommit=False)
    caller.execute("SELECT set_config(%s, %s, false)", [f"pgmq.limit_at_{q}", cursor])
    (tids,) = caller.execute("SELECT pgmq._limit_lock(%s, 2)", [q]).fetchone()
    assert tids is not None and len(tids) == 2
    got = caller.execute(
        "SELECT slot FROM pgmq.queue_limit_slots WHERE ctid = ANY (%s::tid[]) ORDER BY slot",
        [tids],
    ).fetchall()
    caller.rollback()
    assert got == [(first,), (first + 1,)]


def test_the_application_role_reads_on_the_short_claim(pg_connect, db, q):
    """The app role (no right on the limit tables) reads through the owner's lock and
    record; the limit holds."""
    role = f"pgmq_short_app_{q[-8:]}"
    db.execute(sql.SQL("CREATE ROLE {}").format(sql.Identifier(role)))
    try:
        for grant in (
            "GRANT USAGE ON SCHEMA pgmq TO {r}",
            "GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA pgmq TO {r}",
            "GRANT SELECT ON ALL TABLES IN SCHEMA pgmq TO {r}",
            "GRANT INSERT, UPDATE, DELETE ON pgmq.{qt}, pgmq.{at} TO {r}",
        ):
            db.execute(
                sql.SQL(grant).format(
                    r=sql.Identifier(role),
                    qt=sql.Identifier(f"q_{q}"),
                    at=sql.Identifier(f"a_{q}"),
                )
            )
        db.execute(
            "SELECT pgmq.set_queue_attributes(%s, %s::jsonb)",
            [q, json.dumps({"max_in_flight": 12})],
        )
        fill(db, q, 30)
        app = pg_connect()
        app.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(role)))
        got = []
        for _ in range(6):
            got += [r[0] for r in app.execute(READ, [q, 5])]
        assert len(got) == len(set(got)) == 12 and short_claims(app, q) >= 2
        app.execute("SELECT pgmq.archive(%s, %s::bigint[])", [q, got[:5]])
        assert len(app.execute(READ, [q, 10]).fetchall()) == 5
        assert in_flight(db, q) == 12
        app.close()
    finally:
        db.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
        db.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))
