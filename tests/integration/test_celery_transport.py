"""The kombu transport django-pgmq:// in one process, against the test database.

What a Celery worker relies on, checked at kombu's level: declarations become pgmq
queues, ack archives, requeue and close release in place, prefetch limits reads,
exchanges route in the database, transactions decide whether a message exists.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

import pytest
from django.db import transaction
from kombu import Connection, Consumer, Exchange, Producer, Queue
from psycopg import sql

import django_pgmq.contrib.celery  # noqa: F401  (registers django-pgmq://)
from django_pgmq.contrib.celery.naming import pgmq_queue_name
from django_pgmq.errors import InvalidArgument

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def connect() -> Iterator[Callable[..., Connection]]:
    """Open kombu connections on django-pgmq:// (the Django test database); closed afterwards."""
    opened: list[Connection] = []

    def make(url: str = "django-pgmq://", **options) -> Connection:
        conn = Connection(url, transport_options=options)
        conn.connect()
        opened.append(conn)
        return conn

    yield make
    for conn in opened:
        conn.release()


@pytest.fixture
def db(pg_connect):
    """An autocommit psycopg connection to look at the broker's tables."""
    return pg_connect()


@pytest.fixture
def name() -> str:
    return f"cq_{uuid.uuid4().hex[:12]}"


def table(queue: str, prefix: str = "q") -> sql.Composable:
    """The live (``q``) or archive (``a``) table of a pgmq queue."""
    return sql.Identifier("pgmq", f"{prefix}_{queue.lower()}")


def rows(db, queue: str, prefix: str = "q") -> list[tuple]:
    """(msg_id, read_ct, visible now) of a queue's live or archive table."""
    query = sql.SQL("SELECT msg_id, read_ct, vt <= clock_timestamp() FROM {} ORDER BY msg_id")
    return db.execute(query.format(table(queue, prefix))).fetchall()


def bodies(db, queue: str) -> list[str]:
    """The stored (JSON-serialized) bodies of a queue's live messages, oldest first."""
    query = sql.SQL("SELECT message->>'body' FROM {} ORDER BY msg_id")
    return [row[0] for row in db.execute(query.format(table(queue)))]


def vt_of(db, queue: str) -> datetime:
    return db.execute(sql.SQL("SELECT vt FROM {}").format(table(queue))).fetchone()[0]


def collect(conn: Connection, queue: Queue, count: int, **consumer_kwargs) -> list:
    """Consume until ``count`` messages arrived (or 10 s passed); returns them unsettled."""
    got: list = []
    with Consumer(conn, [queue], callbacks=[lambda body, m: got.append(m)], **consumer_kwargs):
        while len(got) < count:
            conn.drain_events(timeout=10)
    return got


def test_declared_queue_is_a_pgmq_queue_and_ack_archives(connect, db, name):
    conn = connect()
    queue = Queue(name, Exchange(name, "direct"), name)
    with Producer(conn) as producer:
        producer.publish({"n": 1}, exchange=queue.exchange, routing_key=name, declare=[queue])
    [message] = collect(conn, queue, 1)
    assert message.payload == {"n": 1}
    assert message.delivery_info["redelivered"] is False
    assert rows(db, name) == [(1, 1, False)]  # in flight: hidden by the visibility timeout
    message.ack()
    assert rows(db, name) == []
    assert rows(db, name, "a") == [(1, 1, False)]


def test_on_ack_delete_keeps_no_archive(connect, db, name):
    conn = connect(on_ack="delete")
    simple = conn.SimpleQueue(name)
    simple.put({"n": 1})
    simple.get(timeout=10).ack()
    assert rows(db, name) == []
    assert rows(db, name, "a") == []


def test_celery_names_map_to_valid_pgmq_queues(connect, db):
    celery_name = f"celery@host-{uuid.uuid4().hex[:6]}.example.com.celery.pidbox"
    conn = connect()
    conn.SimpleQueue(celery_name).put("hi")
    mapped = pgmq_queue_name(celery_name)
    assert mapped != celery_name and len(mapped) <= 47
    stored = db.execute(
        "SELECT celery_name FROM pgmq.celery_queue WHERE queue_name = %s", [mapped]
    ).fetchone()
    assert stored == (celery_name,)
    assert pgmq_queue_name(celery_name) == mapped  # deterministic
    assert pgmq_queue_name(celery_name + "x") != mapped
    assert pgmq_queue_name("celery") == "celery"  # valid names are kept


def test_reject_with_requeue_makes_the_same_message_visible_now(connect, db, name):
    conn = connect()
    simple = conn.SimpleQueue(name)
    simple.put("again")
    first = simple.get(timeout=10)
    first.requeue()
    assert rows(db, name) == [(1, 1, True)]
    second = simple.get(timeout=10)
    assert second.body == first.body
    assert second.delivery_info["redelivered"] is True
    second.ack()
    assert rows(db, name, "a") == [(1, 2, False)]


def test_prefetch_limits_what_is_read(connect, db, name):
    conn = connect()
    simple = conn.SimpleQueue(name)
    for n in range(10):
        simple.put(n)
    queue = Queue(name)
    got: list = []
    with Consumer(conn, [queue], callbacks=[lambda body, m: got.append(m)], prefetch_count=3):
        conn.drain_events(timeout=10)
        assert len(got) == 3
        with pytest.raises(TimeoutError):
            conn.drain_events(timeout=0.5)  # window full: nothing more is read
        in_flight = [r for r in rows(db, name) if not r[2]]
        assert len(in_flight) == 3
        got[0].ack()
        conn.drain_events(timeout=10)
        assert len(got) == 4
        for message in got:
            if not message.acknowledged:
                message.ack()


def test_closing_releases_unacked_messages_in_place(connect, db, name):
    conn = connect(visibility_timeout=3600)
    simple = conn.SimpleQueue(name)
    for n in range(5):
        simple.put(n)
    ids_before = [r[0] for r in rows(db, name)]
    got = collect(conn, Queue(name), 5, prefetch_count=5)
    got[0].ack()
    conn.release()  # warm shutdown: the four unacked become visible now
    after = rows(db, name)
    assert [r[0] for r in after] == ids_before[1:]  # same messages, no copies
    assert all(visible for _, _, visible in after)
    again = collect(connect(), Queue(name), 4)
    assert sorted(m.payload for m in again) == [1, 2, 3, 4]


def test_held_messages_are_renewed_and_return_after_the_timeout(connect, db, name):
    holder = connect(visibility_timeout=1)
    holder.SimpleQueue(name).put("slow")
    [held] = collect(holder, Queue(name), 1)
    vt_before = vt_of(db, name)
    holder.default_channel.renew()
    vt_after = vt_of(db, name)
    assert vt_after > vt_before
    # The holder stops renewing (as a dead worker would): the message comes back.
    other = connect(visibility_timeout=30)
    [again] = collect(other, Queue(name), 1)
    assert again.body == held.body and again.delivery_info["redelivered"] is True
    again.ack()
    held.ack()  # the late ack of the first holder finds nothing left to do
    assert rows(db, name, "a") == [(1, 2, False)]


def test_send_in_rolled_back_transaction_does_not_exist(connect, db, name):
    conn = connect()
    simple = conn.SimpleQueue(name)
    with pytest.raises(RuntimeError), transaction.atomic():
        simple.put("never")
        raise RuntimeError("roll back")
    with transaction.atomic():
        simple.put("kept")
        assert rows(db, name) == []  # not visible to others before the commit
    assert [r[0] for r in rows(db, name)] == [2]
    assert simple.get(timeout=10).payload == "kept"


def test_eta_becomes_the_message_delay(connect, db, name):
    conn = connect()
    queue = Queue(name)
    eta = (datetime.now(UTC) + timedelta(seconds=30)).replace(microsecond=0)
    with Producer(conn) as producer:
        producer.publish(
            "later", routing_key=name, declare=[queue], headers={"eta": eta.isoformat()}
        )
        producer.publish("now", routing_key=name, declare=[queue], headers={"eta": None})
    query = sql.SQL("SELECT message->>'body', vt FROM {} ORDER BY msg_id").format(table(name))
    later, now = db.execute(query).fetchall()
    assert later == ("later", eta)
    assert now[1] < eta


def test_fanout_direct_and_topic_exchanges_route_in_the_database(connect, db, name):
    conn = connect()
    fan = Exchange(f"{name}.fan", "fanout")
    topic = Exchange(f"{name}.topic", "topic")
    queues = {
        "f1": Queue(f"{name}.f1", fan),
        "f2": Queue(f"{name}.f2", fan),
        "all_workers": Queue(f"{name}.t1", topic, "worker.#"),
        "any_b": Queue(f"{name}.t2", topic, "*.b"),
    }
    for queue in queues.values():
        queue(conn.default_channel).declare()
    other = connect()  # another process: it knows the bindings only from the database
    with Producer(other) as producer:
        producer.publish("to all", exchange=fan.name, routing_key="")
        for key in ("worker", "worker.heartbeat", "a.b", "a.b.c"):
            producer.publish(key, exchange=topic.name, routing_key=key)

    def got(key: str) -> list[str]:
        return bodies(db, pgmq_queue_name(queues[key].name))

    assert got("f1") == got("f2") == ["to all"]
    assert got("all_workers") == ["worker", "worker.heartbeat"]
    assert got("any_b") == ["a.b"]


def test_auto_delete_queue_goes_with_its_last_consumer(connect, db, name):
    conn = connect()
    queue = Queue(name, auto_delete=True)
    with Consumer(conn, [queue], callbacks=[lambda body, m: None]):
        assert rows(db, name) == []  # exists while consumed
    assert (
        db.execute("SELECT count(*) FROM pgmq.meta WHERE queue_name = %s", [name]).fetchone()[0]
        == 0
    )


def test_queues_of_dead_consumers_are_cleaned_up(connect, db, name):
    dying = connect()
    consumer = Consumer(dying, [Queue(name, auto_delete=True)], callbacks=[lambda b, m: None])
    consumer.consume()
    expiring = f"{name}_exp"
    connect().SimpleQueue(Queue(expiring, Exchange(expiring), expiring, expires=0.001)).put("x")
    session = dying.transport.sessions.session_id
    db.execute(
        "SELECT pg_terminate_backend(pid, 5000) FROM pg_locks WHERE locktype = 'advisory' "
        "AND classid = pgmq._celery_lock_space()::oid AND objid = %s::oid",
        [session],
    )
    dropped = db.execute("SELECT pgmq.celery_cleanup()").fetchone()[0]
    assert dropped >= 2
    left = db.execute(
        "SELECT queue_name FROM pgmq.meta WHERE queue_name IN (%s, %s)", [name, expiring]
    ).fetchall()
    assert left == []


def test_a_queue_dropped_under_its_consumer_makes_celery_reconnect(connect, db, name):
    conn = connect()
    conn.SimpleQueue(name).put("orphan")
    with Consumer(conn, [Queue(name)], callbacks=[lambda b, m: None]):
        db.execute("SELECT pgmq.drop_queue(%s)", [name])
        with pytest.raises(conn.connection_errors, match="dropped while consumed"):
            conn.drain_events(timeout=5)


def test_an_idle_consumer_sleeps_instead_of_polling(connect, name):
    conn = connect(polling_interval=60)
    queue = Queue(name)
    queue(conn.default_channel).declare()
    sessions = conn.transport.sessions
    statements: list[str] = []
    run = sessions.run

    def spy(statement: str, params: dict, *fetch: str) -> list[tuple]:
        statements.append(statement)
        return run(statement, params, *fetch)

    sessions.run = spy
    with Consumer(conn, [queue], callbacks=[lambda b, m: None]):
        for _ in range(3):  # as Celery's loop calls it, every couple of seconds
            with pytest.raises(TimeoutError):
                conn.drain_events(timeout=0.5)
    assert statements.count("celery_read") == 1  # one look, then LISTEN until something changes


@pytest.mark.parametrize("notify", [True, False])
def test_a_waiting_consumer_wakes_on_notify_not_on_a_poll(connect, name, notify):
    consumer_conn = connect(polling_interval=60, notify=notify)
    queue = Queue(name)
    queue(consumer_conn.default_channel).declare()
    got: list = []
    outcome: list = []

    def wait_for_one() -> None:
        with Consumer(consumer_conn, [queue], callbacks=[lambda b, m: got.append(m)]):
            try:
                consumer_conn.drain_events(timeout=4)
                outcome.append("delivered")
            except TimeoutError:
                outcome.append("timed out")
            for message in got:
                message.ack()

    thread = threading.Thread(target=wait_for_one)
    thread.start()
    while not consumer_conn.transport._draining and thread.is_alive():
        threading.Event().wait(0.01)
    threading.Event().wait(0.3)  # the consumer has read once and now sleeps
    connect(notify=notify).SimpleQueue(name).put("wake up")
    thread.join()
    assert outcome == (["delivered"] if notify else ["timed out"])


@pytest.mark.parametrize(
    ("option", "value"),
    [("visibility_timeout", 0), ("on_ack", "forget"), ("max_batch", 0), ("notify", "yes")],
)
def test_bad_transport_options_are_named(option, value):
    with pytest.raises(InvalidArgument, match=option):
        Connection("django-pgmq://", transport_options={option: value}).transport  # noqa: B018


PLAIN_CLIENT = """
import sys

import django_pgmq.contrib.celery
from django.conf import settings
from kombu import Connection

with Connection(sys.argv[1]) as conn:
    queue = conn.SimpleQueue(sys.argv[2])
    queue.put({"plain": True})
    message = queue.get(timeout=10)
    message.ack()
    print(message.payload, conn.transport.driver_type, settings.configured)
"""


def test_plain_url_works_without_django_settings(test_database_url, db, name):
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    url = "django-pgmq+" + test_database_url
    done = subprocess.run(
        [sys.executable, "-c", PLAIN_CLIENT, url, name],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["{'plain':", "True}", "pgmq", "False"]
    assert rows(db, name, "a") == [(1, 1, False)]


def test_priority_queue_hands_out_higher_celery_priorities_first(connect, db, name):
    """Queue(max_priority=) (x-max-priority) turns the queue's priorities on; Celery's
    0-9 become the pgmq header priority 0-90, read highest first, then oldest first."""
    conn = connect()
    queue = Queue(name, Exchange(name), routing_key=name, max_priority=10)
    sent = [(1, None), (2, 0), (3, 9), (4, 3), (5, 9), (6, 12), (7, -4)]
    with Producer(conn) as producer:
        for n, priority in sent:
            producer.publish({"n": n}, routing_key=name, declare=[queue], priority=priority)
    assert db.execute("SELECT pgmq.get_queue_attributes(%s)", [name]).fetchone() == (
        {"priorities": True},
    )
    stored = db.execute(
        sql.SQL("SELECT (message->>'body')::jsonb->>'n', headers FROM {} ORDER BY msg_id").format(
            table(name)
        )
    ).fetchall()
    assert [(int(n), (h or {}).get("priority")) for n, h in stored] == [
        (1, None), (2, None), (3, 90), (4, 30), (5, 90), (6, 100), (7, None),
    ]  # fmt: skip
    got = collect(conn, queue, len(sent))
    assert [m.payload["n"] for m in got] == [6, 3, 5, 4, 1, 2, 7]
    for message in got:
        message.ack()


def test_priorities_need_the_queue_attribute(connect, db, name):
    """On a queue without priorities the header is stored and reads stay in send order."""
    conn = connect()
    queue = Queue(name, Exchange(name), routing_key=name)
    with Producer(conn) as producer:
        for n, priority in [(1, 0), (2, 9)]:
            producer.publish({"n": n}, routing_key=name, declare=[queue], priority=priority)
    assert db.execute("SELECT pgmq.get_queue_attributes(%s)", [name]).fetchone() == ({},)
    assert [m.payload["n"] for m in collect(conn, queue, 2)] == [1, 2]
