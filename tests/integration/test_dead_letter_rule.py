"""One dead-letter rule: the worker and the read-time redrive move a
failed message the same way, and the worker tells a refused retry from a retry."""

from __future__ import annotations

import json
import logging
import threading
from typing import Any

import psycopg
import pytest
from django.db import connection

from django_pgmq import QueueManager
from django_pgmq.internal import InternalManager
from django_pgmq.records import Message
from django_pgmq.worker import retry
from django_pgmq.worker.config import resolve
from django_pgmq.worker.held import Holdings
from django_pgmq.worker.process import Processor
from django_pgmq.worker.registry import Consumer

PAYLOAD = {"order": 7, "text": "a message larger than the dead-letter queue's size limit"}
HEADERS = {"trace": "t-1", "deduplication_id": "same-for-both"}


def processor(queue: str, handler, **settings) -> Processor:
    spec = Consumer(handler, **settings)
    settings_ = resolve(queue, spec, {}, None)
    return Processor(settings_, InternalManager(), Holdings(), threading.Event())


def fail(message: Message) -> None:
    raise ValueError("boom")


def dlq_rows(dlq: str) -> list[dict[str, Any]]:
    with connection.cursor() as cursor:
        cursor.execute(
            psycopg.sql.SQL(
                "SELECT msg_id, read_ct, vt <= clock_timestamp(), message, headers "
                "FROM pgmq.{} ORDER BY msg_id"
            ).format(psycopg.sql.Identifier(f"q_{dlq.lower()}"))
        )
        names = ("msg_id", "read_ct", "visible", "message", "headers")
        rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    for row in rows:  # Django's cursor hands jsonb back as text
        row["message"], row["headers"] = json.loads(row["message"]), json.loads(row["headers"])
    return rows


def comparable(row: dict[str, Any]) -> dict[str, Any]:
    """A dead letter without what must differ: ids and times."""
    headers = dict(row["headers"])
    letter = dict(headers.pop("dead_letter"))
    for key in ("msg_id", "enqueued_at", "dead_lettered_at"):
        assert letter.pop(key) is not None
    headers["attempt_errors"] = [
        {k: v for k, v in e.items() if k != "at"} for e in headers["attempt_errors"]
    ]
    return {**{k: v for k, v in row.items() if k != "msg_id"}, "headers": headers, "letter": letter}


@pytest.fixture
def m(db) -> QueueManager:
    return QueueManager()


@pytest.mark.parametrize(
    "dlq_attributes",
    [
        {},
        {"max_message_size": 16, "deduplication_window": 3600, "delivery_delay": 600},
    ],
    ids=["plain", "size-limit-dedup-delay"],
)
def test_the_worker_and_the_redrive_write_the_same_dead_letter(m, queue_name, dlq_attributes):
    q, dlq = queue_name, f"{queue_name}_dlq"
    m.create_queue(dlq, **dlq_attributes)
    m.create_queue(q, max_receive_count=2, dead_letter_queue=dlq)

    # The worker: read 1 fails and is retried, read 2 fails and is out of reads.
    by_worker = m.send(q, PAYLOAD, headers=HEADERS)
    for _ in range(2):
        [message] = m.read(q, vt=30, qty=1)
        processor(q, fail, max_receive_count=2, dead_letter=dlq).run([message])
        m.set_vt(q, by_worker, 0)
    assert m.read(q, vt=30, qty=1) == []

    # The redrive: read 1 fails and is retried, read 2 ends without a verdict (a crash),
    # read 3 finds it read max_receive_count times and moves it.
    by_redrive = m.send(q, PAYLOAD, headers=HEADERS)
    [message] = m.read(q, vt=30, qty=1)
    outcome = processor(q, fail, max_receive_count=5, dead_letter=dlq).run([message])
    assert outcome.retried == 1
    m.set_vt(q, by_redrive, 0)
    m.read(q, vt=0, qty=1)
    assert m.read(q, vt=30, qty=1) == []

    rows = dlq_rows(dlq)
    assert [r["headers"]["dead_letter"]["msg_id"] for r in rows] == [by_worker, by_redrive]
    worker, redrive = (comparable(r) for r in rows)
    assert worker == redrive
    assert worker["message"] == PAYLOAD
    assert worker["read_ct"] == 0
    assert worker["visible"] is True  # the dead-letter queue's delivery_delay not applied
    assert worker["letter"] == {"queue": q, "read_ct": 2, "error": "ValueError: boom"}
    assert worker["headers"]["trace"] == "t-1"
    assert worker["headers"]["attempt_errors"] == [{"attempt": 1, "error": "ValueError: boom"}]


def set_read_ct(queue: str, msg_id: int, read_ct: int) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            psycopg.sql.SQL("UPDATE pgmq.{} SET read_ct = %s WHERE msg_id = %s").format(
                psycopg.sql.Identifier(f"q_{queue.lower()}")
            ),
            [read_ct, msg_id],
        )


@pytest.mark.parametrize("limit", [1, 2, 3])
@pytest.mark.parametrize("reader", ["read", "read_grouped"])
def test_read_too_often_is_one_rule_in_the_sql_and_the_worker(m, queue_name, limit, reader):
    """A message read ``read_ct`` times so far: the SQL's next read dead-letters it exactly
    when the worker's rule says that read is past the limit (and that a failure on the
    read before used up its reads)."""
    dlq = f"{queue_name}_dlq"
    m.create_queue(dlq)
    m.create_queue(queue_name, max_receive_count=limit, dead_letter_queue=dlq)
    for read_ct in range(limit + 3):
        msg_id = m.send(queue_name, {"read_ct": read_ct})
        set_read_ct(queue_name, msg_id, read_ct)
        handed = getattr(m, reader)(queue_name, vt=30, qty=1)
        moved_by_sql = handed == []
        if handed:
            assert handed[0].msg_id == msg_id
            m.delete(queue_name, msg_id)
        assert moved_by_sql == retry.read_past_limit(read_ct + 1, limit), read_ct
        assert moved_by_sql == retry.unsettled_too_often(read_ct + 1, limit), read_ct
        assert moved_by_sql == retry.exhausted(read_ct, limit), read_ct
    assert [r["message"]["read_ct"] for r in dlq_rows(dlq)] == list(range(limit, limit + 3))


def test_the_shared_move_refuses_nothing_a_plain_send_would_refuse(m, queue_name):
    """The limits a send to the dead-letter queue checks would have lost the message."""
    dlq = f"{queue_name}_dlq"
    m.create_queue(dlq, max_message_size=16, deduplication_window=3600)
    m.create_queue(queue_name)
    m.send(dlq, {"n": 1}, headers={"deduplication_id": "same-for-both"})
    msg_id = m.send(queue_name, PAYLOAD, headers=HEADERS)
    assert InternalManager().dead_letter(queue_name, msg_id, dlq, "boom") is not None
    assert [r["message"] for r in dlq_rows(dlq)] == [{"n": 1}, PAYLOAD]


@pytest.mark.parametrize("how", ["deleted", "locked"])
def test_a_refused_retry_is_not_counted_as_a_retry(queue, pg_connect, caplog, how):
    manager = QueueManager()
    msg_id = manager.send(queue, {"n": 1})
    other = pg_connect(autocommit=how == "deleted")

    def delete_or_lock_then_fail(message: Message) -> None:
        if how == "deleted":
            other.execute("SELECT pgmq.delete(%s, %s::bigint)", [queue, message.msg_id])
        else:
            other.execute(
                psycopg.sql.SQL("SELECT 1 FROM pgmq.{} WHERE msg_id = %s FOR UPDATE").format(
                    psycopg.sql.Identifier(f"q_{queue.lower()}")
                ),
                [message.msg_id],
            )
        raise ValueError("boom")

    with caplog.at_level(logging.WARNING, logger="django_pgmq"):
        outcome = processor(queue, delete_or_lock_then_fail, atomic=False).run(
            manager.read(queue, vt=30, qty=1)
        )
    assert (outcome.retried, outcome.unrecorded, outcome.dead, outcome.done) == (0, 1, 0, 0)
    assert (outcome.failed, outcome.attempts, outcome.settled) == (1, 1, 0)
    assert "1 failed but gone or held elsewhere" in outcome.summary()
    refused = [r for r in caplog.records if "was not recorded" in r.getMessage()]
    assert len(refused) == 1 and refused[0].levelno == logging.WARNING
    assert str(msg_id) in refused[0].getMessage()
    if how == "locked":
        other.rollback()
    left = other.execute(
        psycopg.sql.SQL("SELECT read_ct, headers FROM pgmq.{}").format(
            psycopg.sql.Identifier(f"q_{queue.lower()}")
        )
    ).fetchall()
    # Deleted: nothing to retry. Locked: left as the lock holder's, no error recorded.
    assert left == ([] if how == "deleted" else [(1, None)])


def test_a_read_under_another_spelling_names_the_queue_as_stored(m, queue_name):
    """The redrive's header names the queue as the worker's does, not as the reader spelt it."""
    dlq = f"{queue_name}_dlq"
    m.create_queue(queue_name, max_receive_count=1, dead_letter_queue=dlq)
    by_redrive = m.send(queue_name, {"n": 1})
    m.read(queue_name, vt=0, qty=1)
    assert m.read(queue_name.upper(), vt=30, qty=1) == []
    by_worker = m.send(queue_name, {"n": 2})
    InternalManager().dead_letter(queue_name.upper(), by_worker, dlq, "boom")
    letters = [r["headers"]["dead_letter"] for r in dlq_rows(dlq)]
    assert [(x["queue"], x["msg_id"]) for x in letters] == [
        (queue_name, by_redrive),
        (queue_name, by_worker),
    ]
