"""Async all the way: ``async def`` consumers are awaited, and the API has async twins."""

from __future__ import annotations

import asyncio
import inspect
import threading

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from django.db import connections
from django.test import override_settings

import django_pgmq as pgmq
from django_pgmq import QueueManager, api
from django_pgmq.internal import InternalManager
from django_pgmq.worker.config import resolve
from django_pgmq.worker.held import Holdings
from django_pgmq.worker.process import Processor, call_handler
from django_pgmq.worker.registry import Consumer
from example_project.demo.models import HandlerRun
from tests import async_handlers


def processor(queue: str, handler, **settings) -> Processor:
    spec = Consumer(handler, **settings)
    return Processor(
        resolve(queue, spec, {}, None), InternalManager(), Holdings(), threading.Event()
    )


@pytest.fixture
def m(db) -> QueueManager:
    return QueueManager()


@pytest.fixture
def q(m, queue_name) -> str:
    m.create_queue(queue_name)
    return queue_name


def test_an_async_handler_is_awaited_and_its_message_archived(m, q):
    ids = m.send_batch(q, [{"n": 1}, {"n": 2}, {"n": 3}])
    outcome = processor(q, async_handlers.handle).run(m.read(q, vt=30, qty=3))
    assert (outcome.done, outcome.retried, outcome.dead) == (3, 0, 0)
    assert sorted(HandlerRun.objects.values_list("msg_id", flat=True)) == ids
    assert m.read(q, vt=0, qty=10) == []
    assert m.metrics(q).total_messages == 3


def test_a_failing_async_handler_is_retried_and_its_writes_rolled_back(m, q):
    ok, _failing = m.send_batch(q, [{"n": 1}, {"fail_times": 1}])
    outcome = processor(q, async_handlers.handle, retry_delay=0.01).run(m.read(q, vt=30, qty=2))
    assert (outcome.done, outcome.retried, outcome.dead) == (1, 1, 0)
    # The failed run's record (written with the async ORM) rolled back with its savepoint.
    assert list(HandlerRun.objects.values_list("msg_id", flat=True)) == [ok]


def test_an_async_handler_out_of_reads_or_poisoned_is_dead_lettered(m, q):
    poisoned = m.send(q, {"poison": True})
    outcome = processor(q, async_handlers.handle).run(m.read(q, vt=30, qty=1))
    assert (outcome.done, outcome.dead) == (0, 1)
    [dead] = m.read(f"{q}_dlq", vt=0, qty=1)
    assert dead.headers["dead_letter"]["msg_id"] == poisoned
    assert "PoisonMessage" in dead.headers["dead_letter"]["error"]

    m.send(q, {"fail_times": 5})
    outcome = processor(q, async_handlers.handle, max_receive_count=1).run(m.read(q, vt=30, qty=1))
    assert (outcome.done, outcome.dead) == (0, 1)


def test_an_async_batch_handler_is_awaited(m, q):
    ids = m.send_batch(q, [{"n": i} for i in range(4)])
    outcome = processor(q, async_handlers.handle_batch, batch_handler=True).run(
        m.read(q, vt=30, qty=4)
    )
    assert outcome.done == 4
    assert sorted(HandlerRun.objects.values_list("msg_id", flat=True)) == ids


def test_a_handler_that_returns_an_awaitable_is_awaited_too():
    done = []

    async def work(value):
        done.append(value)
        return value * 2

    assert call_handler(lambda v: work(v), 21) == 42  # not a coroutine function itself
    assert done == [21]


def test_every_public_method_has_an_async_twin_on_the_manager_and_the_module():
    for name in api.PUBLIC_METHODS:
        assert inspect.iscoroutinefunction(getattr(QueueManager, f"a{name}")), name
    for name in api.MODULE_FUNCTIONS:
        assert inspect.iscoroutinefunction(getattr(pgmq, f"a{name}")), name
    with pytest.raises(AttributeError):
        pgmq.anothing  # noqa: B018


@pytest.mark.django_db(transaction=True)
def test_the_async_twins_work_from_a_running_event_loop(queue_name):
    async def scenario():
        await pgmq.acreate_queue(queue_name)
        first = await pgmq.asend(queue_name, {"n": 1})
        more = await pgmq.asend_batch(queue_name, [{"n": 2}, {"n": 3}])
        read = await pgmq.aread(queue_name, vt=30, qty=2)
        await pgmq.aarchive(queue_name, [msg.msg_id for msg in read])
        manager = QueueManager()
        [last] = await manager.aread(queue_name, vt=30, qty=5)
        await manager.adelete(queue_name, last.msg_id)
        metrics = await pgmq.ametrics(queue_name)
        queues = {info.queue_name for info in await pgmq.alist_queues()}
        await pgmq.adrop_queue(queue_name)
        await sync_to_async(connections.close_all)()
        return first, more, read, metrics, queues

    first, more, read, metrics, queues = asyncio.run(scenario())
    assert [msg.msg_id for msg in read] == [first, more[0]]
    assert (metrics.queue_length, metrics.total_messages) == (0, 3)
    assert queue_name in queues


@pytest.mark.django_db(transaction=True)
def test_calling_the_sync_api_from_an_event_loop_is_what_the_twins_avoid(queue_name):
    from django.core.exceptions import SynchronousOnlyOperation

    async def scenario():
        pgmq.create_queue(queue_name)

    with pytest.raises(SynchronousOnlyOperation):
        asyncio.run(scenario())


@override_settings(ROOT_URLCONF="tests.async_urls")
def test_an_async_view_uses_the_async_api_without_synchronous_only_errors(m, q, async_client):
    # Through async_to_sync, the view's thread-sensitive work runs on this thread: on the
    # test's connection, inside its transaction (the queue exists only there).
    response = async_to_sync(async_client.get)(f"/send/{q}/")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["sent"] == body["read"] and body["task"] == "READY"
    assert m.metrics(q).total_messages == 1 and m.read(q, vt=0, qty=1) == []
