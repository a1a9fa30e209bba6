"""The claim filter (pgmq._claim_filter): every reader x every read-side attribute.

Each reader claims through the one definition, so a paused queue hands out nothing,
redrive moves over-read messages without using up the reader's qty, and
priorities order what is claimed (except the FIFO readers, which keep a group's order).
Also: total_messages counts messages, not ids used up by duplicates or refused batches.
"""

from __future__ import annotations

from collections.abc import Callable

import psycopg
import pytest
from django.db import connection
from psycopg.types.json import Jsonb

from django_pgmq.manager import QueueManager

pytestmark = pytest.mark.usefixtures("django_db_setup")

Reader = Callable[[psycopg.Connection, str, int], list[int]]


def _rows(db: psycopg.Connection, statement: str, queue: str, qty: int) -> list[int]:
    return [r[0] for r in db.execute(statement, {"q": queue, "n": qty})]


def _spark(db: psycopg.Connection, queue: str, qty: int) -> list[int]:
    batch = db.execute(
        "SELECT pgmq.spark_claim(%(q)s, 'claim-test', 30, %(n)s, NULL, NULL)",
        {"q": queue, "n": qty},
    ).fetchone()[0]
    if batch is None:
        return []
    return db.execute(
        "SELECT msg_ids FROM pgmq.spark_stream_batch WHERE queue_name = %s AND batch = %s",
        [queue, batch],
    ).fetchone()[0]


def _statement(text: str) -> Reader:
    return lambda db, queue, qty: _rows(db, text, queue, qty)


def _manager_prepared(op: str) -> Reader:
    """The manager's read or pop on Django's connection with psycopg's prepared statements
    on: the queue's own statement first, the SQL API's function when it finds nothing."""

    def reader(db: psycopg.Connection, queue: str, qty: int) -> list[int]:
        connection.ensure_connection()
        connection.connection.prepare_threshold = 5
        try:
            manager = QueueManager()
            got = manager.read(queue, vt=30, qty=qty) if op == "read" else manager.pop(queue, qty)
        finally:
            connection.connection.prepare_threshold = None
        return [m.msg_id for m in got]

    return reader


READERS: dict[str, Reader] = {
    "read": _statement("SELECT msg_id FROM pgmq.read(%(q)s, 30, %(n)s)"),
    "read_with_poll": _statement("SELECT msg_id FROM pgmq.read_with_poll(%(q)s, 30, %(n)s, 1, 10)"),
    "pop": _statement("SELECT msg_id FROM pgmq.pop(%(q)s, %(n)s)"),
    "read_grouped": _statement("SELECT msg_id FROM pgmq.read_grouped(%(q)s, 30, %(n)s)"),
    "read_grouped_rr": _statement("SELECT msg_id FROM pgmq.read_grouped_rr(%(q)s, 30, %(n)s)"),
    "read_grouped_head": _statement("SELECT msg_id FROM pgmq.read_grouped_head(%(q)s, 30, %(n)s)"),
    "celery_read": _statement("SELECT msg_id FROM pgmq.celery_read(%(q)s, 30, %(n)s)"),
    "tasks_read_by_priority": _statement(
        "SELECT msg_id FROM pgmq._read_by_priority(%(q)s, 30, %(n)s)"
    ),
    # the worker's acknowledge-and-read statement (sql/queries.sql, acknowledge_and_read_archive)
    "worker": _statement(
        "SELECT msg_id FROM pgmq.read(%(q)s, 30, qty => (SELECT CASE WHEN count(*) >= 0"
        " THEN %(n)s::integer END FROM pgmq.archive(%(q)s, '{}'::bigint[])))"
    ),
    "spark_claim": _spark,
    "manager_read_prepared": _manager_prepared("read"),
    "manager_pop_prepared": _manager_prepared("pop"),
}
FIFO = {"read_grouped", "read_grouped_rr", "read_grouped_head"}
# the Tasks read always claims by priority; the others only with the attribute
BY_PRIORITY = set(READERS) - FIFO


@pytest.fixture(autouse=True)
def _django_connection(django_db_blocker):
    """The manager's readers use Django's connection (autocommit, like the others)."""
    with django_db_blocker.unblock():
        yield
    connection.close()


@pytest.fixture
def db(pg_connect) -> psycopg.Connection:
    return pg_connect()


@pytest.fixture
def q(db, queue_name):
    db.execute("SELECT pgmq.create(%s)", [queue_name])
    yield queue_name
    for name in (queue_name, f"{queue_name}_dlq"):
        db.execute("SELECT pgmq.drop_queue(%s)", [name])


def send(db: psycopg.Connection, queue: str, priorities: list[int]) -> list[int]:
    """One message per priority, each in a FIFO group of its own."""
    headers = [Jsonb({"priority": p, "x-pgmq-group": f"g{n}"}) for n, p in enumerate(priorities)]
    return [
        r[0]
        for r in db.execute(
            "SELECT * FROM pgmq.send_batch(%s, %s::jsonb[], %s::jsonb[])",
            [queue, [Jsonb({"n": n}) for n in range(len(priorities))], headers],
        )
    ]


def set_attrs(db: psycopg.Connection, queue: str, attrs: dict) -> None:
    db.execute("SELECT pgmq.set_queue_attributes(%s, %s)", [queue, Jsonb(attrs)])


def count(db: psycopg.Connection, queue: str) -> int:
    return db.execute("SELECT queue_length FROM pgmq.metrics(%s)", [queue]).fetchone()[0]


@pytest.mark.parametrize("reader", READERS)
def test_a_paused_queue_hands_out_nothing(db, q, reader):
    ids = send(db, q, [0, 0, 0])
    set_attrs(db, q, {"paused": True})
    assert READERS[reader](db, q, 3) == []
    assert count(db, q) == 3
    set_attrs(db, q, {"paused": None})
    assert sorted(READERS[reader](db, q, 3)) == ids


@pytest.mark.parametrize("reader", READERS)
def test_redrive_moves_over_read_messages_without_using_up_the_qty(db, q, reader):
    ids = send(db, q, [0, 0, 0, 0, 0])
    set_attrs(db, q, {"max_receive_count": 1, "dead_letter_queue": f"{q}_dlq"})
    first = [r[0] for r in db.execute("SELECT msg_id FROM pgmq.read(%s, 0, 3)", [q])]
    assert first == ids[:3]  # read once each, visible again: the next delivery moves them
    got = READERS[reader](db, q, 2)
    assert sorted(got) == ids[3:]
    assert count(db, f"{q}_dlq") == 3
    moved = db.execute(
        "SELECT (m.headers -> 'dead_letter' ->> 'msg_id')::bigint"
        " FROM pgmq.read(%s, 30, 10) m ORDER BY 1",
        [f"{q}_dlq"],
    ).fetchall()
    assert [r[0] for r in moved] == ids[:3]


@pytest.mark.parametrize("reader", READERS)
def test_priorities_order_what_is_claimed(db, q, reader):
    set_attrs(db, q, {"priorities": True})
    low, high, middle = send(db, q, [0, 5, 1])
    got = READERS[reader](db, q, 2)
    # a FIFO reader keeps each group's order and takes the oldest groups first
    expected = [high, middle] if reader in BY_PRIORITY else [low, high]
    if reader == "spark_claim":  # a batch is a set of ids, kept in msg_id order
        expected = sorted(expected)
    assert got == expected


def test_a_read_of_one_returns_one_while_many_are_over_read(db, q):
    """As reported: read(q, 30, 1) returned 0 rows with about 990 visible messages."""
    ids = send(db, q, [0] * 1000)
    db.execute("SELECT * FROM pgmq.read(%s, 0, 990)", [q])
    set_attrs(db, q, {"max_receive_count": 1, "dead_letter_queue": f"{q}_dlq"})
    assert [r[0] for r in db.execute("SELECT msg_id FROM pgmq.read(%s, 30, 1)", [q])] == [ids[990]]


# -- total_messages ---------------------------------------------------------------------------


def total(db: psycopg.Connection, queue: str) -> tuple[int, int]:
    return db.execute(
        "SELECT queue_length, total_messages FROM pgmq.metrics(%s)", [queue]
    ).fetchone()


def test_total_messages_does_not_count_duplicates(db, q):
    set_attrs(db, q, {"deduplication_window": 60})
    sent = [
        db.execute(
            "SELECT * FROM pgmq.send(%s, '{}', '{\"deduplication_id\": \"one\"}'::jsonb)", [q]
        ).fetchone()[0]
        for _ in range(5)
    ]
    assert len(set(sent)) == 1
    assert total(db, q) == (1, 1)
    batch = db.execute(
        "SELECT * FROM pgmq.send_batch(%s, %s::jsonb[], %s::jsonb[])",
        [
            q,
            [Jsonb({"n": n}) for n in range(4)],
            [Jsonb({"deduplication_id": d}) for d in ("one", "two", "two", "three")],
        ],
    ).fetchall()
    assert batch[0][0] == sent[0] and batch[1] == batch[2]
    assert total(db, q) == (3, 3)


def test_total_messages_does_not_count_a_refused_batch(db, q):
    set_attrs(db, q, {"max_message_size": 20})
    with pytest.raises(psycopg.Error, match="max_message_size"):
        db.execute(
            "SELECT * FROM pgmq.send_batch(%s, %s::jsonb[])",
            [q, [Jsonb({"n": 1}), Jsonb({"n": 2}), Jsonb({"text": "x" * 100})]],
        )
    assert total(db, q) == (0, 0)
    db.execute("SELECT * FROM pgmq.send(%s, '{\"n\": 3}')", [q])
    assert total(db, q) == (1, 1)
