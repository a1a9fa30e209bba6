"""Queue attributes hold for a pgmq client: set by SQL, then sent and read with `pgmq` (pgmq-py)."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest
from pgmq import PGMQueue
from psycopg.types.json import Jsonb

pytestmark = pytest.mark.usefixtures("transactional_db")


@pytest.fixture
def client(pg_dsn) -> Iterator[PGMQueue]:
    """A pgmq client on the test database (see test_interop_pgmq_client.py)."""
    queue = PGMQueue(conn_string=pg_dsn, init_extension=False, pool_size=2)
    yield queue
    queue.close()


@pytest.fixture
def q(client, pg_connect, queue_name) -> Iterator[str]:
    client.create_queue(queue_name)
    yield queue_name
    client.drop_queue(queue_name)
    client.drop_queue(queue_name + "_dlq")


@pytest.fixture
def sql(pg_connect) -> psycopg.Connection:
    return pg_connect()


def set_attrs(sql: psycopg.Connection, queue: str, **attrs: object) -> None:
    sql.execute("SELECT pgmq.set_queue_attributes(%s, %s)", [queue, Jsonb(attrs)])


def test_deduplication_for_a_client(client, sql, q):
    set_attrs(sql, q, deduplication_window=300)
    first = client.send(q, {"n": 1}, headers={"deduplication_id": "x"})
    assert client.send(q, {"n": 2}, headers={"deduplication_id": "x"}) == first
    ids = client.send_batch(
        q, [{"n": 3}, {"n": 4}], headers=[{"deduplication_id": "x"}, {"deduplication_id": "y"}]
    )
    assert ids[0] == first and ids[1] > first
    assert [m.message for m in client.read_batch(q, vt=30, batch_size=10)] == [{"n": 1}, {"n": 4}]


def test_delivery_delay_for_a_client_that_gives_no_delay(client, sql, q):
    set_attrs(sql, q, delivery_delay=3600)
    client.send(q, {"n": 1})  # pgmq-py passes delay 0
    client.send_batch(q, [{"n": 2}])
    assert client.read(q, vt=30) is None
    assert client.metrics(q).queue_length == 2


def test_priorities_max_size_and_pause_for_a_client(client, sql, q):
    set_attrs(sql, q, priorities=True, max_message_size=64)
    low = client.send(q, {"n": 1}, headers={"priority": -3})
    high = client.send(q, {"n": 2}, headers={"priority": 30})
    plain = client.send(q, {"n": 3})
    with pytest.raises(Exception, match="max_message_size of 64 bytes"):
        client.send(q, {"big": "x" * 100})
    with pytest.raises(Exception, match='header "priority" must be an integer'):
        client.send(q, {"n": 4}, headers={"priority": "urgent"})
    set_attrs(sql, q, paused=True)
    assert client.read(q, vt=30) is None
    assert client.pop(q) is None
    set_attrs(sql, q, paused=None)
    assert [m.msg_id for m in client.read_batch(q, vt=30, batch_size=5)] == [high, plain, low]


def test_dead_letter_for_a_client(client, sql, q):
    dlq = q + "_dlq"
    set_attrs(sql, q, max_receive_count=2, dead_letter_queue=dlq)
    msg_id = client.send(q, {"n": 1})
    for times in (1, 2):
        assert client.read(q, vt=30).read_ct == times
        sql.execute(f'UPDATE pgmq."q_{q}" SET vt = now()')  # as if its vt ran out
    assert client.read(q, vt=30) is None
    letter = client.read(dlq, vt=30)
    assert letter.message == {"n": 1}
    assert letter.headers["dead_letter"]["msg_id"] == msg_id
    assert letter.headers["dead_letter"]["queue"] == q


def test_retention_of_a_clients_messages(client, sql, q):
    set_attrs(sql, q, message_retention=3600, archive_retention=3600)
    old, new = client.send_batch(q, [{"n": 1}, {"n": 2}])
    gone = client.send(q, {"n": 3})
    client.archive(q, gone)
    sql.execute(
        f"UPDATE pgmq.\"q_{q}\" SET enqueued_at = now() - interval '2 hours' WHERE msg_id = %s",
        [old],
    )
    sql.execute(f"UPDATE pgmq.\"a_{q}\" SET archived_at = now() - interval '2 hours'")
    rows = sql.execute("SELECT * FROM pgmq.enforce_retention(%s)", [q]).fetchall()
    assert rows == [(q, 1, 1)]
    assert [m.msg_id for m in client.read_batch(q, vt=30, batch_size=5)] == [new]
