"""FIFO group readers (50_fifo.sql): group order, blocking, rr, head, polls, concurrency."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Callable

import psycopg
import pytest
from psycopg import sql

READERS = ("read_grouped", "read_grouped_rr", "read_grouped_head")


@pytest.fixture
def conn(pg_connect: Callable[..., psycopg.Connection]) -> psycopg.Connection:
    """A separate autocommit session (commits are visible to other sessions)."""
    return pg_connect()


def send(
    conn: psycopg.Connection, queue: str, group: str | None, label: str, delay: int = 0
) -> int:
    headers = json.dumps({"x-pgmq-group": group}) if group is not None else None
    [(msg_id,)] = conn.execute(
        "SELECT * FROM pgmq.send(queue_name => %s, msg => %s::jsonb, headers => %s::jsonb,"
        " delay => %s::integer)",
        [queue, json.dumps({"label": label}), headers, delay],
    ).fetchall()
    return msg_id


def send_all(conn: psycopg.Connection, queue: str, spec: str) -> None:
    """Send messages described as 'A1 A2 B1 -1': group letter + number ('-' = no header)."""
    for label in spec.split():
        send(conn, queue, None if label[0] == "-" else label[0], label)


def fn(name: str) -> sql.Identifier:
    return sql.Identifier("pgmq", name)


def read(conn: psycopg.Connection, reader: str, queue: str, qty: int, vt: int = 30) -> list[str]:
    """Labels of the messages a group reader returns, in the order returned."""
    query = sql.SQL("SELECT message->>'label' FROM {}(queue_name => %s, vt => %s, qty => %s)")
    rows = conn.execute(query.format(fn(reader)), [queue, vt, qty]).fetchall()
    return [label for (label,) in rows]


def msg_id(conn: psycopg.Connection, queue: str, label: str) -> int:
    query = sql.SQL("SELECT msg_id FROM {} WHERE message->>'label' = %s")
    [(found,)] = conn.execute(
        query.format(sql.Identifier("pgmq", f"q_{queue}")), [label]
    ).fetchall()
    return found


def delete(conn: psycopg.Connection, queue: str, *labels: str) -> None:
    for label in labels:
        conn.execute("SELECT pgmq.delete(%s, %s::bigint)", [queue, msg_id(conn, queue, label)])


def test_read_grouped_fills_from_the_oldest_group_first(tx_queue, tx):
    send_all(tx, tx_queue, "A1 A2 B1 A3 B2 C1")
    # A is oldest: all of it, then B; returned in msg_id order.
    assert read(tx, "read_grouped", tx_queue, 4) == ["A1", "A2", "B1", "A3"]
    assert read(tx, "read_grouped", tx_queue, 4) == ["C1"]  # A and B are in flight


def test_a_group_in_flight_is_blocked_until_its_messages_are_done(tx_queue, tx):
    send_all(tx, tx_queue, "A1 A2 B1")
    assert read(tx, "read_grouped", tx_queue, 1) == ["A1"]
    assert read(tx, "read_grouped", tx_queue, 5) == ["B1"]  # A2 waits behind A1
    assert read(tx, "read_grouped", tx_queue, 5) == []
    delete(tx, tx_queue, "A1")
    assert read(tx, "read_grouped", tx_queue, 5) == ["A2"]


def test_expired_visibility_hands_the_group_back_in_order(tx_queue, tx):
    send_all(tx, tx_queue, "A1 A2")
    assert read(tx, "read_grouped", tx_queue, 1, vt=0) == ["A1"]
    assert read(tx, "read_grouped", tx_queue, 5) == ["A1", "A2"]


def test_a_delayed_message_holds_back_the_rest_of_its_group(tx_queue, tx):
    send(tx, tx_queue, "A", "A1")
    send(tx, tx_queue, "A", "A2", delay=60)
    send(tx, tx_queue, "A", "A3")
    send(tx, tx_queue, "B", "B1")
    for reader in READERS:
        with tx.transaction(force_rollback=True):
            # A3 is never handed out ahead of A2.
            assert read(tx, reader, tx_queue, 10) == ["A1", "B1"]


def test_messages_without_a_group_header_share_the_default_group(tx_queue, tx):
    send_all(tx, tx_queue, "-1 -2 A1")
    assert read(tx, "read_grouped_head", tx_queue, 5) == ["-1", "A1"]
    send(tx, tx_queue, "_default_fifo_group", "-3")
    delete(tx, tx_queue, "-1")
    assert read(tx, "read_grouped", tx_queue, 5) == ["-2", "-3"]


def test_read_grouped_rr_takes_one_per_group_per_round(tx_queue, tx):
    send_all(tx, tx_queue, "A1 A2 A3 B1 B2 A4 C1")
    # Returned in round order (as pgmq does): A, B, C, then A, B, then A...
    assert read(tx, "read_grouped_rr", tx_queue, 6) == ["A1", "B1", "C1", "A2", "B2", "A3"]
    assert read(tx, "read_grouped_rr", tx_queue, 6) == []


def test_read_grouped_rr_skips_blocked_groups(tx_queue, tx):
    send_all(tx, tx_queue, "A1 A2 B1 B2 C1 C2")
    assert read(tx, "read_grouped_rr", tx_queue, 1) == ["A1"]
    assert read(tx, "read_grouped_rr", tx_queue, 3) == ["B1", "C1", "B2"]


def test_read_grouped_head_returns_only_group_heads(tx_queue, tx):
    send_all(tx, tx_queue, "A1 A2 B1 B2 C1 D1")
    assert read(tx, "read_grouped_head", tx_queue, 3) == ["A1", "B1", "C1"]
    assert read(tx, "read_grouped_head", tx_queue, 3) == ["D1"]
    delete(tx, tx_queue, "B1")
    assert read(tx, "read_grouped_head", tx_queue, 3) == ["B2"]


def test_read_updates_visibility_and_read_count(tx_queue, tx):
    send_all(tx, tx_queue, "A1")
    [(read_ct, hidden)] = tx.execute(
        "SELECT read_ct, vt > clock_timestamp() + interval '20 seconds'"
        " FROM pgmq.read_grouped(%s, 30, 1)",
        [tx_queue],
    ).fetchall()
    assert (read_ct, hidden) == (1, True)


def test_qty_must_not_be_negative(tx_queue, tx):
    send_all(tx, tx_queue, "A1")
    for reader in READERS:
        assert read(tx, reader, tx_queue, 0) == []
        with pytest.raises(psycopg.Error) as caught, tx.transaction():
            read(tx, reader, tx_queue, -1)
        assert caught.value.sqlstate == "PQ004"


@pytest.mark.parametrize("reader", READERS)
def test_a_row_held_by_another_session_ends_its_groups_share(queue, conn, pg_connect, reader):
    send_all(conn, queue, "A1 A2 B1")
    other = pg_connect()
    with other.transaction():
        other.execute("SELECT pgmq.delete(%s, %s::bigint)", [queue, msg_id(other, queue, "A1")])
        # A1 is locked by the uncommitted delete: A2 must not overtake it.
        assert read(conn, reader, queue, 5) == ["B1"]
    assert read(conn, reader, queue, 5) == ["A2"]


@pytest.mark.parametrize("reader", READERS)
def test_a_group_read_in_an_open_transaction_is_invisible_to_others(
    queue, conn, pg_connect, reader
):
    send_all(conn, queue, "A1 A2 B1 B2")
    other = pg_connect()
    with other.transaction():
        assert read(other, reader, queue, 1) == ["A1"]
        assert read(conn, reader, queue, 1) == ["B1"]
        assert read(conn, reader, queue, 5) == []


@pytest.mark.parametrize("reader", READERS)
def test_poll_returns_when_a_message_arrives(queue, conn, pg_connect, reader):
    results: list[list[str]] = []
    poller = pg_connect()

    def poll() -> None:
        query = sql.SQL(
            "SELECT message->>'label' FROM {}(queue_name => %s, vt => 30, qty => 5,"
            " max_poll_seconds => 10, poll_interval_ms => 20)"
        )
        rows = poller.execute(query.format(fn(f"{reader}_with_poll")), [queue]).fetchall()
        results.append([label for (label,) in rows])

    thread = threading.Thread(target=poll)
    thread.start()
    # Wait until the poller is asleep in its loop, then send.
    for _ in range(500):
        [(waiting,)] = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE pid = %s AND wait_event = 'PgSleep'",
            [poller.info.backend_pid],
        ).fetchall()
        if waiting:
            break
        time.sleep(0.01)
    send(conn, queue, "A", "A1")
    thread.join(timeout=15)
    assert results == [["A1"]]


def test_poll_gives_up_after_max_poll_seconds(tx_queue, tx):
    for reader in READERS:
        query = sql.SQL("SELECT * FROM {}(%s, 30, 5, 0)").format(fn(f"{reader}_with_poll"))
        assert tx.execute(query, [tx_queue]).fetchall() == []


@pytest.mark.parametrize("reader", READERS)
def test_concurrent_readers_never_share_a_group_or_a_message(queue, conn, pg_connect, reader):
    groups, per_group, workers = 12, 6, 4
    for n in range(per_group):
        for g in range(groups):
            send(conn, queue, f"g{g}", f"g{g}-{n}")
    total = groups * per_group

    lock = threading.Lock()
    owner: dict[str, int] = {}
    seen: dict[str, list[int]] = defaultdict(list)
    overlaps: list[str] = []
    errors: list[BaseException] = []
    done = threading.Event()
    start = threading.Barrier(workers)
    batch = sql.SQL("SELECT msg_id, headers->>'x-pgmq-group' FROM {}(%s, 30, 3)").format(fn(reader))

    def work(worker: int) -> None:
        db = pg_connect()
        start.wait()
        try:
            while not done.is_set():
                rows = db.execute(batch, [queue]).fetchall()
                mine = {group for _, group in rows}
                with lock:
                    for group in mine:
                        if owner.setdefault(group, worker) != worker:
                            overlaps.append(group)
                    for mid, group in rows:
                        seen[group].append(mid)
                    if sum(map(len, seen.values())) >= total:
                        done.set()
                time.sleep(0.001)
                with lock:  # give the groups back before their messages go
                    for group in mine:
                        del owner[group]
                if rows:
                    db.execute(
                        "SELECT pgmq.delete(%s, %s::bigint[])", [queue, [m for m, _ in rows]]
                    )
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)
            done.set()

    threads = [threading.Thread(target=work, args=(w,)) for w in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    done.set()
    assert not errors
    assert overlaps == []
    every = [mid for mids in seen.values() for mid in mids]
    assert len(every) == len(set(every)) == total
    assert all(mids == sorted(mids) for mids in seen.values())


def _fifo_indexes(conn: psycopg.Connection, *queues: str) -> list[str]:
    rows = conn.execute(
        "SELECT indexname FROM pg_indexes WHERE schemaname = 'pgmq' AND indexname = ANY(%s)"
        " AND indexdef LIKE '%%pgmq._fifo_group(headers), msg_id%%' ORDER BY indexname",
        [[f"q_{q.lower()}_fifo_idx" for q in queues]],
    ).fetchall()
    return [name for (name,) in rows]


def test_create_fifo_index_in_the_transaction_that_created_the_queue_builds_it(tx_queue, tx):
    # The table is this transaction's own: a plain build holds no one up (as on pgmq).
    tx.execute("SELECT pgmq.create_fifo_index(queue_name => %s)", [tx_queue])
    tx.execute("SELECT pgmq.create_fifo_index(queue_name => %s)", [tx_queue])
    assert _fifo_indexes(tx, tx_queue) == [f"q_{tx_queue}_fifo_idx"]
    pending = tx.execute("SELECT index_name FROM pgmq.pending_indexes()").fetchall()
    assert [row for row in pending if tx_queue in row[0]] == []


def test_create_fifo_index_in_a_transaction_that_wrote_is_wanted(pg_connect):
    # Built CONCURRENTLY outside the caller's transaction (tests/integration/test_index_builds.py).
    queue = f"t_{uuid.uuid4().hex[:16]}"
    pg_connect().execute("SELECT pgmq.create(%s)", [queue])
    tx = pg_connect(autocommit=False)
    try:
        tx.execute("SELECT pgmq.send(%s, '{}')", [queue])
        tx.execute("SELECT pgmq.create_fifo_index(queue_name => %s)", [queue])
        assert _fifo_indexes(tx, queue) == []
        pending = tx.execute("SELECT index_name, statement FROM pgmq.pending_indexes()").fetchall()
        assert [row for row in pending if queue in row[0]] == [
            (
                f"q_{queue}_fifo_idx",
                f"CREATE INDEX CONCURRENTLY IF NOT EXISTS q_{queue}_fifo_idx "
                f"ON pgmq.q_{queue} (pgmq._fifo_group(headers), msg_id)",
            )
        ]
    finally:
        tx.rollback()
        pg_connect().execute("SELECT pgmq.drop_queue(%s)", [queue])


def test_the_fifo_index_once_built_is_used(queue, conn):
    from django_pgmq import QueueManager

    QueueManager().create_fifo_index(queue)
    QueueManager().build_pending_indexes()
    assert _fifo_indexes(conn, queue) == [f"q_{queue}_fifo_idx"]
    conn.execute("SET enable_seqscan = off")
    query = sql.SQL(
        "EXPLAIN SELECT msg_id FROM {} WHERE pgmq._fifo_group(headers) = 'g'"
        " ORDER BY msg_id LIMIT 5"
    )
    plan = conn.execute(query.format(sql.Identifier("pgmq", f"q_{queue}"))).fetchall()
    assert any(f"q_{queue}_fifo_idx" in line for (line,) in plan)


def test_create_fifo_index_needs_the_queue(conn, queue_name):
    with pytest.raises(psycopg.Error) as caught:
        conn.execute("SELECT pgmq.create_fifo_index(%s)", [queue_name])
    assert caught.value.sqlstate == "PQ002"


def test_create_fifo_indexes_all_covers_every_queue(tx_queue, tx):
    second = f"t_{uuid.uuid4().hex[:16]}"
    tx.execute("SELECT pgmq.create(%s)", [second])
    tx.execute("SELECT pgmq.create_fifo_indexes_all()")
    # Both tables are this transaction's own: built at once.
    assert _fifo_indexes(tx, tx_queue, second) == sorted(
        [f"q_{tx_queue}_fifo_idx", f"q_{second}_fifo_idx"]
    )
    send_all(tx, tx_queue, "A1 A2 B1")
    assert read(tx, "read_grouped_rr", tx_queue, 5) == ["A1", "B1", "A2"]


def test_pgmq_python_client_reads_groups(queue, conn, pg_dsn):
    from pgmq import PGMQueue
    from psycopg_pool import ConnectionPool

    send_all(conn, queue, "A1 A2 B1")
    with ConnectionPool(pg_dsn, min_size=1, max_size=2) as pool:
        client = PGMQueue(pool=pool, init_extension=False)
        client.create_fifo_index(queue)
        got = client.read_grouped_rr(queue, vt=30, qty=5)
        assert [m.message["label"] for m in got] == ["A1", "B1", "A2"]
        assert client.read_grouped_with_poll(queue, vt=30, qty=5, max_poll_seconds=0) == []
