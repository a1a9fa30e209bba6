"""Queue attributes through the SQL API (psycopg, named arguments)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

import psycopg
import pytest
from psycopg.types.json import Jsonb

pytestmark = pytest.mark.usefixtures("django_db_setup")


@pytest.fixture
def db(pg_connect) -> psycopg.Connection:
    conn = pg_connect()
    conn.execute("SET lock_timeout = '20s'")
    return conn


@pytest.fixture
def q(db, queue_name) -> Iterator[str]:
    """A new queue, dropped afterwards with its dead-letter queue."""
    db.execute("SELECT pgmq.create(queue_name => %s)", [queue_name])
    yield queue_name
    for name in (queue_name, queue_name + "_dlq"):
        db.execute("SELECT pgmq.drop_queue(queue_name => %s)", [name])


def set_attrs(db: psycopg.Connection, queue: str, attrs: dict) -> dict:
    return db.execute(
        "SELECT pgmq.set_queue_attributes(queue_name => %s, attributes => %s)",
        [queue, Jsonb(attrs)],
    ).fetchone()[0]


def get_attrs(db: psycopg.Connection, queue: str) -> dict:
    return db.execute("SELECT pgmq.get_queue_attributes(queue_name => %s)", [queue]).fetchone()[0]


def send(db: psycopg.Connection, queue: str, msg: dict, headers: dict | None = None, **kw) -> int:
    if "delay" in kw:
        return db.execute(
            "SELECT * FROM pgmq.send(queue_name => %s, msg => %s, headers => %s, delay => %s)",
            [queue, Jsonb(msg), Jsonb(headers) if headers else None, kw["delay"]],
        ).fetchone()[0]
    return db.execute(
        "SELECT * FROM pgmq.send(queue_name => %s, msg => %s, headers => %s)",
        [queue, Jsonb(msg), Jsonb(headers) if headers else None],
    ).fetchone()[0]


def send_batch(db: psycopg.Connection, queue: str, msgs: list, headers: list | None = None):
    return [
        r[0]
        for r in db.execute(
            "SELECT * FROM pgmq.send_batch(queue_name => %s, msgs => %s, headers => %s)",
            [
                queue,
                [Jsonb(m) for m in msgs],
                None if headers is None else [Jsonb(h) for h in headers],
            ],
        )
    ]


def read(db: psycopg.Connection, queue: str, qty: int = 10, vt: int = 0) -> list[tuple]:
    return db.execute(
        "SELECT msg_id, read_ct, message, headers"
        " FROM pgmq.read(queue_name => %s, vt => %s, qty => %s)",
        [queue, vt, qty],
    ).fetchall()


def live_ids(db: psycopg.Connection, queue: str) -> list[int]:
    return [r[0] for r in db.execute(f'SELECT msg_id FROM pgmq."q_{queue}" ORDER BY msg_id')]


# -- set / get ---------------------------------------------------------------------------


def test_set_merges_removes_with_null_and_get_returns_the_whole_set(db, q):
    assert get_attrs(db, q) == {}
    assert set_attrs(db, q, {"delivery_delay": 5, "paused": False}) == {
        "delivery_delay": 5,
        "paused": False,
    }
    assert set_attrs(db, q, {"max_message_size": 100, "paused": None}) == {
        "delivery_delay": 5,
        "max_message_size": 100,
    }
    assert get_attrs(db, q) == {"delivery_delay": 5, "max_message_size": 100}
    assert set_attrs(db, q, {"delivery_delay": None, "max_message_size": None}) == {}
    assert db.execute(
        "SELECT count(*) FROM pgmq.queue_attributes WHERE queue_name = %s", [q]
    ).fetchone() == (0,)


@pytest.mark.parametrize(
    ("attrs", "says"),
    [
        ({"colour": 1}, 'unknown queue attribute "colour"'),
        (
            {"delivery_delay": -1},
            '"delivery_delay" must be an integer number of seconds, 0 or more',
        ),
        ({"delivery_delay": 1.5}, '"delivery_delay" must be an integer'),
        ({"deduplication_window": "60"}, '"deduplication_window" must be an integer'),
        ({"max_receive_count": 0, "dead_letter_queue": "x"}, '"max_receive_count" must be an'),
        ({"max_receive_count": 3}, '"max_receive_count" and "dead_letter_queue" go together'),
        ({"max_message_size": 0}, '"max_message_size" must be an integer number of bytes'),
        ({"message_retention": 0}, '"message_retention" must be'),
        ({"archive_retention": True}, '"archive_retention" must be'),
        ({"priorities": 1}, '"priorities" must be true or false'),
        ({"paused": "yes"}, '"paused" must be true or false'),
        ({"max_receive_count": 2, "dead_letter_queue": "a;b"}, '"dead_letter_queue" must be'),
    ],
)
def test_a_bad_attribute_is_refused_by_name_and_changes_nothing(db, q, attrs, says):
    set_attrs(db, q, {"delivery_delay": 7})
    with pytest.raises(psycopg.Error) as caught:
        set_attrs(db, q, {"paused": True, **attrs})
    assert caught.value.sqlstate == "PQ004"
    assert says in str(caught.value)
    assert get_attrs(db, q) == {"delivery_delay": 7}


def test_a_queue_cannot_be_its_own_dead_letter_queue(db, q):
    with pytest.raises(psycopg.Error, match="must be another queue") as caught:
        set_attrs(db, q, {"max_receive_count": 2, "dead_letter_queue": q.upper()})
    assert caught.value.sqlstate == "PQ004"


def test_an_unknown_queue_raises_does_not_exist(db):
    for call in (
        "set_queue_attributes(queue_name => 'nope_x', attributes => '{}')",
        "get_queue_attributes(queue_name => 'nope_x')",
    ):
        with pytest.raises(psycopg.Error, match='queue "nope_x" does not exist') as caught:
            db.execute(f"SELECT pgmq.{call}")
        assert caught.value.sqlstate == "PQ002"


def test_attributes_go_with_the_queue(db, queue_name):
    db.execute("SELECT pgmq.create(%s)", [queue_name])
    set_attrs(db, queue_name, {"paused": True, "deduplication_window": 60})
    send(db, queue_name, {"n": 1}, {"deduplication_id": "a"})
    db.execute("SELECT pgmq.drop_queue(%s)", [queue_name])
    db.execute("SELECT pgmq.create(%s)", [queue_name])
    try:
        assert get_attrs(db, queue_name) == {}
        assert db.execute(
            "SELECT count(*) FROM pgmq.queue_deduplication WHERE queue_name = %s", [queue_name]
        ).fetchone() == (0,)
    finally:
        db.execute("SELECT pgmq.drop_queue(%s)", [queue_name])


# -- delivery_delay ---------------------------------------------------------------------------


def test_delivery_delay_delays_a_send_without_its_own_delay(db, q):
    set_attrs(db, q, {"delivery_delay": 3600})
    late = send(db, q, {"n": 1})
    late_too = send(db, q, {"n": 2}, delay=0)  # what every pgmq client passes by default
    [batch] = send_batch(db, q, [{"n": 3}])
    now = send(db, q, {"n": 4}, delay=db.execute("SELECT now()").fetchone()[0])
    assert [r[0] for r in read(db, q)] == [now]
    hidden = db.execute(
        f"SELECT msg_id FROM pgmq.\"q_{q}\" WHERE vt > now() + interval '3500 s' ORDER BY msg_id"
    ).fetchall()
    assert [r[0] for r in hidden] == [late, late_too, batch]


# -- max_message_size ---------------------------------------------------------------------------


def test_a_message_larger_than_max_message_size_is_refused_and_a_batch_whole(db, q):
    set_attrs(db, q, {"max_message_size": 20})
    assert send(db, q, {"n": "x" * 5})  # '{"n": "xxxxx"}' is 14 bytes
    with pytest.raises(psycopg.Error, match=r"message of 31 bytes is larger than .* of 20 bytes"):
        send(db, q, {"n": "x" * 22})
    with pytest.raises(psycopg.Error, match="max_message_size of 20 bytes") as caught:
        send_batch(db, q, [{"n": 1}, {"n": "y" * 30}, {"n": 2}])
    assert caught.value.sqlstate == "PQ004"
    assert len(live_ids(db, q)) == 1


# -- priorities ---------------------------------------------------------------------------


def test_priorities_read_higher_priority_first_then_oldest(db, q):
    set_attrs(db, q, {"priorities": True})
    low = send(db, q, {"n": 1}, {"priority": -5})
    plain = send(db, q, {"n": 2})
    high = send(db, q, {"n": 3}, {"priority": 50})
    plain2 = send(db, q, {"n": 4}, {"priority": 0})
    top = send_batch(db, q, [{"n": 5}], [{"priority": 100}])[0]
    assert [r[0] for r in read(db, q, qty=2, vt=60)] == [top, high]
    assert [r[0] for r in read(db, q, qty=10, vt=60)] == [plain, plain2, low]
    popped = db.execute("SELECT msg_id FROM pgmq.pop(queue_name => %s, qty => 5)", [q]).fetchall()
    assert popped == []


@pytest.mark.parametrize("bad", [101, -101, 1.5, "3", True])
def test_a_priority_header_out_of_range_is_refused_on_a_priorities_queue(db, q, bad):
    set_attrs(db, q, {"priorities": True})
    with pytest.raises(
        psycopg.Error, match='header "priority" must be an integer from -100 to 100'
    ):
        send(db, q, {"n": 1}, {"priority": bad})


def test_pop_takes_the_highest_priority_first(db, q):
    set_attrs(db, q, {"priorities": True})
    ids = send_batch(db, q, [{"n": n} for n in range(3)], [{"priority": p} for p in (1, 9, 5)])
    popped = db.execute("SELECT msg_id FROM pgmq.pop(queue_name => %s, qty => 2)", [q]).fetchall()
    assert [r[0] for r in popped] == [ids[1], ids[2]]


# -- paused ---------------------------------------------------------------------------


def test_a_paused_queue_accepts_sends_and_returns_nothing_until_resumed(db, q):
    set_attrs(db, q, {"paused": True})
    ids = send_batch(db, q, [{"n": 1}, {"n": 2}])
    assert read(db, q) == []
    assert db.execute("SELECT * FROM pgmq.pop(queue_name => %s, qty => 5)", [q]).fetchall() == []
    assert (
        db.execute(
            "SELECT * FROM pgmq.read_grouped(queue_name => %s, vt => 0, qty => 5)", [q]
        ).fetchall()
        == []
    )
    metrics = db.execute(
        "SELECT queue_length, queue_visible_length FROM pgmq.metrics(queue_name => %s)", [q]
    ).fetchone()
    assert metrics == (2, 2)
    set_attrs(db, q, {"paused": False})
    assert [r[0] for r in read(db, q)] == ids


# -- deduplication ---------------------------------------------------------------------------


def test_a_duplicate_within_the_window_enqueues_nothing_and_returns_the_first_id(db, q):
    set_attrs(db, q, {"deduplication_window": 300})
    first = send(db, q, {"n": 1}, {"deduplication_id": "order-1"})
    again = send(db, q, {"n": 2}, {"deduplication_id": "order-1"})
    other = send(db, q, {"n": 3}, {"deduplication_id": "order-2"})
    plain = send(db, q, {"n": 4})
    assert again == first
    assert live_ids(db, q) == [first, other, plain]
    # after the first is consumed, a duplicate within the window is still dropped
    db.execute("SELECT pgmq.archive(queue_name => %s, msg_id => %s)", [q, first])
    assert send(db, q, {"n": 5}, {"deduplication_id": "order-1"}) == first
    assert live_ids(db, q) == [other, plain]


def test_inside_one_batch_duplicates_share_the_first_id(db, q):
    set_attrs(db, q, {"deduplication_window": 300})
    before = send(db, q, {"n": 0}, {"deduplication_id": "c"})
    ids = send_batch(
        db,
        q,
        [{"n": n} for n in range(5)],
        [
            {"deduplication_id": "a"},
            {"deduplication_id": "b"},
            {"deduplication_id": "a"},
            {},
            {"deduplication_id": "c"},
        ],
    )
    assert ids[0] == ids[2] and ids[4] == before
    assert len(set(ids)) == 4
    assert live_ids(db, q) == sorted({before, *ids})
    got = {r[0]: r[2] for r in read(db, q)}
    assert got[ids[0]] == {"n": 0} and got[ids[3]] == {"n": 3}


def test_a_send_after_the_window_enqueues_again(db, q):
    set_attrs(db, q, {"deduplication_window": 300})
    first = send(db, q, {"n": 1}, {"deduplication_id": "x"})
    db.execute(
        "UPDATE pgmq.queue_deduplication SET sent_at = now() - interval '301 s'"
        " WHERE queue_name = %s",
        [q.lower()],
    )
    second = send(db, q, {"n": 2}, {"deduplication_id": "x"})
    assert second > first
    assert send(db, q, {"n": 3}, {"deduplication_id": "x"}) == second


@pytest.mark.parametrize("bad", ["", "x" * 129, 12, ["a"]])
def test_a_bad_deduplication_id_is_refused(db, q, bad):
    set_attrs(db, q, {"deduplication_window": 60})
    with pytest.raises(
        psycopg.Error, match='header "deduplication_id" must be a string of 1 to 128'
    ):
        send(db, q, {"n": 1}, {"deduplication_id": bad})


def test_without_a_window_the_header_is_just_a_header(db, q):
    a = send(db, q, {"n": 1}, {"deduplication_id": "same"})
    b = send(db, q, {"n": 2}, {"deduplication_id": "same"})
    assert a != b and live_ids(db, q) == [a, b]


def together(
    conns: list[psycopg.Connection], work: Callable[[int, psycopg.Connection], None]
) -> list[BaseException]:
    """Run ``work(n, conn)`` on each connection in its own thread, all released at once.

    Returns what the threads raised; one that fails releases the others from the start.
    """
    start = threading.Barrier(len(conns))
    errors: list[BaseException] = []

    def run(n: int, conn: psycopg.Connection) -> None:
        try:
            start.wait()
            work(n, conn)
        except BaseException as exc:
            errors.append(exc)
            start.abort()

    threads = [threading.Thread(target=run, args=(n, c)) for n, c in enumerate(conns)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return errors


def test_eight_concurrent_senders_of_one_id_enqueue_exactly_one_row(pg_connect, db, q):
    set_attrs(db, q, {"deduplication_window": 300})
    conns = [pg_connect(autocommit=False) for _ in range(8)]
    got: list[int] = []

    def sender(_: int, conn: psycopg.Connection) -> None:
        got.append(send(conn, q, {"n": 1}, {"deduplication_id": "once"}))
        time.sleep(0.3)  # hold the transaction open: the others wait on its claim
        conn.commit()

    assert not together(conns, sender)
    assert len(got) == 8 and len(set(got)) == 1
    assert live_ids(db, q) == [got[0]]


def test_concurrent_batches_claim_a_shared_id_once(pg_connect, db, queue_name):
    """The fast send (plain inserts, ON CONFLICT after a conflict) under races."""
    db.execute("SELECT pgmq.create(queue_name => %s)", [queue_name])
    set_attrs(db, queue_name, {"deduplication_window": 300})
    conns = [pg_connect(autocommit=False) for _ in range(8)]
    got: dict[int, list[int]] = {}

    def sender(n: int, conn: psycopg.Connection) -> None:
        got[n] = send_batch(
            conn,
            queue_name,
            [{"n": n}, {"n": n, "shared": True}],
            [{"deduplication_id": f"own-{n}"}, {"deduplication_id": "shared"}],
        )
        time.sleep(0.2)  # the others wait on the claim of "shared" until this commits
        conn.commit()

    errors = together(conns, sender)
    try:
        assert not errors
        shared = {ids[1] for ids in got.values()}
        own = {ids[0] for ids in got.values()}
        assert len(got) == 8 and len(shared) == 1 and len(own) == 8
        assert live_ids(db, queue_name) == sorted(own | shared)
        rows = db.execute(
            "SELECT deduplication_id, msg_id FROM pgmq.queue_deduplication"
            " WHERE queue_name = %s ORDER BY deduplication_id",
            [queue_name],
        ).fetchall()
        assert len(rows) == 9 and dict(rows)["shared"] in shared
    finally:
        db.execute("SELECT pgmq.drop_queue(queue_name => %s)", [queue_name])


def test_batches_claiming_the_same_ids_in_opposite_orders_do_not_deadlock(
    pg_connect, db, queue_name
):
    """Both sends claim ids in one order, so neither waits for the other crosswise."""
    db.execute("SELECT pgmq.create(queue_name => %s)", [queue_name])
    set_attrs(db, queue_name, {"deduplication_window": 300})
    conns = [pg_connect(autocommit=False) for _ in range(2)]
    ids = [f"id-{n:04}" for n in range(1000)]
    orders = [ids, ids[::-1]]
    got: dict[int, dict[str, int]] = {}

    def sender(n: int, conn: psycopg.Connection) -> None:
        sent = send_batch(
            conn, queue_name, [{"n": n}] * 1000, [{"deduplication_id": d} for d in orders[n]]
        )
        got[n] = dict(zip(orders[n], sent, strict=True))
        conn.commit()

    errors = together(conns, sender)
    try:
        assert not errors
        assert got[0] == got[1]
        assert len(live_ids(db, queue_name)) == 1000
    finally:
        db.execute("SELECT pgmq.drop_queue(queue_name => %s)", [queue_name])


def test_a_long_transaction_takes_at_most_16_subtransactions_for_its_sends(
    pg_connect, db, queue_name
):
    """The fast send runs in a subtransaction: 16 per transaction, then ON CONFLICT alone."""
    conn = pg_connect(autocommit=False)
    conn.execute("SELECT pgmq.create(queue_name => %s)", [queue_name])
    set_attrs(conn, queue_name, {"deduplication_window": 300})
    conn.commit()

    def xids() -> int:
        """Transactions that wrote the queue's ids: a row claimed in a subtransaction
        carries the subtransaction's xid, one claimed by the ON CONFLICT statement the
        transaction's own."""
        return conn.execute(
            "SELECT count(DISTINCT xmin::text) FROM pgmq.queue_deduplication WHERE queue_name = %s",
            [queue_name],
        ).fetchone()[0]

    try:
        first = [send(conn, queue_name, {"n": n}, {"deduplication_id": f"d{n}"}) for n in range(40)]
        assert xids() == 17
        again = [send(conn, queue_name, {"n": n}, {"deduplication_id": f"d{n}"}) for n in range(40)]
        conn.commit()
        assert again == first and live_ids(conn, queue_name) == sorted(first)
        # the next transaction counts from 0 again: its first send takes the fast path
        before = xids()
        send(conn, queue_name, {"n": 40}, {"deduplication_id": "d40"})
        send(conn, queue_name, {"n": 41}, {"deduplication_id": "d41"})
        assert xids() == before + 2
        conn.commit()
    finally:
        conn.rollback()
        conn.execute("SELECT pgmq.drop_queue(queue_name => %s)", [queue_name])
        conn.commit()


# -- redrive ---------------------------------------------------------------------------


def test_a_message_read_more_than_max_receive_count_moves_to_the_dead_letter_queue(db, q):
    dlq = q + "_dlq"
    set_attrs(db, q, {"max_receive_count": 2, "dead_letter_queue": dlq})
    assert db.execute("SELECT count(*) FROM pgmq.meta WHERE queue_name = %s", [dlq]).fetchone() == (
        1,
    )
    keep = send(db, q, {"n": 1}, {"trace": "t"})
    assert [r[:2] for r in read(db, q)] == [(keep, 1)]
    assert [r[:2] for r in read(db, q)] == [(keep, 2)]
    assert read(db, q) == []  # the third delivery moves it instead
    assert live_ids(db, q) == []
    [(_, read_ct, message, headers)] = read(db, dlq)
    assert (read_ct, message, headers["trace"]) == (1, {"n": 1}, "t")
    letter = headers["dead_letter"]
    assert (letter["queue"], letter["msg_id"], letter["read_ct"]) == (q, keep, 2)
    assert "dead_lettered_at" in letter


def test_pop_and_the_fifo_readers_dead_letter_too(db, q):
    dlq = q + "_dlq"
    set_attrs(db, q, {"max_receive_count": 1, "dead_letter_queue": dlq})
    a, b = send_batch(db, q, [{"n": 1}, {"n": 2}])
    read(db, q, qty=1)  # a: read once
    db.execute("SELECT * FROM pgmq.read_grouped(queue_name => %s, vt => 0, qty => 2)", [q])
    # b was read once by the group reader; a was moved by it
    assert [r[2] for r in read(db, dlq)] == [{"n": 1}]
    popped = db.execute("SELECT msg_id FROM pgmq.pop(queue_name => %s, qty => 5)", [q]).fetchall()
    assert popped == []
    dead = db.execute(f'SELECT headers FROM pgmq."q_{dlq}" ORDER BY msg_id').fetchall()
    assert [(h["dead_letter"]["msg_id"], h["dead_letter"]["read_ct"]) for (h,) in dead] == [
        (a, 1),
        (b, 1),
    ]


def test_a_dropped_dead_letter_queue_is_made_again_when_needed(db, q):
    dlq = q + "_dlq"
    set_attrs(db, q, {"max_receive_count": 1, "dead_letter_queue": dlq})
    send(db, q, {"n": 1})
    read(db, q)
    db.execute("SELECT pgmq.drop_queue(%s)", [dlq])
    assert read(db, q) == []
    assert [r[2] for r in read(db, dlq)] == [{"n": 1}]


def test_redrive_moves_dead_letters_back_to_their_source_once(pg_connect, db, q):
    dlq = q + "_dlq"
    set_attrs(db, q, {"max_receive_count": 1, "dead_letter_queue": dlq})
    send_batch(db, q, [{"n": n, "kind": "a" if n % 2 else "b"} for n in range(20)])
    read(db, q, qty=20)
    read(db, q, qty=20)
    assert live_ids(db, q) == []
    moved = db.execute(
        "SELECT source_queue, moved FROM pgmq.redrive(dead_letter_queue => %s, conditional => %s)",
        [dlq, Jsonb({"kind": "a"})],
    ).fetchall()
    assert moved == [(q, 10)]
    # the rest, by two concurrent redrives: each message goes back exactly once
    conns = [pg_connect() for _ in range(2)]
    results: list[list[tuple]] = []

    def redrive(_: int, conn: psycopg.Connection) -> None:
        results.append(
            conn.execute("SELECT source_queue, moved FROM pgmq.redrive(%s)", [dlq]).fetchall()
        )

    assert not together(conns, redrive)
    assert sum(n for rows in results for _, n in rows) == 10
    back = read(db, q, qty=50)
    assert sorted(r[2]["n"] for r in back) == list(range(20))
    assert all("dead_letter" not in (r[3] or {}) for r in back)
    assert all(r[1] == 1 for r in back)


# -- retention ---------------------------------------------------------------------------


def test_enforce_retention_deletes_old_messages_and_archived_rows(db, q):
    set_attrs(db, q, {"message_retention": 3600, "archive_retention": 60})
    old, new, gone_old, gone_new = send_batch(db, q, [{"n": n} for n in range(4)])
    db.execute(
        f"UPDATE pgmq.\"q_{q}\" SET enqueued_at = now() - interval '2 hours'"
        " WHERE msg_id = ANY(%s)",
        [[old, gone_old]],
    )
    db.execute("SELECT pgmq.archive(queue_name => %s, msg_ids => %s)", [q, [gone_old, gone_new]])
    db.execute(
        f"UPDATE pgmq.\"a_{q}\" SET archived_at = now() - interval '2 minutes' WHERE msg_id = %s",
        [gone_old],
    )
    rows = db.execute("SELECT * FROM pgmq.enforce_retention(queue_name => %s)", [q]).fetchall()
    assert rows == [(q, 1, 1)]
    assert live_ids(db, q) == [new]
    assert [r[0] for r in db.execute(f'SELECT msg_id FROM pgmq."a_{q}"')] == [gone_new]
    everyone = db.execute("SELECT * FROM pgmq.enforce_retention()").fetchall()
    assert (q, 0, 0) in everyone


def test_enforce_retention_of_an_unknown_queue_raises(db):
    with pytest.raises(psycopg.Error, match="does not exist"):
        db.execute("SELECT * FROM pgmq.enforce_retention('nope_y')")


# -- a queue without attributes ---------------------------------------------------------------


def test_a_plain_queue_runs_the_plain_statements(db, queue_name):
    db.execute("SELECT pgmq.create(%s)", [queue_name])
    try:
        plain = db.execute("SELECT pgmq._queue_ops_sql(%s, 'r', '$9')", [queue_name]).fetchone()
        chosen = db.execute(
            "SELECT pgmq._queue_ops_attr_sql(%s, 'r', '$9', '{\"paused\": false}')", [queue_name]
        ).fetchone()
        assert chosen == plain
        chosen = db.execute(
            "SELECT pgmq._queue_ops_attr_sql(%s, 'r', '$9', '{\"priorities\": true}')",
            [queue_name],
        ).fetchone()
        assert chosen != plain and "_task_priority" in chosen[0]
    finally:
        db.execute("SELECT pgmq.drop_queue(%s)", [queue_name])
