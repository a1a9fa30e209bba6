"""Insert notifications (40_notify.sql): channel, commit-time delivery, throttling, errors."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator

import psycopg
import pytest
from psycopg import sql

from django_pgmq import QueueManager

SENTINEL = "sentinel"


def channel(queue: str) -> str:
    return f"pgmq.q_{queue}.INSERT"


def listen(conn: psycopg.Connection, queue: str) -> psycopg.Connection:
    conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel(queue))))
    return conn


def received(listener: psycopg.Connection, prober: psycopg.Connection, queue: str) -> list:
    """What the listener got on the queue's channel so far, as (channel, payload) pairs.

    Notifications reach listeners in commit order, so a marker committed now
    arrives after everything committed before it: no waiting for silence.
    """
    prober.execute("SELECT pg_notify(%s, %s)", [channel(queue), SENTINEL])
    got = []
    for n in listener.notifies(timeout=10):
        if n.payload == SENTINEL:
            return got
        got.append((n.channel, n.payload))
    raise AssertionError(f"the marker notification never arrived (got {got})")


def send(conn: psycopg.Connection, queue: str) -> None:
    conn.execute("SELECT pgmq.send(queue_name => %s, msg => '{}'::jsonb)", [queue])


def throttles(conn: psycopg.Connection, queue: str) -> list[tuple]:
    return conn.execute(
        "SELECT queue_name, throttle_interval_ms FROM pgmq.list_notify_insert_throttles() "
        "WHERE queue_name = %s",
        [queue],
    ).fetchall()


def sql_error(conn: psycopg.Connection, query: str, params: list) -> psycopg.Error:
    """The error a statement raises; a savepoint keeps an enclosing transaction usable."""
    with pytest.raises(psycopg.Error) as caught, conn.transaction():
        conn.execute(query, params)
    return caught.value


@pytest.fixture
def producer(pg_connect: Callable[..., psycopg.Connection]) -> psycopg.Connection:
    return pg_connect()


@pytest.fixture
def listener(pg_connect: Callable[..., psycopg.Connection]) -> psycopg.Connection:
    return pg_connect()


@pytest.fixture
def prober(pg_connect: Callable[..., psycopg.Connection]) -> psycopg.Connection:
    """A third session that commits marker notifications (see received())."""
    return pg_connect()


@pytest.fixture
def mixed_queue(manager: QueueManager) -> Iterator[str]:
    """A committed queue whose name has upper-case letters."""
    name = f"Orders_{uuid.uuid4().hex[:12]}"
    manager.create_queue(name)
    yield name
    manager.drop_queue(name)


def enable(conn: psycopg.Connection, queue: str, throttle: int) -> None:
    conn.execute(
        "SELECT pgmq.enable_notify_insert(queue_name => %s, throttle_interval_ms => %s)",
        [queue, throttle],
    )


def test_commit_notifies_on_the_queue_channel_with_empty_payload(queue, producer, listener, prober):
    enable(producer, queue, 0)
    listen(listener, queue)
    send(producer, queue)
    assert received(listener, prober, queue) == [(channel(queue), "")]


def test_channel_keeps_the_case_of_the_queue_name(mixed_queue, producer, listener, prober):
    enable(producer, mixed_queue.lower(), 0)  # names resolve case-insensitively
    listen(listener, mixed_queue)
    send(producer, mixed_queue)
    assert received(listener, prober, mixed_queue) == [(f"pgmq.q_{mixed_queue}.INSERT", "")]
    assert throttles(producer, mixed_queue) == [(mixed_queue, 0)]


def test_rolled_back_send_never_notifies(queue, producer, listener, prober):
    enable(producer, queue, 0)
    listen(listener, queue)
    with pytest.raises(RuntimeError), producer.transaction():
        send(producer, queue)
        raise RuntimeError("roll back")
    assert received(listener, prober, queue) == []


def test_notification_arrives_at_commit_once_per_transaction(queue, producer, listener, prober):
    enable(producer, queue, 0)
    listen(listener, queue)
    with producer.transaction():
        send(producer, queue)
        producer.execute(
            "SELECT pgmq.send_batch(queue_name => %s, msgs => ARRAY['{}', '{}']::jsonb[])", [queue]
        )
        assert received(listener, prober, queue) == []
    assert received(listener, prober, queue) == [(channel(queue), "")]


def test_an_open_transaction_does_not_hold_back_other_producers(
    queue, producer, listener, prober, pg_connect
):
    enable(producer, queue, 60_000)
    listen(listener, queue)
    other = pg_connect()
    other.execute("SET statement_timeout = '5s'")  # a blocked commit fails instead of hanging
    with producer.transaction():
        send(producer, queue)
        send(other, queue)  # commits while the first send is still open
        assert received(listener, prober, queue) == [(channel(queue), "")]
    assert received(listener, prober, queue) == []  # inside the window opened by `other`


def test_throttle_zero_notifies_every_commit_without_touching_the_row(
    queue, producer, listener, prober
):
    enable(producer, queue, 0)
    listen(listener, queue)
    for _ in range(3):
        send(producer, queue)
    assert len(received(listener, prober, queue)) == 3
    [(last_notified_at,)] = producer.execute(
        "SELECT last_notified_at FROM pgmq.notify_insert_throttle WHERE queue_name = %s", [queue]
    ).fetchall()
    assert last_notified_at.timestamp() == 0


def test_commits_inside_the_throttle_window_notify_once(queue, producer, listener, prober):
    enable(producer, queue, 60_000)
    listen(listener, queue)
    for _ in range(3):
        send(producer, queue)
    assert received(listener, prober, queue) == [(channel(queue), "")]


def test_a_commit_after_the_window_notifies_again(queue, producer, listener, prober):
    enable(producer, queue, 100)
    listen(listener, queue)
    send(producer, queue)
    assert len(received(listener, prober, queue)) == 1
    time.sleep(0.15)  # longer than the 100 ms window
    send(producer, queue)
    assert len(received(listener, prober, queue)) == 1


def test_update_changes_the_throttle_and_resets_the_window(queue, producer, listener, prober):
    enable(producer, queue, 60_000)
    listen(listener, queue)
    send(producer, queue)
    assert len(received(listener, prober, queue)) == 1
    producer.execute(
        "SELECT pgmq.update_notify_insert(queue_name => %s, throttle_interval_ms => %s)", [queue, 0]
    )
    assert throttles(producer, queue) == [(queue, 0)]
    send(producer, queue)
    send(producer, queue)
    assert len(received(listener, prober, queue)) == 2


def test_enable_twice_keeps_one_trigger_and_takes_the_new_throttle(tx_queue, tx):
    enable(tx, tx_queue, 10)
    tx.execute("SELECT pgmq.enable_notify_insert(%s)", [tx_queue])  # default 250
    assert throttles(tx, tx_queue) == [(tx_queue, 250)]
    [(count,)] = tx.execute(
        "SELECT count(*) FROM pg_trigger WHERE tgrelid = %s::regclass"
        " AND tgname <> 'pgmq_workflow_ack'",  # every queue's (sql/55_workflows.sql)
        [f"pgmq.q_{tx_queue}"],
    ).fetchall()
    assert count == 1


def test_disable_stops_notifications_and_the_listing(queue, producer, listener, prober):
    enable(producer, queue, 0)
    producer.execute("SELECT pgmq.disable_notify_insert(queue_name => %s)", [queue])
    producer.execute("SELECT pgmq.disable_notify_insert(queue_name => %s)", [queue])  # no-op
    listen(listener, queue)
    send(producer, queue)
    assert received(listener, prober, queue) == []
    assert throttles(producer, queue) == []


def test_list_shows_every_enabled_queue(tx_queue, tx):
    mixed = f"Mixed_{uuid.uuid4().hex[:12]}"
    tx.execute("SELECT pgmq.create(%s)", [mixed])
    enable(tx, tx_queue, 5)
    enable(tx, mixed, 7)
    rows = tx.execute(
        "SELECT queue_name, throttle_interval_ms FROM pgmq.list_notify_insert_throttles() "
        "WHERE queue_name IN (%s, %s)",
        [tx_queue, mixed],
    ).fetchall()
    assert sorted(rows) == sorted([(tx_queue, 5), (mixed, 7)])


def test_negative_throttle_is_refused(tx_queue, tx):
    enable(tx, tx_queue, 0)
    for query in (
        "SELECT pgmq.enable_notify_insert(%s, -1)",
        "SELECT pgmq.update_notify_insert(%s, -1)",
    ):
        err = sql_error(tx, query, [tx_queue])
        assert err.sqlstate == "PQ004"
        assert err.diag.message_primary == "throttle_interval_ms must be non-negative, got: -1"
    assert throttles(tx, tx_queue) == [(tx_queue, 0)]


@pytest.mark.parametrize(
    ("query", "text"),
    [
        (
            "SELECT pgmq.enable_notify_insert(%s)",
            'Queue "{}" does not exist. Create it first using pgmq.create()',
        ),
        (
            "SELECT pgmq.update_notify_insert(%s, 10)",
            'Queue "{}" does not exist. Create the queue first using pgmq.create()',
        ),
        (
            "SELECT pgmq.disable_notify_insert(%s)",
            'Queue "{}" does not exist. Create it first using pgmq.create()',
        ),
    ],
)
def test_missing_queue_is_named(producer, queue_name, query, text):
    err = sql_error(producer, query, [queue_name])
    assert err.sqlstate == "PQ002"
    assert err.diag.message_primary.startswith(text.format(queue_name))


def test_update_needs_notifications_enabled(tx_queue, tx):
    err = sql_error(tx, "SELECT pgmq.update_notify_insert(%s, 10)", [tx_queue])
    assert err.sqlstate == "PQ004"
    assert err.diag.message_primary.startswith(
        f'Queue "{tx_queue}" does not have notify_insert enabled. '
        "Enable it first using pgmq.enable_notify_insert()"
    )


def test_drop_queue_takes_trigger_and_throttle_row_with_it(
    manager, queue_name, producer, listener, prober
):
    manager.create_queue(queue_name)
    enable(producer, queue_name, 0)
    manager.drop_queue(queue_name)
    assert throttles(producer, queue_name) == []
    manager.create_queue(queue_name)  # same name again: starts without notifications
    try:
        listen(listener, queue_name)
        send(producer, queue_name)
        assert received(listener, prober, queue_name) == []
        assert throttles(producer, queue_name) == []
    finally:
        manager.drop_queue(queue_name)


def test_a_rearmed_queue_notifies_inside_the_window(queue, internal, producer, listener, prober):
    """The worker re-arms a queue it found empty: the next send notifies at once."""
    enable(producer, queue, 60_000)
    listen(listener, queue)
    send(producer, queue)
    send(producer, queue)  # inside the window: no notification
    assert len(received(listener, prober, queue)) == 1
    internal.rearm_notify(queue.upper())  # any spelling of the name
    send(producer, queue)
    send(producer, queue)  # the window runs again from the re-armed notification
    assert len(received(listener, prober, queue)) == 1
    assert producer.execute(
        "SELECT last_notified_at > now() - interval '1 minute' FROM pgmq.notify_insert_throttle "
        "WHERE queue_name = %s",
        [queue],
    ).fetchone() == (True,)
