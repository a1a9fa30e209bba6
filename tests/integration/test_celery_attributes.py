"""Queue attributes hold for Celery's publishes and fetches (the kombu transport in process).

A Celery queue is a pgmq queue, and the transport sends with pgmq.send and fetches with
pgmq.read and pgmq.pop, so what a queue's attributes say holds for Celery as for any
client: delivery_delay when no countdown or eta is given, max_message_size, the
deduplication_id header, paused, and redrive to a dead-letter queue at read.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from kombu import Exchange, Producer, Queue
from psycopg import sql

from django_pgmq.errors import InvalidArgument
from tests.integration import test_celery_transport as transport
from tests.integration.test_celery_transport import bodies, collect, rows, table

# The transport tests' fixtures, shared.
connect, db, name = transport.connect, transport.db, transport.name

pytestmark = pytest.mark.django_db(transaction=True)


def declare(conn, db, queue: str, exchange: Exchange | None = None, **attributes: object) -> None:
    """Declare a Celery queue (a pgmq queue) and set its attributes in SQL."""
    Queue(queue, exchange)(conn.default_channel).declare()
    db.execute("SELECT pgmq.set_queue_attributes(%s, %s::jsonb)", [queue, json.dumps(attributes)])


def visible_in(db, queue: str) -> list[float]:
    """Seconds until each live message of a queue becomes visible, oldest first."""
    query = sql.SQL(
        "SELECT extract(epoch FROM vt - clock_timestamp())::float8 FROM {} ORDER BY msg_id"
    )
    return [row[0] for row in db.execute(query.format(table(queue)))]


def test_a_publish_without_countdown_takes_the_queues_delivery_delay(connect, db, name):
    conn = connect()
    declare(conn, db, name, delivery_delay=60)
    eta = datetime.now(UTC) + timedelta(seconds=5)
    past = datetime.now(UTC) - timedelta(seconds=5)
    with Producer(conn) as producer:
        producer.publish("plain", routing_key=name)
        producer.publish("eta", routing_key=name, headers={"eta": eta.isoformat()})
        producer.publish("past eta", routing_key=name, headers={"eta": past.isoformat()})
    delayed, explicit, now = visible_in(db, name)
    assert 55 < delayed <= 60  # the queue's delivery_delay
    assert 0 < explicit <= 5  # an explicit eta stays explicit
    assert now <= 0  # an eta in the past is explicit too: visible at once


def test_an_exchange_publish_takes_each_queues_delivery_delay(connect, db, name):
    conn = connect()
    slow, fast = f"{name}_slow", f"{name}_fast"
    fan = Exchange(f"{name}.fan", "fanout")
    declare(conn, db, slow, fan, delivery_delay=30)
    declare(conn, db, fast, fan, delivery_delay=0)
    with Producer(conn) as producer:
        producer.publish("both", exchange=fan)
    [slow_in] = visible_in(db, slow)
    [fast_in] = visible_in(db, fast)
    assert 25 < slow_in <= 30 and fast_in <= 0


def test_a_message_over_max_message_size_is_refused_with_size_and_limit(connect, db, name):
    conn = connect()
    declare(conn, db, name, max_message_size=2000)
    with Producer(conn) as producer:
        producer.publish("small", routing_key=name)
        with pytest.raises(InvalidArgument) as refused:
            producer.publish("x" * 5000, routing_key=name)
    text = str(refused.value)
    assert f'queue "{name}"' in text and "max_message_size of 2000 bytes" in text
    assert "\n" not in text
    assert bodies(db, name) == ["small"]


def test_a_deduplication_id_header_enqueues_once_within_the_window(connect, db, name):
    conn = connect()
    declare(conn, db, name, deduplication_window=300)
    with Producer(conn) as producer:
        producer.publish("first", routing_key=name, headers={"deduplication_id": "order-7"})
        producer.publish("again", routing_key=name, headers={"deduplication_id": "order-7"})
        producer.publish("other", routing_key=name, headers={"deduplication_id": "order-8"})
        producer.publish("no id", routing_key=name)
    assert bodies(db, name) == ["first", "other", "no id"]
    with Producer(conn) as producer, pytest.raises(InvalidArgument, match="deduplication_id"):
        producer.publish("bad", routing_key=name, headers={"deduplication_id": "x" * 200})


def test_a_paused_queue_hands_nothing_to_a_consumer(connect, db, name):
    conn = connect()
    declare(conn, db, name, paused=True)
    conn.SimpleQueue(name).put("held back")
    channel = conn.default_channel
    assert channel.basic_get(name) is None
    assert channel.connection.sessions.run("celery_next_visible", {"queues": [name]}) == [(None,)]
    db.execute("SELECT pgmq.set_queue_attributes(%s, '{\"paused\": null}')", [name])
    [message] = collect(conn, Queue(name), 1)
    assert message.payload == "held back"
    message.ack()


def test_a_message_read_past_max_receive_count_goes_to_the_dead_letter_queue(connect, db, name):
    conn = connect()
    dlq = f"{name}_dlq"
    declare(conn, db, name, max_receive_count=1, dead_letter_queue=dlq)
    conn.SimpleQueue(name).put("poison")
    [first] = collect(conn, Queue(name), 1)
    first.requeue()  # visible again, read once
    assert conn.default_channel.basic_get(name) is None  # the second read dead-letters it
    assert rows(db, name) == []
    [(message, headers)] = db.execute(
        sql.SQL("SELECT message->>'body', headers FROM {}").format(table(dlq))
    ).fetchall()
    assert message == "poison"
    assert headers["dead_letter"]["queue"] == name and headers["dead_letter"]["read_ct"] == 1
