"""OpenTelemetry: a span per send and per handler run, the context carried in ``traceparent``.

Spans are collected with the OpenTelemetry SDK's in-memory exporter, from a tracer
provider of the test's own (the process-wide provider is left alone, so other
tests' messages get no trace headers).
"""

from __future__ import annotations

import sys
import threading

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from django_pgmq import QueueManager, tracing
from django_pgmq.internal import InternalManager
from django_pgmq.worker.config import resolve
from django_pgmq.worker.held import Holdings
from django_pgmq.worker.process import Processor
from django_pgmq.worker.registry import Consumer
from tests import handlers


@pytest.fixture
def spans(monkeypatch) -> InMemorySpanExporter:
    """django_pgmq's tracer records into memory for this test."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(tracing, "_tracer", provider.get_tracer("django_pgmq"))
    yield exporter
    provider.shutdown()


@pytest.fixture
def m(db) -> QueueManager:
    return QueueManager()


@pytest.fixture
def q(m, queue_name) -> str:
    m.create_queue(queue_name)
    return queue_name


def run_worker_batch(queue: str, handler, messages, **spec) -> None:
    """Handle ``messages`` as the worker does (its Processor, on this connection)."""
    settings = resolve(queue, Consumer(handler, **spec), {}, None)
    Processor(settings, InternalManager(), Holdings(), threading.Event()).run(messages)


def named(exporter: InMemorySpanExporter, name: str) -> list:
    return [s for s in exporter.get_finished_spans() if s.name == name]


def test_a_trace_follows_a_message_from_its_sender_into_the_handler(m, q, spans):
    outer = tracing.tracer()
    with outer.start_as_current_span("GET /orders/new") as request_span:
        msg_id = m.send(q, {"n": 1}, headers={"tenant": "a"})
    [message] = m.read(q, vt=30, qty=1)
    assert message.headers["tenant"] == "a"
    assert message.headers["traceparent"].startswith("00-")

    run_worker_batch(q, handlers.handle, [message])

    [send] = named(spans, f"send {q}")
    [process] = named(spans, f"process {q}")
    assert send.kind == SpanKind.PRODUCER and process.kind == SpanKind.CONSUMER
    trace_id = request_span.get_span_context().trace_id
    assert send.context.trace_id == process.context.trace_id == trace_id
    assert send.parent.span_id == request_span.get_span_context().span_id
    assert process.parent.span_id == send.context.span_id
    assert send.attributes["messaging.system"] == "pgmq"
    assert send.attributes["messaging.destination.name"] == q
    assert send.attributes["messaging.message.id"] == str(msg_id)
    assert process.attributes["messaging.message.id"] == str(msg_id)
    assert process.status.status_code != StatusCode.ERROR


def test_a_failing_handler_ends_its_span_in_error(m, q, spans):
    m.send(q, {"fail_times": 1})
    run_worker_batch(q, handlers.handle, m.read(q, vt=30, qty=1))
    [process] = named(spans, f"process {q}")
    assert process.status.status_code == StatusCode.ERROR
    assert [e.name for e in process.events] == ["exception"]


def test_a_batch_send_is_one_span_and_a_batch_handler_links_every_message(m, q, spans):
    m.send_batch(q, [{"n": 1}, {"n": 2}], headers=[None, {"k": "v"}])
    [send] = named(spans, f"send {q}")
    assert send.attributes["messaging.batch.message_count"] == 2
    messages = m.read(q, vt=30, qty=2)
    assert {msg.headers["traceparent"][:-3] for msg in messages} == {
        f"00-{send.context.trace_id:032x}-{send.context.span_id:016x}"
    }
    assert messages[1].headers["k"] == "v"

    run_worker_batch(q, handlers.handle_batch, messages, batch_handler=True)
    [process] = named(spans, f"process {q}")
    assert [link.context.span_id for link in process.links] == [send.context.span_id] * 2


def test_with_the_api_but_no_sdk_spans_are_no_ops_and_headers_unchanged(m, q, monkeypatch):
    monkeypatch.setattr(tracing, "_tracer", trace.NoOpTracerProvider().get_tracer("x"))
    m.send(q, {"n": 1})
    m.send_batch(q, [{"n": 2}], headers=[{"k": "v"}])
    assert [msg.headers for msg in m.read(q, vt=30, qty=2)] == [None, {"k": "v"}]


def test_without_opentelemetry_everything_works_and_nothing_is_imported(m, q, monkeypatch):
    monkeypatch.setitem(sys.modules, "opentelemetry", None)  # import fails: not installed
    monkeypatch.setattr(tracing, "_tracer", tracing._UNRESOLVED)
    assert tracing.tracer() is None
    m.send(q, {"n": 1})
    messages = m.read(q, vt=30, qty=1)
    assert messages[0].headers is None
    run_worker_batch(q, handlers.handle, messages)
    assert m.metrics(q).queue_length == 0


def test_a_statement_runs_in_a_client_span_only_inside_a_traced_operation(m, q, spans):
    m.read(q, vt=30, qty=1)  # a poll outside any trace: no span
    assert named(spans, "pgmq read") == []
    m.send(q, {"n": 1})
    [send] = named(spans, f"send {q}")
    [statement] = named(spans, "pgmq send")
    assert statement.kind == SpanKind.CLIENT
    assert statement.parent.span_id == send.context.span_id
    assert statement.attributes["db.operation.name"] == "send"
