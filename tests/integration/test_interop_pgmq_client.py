"""The `pgmq` PyPI client (1.1.4) against our SQL API, and the Django manager on the same data."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from datetime import UTC, datetime

import psycopg
import pytest
from pgmq import PGMQueue
from psycopg.conninfo import conninfo_to_dict

AT = datetime(2100, 1, 1, tzinfo=UTC)


@pytest.fixture
def client(pg_dsn) -> Iterator[PGMQueue]:
    """A pgmq client on the test database, given as a libpq conninfo string.

    The client rebuilds ``host=... port=... dbname=...`` from it, so a Unix-socket
    directory works as the host. Passing the conninfo matters: otherwise the client
    reads ``DATABASE_URL`` from the environment and it wins over explicit fields.
    ``init_extension=False``: there is no pgmq extension to create.
    """
    queue = PGMQueue(conn_string=pg_dsn, init_extension=False, pool_size=2)
    assert queue.config.database == conninfo_to_dict(pg_dsn)["dbname"]
    yield queue
    queue.close()


@pytest.fixture
def manager_queue(manager, queue_name) -> Iterator[str]:
    """A queue name both sides drop afterwards, whoever created it."""
    yield queue_name
    manager.drop_queue(queue_name)


def client_queue_names(client: PGMQueue) -> list[str]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # 1.1.4 warns about the return type
        return [q.queue_name for q in client.list_queues()]


def test_client_produces_and_the_manager_consumes(client, manager, manager_queue):
    q = manager_queue
    client.create_queue(q)
    assert q in [i.queue_name for i in manager.list_queues()]
    first = client.send(q, {"from": "client"}, headers={"trace": "t1"})
    later = client.send(q, {"later": True}, delay=3600)
    batch = client.send_batch(q, [{"n": 1}, {"n": 2}], headers=[{"h": 1}, {"h": 2}])
    at = client.send(q, {"at": True}, delay=AT)
    assert first < later < batch[0] < batch[1] < at

    got = manager.read(q, vt=30, qty=10)
    assert [(m.msg_id, m.message, m.headers) for m in got] == [
        (first, {"from": "client"}, {"trace": "t1"}),
        (batch[0], {"n": 1}, {"h": 1}),
        (batch[1], {"n": 2}, {"h": 2}),
    ]
    assert manager.archive(q, [first, batch[0]]) == [first, batch[0]]
    metrics = client.metrics(q)
    assert (metrics.queue_name, metrics.queue_length, metrics.total_messages) == (q, 3, 5)
    assert metrics.queue_visible_length == 0
    ours = manager.metrics(q)
    assert (ours.queue_length, ours.total_messages, ours.queue_visible_length) == (3, 5, 0)


def test_manager_produces_and_the_client_consumes(client, manager, manager_queue):
    q = manager_queue
    manager.create_queue(q)
    assert q in client_queue_names(client)
    ids = manager.send_batch(q, [{"n": n} for n in range(6)], headers=[{"h": n} for n in range(6)])

    one = client.read(q, vt=30)
    assert (one.msg_id, one.message, one.headers, one.read_ct) == (ids[0], {"n": 0}, {"h": 0}, 1)
    two = client.read(q, vt=30, qty=2)
    assert [m.msg_id for m in two] == ids[1:3]
    assert client.archive(q, ids[0]) is True
    assert client.archive_batch(q, [ids[1], 10**12]) == [ids[1]]
    assert client.delete(q, ids[2]) is True
    assert client.delete(q, ids[2]) is False
    popped = client.pop(q)
    assert popped.msg_id == ids[3]
    polled = client.read_with_poll(q, vt=30, qty=5, max_poll_seconds=1, poll_interval_ms=10)
    assert [m.msg_id for m in polled] == ids[4:]
    released = client.set_vt(q, [ids[4], ids[5]], 0)
    assert [m.msg_id for m in released] == ids[4:]
    moved = client.set_vt(q, ids[5], AT)
    assert (moved.msg_id, moved.vt) == (ids[5], AT)

    [again] = manager.read(q, qty=5)
    assert (again.msg_id, again.read_ct) == (ids[4], 2)
    assert client.delete_batch(q, [ids[4]]) == [ids[4]]
    assert manager.metrics(q).queue_length == 1
    assert client.purge(q) == 1
    assert manager.read(q, qty=5) == []
    assert {m.queue_name for m in client.metrics_all()} == {
        i.queue_name for i in manager.list_queues()
    }


def test_client_queue_management(client, manager, manager_queue):
    q = manager_queue
    client.create_queue(q, unlogged=True)
    [info] = [i for i in manager.list_queues() if i.queue_name == q]
    assert info.is_unlogged is True
    assert client.validate_queue_name(q) is True
    client.detach_archive(q)  # deprecated no-op: warns, keeps working
    assert client.drop_queue(q) is True
    assert q not in [i.queue_name for i in manager.list_queues()]
    assert client.drop_queue(q) is False


def test_client_sees_our_errors(client, queue_name):
    with pytest.raises(psycopg.Error) as info:
        client.validate_queue_name("bad;name")
    assert info.value.sqlstate == "PQ001"
    with pytest.raises(psycopg.Error) as info:  # with or without native partitions
        client.create_partitioned_queue("bad;name")
    assert info.value.sqlstate == "PQ001"
    with pytest.raises(psycopg.Error, match=queue_name):
        client.send(queue_name, {"no": "queue"})
    assert queue_name not in client_queue_names(client)


def test_client_and_manager_share_one_visibility_timeout(client, manager, manager_queue):
    q = manager_queue
    manager.create_queue(q)
    msg_id = client.send(q, {"once": True})
    [mine] = manager.read(q, vt=300)
    assert mine.msg_id == msg_id
    assert client.read(q, vt=300) is None
    manager.set_vt(q, msg_id, 0)
    assert client.read(q, vt=300).msg_id == msg_id
