"""Going back to 0.1.0 (0007) from the head, with queues of every kind.

Queue attributes came with 0013, whose reverse drops them: going back past it is
refused, with nothing changed, while any queue has attributes (a paused queue would
silently come back unpaused). Without attributes the way back works with queues of
every kind, their messages kept.
"""

from __future__ import annotations

import psycopg
import pytest

from django_pgmq import index_builds
from tests.integration.test_migrations import applied

pytestmark = pytest.mark.slow

EVERY_KIND = [
    "SET pgmq.hot_queues = '0'",  # (the hot path's promotions are run-time state)
    "SELECT pgmq.create('plain')",
    "SELECT pgmq.create_unlogged('unlogged')",
    "SELECT pgmq.create_partitioned('parted', '10', '100')",
    "SELECT pgmq.create('notified')",
    "SELECT pgmq.enable_notify_insert('notified', 250)",
    "SELECT pgmq.create('fifo')",
    "SELECT pgmq.create_fifo_index('fifo')",
    "SELECT pgmq.create('prio')",
    "SELECT pgmq.set_queue_attributes('prio', '{\"priorities\": true, \"paused\": true}')",
    "SELECT pgmq._enable_task_queue('tasks')",
]
QUEUES = ["plain", "unlogged", "parted", "notified", "fifo", "prio", "tasks"]


def messages(conn: psycopg.Connection) -> dict[str, int]:
    return {
        q: conn.execute(
            psycopg.sql.SQL("SELECT count(*) FROM pgmq.{}").format(psycopg.sql.Identifier(f"q_{q}"))
        ).fetchone()[0]
        for q in QUEUES
    }


def test_back_to_0007_refuses_to_drop_attributes_then_works_with_every_kind(scratch):
    with scratch.connect() as conn:
        up = scratch.manage("migrate", "django_pgmq")
        assert up.returncode == 0, up.stderr
        for statement in EVERY_KIND:
            conn.execute(statement)
        for queue in QUEUES:
            conn.execute("SELECT pgmq.send(%s, '{\"n\": 1}'::jsonb)", [queue])
        index_builds.build_pending_dsn(scratch.dsn)  # the wanted indexes, as a worker builds them
        head = applied(conn)

        refused = scratch.manage("migrate", "django_pgmq", "0007")
        assert refused.returncode == 1
        assert 'would drop the attributes of 1 queue(s) ("prio")' in refused.stderr
        assert "Traceback" not in refused.stderr
        assert applied(conn) == head
        assert conn.execute("SELECT pgmq.get_queue_attributes('prio')").fetchone()[0] == {
            "paused": True,
            "priorities": True,
        }

        conn.execute(
            "SELECT pgmq.set_queue_attributes('prio', '{\"priorities\": null, \"paused\": null}')"
        )
        down = scratch.manage("migrate", "django_pgmq", "0007")
        assert down.returncode == 0, down.stderr
        assert applied(conn)[-1] == "0007_queue_ops"
        assert messages(conn) == dict.fromkeys(QUEUES, 1)

        again = scratch.manage("migrate", "django_pgmq")
        assert again.returncode == 0, again.stderr
        assert applied(conn) == head
        assert messages(conn) == dict.fromkeys(QUEUES, 1)
