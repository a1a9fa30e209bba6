"""QueueManager and the module-level functions, on Django's connections."""

from __future__ import annotations

import inspect
import json
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import psycopg
import pytest
from django.db import connection, transaction
from django.test import override_settings

import django_pgmq as pgmq
from django_pgmq import (
    CrossDatabaseTransaction,
    InvalidPayload,
    Message,
    QueueInfo,
    QueueManager,
    QueueMetrics,
    QueueNameConflict,
    QueueNotFound,
    api,
)

AT = datetime(2100, 5, 6, 7, 8, 9, tzinfo=UTC)


def live_rows(conn: psycopg.Connection, queue: str) -> list[tuple]:
    """(msg_id, message, headers, vt) of a queue's live table, read straight from the table."""
    query = psycopg.sql.SQL("SELECT msg_id, message, headers, vt FROM pgmq.{} ORDER BY msg_id")
    rows = conn.execute(query.format(psycopg.sql.Identifier(f"q_{queue.lower()}"))).fetchall()
    return [(i, _decoded(m), _decoded(h), vt) for i, m, h, vt in rows]


def _decoded(value):
    """Django's connection hands jsonb over as text; a plain psycopg one decodes it."""
    return json.loads(value) if isinstance(value, str) else value


@pytest.fixture
def manager(db) -> QueueManager:
    """Most tests run in a transaction rolled back afterwards, queues and all."""
    return QueueManager()


@pytest.fixture
def same_tx(db) -> psycopg.Connection:
    """Django's own psycopg connection: direct table reads inside the test's transaction."""
    connection.ensure_connection()
    return connection.connection


@pytest.fixture
def other_conn(transactional_db, pg_connect) -> psycopg.Connection:
    """A separate connection: it sees only what Django's connection committed."""
    return pg_connect()


# -- queues -------------------------------------------------------------------


def test_create_queue_is_idempotent_and_listed(manager, queue_name, same_tx):
    manager.create_queue(queue_name)
    manager.create_queue(queue_name)
    try:
        [info] = [i for i in manager.list_queues() if i.queue_name == queue_name]
        assert isinstance(info, QueueInfo)
        assert (info.is_partitioned, info.is_unlogged) == (False, False)
        assert isinstance(info.created_at, datetime) and info.created_at.tzinfo is not None
        assert live_rows(same_tx, queue_name) == []
    finally:
        manager.drop_queue(queue_name)


def test_create_unlogged_queue(manager, queue_name, same_tx):
    manager.create_queue(queue_name, unlogged=True)
    try:
        [info] = [i for i in manager.list_queues() if i.queue_name == queue_name]
        assert info.is_unlogged is True
        persistence = same_tx.execute(
            "SELECT relpersistence FROM pg_class WHERE relname = %s", [f"q_{queue_name}"]
        ).fetchone()
        assert persistence == ("u",)
    finally:
        manager.drop_queue(queue_name)


def test_list_queues_is_sorted(manager, queue_name):
    names = [f"{queue_name}_c", f"{queue_name}_a", f"{queue_name}_b"]
    for name in names:
        manager.create_queue(name)
    try:
        listed = [i.queue_name for i in manager.list_queues() if i.queue_name in names]
        assert listed == sorted(names)
    finally:
        for name in names:
            manager.drop_queue(name)


def test_drop_queue_reports_whether_it_existed(manager, queue_name, same_tx):
    manager.create_queue(queue_name)
    assert manager.drop_queue(queue_name) is True
    assert manager.drop_queue(queue_name) is False
    assert queue_name not in [i.queue_name for i in manager.list_queues()]
    assert same_tx.execute(
        "SELECT count(*) FROM pg_class WHERE relname IN (%s, %s)",
        [f"q_{queue_name}", f"a_{queue_name}"],
    ).fetchone() == (0,)


def test_purge_queue_counts(manager, queue):
    manager.send_batch(queue, [1, 2, 3])
    assert manager.purge_queue(queue) == 3
    assert manager.read(queue, qty=10) == []


def test_name_conflict_is_refused_and_names_both(manager, queue_name, same_tx):
    manager.create_queue(queue_name)
    try:
        # the savepoint keeps the test's transaction usable after the database error
        with pytest.raises(QueueNameConflict) as info, transaction.atomic():
            manager.create_queue(queue_name.upper())
        assert queue_name in str(info.value) and queue_name.upper() in str(info.value)
        tables = same_tx.execute(
            "SELECT count(*) FROM pg_class WHERE relname = %s", [f"q_{queue_name}"]
        ).fetchone()
        assert tables == (1,)
        assert [
            i.queue_name for i in manager.list_queues() if i.queue_name.lower() == queue_name
        ] == [queue_name]
    finally:
        manager.drop_queue(queue_name)


# -- sending ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        ({"a": [1, 2, {"b": None}]}, {"a": [1, 2, {"b": None}]}),
        ("plain text", "plain text"),
        (42, 42),
        ([1, "two"], [1, "two"]),
        (False, False),
        ({"café": "😀"}, {"café": "😀"}),
        (
            {"d": Decimal("1.50"), "t": datetime(2024, 1, 2, tzinfo=UTC)},
            {"d": "1.50", "t": "2024-01-02T00:00:00Z"},
        ),
    ],
    ids=["object", "string", "number", "array", "false", "unicode", "django-encoder"],
)
def test_send_round_trips_json_payloads(manager, queue, payload, expected):
    msg_id = manager.send(queue, payload)
    [message] = manager.read(queue, vt=30, qty=5)
    assert message.msg_id == msg_id
    assert message.message == expected


def test_send_with_headers_and_integer_delay(manager, queue, same_tx):
    before = same_tx.execute("SELECT clock_timestamp()").fetchone()[0]
    msg_id = manager.send(queue, {"a": 1}, headers={"trace": "x"}, delay=3600)
    [(stored_id, message, headers, vt)] = live_rows(same_tx, queue)
    assert (stored_id, message, headers) == (msg_id, {"a": 1}, {"trace": "x"})
    assert vt >= before + timedelta(hours=1)
    assert manager.read(queue) == []


def test_send_with_a_datetime_delay(manager, queue, same_tx):
    msg_id = manager.send(queue, {"a": 1}, delay=AT)
    assert live_rows(same_tx, queue) == [(msg_id, {"a": 1}, None, AT)]


def test_send_batch_keeps_order_and_headers(manager, queue, same_tx):
    ids = manager.send_batch(queue, ["z", "a", "m"], headers=[{"i": 0}, None, {"i": 2}])
    assert ids == sorted(ids)
    assert [(r[0], r[1], r[2]) for r in live_rows(same_tx, queue)] == [
        (ids[0], "z", {"i": 0}),
        (ids[1], "a", None),
        (ids[2], "m", {"i": 2}),
    ]


def test_send_batch_delays(manager, queue, same_tx):
    before = same_tx.execute("SELECT clock_timestamp()").fetchone()[0]
    manager.send_batch(queue, [1, 2], delay=AT)
    manager.send_batch(queue, [3], delay=3600)
    vts = [r[3] for r in live_rows(same_tx, queue)]
    assert vts[:2] == [AT, AT]
    assert vts[2] >= before + timedelta(hours=1)
    assert manager.read(queue, qty=10) == []


# -- reading ------------------------------------------------------------------


def test_read_returns_messages_oldest_first(manager, queue):
    ids = manager.send_batch(
        queue, [{"n": n} for n in range(5)], headers=[{"h": n} for n in range(5)]
    )
    got = manager.read(queue, vt=30, qty=3)
    assert [m.msg_id for m in got] == ids[:3]
    first = got[0]
    assert isinstance(first, Message)
    assert (first.read_ct, first.message, first.headers) == (1, {"n": 0}, {"h": 0})
    assert first.last_read_at is not None and first.vt > first.last_read_at
    assert first.enqueued_at.tzinfo is not None
    assert [m.msg_id for m in manager.read(queue, qty=10)] == ids[3:]


def test_read_conditional(manager, queue):
    manager.send(queue, {"kind": "a"})
    wanted = manager.send(queue, {"kind": "b", "x": 1})
    assert [m.msg_id for m in manager.read(queue, qty=5, conditional={"kind": "b"})] == [wanted]


def test_read_with_poll(manager, queue):
    assert manager.read_with_poll(queue, max_poll_seconds=0) == []
    msg_id = manager.send(queue, {"a": 1})
    got = manager.read_with_poll(queue, vt=30, qty=2, max_poll_seconds=2, poll_interval_ms=10)
    assert [m.msg_id for m in got] == [msg_id]


def test_pop(manager, queue, same_tx):
    ids = manager.send_batch(queue, [1, 2, 3])
    assert [m.msg_id for m in manager.pop(queue)] == ids[:1]
    assert [(m.msg_id, m.message) for m in manager.pop(queue, qty=5)] == [(ids[1], 2), (ids[2], 3)]
    assert live_rows(same_tx, queue) == []


# -- acknowledging ------------------------------------------------------------


@pytest.mark.parametrize("action", ["archive", "delete"])
def test_archive_and_delete(manager, queue, same_tx, action):
    ids = manager.send_batch(queue, [1, 2, 3, 4])
    act = getattr(manager, action)
    assert act(queue, ids[0]) is True
    assert act(queue, ids[0]) is False
    assert act(queue, [ids[2], ids[1], 10**12]) == [ids[1], ids[2]]
    assert act(queue, iter([ids[3]])) == [ids[3]]
    assert live_rows(same_tx, queue) == []
    archived = same_tx.execute(
        psycopg.sql.SQL("SELECT msg_id FROM pgmq.{} ORDER BY msg_id").format(
            psycopg.sql.Identifier(f"a_{queue}")
        )
    ).fetchall()
    assert [r[0] for r in archived] == (ids if action == "archive" else [])


def test_set_vt_single_and_many(manager, queue, same_tx):
    ids = manager.send_batch(queue, [1, 2, 3])
    moved = manager.set_vt(queue, ids[0], 3600)
    assert isinstance(moved, Message) and moved.msg_id == ids[0]
    assert manager.set_vt(queue, 10**12, 5) is None
    many = manager.set_vt(queue, [ids[1], ids[2]], AT)
    assert [m.msg_id for m in many] == ids[1:]
    stored = {r[0]: r[3] for r in live_rows(same_tx, queue)}
    assert stored[ids[0]] == moved.vt
    assert stored[ids[1]] == stored[ids[2]] == AT
    assert manager.read(queue, qty=5) == []
    manager.set_vt(queue, ids, 0)
    assert [m.msg_id for m in manager.read(queue, qty=5)] == ids


# -- metrics ------------------------------------------------------------------


def test_metrics_and_metrics_all(transactional_db, manager, queue):
    # committed sends: metrics counts visibility against now(), the transaction's start
    manager.send_batch(queue, [1, 2, 3])
    manager.read(queue, qty=1)
    m = manager.metrics(queue)
    assert isinstance(m, QueueMetrics)
    assert (m.queue_name, m.queue_length, m.queue_visible_length, m.total_messages) == (
        queue,
        3,
        2,
        3,
    )
    assert m.default_partition_length is None
    everything = manager.metrics_all()
    assert [x.queue_name for x in everything] == sorted(i.queue_name for i in manager.list_queues())
    assert [x.queue_length for x in everything if x.queue_name == queue] == [3]


# -- errors -------------------------------------------------------------------

MISSING_QUEUE_CALLS = {
    "send": lambda m, q: m.send(q, {"a": 1}),
    "send_at": lambda m, q: m.send(q, {"a": 1}, delay=AT),
    "send_batch": lambda m, q: m.send_batch(q, [1, 2]),
    "read": lambda m, q: m.read(q),
    "read_with_poll": lambda m, q: m.read_with_poll(q, max_poll_seconds=0),
    "pop": lambda m, q: m.pop(q),
    "archive": lambda m, q: m.archive(q, 1),
    "archive_many": lambda m, q: m.archive(q, [1, 2]),
    "delete": lambda m, q: m.delete(q, 1),
    "set_vt": lambda m, q: m.set_vt(q, 1, 5),
    "purge_queue": lambda m, q: m.purge_queue(q),
    "metrics": lambda m, q: m.metrics(q),
}


@pytest.mark.parametrize("call", MISSING_QUEUE_CALLS)
def test_missing_queue_raises_queue_not_found_naming_it(manager, queue_name, call):
    with pytest.raises(QueueNotFound) as info:
        MISSING_QUEUE_CALLS[call](manager, queue_name)
    assert info.value.queue == queue_name
    assert f'queue "{queue_name}" does not exist' in str(info.value)


def test_queue_not_found_is_a_lookup_error(manager, queue_name):
    with pytest.raises(LookupError):
        manager.read(queue_name)


# -- transactions ---------------------------------------------------------------


class Abort(Exception):
    pass


def test_send_rolled_back_with_the_transaction_leaves_nothing(manager, queue, other_conn):
    with pytest.raises(Abort), transaction.atomic():
        manager.send(queue, {"order": 1})
        manager.send_batch(queue, [2, 3])
        assert len(manager.read(queue, vt=0, qty=5)) == 3  # visible inside the transaction
        assert live_rows(other_conn, queue) == []  # not committed yet
        raise Abort
    assert manager.read(queue, qty=5) == []
    assert live_rows(other_conn, queue) == []


def test_send_committed_with_the_transaction_is_visible(manager, queue, other_conn):
    with transaction.atomic():
        msg_id = manager.send(queue, {"order": 1})
        assert live_rows(other_conn, queue) == []
    assert [r[0] for r in live_rows(other_conn, queue)] == [msg_id]
    assert [m.msg_id for m in manager.read(queue)] == [msg_id]


def test_create_queue_rolled_back_leaves_no_queue(manager, queue_name, other_conn):
    with pytest.raises(Abort), transaction.atomic():
        manager.create_queue(queue_name)
        raise Abort
    assert queue_name not in [i.queue_name for i in manager.list_queues()]
    assert other_conn.execute(
        "SELECT count(*) FROM pg_class WHERE relname = %s", [f"q_{queue_name}"]
    ).fetchone() == (0,)


def test_archive_rolled_back_keeps_the_message(transactional_db, manager, queue):
    msg_id = manager.send(queue, 1)
    with pytest.raises(Abort), transaction.atomic():
        assert manager.archive(queue, msg_id) is True
        raise Abort
    assert [m.msg_id for m in manager.read(queue)] == [msg_id]


# -- a second database alias -----------------------------------------------------


@pytest.fixture
def two_databases() -> Iterator[tuple[QueueManager, QueueManager, str]]:
    name = f"t_{uuid.uuid4().hex[:16]}"
    default, other = QueueManager(), QueueManager(using="other")
    yield default, other, name
    other.drop_queue(name)
    default.drop_queue(name)


@pytest.mark.django_db(databases=["default", "other"], transaction=True)
def test_manager_on_the_other_alias(two_databases):
    default, other, name = two_databases
    assert other.using == "other" and default.using == "default"
    other.create_queue(name)
    msg_id = other.send(name, {"where": "other"})
    assert name in [i.queue_name for i in other.list_queues()]
    assert name not in [i.queue_name for i in default.list_queues()]
    with pytest.raises(QueueNotFound):
        default.send(name, {"where": "default"})
    [message] = other.read(name)
    assert (message.msg_id, message.message) == (msg_id, {"where": "other"})
    assert other.metrics(name).total_messages == 1


@pytest.mark.django_db(databases=["default", "other"], transaction=True)
def test_module_functions_follow_the_pgmq_database_setting(two_databases):
    default, other, name = two_databases
    with override_settings(PGMQ={"DATABASE": "other"}):
        pgmq.create_queue(name)
        pgmq.send(name, 1)
    assert [i.queue_name for i in other.list_queues() if i.queue_name == name] == [name]
    assert name not in [i.queue_name for i in default.list_queues()]


@pytest.mark.django_db(databases=["default", "other"], transaction=True)
def test_a_transaction_on_one_alias_does_not_cover_the_other(two_databases):
    default, other, name = two_databases
    default.create_queue(name)
    other.create_queue(name)
    with pytest.raises(Abort), transaction.atomic(using="other"):
        other.send(name, "rolled back")
        with pytest.raises(CrossDatabaseTransaction, match="on 'other'"):
            default.send(name, "refused")  # routed (no using=): it could not join
        QueueManager(using="default").send(name, "kept")  # the caller chose the alias
        raise Abort
    assert other.read(name) == []
    assert [m.message for m in default.read(name)] == ["kept"]


# -- module-level functions ------------------------------------------------------


@pytest.mark.parametrize("name", api.MODULE_FUNCTIONS)
def test_module_function_mirrors_the_manager_method(name):
    function, method = getattr(pgmq, name), getattr(QueueManager, name)
    assert name in pgmq.__all__
    assert function.__doc__ == method.__doc__
    assert inspect.signature(function) == inspect.signature(method)


def test_module_functions_round_trip_on_the_default_database(db, queue_name):
    pgmq.create_queue(queue_name)
    try:
        assert queue_name in [i.queue_name for i in pgmq.list_queues()]
        first = pgmq.send(queue_name, {"n": 1}, headers={"h": 1})
        more = pgmq.send_batch(queue_name, [{"n": 2}, {"n": 3}, {"n": 4}, {"n": 5}])
        [got] = pgmq.read(queue_name, vt=30, qty=1)
        assert (got.msg_id, got.headers) == (first, {"h": 1})
        assert [m.msg_id for m in pgmq.read_with_poll(queue_name, qty=1, max_poll_seconds=1)] == [
            more[0]
        ]
        assert [m.msg_id for m in pgmq.pop(queue_name)] == [more[1]]
        assert pgmq.set_vt(queue_name, first, 0).msg_id == first
        assert pgmq.archive(queue_name, first) is True
        assert pgmq.delete(queue_name, [more[2]]) == [more[2]]
        m = pgmq.metrics(queue_name)
        assert (m.queue_length, m.total_messages) == (2, 5)
        assert queue_name in [x.queue_name for x in pgmq.metrics_all()]
        assert pgmq.purge_queue(queue_name) == 2
    finally:
        assert pgmq.drop_queue(queue_name) is True


@pytest.mark.parametrize(
    ("payload", "cause"),
    [
        ({"text": "a\x00b"}, "unsupported Unicode escape sequence"),
        ({"key\x00": 1}, "unsupported Unicode escape sequence"),
        ("\ud800", "invalid input syntax for type json"),
    ],
    ids=["nul-in-value", "nul-in-key", "lone-surrogate"],
)
def test_payload_jsonb_cannot_store_is_invalid_payload(manager, queue, payload, cause):
    with pytest.raises(InvalidPayload, match=cause) as info, transaction.atomic():
        manager.send(queue, payload)
    assert f'queue "{queue}"' in str(info.value)
    assert manager.read(queue) == []
