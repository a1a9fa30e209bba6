"""pgmq.redrive skips dead letters naming a bad queue and reports them."""

from __future__ import annotations

import logging

import psycopg
import pytest
from psycopg.types.json import Jsonb

from django_pgmq import QueueManager

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def queues(pg_connect, queue_name):
    db = pg_connect()
    source, dlq = queue_name, queue_name + "_dlq"
    for name in (source, dlq):
        db.execute("SELECT pgmq.create(%s)", [name])
    headers = [
        {"dead_letter": {"queue": source}},
        {"dead_letter": {"queue": "bad;name"}},  # PQ001 before: the whole redrive failed
        {"dead_letter": {"queue": "no_such_queue_here"}},
        {"dead_letter": {"note": "no queue at all"}},
        {"dead_letter": {"queue": source}},
    ]
    for n, header in enumerate(headers):
        db.execute("SELECT pgmq.send(%s, %s, %s)", [dlq, Jsonb({"n": n}), Jsonb(header)])
    yield db, source, dlq
    for name in (source, dlq):
        db.execute("SELECT pgmq.drop_queue(%s)", [name])


def test_redrive_moves_the_good_ones_and_reports_the_rest(queues):
    db, source, dlq = queues
    notices: list[str] = []
    db.add_notice_handler(lambda diag: notices.append(diag.message_primary or ""))
    rows = db.execute(
        "SELECT source_queue, moved, skipped FROM pgmq.redrive(%s) ORDER BY 1 NULLS LAST", [dlq]
    ).fetchall()
    assert rows == [
        ("bad;name", 0, 1),
        ("no_such_queue_here", 0, 1),
        (source, 2, 0),
        (None, 0, 1),
    ]
    assert len(notices) == 3 and all("they stay" in text for text in notices)
    left = db.execute(f"SELECT message ->> 'n' FROM pgmq.\"q_{dlq}\" ORDER BY msg_id").fetchall()
    assert [r[0] for r in left] == ["1", "2", "3"]
    moved = db.execute(f"SELECT message ->> 'n' FROM pgmq.\"q_{source}\" ORDER BY msg_id")
    assert [r[0] for r in moved.fetchall()] == ["0", "4"]


def test_the_manager_returns_what_moved_and_logs_what_stayed(queues, caplog):
    _db, source, dlq = queues
    with caplog.at_level(logging.WARNING, logger="django_pgmq"):
        assert QueueManager().redrive(dlq) == {source: 2}
    assert sum("they stay" in r.getMessage() for r in caplog.records) == 3


def test_a_bad_dead_letter_queue_name_is_still_an_error(pg_connect):
    with pytest.raises(psycopg.Error) as caught:
        pg_connect().execute("SELECT * FROM pgmq.redrive('bad;name')")
    assert caught.value.sqlstate == "PQ001"
