"""One ``pgmq_consume`` process, queues on two PostgreSQL servers, one server restarted under it.

The worker holds one LISTEN connection per database; while the second server is
down its queues wait (and are reconnected) and the default database's queue keeps
being consumed; afterwards every message sent to either has been handled and archived.
"""

from __future__ import annotations

import signal
import uuid

import pytest

from django_pgmq.manager import QueueManager
from tests.second_server import ALIAS, ROUTES, second_server
from tests.worker_process import WorkerProcess, wait_until

__all__ = ["second_server"]  # the fixture, used by name

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True, databases=["default", "second"]),
]


def settled(alias: str, queue: str, expected: int) -> bool:
    """Every one of ``expected`` messages archived, none left in the queue."""
    manager = QueueManager(alias)
    return manager.metrics(queue).queue_length == 0 and manager.archive_count(queue) == expected


def test_one_worker_consumes_two_servers_and_outlives_a_restart_of_one(
    second_server, subprocess_env, settings
):
    settings.PGMQ = {"DATABASE": "default", "QUEUE_DATABASES": ROUTES}
    tag = uuid.uuid4().hex[:10]
    first, second = f"first_{tag}", f"second_{tag}"
    on_first, on_second = QueueManager("default"), QueueManager(ALIAS)
    on_first.create_queue(first)
    on_second.create_queue(second)
    worker = WorkerProcess(
        second_server.env(subprocess_env),
        [first, second, "--handler", "tests.handlers.handle_plain", "--poll-interval", "0.5"],
    )
    try:
        worker.wait_for(f"started on database 'default'.*{first}")
        worker.wait_for(f"started on database '{ALIAS}'.*{second}")
        on_first.send_batch(first, [{"n": i} for i in range(20)])
        on_second.send_batch(second, [{"n": i} for i in range(20)])
        wait_until(lambda: settled("default", first, 20), "the first 20 on default")
        wait_until(lambda: settled(ALIAS, second, 20), "the first 20 on second")

        mark = len(worker.lines)
        second_server.stop()
        worker.wait_for("listener: .*reconnecting", after=mark)
        on_first.send_batch(first, [{"n": i} for i in range(20, 30)])
        wait_until(lambda: settled("default", first, 30), "default consumed while second is down")

        second_server.start()
        on_second.send_batch(second, [{"n": i} for i in range(20, 30)])
        wait_until(lambda: settled(ALIAS, second, 30), "second consumed after its restart")
        worker.signal(signal.SIGTERM)
        assert worker.wait() == 0
        # Nothing lost: every message archived (once: msg_id is the archive's key), on its
        # own server, and nothing else there.
        assert settled("default", first, 30) and settled(ALIAS, second, 30)
    finally:
        worker.stop()
        on_first.drop_queue(first)
        on_second.drop_queue(second)
