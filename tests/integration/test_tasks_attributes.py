"""Task queues honour the queue attributes read-side in SQL: paused and redrive.

The tasks worker reads with `read_by_priority` (``pgmq._read_by_priority``), which runs
pgmq.read's statement for the queue's attributes with priorities on: whoever calls it,
a paused task queue hands out nothing and a message read past max_receive_count is moved
to the dead-letter queue instead of being delivered.
"""

from __future__ import annotations

import pytest

from tests import task_funcs
from tests.integration import test_tasks_backend as backend

pytestmark = pytest.mark.django_db

m = backend.m  # the tasks tests' fixture: the manager, task queues empty


def test_a_paused_task_queue_hands_out_nothing_in_sql(m):
    task_funcs.mark.enqueue(1)
    urgent = task_funcs.mark.using(priority=50).enqueue(50).id
    m.set_queue_attributes("default", paused=True)
    assert m.read_by_priority("default", vt=0, qty=10) == []
    m.set_queue_attributes("default", paused=None)
    got = m.read_by_priority("default", vt=0, qty=10)
    assert [msg.message["id"] for msg in got][:1] == [urgent]  # still by priority
    assert len(got) == 2


def test_a_task_message_read_past_max_receive_count_lands_in_the_dead_letter_queue(m):
    result = task_funcs.mark.enqueue(1)
    m.set_queue_attributes("default", max_receive_count=2, dead_letter_queue="default_dlq")
    for read_ct in (1, 2):
        [message] = m.read_by_priority("default", vt=0, qty=1)
        assert (message.message["id"], message.read_ct) == (result.id, read_ct)
    assert m.read_by_priority("default", vt=0, qty=1) == []  # the third read moves it
    [dead] = m.read("default_dlq", vt=0, qty=10)
    assert dead.message["id"] == result.id
    assert dead.headers["dead_letter"]["queue"] == "default"
    assert dead.headers["dead_letter"]["read_ct"] == 2
    assert m.metrics("default").queue_length == 0
