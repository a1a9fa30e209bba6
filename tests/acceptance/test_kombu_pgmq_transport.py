"""kombu's own ``pgmq://`` transport (``kombu.transport.pgmq``, made for the pgmq
extension) with a real Celery worker, on a database django-pgmq migrated.

Every pgmq client should work on our SQL; kombu's transport calls ``pgmq.create`` on
each declare (a queue that exists is left as it is), topic routing for fanout and topic
exchanges, ``enable_notify_insert`` with ``use_notify``, the FIFO group readers with
``fifo_mode``, and ``create_partitioned`` for ``x-pgmq-partitioned`` queues. The app is
tests/kombu_pgmq_app.py; each task run records an event the test reads.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Callable, Iterator

import pytest
from django.db import connection
from kombu import Queue
from psycopg import sql
from psycopg.conninfo import make_conninfo

import django_pgmq as pgmq
from django_pgmq import index_builds
from tests.celery_support import Worker
from tests.kombu_pgmq_app import EVENTS_QUEUE, PARTITIONED, app, note

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

MAIN_QUEUES = "kq_tasks,kq_fan_a,kq_fan_b,kq_orders,kq_part"


@pytest.fixture(scope="module")
def module_dsn(django_db_setup, django_db_blocker) -> str:
    """The test database's libpq connection string, for this module's app and workers."""
    with django_db_blocker.unblock():
        params = connection.get_connection_params()
    keep = {"host", "port", "user", "password", "dbname"}
    return make_conninfo(**{k: v for k, v in params.items() if k in keep and v not in (None, "")})


@pytest.fixture(scope="module")
def producer_app(module_dsn) -> Iterator[None]:
    """This process's app (the producer) on the test database; its pools closed at the end."""
    options = app.conf.broker_transport_options
    app.conf.broker_transport_options = {**options, "conn_string": module_dsn}
    yield
    app.pool.force_close_all()
    app.producer_pool.force_close_all()
    app.conf.broker_transport_options = options


@pytest.fixture
def broker(producer_app) -> None:
    pgmq.create_queue(EVENTS_QUEUE)


@pytest.fixture
def start_worker(module_dsn, test_database_url) -> Iterator[Callable[..., Worker]]:
    started: list[Worker] = []

    def start(queues: str, options: dict, *extra: str) -> Worker:
        env = dict(os.environ)
        env.update(
            DATABASE_URL=test_database_url,
            DJANGO_SETTINGS_MODULE="example_project.settings",
            PYTHONUNBUFFERED="1",
            KOMBU_PGMQ_DSN=module_dsn,
            KOMBU_PGMQ_OPTIONS=json.dumps(options),
        )
        worker = Worker(env, "threads", queues, *extra, app="tests.kombu_pgmq_app")
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.kill()


def events(db, key: str) -> list[dict]:
    query = sql.SQL("SELECT message FROM {} WHERE message->>'key' = %s ORDER BY msg_id")
    table = sql.Identifier("pgmq", f"q_{EVENTS_QUEUE}")
    return [row[0] for row in db.execute(query.format(table), [key])]


def wait_for(db, key: str, count: int, worker: Worker, seconds: float = 60) -> list[dict]:
    """The events of ``key`` once there are ``count`` of them; fails after ``seconds``."""
    deadline = time.monotonic() + seconds
    while len(found := events(db, key)) < count:
        if time.monotonic() > deadline:
            pytest.fail(f"{len(found)} of {count} runs of {key}; worker output:\n{worker.output}")
        time.sleep(0.1)
    return found


def declare(queue: Queue) -> None:
    with app.connection_for_write() as conn:
        queue.bind(conn.default_channel).declare()


def test_kombu_transport_is_kombus_own(broker):
    with app.connection_for_write() as conn:
        assert type(conn.transport).__module__ == "kombu.transport.pgmq"


def test_tasks_fanout_topics_notify_and_a_partitioned_queue(broker, start_worker, pg_connect):
    db = pg_connect()
    # Someone made kq_part partitioned before any worker came (the declare with the
    # partitioned arguments is then a no-op, and so is a plain declare of it: both are
    # pgmq.create* on an existing partitioned queue).
    db.execute("SELECT pgmq.create_partitioned('kq_part', '1000', '100000')")
    # A long polling interval and no long poll: an idle worker wakes on NOTIFY only.
    worker = start_worker(
        MAIN_QUEUES, {"use_notify": True, "wait_time_seconds": 0, "polling_interval": 60}
    )
    run = uuid.uuid4().hex[:8]

    note.apply_async((f"direct-{run}",), queue="kq_tasks")
    [ran] = wait_for(db, f"direct-{run}", 1, worker, seconds=45)
    assert ran["routing_key"] == "kq_tasks"

    # Sent by way of one of the queues, so the producer declares the fanout exchange.
    note.apply_async((f"fan-{run}",), queue="kq_fan_a")
    fanned = wait_for(db, f"fan-{run}", 2, worker)  # one copy in each bound queue
    assert [e["exchange"] for e in fanned] == ["kq_fanout", "kq_fanout"]

    note.apply_async((f"topic-{run}",), queue="kq_orders", routing_key="orders.eu")
    note.apply_async((f"other-{run}",), queue="kq_orders", routing_key="users.eu")
    [routed] = wait_for(db, f"topic-{run}", 1, worker)
    assert (routed["exchange"], routed["routing_key"]) == ("kq_topics", "orders.eu")

    # The partitioned queue declared twice more, as kombu does: plain, and partitioned.
    declare(Queue("kq_part"))
    declare(Queue("kq_part", queue_arguments=PARTITIONED))
    note.apply_async((f"part-{run}",), queue="kq_part")
    [part] = wait_for(db, f"part-{run}", 1, worker)
    assert part["routing_key"] == "kq_part"
    assert db.execute(
        "SELECT is_partitioned FROM pgmq.meta WHERE queue_name = 'kq_part'"
    ).fetchone() == (True,)
    assert db.execute(
        "SELECT relkind, reloptions FROM pg_class WHERE oid = 'pgmq.q_kq_part'::regclass"
    ).fetchone() == ("p", None)

    assert events(db, f"other-{run}") == []  # matched no binding: delivered nowhere
    assert len(events(db, f"fan-{run}")) == 2
    notified = {
        row[0] for row in db.execute("SELECT queue_name FROM pgmq.list_notify_insert_throttles()")
    }
    assert set(MAIN_QUEUES.split(",")) <= notified
    for queue in MAIN_QUEUES.split(","):  # every message acknowledged (deleted)
        assert pgmq.metrics(queue).queue_length == 0, queue


def test_fifo_mode_reads_groups_in_order(broker, start_worker, pg_connect):
    db = pg_connect()
    worker = start_worker("kq_fifo", {"fifo_mode": "round_robin"}, "-c", "1")
    run = uuid.uuid4().hex[:8]
    for seq in range(6):
        note.apply_async(
            (f"fifo-{run}", seq), queue="kq_fifo", headers={"x-pgmq-group": f"g{seq % 2}"}
        )
    found = wait_for(db, f"fifo-{run}", 6, worker)
    for group in (0, 1):
        seqs = [e["seq"] for e in found if e["seq"] % 2 == group]
        assert seqs == sorted(seqs)
    # kombu's create_fifo_index records the wish; the index is built concurrently, outside
    # any transaction: by the background thread after the wish's commit, by a worker, or
    # by pgmq_maintain (here: now). Which of them gets there first is a race, so the test
    # checks the outcome: the index exists and is no longer wanted.
    index_builds.build_pending_dsn(db.info.dsn)
    wanted = [row[0] for row in db.execute("SELECT index_name FROM pgmq.pending_indexes()")]
    assert "q_kq_fifo_fifo_idx" not in wanted
    indexes = [row[0] for row in db.execute(
        "SELECT indexdef FROM pg_indexes WHERE schemaname = 'pgmq' AND tablename = 'q_kq_fifo'"
    )]  # fmt: skip
    assert any("x-pgmq-group" in d or "_fifo_group" in d for d in indexes), indexes
