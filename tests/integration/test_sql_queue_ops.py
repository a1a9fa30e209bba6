"""How calls reach a queue (sql/15_queue_ops.sql): static statements, plans, the low-water mark."""

from __future__ import annotations

import time

import psycopg
import pytest

pytestmark = pytest.mark.usefixtures("django_db_setup")


@pytest.fixture
def db(pg_connect) -> psycopg.Connection:
    return pg_connect()


def functions(db: psycopg.Connection) -> list[tuple]:
    """Every function of schema pgmq: name, arguments, body."""
    return db.execute(
        "SELECT p.proname, pg_get_function_identity_arguments(p.oid), p.prosrc, p.xmin::text"
        " FROM pg_proc p WHERE p.pronamespace = 'pgmq'::regnamespace ORDER BY 1, 2"
    ).fetchall()


def scans(db: psycopg.Connection, queue: str) -> tuple[int, int]:
    """(sequential scans of the live table, index entries its primary key has handed out)."""
    db.execute("SELECT pg_stat_force_next_flush()")
    db.execute("SELECT pg_stat_clear_snapshot()")
    return db.execute(
        "SELECT t.seq_scan + 0, i.idx_tup_read + 0 FROM pg_stat_user_tables t "
        "JOIN pg_stat_user_indexes i ON i.relid = t.relid "
        "WHERE t.schemaname = 'pgmq' AND t.relname = %s",
        [f"q_{queue}"],
    ).fetchone()


def use(db: psycopg.Connection, queue: str, times: int = 3) -> None:
    """Send and pop ``times`` times."""
    for _ in range(times):
        sent = db.execute("SELECT * FROM pgmq.send(%s, '{\"n\": 1}')", [queue]).fetchone()[0]
        assert db.execute("SELECT msg_id FROM pgmq.pop(%s)", [queue]).fetchall() == [(sent,)]


@pytest.mark.parametrize(
    "create",
    [
        "SELECT pgmq.create(%s)",
        "SELECT pgmq.create_unlogged(%s)",
        "SELECT pgmq.create_partitioned(%s, '1000', '100000')",
    ],
)
def test_a_queue_used_again_and_again_gets_no_function(db, queue_name, create):
    before = functions(db)
    db.execute(create, [queue_name])
    use(db, queue_name, 5)  # the hot path promoted a queue at its third call
    ids = [
        r[0]
        for r in db.execute(
            "SELECT * FROM pgmq.send_batch(%s, %s::jsonb[])", [queue_name, ['{"a": 1}', '{"a": 2}']]
        )
    ]
    got = db.execute("SELECT msg_id, message FROM pgmq.read(%s, 30, 5)", [queue_name]).fetchall()
    assert got == [(ids[0], {"a": 1}), (ids[1], {"a": 2})]
    assert functions(db) == before
    db.execute("SELECT pgmq.drop_queue(%s)", [queue_name])
    assert functions(db) == before


def test_creating_and_dropping_queues_rewrites_no_function(db, queue_name):
    def functions() -> list[tuple]:
        return db.execute(
            "SELECT p.oid, p.xmin::text FROM pg_proc p "
            "WHERE p.pronamespace = 'pgmq'::regnamespace ORDER BY 1"
        ).fetchall()

    before = functions()
    for n in range(20):
        db.execute("SELECT pgmq.create(%s)", [f"{queue_name}_{n}"])
        db.execute("SELECT * FROM pgmq.send(%s, '{}')", [f"{queue_name}_{n}"])
    for n in range(20):
        db.execute("SELECT pgmq.drop_queue(%s)", [f"{queue_name}_{n}"])
    assert functions() == before


@pytest.mark.parametrize(
    "call",
    [
        "SELECT * FROM pgmq.read(%s, 30, 1)",
        "SELECT * FROM pgmq.send(%s, '{}')",
        "SELECT * FROM pgmq.archive(%s, ARRAY[1]::bigint[])",
        "SELECT * FROM pgmq.pop(%s)",
    ],
)
def test_a_queue_that_does_not_exist_is_reported_by_its_table(db, call):
    with pytest.raises(psycopg.errors.UndefinedTable, match=r'relation "pgmq.q_nope_x" does not'):
        db.execute(call, ["nope_X"])


@pytest.mark.parametrize("op", ["read", "pop"])
def test_reads_on_a_queue_that_was_empty_when_analyzed_walk_the_key(db, queue_name, op):
    """The statistics say the table is empty; reads of the full table stay index walks."""
    call = {
        "read": "SELECT msg_id FROM pgmq.read(%s, 30, 10)",
        "pop": "SELECT msg_id FROM pgmq.pop(%s, 10)",
    }[op]
    db.execute("SELECT pgmq.create(%s)", [queue_name])
    db.execute(f"VACUUM ANALYZE pgmq.q_{queue_name}")  # statistics say: no pages, no rows
    for _ in range(8):
        assert db.execute(call, [queue_name]).fetchall() == []
    db.execute("SELECT pgmq.send_batch(%s, array_fill('{}'::jsonb, ARRAY[20000]))", [queue_name])
    seq_before, read_before = scans(db, queue_name)
    for _ in range(3):
        assert len(db.execute(call, [queue_name]).fetchall()) == 10
    seq_after, read_after = scans(db, queue_name)
    assert seq_after == seq_before
    # Three ordered walks of ten rows (and the mark's one look); a bitmap or full scan
    # would hand out thousands of entries.
    assert read_after - read_before < 200
    db.execute("SELECT pgmq.drop_queue(%s)", [queue_name])


def test_a_recreated_queue_is_read_from_its_first_message(pg_connect, queue_name):
    reader, admin = pg_connect(), pg_connect()
    admin.execute("SELECT pgmq.create(%s)", [queue_name])
    admin.execute("SELECT pgmq.send_batch(%s, array_fill('{}'::jsonb, ARRAY[500]))", [queue_name])
    assert len(reader.execute("SELECT * FROM pgmq.pop(%s, 500)", [queue_name]).fetchall()) == 500
    reader.execute("SELECT * FROM pgmq.read(%s, 30, 1)", [queue_name])  # mark at the end
    admin.execute("SELECT pgmq.drop_queue(%s)", [queue_name])
    admin.execute("SELECT pgmq.create(%s)", [queue_name])
    msg_id = admin.execute("SELECT * FROM pgmq.send(%s, '{}')", [queue_name]).fetchone()[0]
    assert msg_id == 1
    got = reader.execute("SELECT msg_id FROM pgmq.read(%s, 30, 5)", [queue_name]).fetchall()
    assert got == [(1,)]
    admin.execute("SELECT pgmq.drop_queue(%s)", [queue_name])


def test_messages_visible_again_below_newer_ones_are_read_first(pg_connect, queue_name):
    reader, admin = pg_connect(), pg_connect()
    admin.execute("SELECT pgmq.create(%s)", [queue_name])
    ids = [
        r[0]
        for r in admin.execute(
            "SELECT * FROM pgmq.send_batch(%s, array_fill('{}'::jsonb, ARRAY[6]))", [queue_name]
        )
    ]
    first = [r[0] for r in reader.execute("SELECT * FROM pgmq.read(%s, 300, 2)", [queue_name])]
    assert first == ids[:2]
    reader.execute("SELECT pgmq.archive(%s, %s::bigint[])", [queue_name, ids[2:4]])
    admin.execute("SELECT pgmq.set_vt(%s, %s::bigint[], 0)", [queue_name, ids[:2]])
    again = [r[0] for r in reader.execute("SELECT * FROM pgmq.read(%s, 300, 3)", [queue_name])]
    assert again == [ids[0], ids[1], ids[4]]
    admin.execute("SELECT pgmq.drop_queue(%s)", [queue_name])


def test_a_message_committed_late_below_the_mark_is_read_within_seconds(pg_connect, queue_name):
    """The documented exception: an id handed out before the mark, committed after it."""
    reader, admin, late = pg_connect(), pg_connect(), pg_connect(autocommit=False)
    admin.execute("SELECT pgmq.create(%s)", [queue_name])
    late_id = late.execute("SELECT * FROM pgmq.send(%s, '{\"late\": 1}')", [queue_name]).fetchone()[
        0
    ]
    early = admin.execute("SELECT * FROM pgmq.send(%s, '{}')", [queue_name]).fetchone()[0]
    assert early > late_id
    got = reader.execute("SELECT msg_id FROM pgmq.pop(%s, 5)", [queue_name]).fetchall()
    assert got == [(early,)]  # the late one is not committed yet
    late.commit()
    deadline = time.monotonic() + 5
    found: list[tuple] = []
    while not found and time.monotonic() < deadline:
        found = reader.execute("SELECT msg_id FROM pgmq.read(%s, 30, 5)", [queue_name]).fetchall()
        time.sleep(0.05)
    assert found == [(late_id,)]
    admin.execute("SELECT pgmq.drop_queue(%s)", [queue_name])


@pytest.mark.parametrize("name", ["statement", "missing", "ops"])
def test_a_queue_named_like_a_helper_works_and_drops(db, name):
    db.execute("SELECT pgmq.create(%s)", [name])
    msg_id = db.execute("SELECT * FROM pgmq.send(%s, '{}')", [name]).fetchone()[0]
    assert db.execute("SELECT msg_id FROM pgmq.read(%s, 30, 1)", [name]).fetchall() == [(msg_id,)]
    assert db.execute("SELECT pgmq.drop_queue(%s)", [name]).fetchone() == (True,)


@pytest.mark.parametrize("value", ["garbage", "1 2 3", "1 x 3 4", "", "99 1e400 5 6"])
def test_a_low_water_mark_set_by_hand_never_fails_a_read(pg_connect, queue_name, value):
    """A value the router did not write counts as none: the next read looks again."""
    db = pg_connect()
    db.execute("SELECT pgmq.create(%s)", [queue_name])
    sent = db.execute("SELECT * FROM pgmq.send(%s, '{}')", [queue_name]).fetchone()[0]
    db.execute("SELECT set_config(%s, %s, false)", [f"pgmq.low_q_{queue_name}", value])
    assert db.execute("SELECT msg_id FROM pgmq.read(%s, 30, 5)", [queue_name]).fetchall() == [
        (sent,)
    ]
    db.execute("SELECT pgmq.drop_queue(%s)", [queue_name])


def test_reads_between_full_looks_see_every_committed_message(pg_connect, queue_name):
    """Short looks (every 50 ms, from the session's mark) never hide a message sent
    after the mark: 40 rounds of send, read and archive in a row, each read at once."""
    reader, sender = pg_connect(), pg_connect()
    sender.execute("SELECT pgmq.create(%s)", [queue_name])
    for _ in range(40):
        ids = [
            r[0]
            for r in sender.execute(
                "SELECT * FROM pgmq.send_batch(%s, array_fill('{}'::jsonb, ARRAY[3]))",
                [queue_name],
            )
        ]
        got = [
            r[0] for r in reader.execute("SELECT msg_id FROM pgmq.read(%s, 30, 10)", [queue_name])
        ]
        assert got == ids
        reader.execute("SELECT pgmq.archive(%s, %s::bigint[])", [queue_name, got])
        time.sleep(0.01)
    sender.execute("SELECT pgmq.drop_queue(%s)", [queue_name])
