"""A Celery app on kombu's own ``pgmq://`` transport (``kombu.transport.pgmq``), for
tests/acceptance/test_kombu_pgmq_transport.py: pointed at a database that django-pgmq
migrated, with ``init_extension`` off, it works as on the pgmq extension.

Configured from the environment: ``KOMBU_PGMQ_DSN`` (the test database), and
``KOMBU_PGMQ_OPTIONS`` (JSON transport options added to ``init_extension: false``).
Each task run records an event in the django-pgmq queue ``kombu_events`` (Django's
connection, the same database), which the test reads.
"""

from __future__ import annotations

import json
import os
from typing import Any

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "example_project.settings")
django.setup()

from celery import Celery  # noqa: E402
from kombu import Exchange, Queue  # noqa: E402

import django_pgmq as pgmq  # noqa: E402

EVENTS_QUEUE = "kombu_events"

# Not the current app: importing this module (pytest collects it) must not take over
# shared tasks of the example project's own app (django-pgmq://) in the test process.
app = Celery("kombu_pgmq", set_as_current=False)
app.conf.update(
    broker_url="pgmq://",
    broker_transport_options={
        "init_extension": False,
        "conn_string": os.environ.get("KOMBU_PGMQ_DSN", ""),
        "wait_time_seconds": 1,
        "polling_interval": 1,
        **json.loads(os.environ.get("KOMBU_PGMQ_OPTIONS", "{}")),
    },
    broker_connection_retry_on_startup=True,
    task_ignore_result=True,
    task_serializer="json",
    accept_content=["json"],
    worker_hijack_root_logger=False,
)

# The queues the test uses: a direct one, two bound to a fanout exchange, one bound to a
# topic exchange, a partitioned one, and one read in FIFO groups.
FANOUT = Exchange("kq_fanout", type="fanout")
TOPIC = Exchange("kq_topics", type="topic")
PARTITIONED = {"x-pgmq-partitioned": True, "x-pgmq-partition-interval": 1000}
app.conf.task_queues = [
    Queue("kq_tasks"),
    Queue("kq_fan_a", FANOUT),
    Queue("kq_fan_b", FANOUT),
    Queue("kq_orders", TOPIC, routing_key="orders.*"),
    Queue("kq_part", queue_arguments=PARTITIONED),
    Queue("kq_fifo"),
]


@app.task(bind=True, name="kombu_pgmq.note")
def note(self: Any, key: str, seq: int = 0) -> None:
    """Record that this task ran: its key, sequence number, exchange and routing key."""
    info = self.request.delivery_info or {}
    pgmq.send(
        EVENTS_QUEUE,
        {
            "key": key,
            "seq": seq,
            "routing_key": info.get("routing_key"),
            "exchange": info.get("exchange"),
        },
    )
