"""Retention commits per queue and per batch.

A row trigger on the queues' tables writes down the transaction of every deletion:
the manager (outside a transaction: what pgmq_maintain and the workers' sampler run)
must delete each batch of each queue in a transaction of its own.
"""

from __future__ import annotations

import uuid

import pytest
from django.db import transaction

from django_pgmq import QueueManager

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def expired_queues(pg_connect):
    db = pg_connect()
    names = [f"ret_{uuid.uuid4().hex[:8]}" for _ in range(2)]
    db.execute("CREATE TABLE retention_log (xid xid8, tbl text)")
    db.execute(
        "CREATE FUNCTION retention_logged() RETURNS trigger LANGUAGE plpgsql AS "
        "$$BEGIN INSERT INTO retention_log VALUES (pg_current_xact_id(), TG_TABLE_NAME); "
        "RETURN OLD; END$$"
    )
    for name in names:
        db.execute("SELECT pgmq.create(%s)", [name])
        db.execute("SELECT pgmq.set_queue_attributes(%s, '{\"message_retention\": 60}')", [name])
        db.execute("SELECT pgmq.send(%s, '{}') FROM generate_series(1, 3)", [name])
        db.execute(f"UPDATE pgmq.q_{name} SET enqueued_at = now() - interval '2 hours'")
        db.execute(
            f"CREATE TRIGGER logged AFTER DELETE ON pgmq.q_{name} "
            "FOR EACH ROW EXECUTE FUNCTION retention_logged()"
        )
    yield db, names
    for name in names:
        db.execute("SELECT pgmq.drop_queue(%s)", [name])
    db.execute("DROP TABLE retention_log")
    db.execute("DROP FUNCTION retention_logged()")


def test_each_batch_of_each_queue_commits_on_its_own(expired_queues):
    db, names = expired_queues
    done = QueueManager().enforce_retention(batch_size=2)
    assert sorted((r.queue_name, r.expired) for r in done) == [(name, 3) for name in sorted(names)]
    per_xact = db.execute(
        "SELECT array_agg(DISTINCT tbl), count(*) FROM retention_log GROUP BY xid ORDER BY 1, 2"
    ).fetchall()
    # 3 rows a queue in batches of 2: two transactions a queue, none shared by two queues.
    assert sorted(per_xact) == sorted([([f"q_{name}"], n) for name in names for n in (1, 2)])


def test_inside_a_transaction_it_joins_the_callers(expired_queues):
    db, _names = expired_queues
    with transaction.atomic():
        done = QueueManager().enforce_retention()
    assert sorted(r.expired for r in done) == [3, 3]
    assert db.execute("SELECT count(DISTINCT xid) FROM retention_log").fetchone() == (1,)


def test_the_sql_function_still_runs_it_all(expired_queues):
    db, names = expired_queues
    rows = db.execute("SELECT queue_name, expired FROM pgmq.enforce_retention()").fetchall()
    assert sorted(rows) == sorted((name, 3) for name in names)
