"""OpenTelemetry spans for sends, handler runs and SQL statements (with ``opentelemetry-api``).

A send (``send``, ``send_batch``) runs in a PRODUCER span ``send <queue>`` and
writes the trace context into each message's headers (``traceparent``, W3C);
the worker runs each handler in a CONSUMER span ``process <queue>`` whose parent
is that context, so one trace follows a message from the code that sent it into
the worker (a batch handler's span links every message's context instead). Inside
them (or any span of the caller's), each SQL statement runs in a CLIENT span
``pgmq <statement>`` (`statement`, opened by `sqlrun`).

Without ``opentelemetry-api`` nothing is imported after the first call (one
failed import, remembered) and messages are sent unchanged. With the API but no
SDK set up, nothing is traced (no span is made per message) and no header is added.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from importlib import metadata
from typing import Any

from .records import Message

SYSTEM = "pgmq"
HEADERS = ("traceparent", "tracestate")  # what the W3C propagator reads and writes

_UNRESOLVED: Any = object()
_tracer: Any = _UNRESOLVED  # the OpenTelemetry tracer; None without opentelemetry-api
_no_sdk: Any = ()  # the API's stand-in tracer and provider classes, used until an SDK is set


def tracer() -> Any:
    """The tracer of django_pgmq, or None when there is nothing to trace with: no
    ``opentelemetry-api``, or no SDK set up yet (every span would be a no-op, so the
    sends and handler runs skip the per-message work of making and carrying them)."""
    global _tracer, _no_sdk
    if _tracer is _UNRESOLVED:
        try:
            from opentelemetry import trace
        except ImportError:
            _tracer = None
        else:
            _tracer = trace.get_tracer("django_pgmq", _version())
            _no_sdk = (trace.ProxyTracer, trace.ProxyTracerProvider)
    # The API's stand-in tracer, while the process-wide provider is still the stand-in
    # too: no SDK is set up (a tracer from an SDK's own provider is never a stand-in).
    if _tracer is None or (
        _no_sdk and isinstance(_tracer, _no_sdk[0]) and isinstance(_provider(), _no_sdk[1])
    ):
        return None
    return _tracer


def _version() -> str | None:
    """The installed django-pgmq's version, for the tracer (None in a bare checkout)."""
    try:
        return metadata.version("django-pgmq")
    except metadata.PackageNotFoundError:
        return None


def _provider() -> Any:
    from opentelemetry import trace

    return trace.get_tracer_provider()


def _attributes(queue: str, operation: str) -> dict[str, Any]:
    return {
        "messaging.system": SYSTEM,
        "messaging.destination.name": queue,
        "messaging.operation.type": operation,
        "messaging.operation.name": operation,
    }


def _current_context() -> dict[str, str]:
    """The current trace context as headers (``traceparent``...); empty when there is none."""
    from opentelemetry import propagate

    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    return carrier


def _with_context(headers: dict[str, Any] | None, carrier: dict[str, str]) -> dict[str, Any] | None:
    """``headers`` plus the trace context ``carrier`` (a copy); unchanged when there is none.

    Headers that are not a dict are left for the send's own check to refuse.
    """
    if not carrier or (headers is not None and not isinstance(headers, dict)):
        return headers
    return {**(headers or {}), **carrier}


@contextlib.contextmanager
def sending(queue: str, headers: dict[str, Any] | None) -> Iterator[Any]:
    """Around one send: a PRODUCER span; yields a `Send` whose headers carry its context."""
    with _send_span(queue, 1) as span:
        yield Send(
            span, _with_context(headers, _current_context()) if span is not None else headers
        )


@contextlib.contextmanager
def sending_batch(
    queue: str, headers: Sequence[dict[str, Any] | None] | None, count: int
) -> Iterator[Any]:
    """Around a batch send: one PRODUCER span; every message's headers carry its context."""
    with _send_span(queue, count) as span:
        if span is None:
            yield Send(None, headers)
        else:
            carrier = _current_context()  # one span, one context for the whole batch
            yield Send(span, [_with_context(h, carrier) for h in (headers or [None] * count)])


class Send:
    """The span of a send (None: not tracing) and the headers to send with."""

    def __init__(self, span: Any, headers: Any) -> None:
        self.span = span
        self.headers = headers

    def sent(self, msg_ids: Sequence[int]) -> None:
        """Record the ids the send got."""
        if self.span is not None and len(msg_ids) == 1:
            self.span.set_attribute("messaging.message.id", str(msg_ids[0]))


@contextlib.contextmanager
def _send_span(queue: str, count: int) -> Iterator[Any]:
    otel = tracer()
    if otel is None:
        yield None
        return
    from opentelemetry.trace import SpanKind

    attributes = _attributes(queue, "send")
    if count > 1:
        attributes["messaging.batch.message_count"] = count
    with otel.start_as_current_span(
        f"send {queue}", kind=SpanKind.PRODUCER, attributes=attributes
    ) as span:
        yield span


def _context_of(message: Message) -> Any:
    """The trace context a message's headers carry (an empty context when none)."""
    from opentelemetry import propagate

    headers = message.headers if isinstance(message.headers, dict) else {}
    return propagate.extract({k: v for k, v in headers.items() if isinstance(v, str)})


_UNTRACED = contextlib.nullcontext()  # reusable: nullcontext keeps no state


def handling(queue: str, argument: Message | list[Message]) -> contextlib.AbstractContextManager:
    """Around a handler run: a CONSUMER span, child of the message's sender (batch: linked).

    Without opentelemetry-api, a shared no-op context manager (no generator per message).
    """
    otel = tracer()
    if otel is None:
        return _UNTRACED
    return _handling_span(otel, queue, argument)


@contextlib.contextmanager
def _handling_span(otel: Any, queue: str, argument: Message | list[Message]) -> Iterator[None]:
    from opentelemetry import trace
    from opentelemetry.trace import Link, SpanKind

    attributes = _attributes(queue, "process")
    parent, links = None, []
    if isinstance(argument, Message):
        parent = _context_of(argument)
        attributes["messaging.message.id"] = str(argument.msg_id)
        attributes["pgmq.read_ct"] = argument.read_ct
    else:
        attributes["messaging.batch.message_count"] = len(argument)
        for message in argument:
            context = trace.get_current_span(_context_of(message)).get_span_context()
            if context.is_valid:
                links.append(Link(context, {"messaging.message.id": str(message.msg_id)}))
    with otel.start_as_current_span(
        f"process {queue}",
        context=parent,
        kind=SpanKind.CONSUMER,
        attributes=attributes,
        links=links,
    ):
        yield


_current_span: Any = None  # opentelemetry.trace.get_current_span, once the API is found


def statement(name: str) -> contextlib.AbstractContextManager:
    """Around one SQL statement (`sqlrun`): a CLIENT span ``pgmq <name>``, made only
    inside a traced operation (a send, a handler run, the caller's own span), so that a
    worker polling an empty queue starts no trace per read.

    Untraced, the cost is one check of the current span (no SDK: it never records).
    """
    global _current_span
    if _tracer is None:
        return _UNTRACED
    if _current_span is None:
        if tracer() is None and _tracer is None:  # no opentelemetry-api
            return _UNTRACED
        from opentelemetry import trace

        _current_span = trace.get_current_span
    if not _current_span().is_recording():
        return _UNTRACED
    otel = tracer()
    if otel is None:
        return _UNTRACED
    from opentelemetry.trace import SpanKind

    return otel.start_as_current_span(
        f"pgmq {name}",
        kind=SpanKind.CLIENT,
        attributes={"db.system.name": "postgresql", "db.operation.name": name},
    )
