"""The internal worker operations on the real SQL: fractional vt, dead letters, notify setup."""

from __future__ import annotations

import json

import psycopg
import pytest
from django.db import connection, transaction

from django_pgmq import InvalidArgument, InvalidQueueName
from django_pgmq.internal import InternalManager


@pytest.fixture
def m(db) -> InternalManager:
    """A manager in the test's transaction, rolled back afterwards, queues and all."""
    return InternalManager()


@pytest.fixture
def q(m, queue_name) -> str:
    m.create_queue(queue_name)
    return queue_name


def row(queue: str, msg_id: int) -> tuple | None:
    """(read_ct, seconds of vt left after the transaction's start) of a live message."""
    query = psycopg.sql.SQL(
        "SELECT read_ct, extract(epoch FROM vt - now())::float FROM pgmq.{} WHERE msg_id = %s"
    ).format(psycopg.sql.Identifier(f"q_{queue.lower()}"))
    with connection.cursor() as cursor:
        cursor.execute(query, [msg_id])
        return cursor.fetchone()


def test_set_vt_seconds_hides_messages_for_fractions_of_a_second(m, q):
    ids = m.send_batch(q, [{"n": 1}, {"n": 2}])
    assert m.set_vt_seconds(q, ids, 2.5) == ids
    for msg_id in ids:
        read_ct, left = row(q, msg_id)
        assert read_ct == 0
        assert 2.5 <= left < 3.5
    assert m.read(q, vt=30, qty=10) == []


def test_unread_hands_a_message_back_visible_and_with_its_read_taken_back(m, q):
    msg_id = m.send(q, {"n": 1})
    [first] = m.read(q, vt=60, qty=1)
    assert m.set_vt_seconds(q, [msg_id], 0, unread=True) == [msg_id]
    [again] = m.read(q, vt=60, qty=1)
    assert (first.read_ct, again.read_ct) == (1, 1)


def test_missing_ids_are_left_out(m, q):
    msg_id = m.send(q, {"n": 1})
    assert m.set_vt_seconds(q, [msg_id, msg_id + 100], 1) == [msg_id]


@pytest.mark.parametrize("seconds", [-1, float("nan"), float("inf"), "1", True])
def test_set_vt_seconds_refuses_what_is_not_a_duration(m, q, seconds):
    with pytest.raises(InvalidArgument, match="seconds must be"):
        m.set_vt_seconds(q, [1], seconds)


def test_rows_another_transaction_holds_are_skipped_not_waited_for(queue, pg_connect):
    manager = InternalManager()
    locked, free = manager.send_batch(queue, [{"n": 1}, {"n": 2}])
    other = pg_connect(autocommit=False)
    other.execute(
        psycopg.sql.SQL("SELECT 1 FROM pgmq.{} WHERE msg_id = %s FOR UPDATE").format(
            psycopg.sql.Identifier(f"q_{queue.lower()}")
        ),
        [locked],
    )
    assert manager.set_vt_seconds(queue, [locked, free], 10) == [free]
    other.rollback()


def test_dead_letter_moves_a_message_with_its_origin_in_the_headers(m, q):
    msg_id = m.send(q, {"order": 7}, headers={"trace": "t-1"})
    m.read(q, vt=30, qty=1)
    dlq = f"{q}_dlq"
    new_id = m.dead_letter(q, msg_id, dlq, "ValueError: boom")

    assert m.read(q, vt=0, qty=10) == []
    assert dlq in [info.queue_name for info in m.list_queues()]  # created on demand
    [letter] = m.read(dlq, vt=30, qty=10)
    assert letter.msg_id == new_id
    assert letter.message == {"order": 7}
    origin = letter.headers.pop("dead_letter")
    assert letter.headers == {"trace": "t-1"}
    assert {k: origin[k] for k in ("queue", "msg_id", "read_ct", "error")} == {
        "queue": q,
        "msg_id": msg_id,
        "read_ct": 1,
        "error": "ValueError: boom",
    }
    assert origin["enqueued_at"] <= origin["dead_lettered_at"]


def test_dead_letter_keeps_headers_that_are_not_an_object(m, q):
    with connection.cursor() as cursor:
        cursor.execute("SELECT pgmq.send(%s, '{}'::jsonb, '[1, 2]'::jsonb)", [q])
        [(msg_id,)] = cursor.fetchall()
    m.dead_letter(q, msg_id, f"{q}_dlq")
    [letter] = m.read(f"{q}_dlq", vt=30, qty=1)
    assert letter.headers["headers"] == [1, 2]
    assert letter.headers["dead_letter"]["error"] is None


def test_dead_letter_of_a_message_no_longer_there_returns_none_and_creates_nothing(m, q):
    assert m.dead_letter(q, 12345, f"{q}_dlq", "gone") is None
    assert f"{q}_dlq" not in [info.queue_name for info in m.list_queues()]


def test_dead_letter_rolls_back_with_the_surrounding_transaction(m, q):
    msg_id = m.send(q, {"n": 1})
    with pytest.raises(RuntimeError), transaction.atomic():
        m.dead_letter(q, msg_id, f"{q}_dlq", "boom")
        raise RuntimeError("the caller fails afterwards")
    assert row(q, msg_id) is not None
    assert f"{q}_dlq" not in [info.queue_name for info in m.list_queues()]


def test_dead_letter_refuses_the_queue_itself_and_bad_names(m, q):
    msg_id = m.send(q, {"n": 1})
    own = pytest.raises(InvalidArgument, match="cannot be its own dead-letter queue")
    with own, transaction.atomic():
        m.dead_letter(q, msg_id, q.upper())
    with pytest.raises(InvalidQueueName):
        m.dead_letter(q, msg_id, "bad;name")
    assert row(q, msg_id) is not None


def test_enable_notify_insert_shows_in_the_throttles(m, q):
    assert q not in m.notify_throttles()
    m.enable_notify(q, 100)
    assert m.notify_throttles()[q] == 100
    with pytest.raises(InvalidArgument):
        m.enable_notify(q, -1)  # refused before reaching the database


def test_the_payload_json_round_trips_through_a_dead_letter(m, q):
    payload = {"nested": {"list": [1, 2.5, None, "é"]}}
    msg_id = m.send(q, payload)
    m.dead_letter(q, msg_id, f"{q}_dlq")
    [letter] = m.read(f"{q}_dlq", vt=30, qty=1)
    assert json.dumps(letter.message, sort_keys=True) == json.dumps(payload, sort_keys=True)


def test_worker_reads_keep_synchronous_commit_on(m, q):
    """Durability is not for sale: a worker's read commits only once flushed."""
    m.send_batch(q, [{"n": 1}, {"n": 2}])
    claimed = m.read(q, vt=30, qty=2)
    assert len(claimed) == 2
    with connection.cursor() as cursor:  # still in the transaction the read ran in
        cursor.execute("SHOW synchronous_commit")
        assert cursor.fetchone() == ("on",)


@pytest.mark.parametrize("delete", [False, True])
def test_acknowledge_and_read_removes_a_batch_then_reads_the_next(m, q, delete):
    ids = m.send_batch(q, [{"n": i} for i in range(5)])
    first = m.read(q, vt=30, qty=2)
    following = m.acknowledge_and_read(q, [x.msg_id for x in first], delete=delete, vt=30, qty=2)
    assert [(x.msg_id, x.read_ct, x.message) for x in following] == [
        (ids[2], 1, {"n": 2}),
        (ids[3], 1, {"n": 3}),
    ]
    assert row(q, ids[0]) is None and row(q, ids[1]) is None
    assert m.archive_count(q) == (0 if delete else 2)
    assert row(q, ids[2])[0] == 1 and row(q, ids[4]) == (0, pytest.approx(0, abs=5))


def test_acknowledge_and_read_acknowledges_even_when_nothing_is_left(m, q):
    [msg_id] = m.send_batch(q, [{"n": 1}])
    m.read(q, vt=30, qty=1)
    assert m.acknowledge_and_read(q, [msg_id], vt=30, qty=10) == []
    assert m.archive_count(q) == 1
    assert m.metrics(q).queue_length == 0


def test_acknowledge_and_read_checks_its_arguments(m, q):
    with pytest.raises(InvalidArgument, match="qty"):
        m.acknowledge_and_read(q, [1], vt=30, qty=0)
    with pytest.raises(InvalidArgument, match="vt"):
        m.acknowledge_and_read(q, [1], vt=-1, qty=1)
    with pytest.raises(InvalidArgument, match="msg_id"):
        m.acknowledge_and_read(q, ["1"], vt=30, qty=1)
    with pytest.raises(InvalidQueueName):
        m.acknowledge_and_read("no such-queue!", [1], vt=30, qty=1)
