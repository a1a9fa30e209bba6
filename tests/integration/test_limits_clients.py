"""max_in_flight and rate_limit hold for the Celery transport and the Django Tasks backend:
both read through the SQL API (pgmq.read, pgmq._read_by_priority), so the claim filter
caps what they get."""

from __future__ import annotations

import pytest
from kombu import Queue

from tests import task_funcs
from tests.integration import test_celery_transport as transport
from tests.integration import test_tasks_backend as backend
from tests.integration.test_celery_attributes import declare
from tests.integration.test_celery_transport import collect

connect, db, name = transport.connect, transport.db, transport.name
m = backend.m


@pytest.mark.django_db(transaction=True)
def test_a_celery_consumer_gets_no_more_than_max_in_flight(connect, db, name):
    conn = connect()
    declare(conn, db, name, max_in_flight=2)
    for n in range(4):
        conn.SimpleQueue(name).put(f"m{n}")
    channel = conn.default_channel
    first = collect(conn, Queue(name), 2)
    assert channel.basic_get(name) is None  # at the limit, not empty
    # At its limit the queue counts as having nothing visible (the idle wait).
    assert channel.connection.sessions.run("celery_next_visible", {"queues": [name]}) == [(None,)]
    first[0].ack()
    [third] = collect(conn, Queue(name), 1)
    assert third.payload in {"m2", "m3"}
    assert channel.basic_get(name) is None


@pytest.mark.django_db
def test_the_tasks_read_honours_the_rate_limit(m):
    for n in range(5):
        task_funcs.mark.enqueue(n)
    m.set_queue_attributes("default", rate_limit={"count": 3, "seconds": 3600})
    assert len(m.read_by_priority("default", vt=300, qty=10)) == 3
    assert m.read_by_priority("default", vt=300, qty=10) == []
    [row] = m.queue_limits("default")
    assert (row.handed_out, row.rate_count) == (3, 3) and row.next_free_at is not None
