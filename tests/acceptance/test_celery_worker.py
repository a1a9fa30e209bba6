"""Real Celery workers (``celery -A example_project worker``) on the pgmq broker.

Each scenario runs with the prefork and the threads pool, against the test
database. Tasks record what they do in the pgmq queue ``demo_task_events``
(see example_project/demo/tasks.py); the broker's own tables show what was
acknowledged, and how often each message was read.
"""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime
from urllib.parse import quote

import pytest
from django.db import connection, transaction
from psycopg import sql

import django_pgmq as pgmq
from django_pgmq.contrib.celery.naming import pgmq_queue_name
from example_project.celery import app
from example_project.demo.tasks import EVENTS_QUEUE, add, flaky, record, record_late, record_limited
from tests.celery_support import CELERY, ROOT, Worker

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

POOLS = ["prefork", "threads"]


@pytest.fixture(scope="module")
def worker_env(django_db_setup, django_db_blocker) -> dict[str, str]:
    """Environment for worker subprocesses: the test database, short visibility timeout."""
    with django_db_blocker.unblock():
        s = connection.settings_dict
    password = f":{quote(s['PASSWORD'], safe='')}" if s.get("PASSWORD") else ""
    port = f":{s['PORT']}" if s.get("PORT") else ""
    host = quote(s["HOST"] or "localhost", safe="")
    env = dict(os.environ)
    env.update(
        DATABASE_URL=f"postgres://{quote(s['USER'], safe='')}{password}@{host}{port}/{s['NAME']}",
        DJANGO_SETTINGS_MODULE="example_project.settings",
        PYTHONUNBUFFERED="1",
        CELERY_VISIBILITY_TIMEOUT="3",
    )
    return env


@pytest.fixture(scope="module", autouse=True)
def close_celery_app() -> Iterator[None]:
    """Close this process's broker connections before the test database is dropped."""
    yield
    consumer = getattr(app.backend, "result_consumer", None)
    if consumer is not None and getattr(consumer, "_connection", None) is not None:
        consumer.stop()
    app.producer_pool.force_close_all()
    app.pool.force_close_all()


@pytest.fixture
def start_worker(worker_env) -> Iterator[Callable[..., Worker]]:
    """Start workers for one test; any still running at the end are killed."""
    started: list[Worker] = []

    def start(pool: str, queue: str, *extra: str, **env: str) -> Worker:
        worker = Worker({**worker_env, **env}, pool, queue, *extra)
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.kill()


@pytest.fixture(scope="module", params=POOLS)
def pool(request) -> str:
    return request.param


@pytest.fixture(scope="module")
def shared_worker(pool, worker_env, close_celery_app) -> Iterator[tuple[Worker, str]]:
    """One running worker per pool for the scenarios that leave it running."""
    queue = f"h6_{pool}_{uuid.uuid4().hex[:8]}"
    worker = Worker(worker_env, pool, queue)
    yield worker, queue
    worker.kill()


@pytest.fixture
def db(pg_connect):
    conn = pg_connect()
    pgmq.create_queue(EVENTS_QUEUE)
    return conn


def events(db, *keys: str) -> list[dict]:
    """The events the tasks recorded for these keys, in order."""
    query = sql.SQL("SELECT message FROM {} WHERE message->>'key' = ANY(%s) ORDER BY msg_id")
    table = sql.Identifier("pgmq", f"q_{EVENTS_QUEUE}")
    return [row[0] for row in db.execute(query.format(table), [list(keys)])]


def count(found: list[dict], event: str) -> int:
    return sum(1 for e in found if e["event"] == event)


def broker_rows(db, queue: str, prefix: str) -> list[tuple]:
    """(task id, read_ct, eta header, last_read_at, visible now) of a Celery queue's rows."""
    query = sql.SQL(
        "SELECT message->'headers'->>'id', read_ct, message->'headers'->>'eta', last_read_at, "
        "vt <= clock_timestamp() FROM {} ORDER BY msg_id"
    )
    table = sql.Identifier("pgmq", f"{prefix}_{pgmq_queue_name(queue).lower()}")
    return db.execute(query.format(table)).fetchall()


def wait_until(condition: Callable[[], bool], worker: Worker, seconds: float = 60) -> None:
    """Poll ``condition``; fail with the worker's output if it never holds."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"condition not met in {seconds}s; worker output:\n{worker.output}")
        time.sleep(0.1)


# -- one worker per pool ----------------------------------------------------


def test_tasks_run_and_results_come_back(shared_worker):
    worker, queue = shared_worker
    results = [add.apply_async((n, n), queue=queue) for n in range(10)]
    assert [r.get(timeout=60) for r in results] == [2 * n for n in range(10)], worker.output


def test_task_sent_in_a_rolled_back_transaction_never_runs(shared_worker, db):
    worker, queue = shared_worker
    rolled_back, committed = f"rb-{uuid.uuid4().hex}", f"ok-{uuid.uuid4().hex}"
    with pytest.raises(RuntimeError), transaction.atomic():
        lost = record.apply_async((rolled_back,), queue=queue)
        raise RuntimeError("the view failed after sending the task")
    with transaction.atomic():
        result = record.apply_async((committed,), queue=queue)
        assert result.id not in {row[0] for row in broker_rows(db, queue, "q")}  # not yet
    assert result.get(timeout=60) == committed, worker.output
    assert [e["key"] for e in events(db, rolled_back, committed)] == [committed, committed]
    stored = {row[0] for row in broker_rows(db, queue, "q") + broker_rows(db, queue, "a")}
    assert result.id in stored and lost.id not in stored


def test_retries_wait_for_their_countdown(shared_worker, db):
    worker, queue = shared_worker
    key = f"retry-{uuid.uuid4().hex}"
    result = flaky.apply_async((key, 2), {"countdown": 1}, queue=queue)
    assert result.get(timeout=60) == 2, worker.output
    assert [e["attempt"] for e in events(db, key)] == [0, 1, 2]
    runs = [row for row in broker_rows(db, queue, "a") if row[0] == result.id]
    assert len(runs) == 3
    for _, read_ct, eta, read_at, _ in runs[1:]:
        # A retry is stored with its countdown as the message delay: read only after it.
        assert read_ct == 1 and read_at >= datetime.fromisoformat(eta)


def test_inspect_ping_answers(shared_worker, worker_env):
    worker, _ = shared_worker
    command = [CELERY, "-A", "example_project", "inspect", "ping", "-d", worker.node, "-t", "10"]
    done = subprocess.run(
        command, env=worker_env, cwd=ROOT, capture_output=True, text=True, timeout=90
    )
    assert done.returncode == 0, done.stdout + done.stderr + worker.output
    assert "pong" in done.stdout and worker.node in done.stdout


# -- workers that die or stop -------------------------------------------------


@pytest.mark.parametrize("pool_name", POOLS)
def test_killed_worker_acks_late_task_runs_again_and_is_acked_once(start_worker, db, pool_name):
    queue = f"h6_kill_{uuid.uuid4().hex[:8]}"
    key = f"late-{uuid.uuid4().hex}"
    first = start_worker(pool_name, queue)
    result = record_late.apply_async((key, 3.0), queue=queue)
    wait_until(lambda: count(events(db, key), "start") == 1, first)
    first.kill()
    second = start_worker(pool_name, queue)
    assert result.get(timeout=60) == key, second.output
    found = events(db, key)
    assert [(e["event"], e["redelivered"]) for e in found] == [
        ("start", False),
        ("start", True),
        ("end", True),
    ]
    wait_until(lambda: broker_rows(db, queue, "q") == [], second)  # acked after the result
    [(task_id, read_ct, *_)] = broker_rows(db, queue, "a")
    assert (task_id, read_ct) == (result.id, 2)


@pytest.mark.parametrize("pool_name", POOLS)
def test_warm_shutdown_loses_nothing_and_runs_nothing_twice(start_worker, db, pool_name):
    queue = f"h6_warm_{uuid.uuid4().hex[:8]}"
    keys = [f"warm-{n}-{uuid.uuid4().hex[:6]}" for n in range(12)]
    # rate_limit 2/s with a prefetch of 8: most prefetched messages wait in the worker.
    first = start_worker(
        pool_name, queue, "--prefetch-multiplier", "4", CELERY_VISIBILITY_TIMEOUT="600"
    )
    for key in keys:
        record_limited.apply_async((key,), queue=queue)
    wait_until(lambda: count(events(db, *keys), "end") >= 2, first)
    assert first.stop() == 0, first.output
    left = broker_rows(db, queue, "q")
    started = {e["key"] for e in events(db, *keys) if e["event"] == "start"}
    assert all(visible for *_, visible in left), "held messages were not released at shutdown"
    assert len(left) == len(keys) - len(started)  # the rest, in place: no copies
    second = start_worker(pool_name, queue)
    wait_until(lambda: count(events(db, *keys), "end") == len(keys), second, seconds=90)
    found = events(db, *keys)
    for key in keys:
        assert [e["event"] for e in found if e["key"] == key] == ["start", "end"], key
    assert broker_rows(db, queue, "q") == []
    assert len(broker_rows(db, queue, "a")) == len(keys)


# -- queue attributes ---------------------------------------------------------


def test_a_worker_honours_the_queues_delivery_delay_and_deduplication(start_worker, db):
    queue = f"h6_attr_{uuid.uuid4().hex[:8]}"
    key = f"attr-{uuid.uuid4().hex}"
    pgmq.create_queue(pgmq_queue_name(queue), delivery_delay=2, deduplication_window=300)
    worker = start_worker("threads", queue)
    result = record.apply_async((key,), queue=queue, headers={"deduplication_id": key})
    record.apply_async((key,), queue=queue, headers={"deduplication_id": key})  # a duplicate
    assert result.get(timeout=60) == key, worker.output
    wait_until(lambda: broker_rows(db, queue, "q") == [], worker)
    [(task_id, read_ct, eta, *_)] = broker_rows(db, queue, "a")  # the duplicate was never sent
    assert (task_id, read_ct, eta) == (result.id, 1, None)
    waited = db.execute(
        sql.SQL("SELECT extract(epoch FROM last_read_at - enqueued_at) FROM {}").format(
            sql.Identifier("pgmq", f"a_{pgmq_queue_name(queue).lower()}")
        )
    ).fetchone()[0]
    assert waited >= 2  # no countdown: the queue's delivery_delay held it back
    assert [e["event"] for e in events(db, key)] == ["start", "end"]


@pytest.mark.parametrize("pool_name", POOLS)
def test_a_priority_9_task_runs_ahead_of_1000_queued_priority_0_tasks(start_worker, db, pool_name):
    queue = f"h6_prio_{uuid.uuid4().hex[:8]}"
    low, high = f"low-{uuid.uuid4().hex[:8]}", f"high-{uuid.uuid4().hex[:8]}"
    pgmq.create_queue(pgmq_queue_name(queue), priorities=True)
    with transaction.atomic():  # queued before any worker runs
        for _ in range(1000):
            record.apply_async((low,), queue=queue, priority=0)
        urgent = record.apply_async((high,), queue=queue, priority=9)
    worker = start_worker(pool_name, queue)
    assert urgent.get(timeout=120) == high, worker.output
    starts = [e["key"] for e in events(db, low, high) if e["event"] == "start"]
    # The urgent task is in the first read and starts first (the two pool slots start
    # together, so it is one of the first two), not after the 1,000 sent before it.
    assert high in starts[:2], starts[:10]
