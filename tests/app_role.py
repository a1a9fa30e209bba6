"""Run as an application role (``DATABASE_URL`` names it): every operation it is granted.

``python -m tests.app_role QUEUE TASK_QUEUE CELERY_QUEUE`` uses queues an owner made and
prints one JSON object: what each operation returned, or the error it raised.
Used by tests/integration/test_two_roles.py in a subprocess.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import django


def attempt(results: dict[str, Any], name: str, run: Callable[[], Any]) -> None:
    """Record what ``run`` returned, or the error it raised, under ``name``."""
    try:
        results[name] = run()
    except Exception as exc:  # the test shows which operation failed and how
        results[name] = f"ERROR {type(exc).__name__}: {exc}"


def main(queue: str, task_queue: str, celery_queue: str) -> dict[str, Any]:
    """The operations of an application role, each recorded."""
    from kombu import Connection, Consumer, Exchange, Producer, Queue

    import django_pgmq.contrib.celery  # noqa: F401  (registers django-pgmq://)
    from django_pgmq import QueueManager
    from django_pgmq.internal import InternalManager
    from tests.task_funcs import add

    manager, internal = QueueManager(), InternalManager()
    out: dict[str, Any] = {}
    attempt(out, "send", lambda: len(manager.send_batch(queue, [{"n": 1}, {"n": 2}, {"n": 3}])))
    attempt(out, "read", lambda: [m.message["n"] for m in manager.read(queue, vt=30, qty=2)])
    attempt(out, "archive", lambda: manager.archive(queue, [1]))
    attempt(out, "delete", lambda: manager.delete(queue, [2]))
    attempt(out, "set_vt", lambda: manager.set_vt(queue, 3, vt=0).msg_id)
    attempt(out, "pop", lambda: [m.msg_id for m in manager.pop(queue, qty=1)])
    attempt(out, "metrics", lambda: manager.metrics(queue).total_messages)
    attempt(out, "metrics_all", lambda: sorted(m.queue_name for m in manager.metrics_all()))
    attempt(out, "list_queues", lambda: sorted(q.queue_name for q in manager.list_queues()))
    attempt(out, "purge", lambda: manager.purge_queue(queue))
    attempt(
        out, "dashboard_all_stats", lambda: [s.queue_name for s in internal.dashboard_all_stats()]
    )
    attempt(
        out, "browse", lambda: [m.msg_id for m in internal.browse_messages(queue, archive=True)]
    )
    attempt(out, "task_enqueue", lambda: add.using(queue_name=task_queue).enqueue(1, 2).id)

    def celery_round_trip() -> Any:
        with Connection("django-pgmq://") as conn:
            target = Queue(celery_queue, Exchange(celery_queue, "direct"), celery_queue)
            with Producer(conn) as producer:
                producer.publish(
                    {"c": 1}, exchange=target.exchange, routing_key=celery_queue, declare=[target]
                )
            got: list = []
            with Consumer(conn, [target], callbacks=[lambda body, m: got.append(m)]):
                conn.drain_events(timeout=10)
            got[0].ack()
            return got[0].payload

    attempt(out, "celery", celery_round_trip)

    def prepared_round() -> Any:
        """The manager's own statements (psycopg's prepared statements on), as this role,
        with DEBUG off as in production (with it on, every query goes through Django's
        logging cursor, and the manager runs the SQL API's functions)."""
        from django.conf import settings
        from django.db import connection

        connection.ensure_connection()
        connection.connection.prepare_threshold = 5
        debug, settings.DEBUG = settings.DEBUG, False
        try:
            ids = manager.send_batch(queue, [{"n": n} for n in range(4)])
            done = {
                "read": [m.msg_id - ids[0] for m in manager.read(queue, vt=30, qty=2)],
                "archive": manager.archive(queue, [ids[0]]) == [ids[0]],
                "delete": manager.delete(queue, [ids[1]]) == [ids[1]],
                "pop": [m.msg_id - ids[0] for m in manager.pop(queue, qty=1)],
            }
            done["statements"] = connection.connection.execute(
                "SELECT count(*) FROM pg_prepared_statements"
                " WHERE name LIKE '\\_pg3\\_%%' AND statement LIKE %s",
                [f"%pgmq.q_{queue} %"],
            ).fetchone()[0]
            return done
        finally:
            connection.connection.prepare_threshold = None
            settings.DEBUG = debug

    attempt(out, "prepared", prepared_round)
    # A queue's policy is not the application role's: neither through the function nor
    # by writing the table the function writes.
    attempt(out, "pause_queue", lambda: manager.pause_queue(queue))

    def write_attributes() -> Any:
        from django.db import connection

        with connection.cursor() as cursor:
            cursor.execute("DELETE FROM pgmq.queue_attributes")
        return "deleted"

    attempt(out, "write_attributes", write_attributes)
    attempt(out, "create_queue", lambda: manager.create_queue(queue + "_own"))
    attempt(out, "drop_own_queue", lambda: manager.drop_queue(queue + "_own"))
    attempt(out, "drop_owners_queue", lambda: manager.drop_queue(queue))
    return out


if __name__ == "__main__":
    django.setup()
    print(json.dumps(main(*sys.argv[1:4]), default=str))
