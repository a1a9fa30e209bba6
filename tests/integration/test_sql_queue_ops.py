"""How calls reach a queue (sql/15_queue_ops.sql): the cold path, the hot set, plans, the mark."""

from __future__ import annotations

import time

import psycopg
import pytest

pytestmark = pytest.mark.usefixtures("django_db_setup")


@pytest.fixture
def db(pg_connect) -> psycopg.Connection:
    return pg_connect()


def ops_function(db: psycopg.Connection, queue: str) -> str | None:
    return db.execute("SELECT to_regproc(%s)::text", [f"pgmq._ops_{queue.lower()}"]).fetchone()[0]


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


def hot_set(db: psycopg.Connection) -> list[str]:
    return [r[0] for r in db.execute("SELECT pgmq._queue_ops_hot_set()")]


def use(db: psycopg.Connection, queue: str, times: int = 3) -> None:
    """Send and pop ``times`` times (a session's third call to a queue warms it up)."""
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
def test_a_queue_a_session_keeps_using_becomes_hot_until_it_is_dropped(db, queue_name, create):
    db.execute(create, [queue_name])
    assert ops_function(db, queue_name) is None  # creating a queue writes no function
    use(db, queue_name, 1)  # a send and a pop: two calls
    assert ops_function(db, queue_name) is None
    db.execute("SELECT * FROM pgmq.send(%s, '{}')", [queue_name])  # the third call promotes it
    db.execute("SELECT * FROM pgmq.pop(%s)", [queue_name])
    assert ops_function(db, queue_name) == f"pgmq._ops_{queue_name}"
    assert queue_name in hot_set(db)
    ids = [
        r[0]
        for r in db.execute(
            "SELECT * FROM pgmq.send_batch(%s, %s::jsonb[])", [queue_name, ['{"a": 1}', '{"a": 2}']]
        )
    ]
    got = db.execute("SELECT msg_id, message FROM pgmq.read(%s, 30, 5)", [queue_name]).fetchall()
    assert got == [(ids[0], {"a": 1}), (ids[1], {"a": 2})]
    db.execute("SELECT pgmq.drop_queue(%s)", [queue_name])
    assert ops_function(db, queue_name) is None
    assert queue_name not in hot_set(db)


def test_creating_and_dropping_cold_queues_rewrites_no_function(db, queue_name):
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


def test_a_session_that_touches_many_queues_once_promotes_none(pg_connect, queue_name):
    admin, session = pg_connect(), pg_connect()
    names = [f"{queue_name}_{n}" for n in range(30)]
    for name in names:
        admin.execute("SELECT pgmq.create(%s)", [name])
    for name in names:
        session.execute("SELECT * FROM pgmq.send(%s, '{}')", [name])
        assert len(session.execute("SELECT * FROM pgmq.read(%s, 30, 1)", [name]).fetchall()) == 1
    assert not set(names) & set(hot_set(admin))
    for name in names:
        admin.execute("SELECT pgmq.drop_queue(%s)", [name])


def test_the_hot_set_is_bounded_by_the_setting(db, queue_name):
    names = [f"{queue_name}_{n}" for n in range(4)]
    db.execute("SELECT set_config('pgmq.hot_queues', %s, false)", [str(len(hot_set(db)) + 2)])
    for name in names:
        db.execute("SELECT pgmq.create(%s)", [name])
        use(db, name)  # each works, hot or not
    assert len(set(names) & set(hot_set(db))) == 2
    db.execute("SET pgmq.hot_queues = '0'")  # 0: never promote
    db.execute("SELECT pgmq.create(%s)", [f"{queue_name}_off"])
    use(db, f"{queue_name}_off", 5)
    assert ops_function(db, f"{queue_name}_off") is None
    for name in [*names, f"{queue_name}_off"]:
        db.execute("SELECT pgmq.drop_queue(%s)", [name])


def test_hot_and_cold_paths_give_the_same_answers(pg_connect, queue_name):
    hot, cold = pg_connect(), pg_connect()
    cold.execute("SET pgmq.hot_queues = '0'")
    hot.execute("SELECT pgmq.create(%s)", [queue_name])
    use(hot, queue_name)
    assert ops_function(hot, queue_name) is not None
    for session in (hot, cold):
        ids = [
            r[0]
            for r in session.execute(
                "SELECT * FROM pgmq.send_batch(%s, %s::jsonb[], %s::jsonb[])",
                [queue_name, ['{"k": 1}', '{"k": 2}', '{"k": 3}'], ['{"h": 1}', None, None]],
            )
        ]
        read = session.execute(
            "SELECT msg_id, read_ct, message, headers FROM pgmq.read(%s, 30, 2, %s)",
            [queue_name, '{"k": 2}'],
        ).fetchall()
        assert read == [(ids[1], 1, {"k": 2}, None)]
        moved = session.execute(
            "SELECT msg_id FROM pgmq.set_vt(%s, %s::bigint[], 0)", [queue_name, ids[1:2]]
        ).fetchall()
        assert moved == [(ids[1],)]
        assert session.execute(
            "SELECT * FROM pgmq.archive(%s, %s::bigint[])", [queue_name, ids[:1]]
        ).fetchall() == [(ids[0],)]
        assert session.execute(
            "SELECT * FROM pgmq.delete(%s, %s::bigint[])", [queue_name, ids[2:]]
        ).fetchall() == [(ids[2],)]
        popped = session.execute("SELECT msg_id, message FROM pgmq.pop(%s, 5)", [queue_name])
        assert popped.fetchall() == [(ids[1], {"k": 2})]
    hot.execute("SELECT pgmq.drop_queue(%s)", [queue_name])


def test_a_hot_queue_whose_function_was_dropped_by_hand_is_cold_after_the_route_is_written(
    db, queue_name
):
    db.execute("SELECT pgmq.create(%s)", [queue_name])
    use(db, queue_name)
    db.execute(f'DROP FUNCTION pgmq."_ops_{queue_name}"')
    db.execute("SELECT pgmq._install_queue_route()")
    assert queue_name not in hot_set(db)
    msg_id = db.execute("SELECT * FROM pgmq.send(%s, '{}')", [queue_name]).fetchone()[0]
    assert db.execute("SELECT pgmq.archive(%s, %s::bigint)", [queue_name, msg_id]).fetchone()[0]
    db.execute("SELECT pgmq.drop_queue(%s)", [queue_name])


def test_a_queue_made_in_one_session_is_usable_at_once_in_a_hot_session(pg_connect, queue_name):
    first, other = pg_connect(), pg_connect()
    first.execute("SELECT pgmq.create(%s)", [f"{queue_name}_a"])
    use(first, f"{queue_name}_a")  # first compiled the router and the hot path
    other.execute("SELECT pgmq.create(%s)", [f"{queue_name}_b"])
    use(first, f"{queue_name}_b", 1)
    other.execute("SELECT pgmq.drop_queue(%s)", [f"{queue_name}_a"])
    other.execute("SELECT pgmq.create(%s)", [f"{queue_name}_a"])
    use(first, f"{queue_name}_a", 2)  # the namesake, through the rewritten router
    for suffix in ("a", "b"):
        first.execute("SELECT pgmq.drop_queue(%s)", [f"{queue_name}_{suffix}"])


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
    assert ops_function(db, "nope_x") is None


@pytest.mark.parametrize("op", ["read", "pop"])
def test_a_plan_made_on_an_empty_queue_still_walks_the_key_when_it_is_full(db, queue_name, op):
    """The session's plans are made while the table is empty; later reads stay index walks."""
    call = {
        "read": "SELECT msg_id FROM pgmq.read(%s, 30, 10)",
        "pop": "SELECT msg_id FROM pgmq.pop(%s, 10)",
    }[op]
    db.execute("SELECT pgmq.create(%s)", [queue_name])
    db.execute(f"VACUUM ANALYZE pgmq.q_{queue_name}")  # statistics say: no pages, no rows
    for _ in range(8):  # past any number of custom plans before a generic one
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
    assert ops_function(db, name) is None


def hot_source(db: psycopg.Connection) -> str:
    return db.execute(
        "SELECT prosrc FROM pg_proc WHERE oid = 'pgmq._queue_ops_hot'::regproc"
    ).fetchone()[0]


def test_the_hot_path_calls_every_hot_queue_by_name_and_forgets_dropped_ones(db, queue_name):
    names = [f"{queue_name}_{suffix}" for suffix in ("a", "B", "c-1", "d_2", "Z", "0", "x")]
    db.execute("SET pgmq.hot_queues = '1000'")
    for name in names:
        db.execute("SELECT pgmq.create(%s)", [name])
        use(db, name)
    source = hot_source(db)
    for name in names:
        assert f"lname = '{name.lower()}'" in source
    # every queue reached through the tree of comparisons, in any case of its name
    for name in names:
        for spelling in (name, name.upper(), name.lower()):
            sent = db.execute(
                "SELECT * FROM pgmq.send(%s, %s)", [spelling, f'"{spelling}"']
            ).fetchone()[0]
            got = db.execute("SELECT msg_id, message FROM pgmq.pop(%s)", [name]).fetchall()
            assert got == [(sent, spelling)]
    for name in names:
        db.execute("SELECT pgmq.drop_queue(%s)", [name])
    assert queue_name not in hot_source(db)
