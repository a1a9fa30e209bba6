"""QueueManager methods: send, read, pop, archive, delete and set_vt."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, overload

from .. import tracing
from ..errors import (
    InvalidArgument,
    InvalidPayload,
)
from ..names import validate_queue_name
from ..records import Message
from .plumbing import (
    MAX_QTY,
    Base,
    _check_int,
    _check_when,
    _dump,
    _dump_headers,
    _dump_message,
    _id_array,
    _ids,
    _message,
    check_joins_transaction,
)

# The op letter of each acknowledgement in the queue's own statements (sqlrun.kept_rows).
_ACK_OPS = {"archive": "a", "delete": "d"}


def _with_attribute_headers(
    queue: str, headers: Any, deduplication_id: str | None, priority: int | None
) -> dict[str, Any]:
    """The headers with ``deduplication_id`` and ``priority`` added, both checked."""
    if headers is not None and not isinstance(headers, dict):
        kind = type(headers).__name__
        raise InvalidPayload(f'queue "{queue}": headers must be a dict, got {kind}')
    added: dict[str, Any] = {}
    if deduplication_id is not None:
        if not isinstance(deduplication_id, str) or not 1 <= len(deduplication_id) <= 128:
            raise InvalidArgument(
                "deduplication_id must be a string of 1 to 128 characters, "
                f"got {deduplication_id!r:.60}"
            )
        added["deduplication_id"] = deduplication_id
    if priority is not None:
        added["priority"] = _check_int("priority", priority, -100, 100)
    return {**(headers or {}), **added}


def _batch_size(messages: Any) -> int:
    """How many messages a valid batch holds; 0 for anything `send_batch` will refuse."""
    if isinstance(messages, str | bytes | dict) or not isinstance(messages, Sequence):
        return 0
    return len(messages)


class MessageOps(Base):
    """Send, read, pop, archive, delete and set_vt."""

    # -- sending ------------------------------------------------------------

    def send(
        self,
        queue: str,
        message: Any,
        *,
        delay: int | datetime = 0,
        headers: dict[str, Any] | None = None,
        deduplication_id: str | None = None,
        priority: int | None = None,
    ) -> int:
        """Enqueue one message, visible after ``delay`` seconds (or at a datetime).

        ``deduplication_id`` and ``priority`` go into the headers, where a queue with
        a ``deduplication_window`` or ``priorities`` attribute looks for them.

        With OpenTelemetry tracing, in a ``send <queue>`` span whose context the
        message's headers carry (``traceparent``): see tracing.py.
        """
        if deduplication_id is not None or priority is not None:
            headers = _with_attribute_headers(queue, headers, deduplication_id, priority)
        if tracing.tracer() is not None:
            with tracing.sending(queue, headers) as traced:
                msg_id = self._send(queue, message, delay, traced.headers)
                traced.sent([msg_id])
                return msg_id
        return self._send(queue, message, delay, headers)

    def _send(
        self, queue: str, message: Any, delay: int | datetime, headers: dict[str, Any] | None
    ) -> int:
        validate_queue_name(queue)
        when = _check_when("delay", delay)
        params = {
            "queue": queue,
            "msg": _dump_message(message, queue),
            "headers": _dump_headers(headers, queue),
            "delay": when,
        }
        query = "send_at" if isinstance(when, datetime) else "send"
        if self.routed:
            check_joins_transaction(queue, self.alias_for(queue))
        if when == 0 and not isinstance(when, datetime):
            hdrs = None if params["headers"] is None else [params["headers"]]
            kept = self._fetch_kept(queue, "s", 1, ([params["msg"]], hdrs))
            if kept is not None:
                return int(kept[0][0])
        return int(self._fetch(query, params, queue)[0][0])

    def send_batch(
        self,
        queue: str,
        messages: Sequence[Any],
        *,
        delay: int | datetime = 0,
        headers: Sequence[dict[str, Any] | None] | None = None,
    ) -> list[int]:
        """Enqueue many messages in one statement; ids come back in the order given.

        With OpenTelemetry tracing, in one ``send <queue>`` span (see `send`).
        """
        if tracing.tracer() is not None and _batch_size(messages):
            with tracing.sending_batch(queue, headers, _batch_size(messages)) as traced:
                msg_ids = self._send_batch(queue, messages, delay, traced.headers)
                traced.sent(msg_ids)
                return msg_ids
        return self._send_batch(queue, messages, delay, headers)

    def _send_batch(
        self,
        queue: str,
        messages: Sequence[Any],
        delay: int | datetime,
        headers: Sequence[dict[str, Any] | None] | None,
    ) -> list[int]:
        validate_queue_name(queue)
        if isinstance(messages, str | bytes | dict) or not isinstance(messages, Sequence):
            raise InvalidPayload(f'queue "{queue}": messages must be a list, got {messages!r:.60}')
        if not messages:
            raise InvalidPayload(f'queue "{queue}": messages must not be empty')
        if headers is not None and len(headers) != len(messages):
            raise InvalidArgument(
                f'queue "{queue}": {len(headers)} headers given for {len(messages)} messages'
            )
        when = _check_when("delay", delay)
        params = {
            "queue": queue,
            "msgs": [_dump_message(m, queue) for m in messages],
            "headers": None if headers is None else [_dump_headers(h, queue) for h in headers],
            "delay": when,
        }
        query = "send_batch_at" if isinstance(when, datetime) else "send_batch"
        if self.routed:
            check_joins_transaction(queue, self.alias_for(queue))
        if when == 0 and not isinstance(when, datetime):
            kept = self._fetch_kept(queue, "s", 1, (params["msgs"], params["headers"]))
            if kept is not None:
                return [row[0] for row in kept]
        return [row[0] for row in self._fetch(query, params, queue)]

    # -- reading ------------------------------------------------------------

    def read(
        self, queue: str, *, vt: int = 30, qty: int = 1, conditional: dict | None = None
    ) -> list[Message]:
        """Claim up to ``qty`` visible messages, hidden from others for ``vt`` seconds."""
        params = self._read_params(queue, vt, qty, conditional)
        if not conditional:
            kept = self._fetch_kept(queue, "r", params["qty"], (params["vt"],))
            if kept is not None:
                return [_message(row) for row in kept]
        return self._fetch_messages("read", params, queue)

    def read_with_poll(
        self,
        queue: str,
        *,
        vt: int = 30,
        qty: int = 1,
        max_poll_seconds: int = 5,
        poll_interval_ms: int = 100,
        conditional: dict | None = None,
    ) -> list[Message]:
        """Like `read`, but wait up to ``max_poll_seconds`` for a message to arrive."""
        params = self._read_params(queue, vt, qty, conditional)
        params["max_poll_seconds"] = _check_int("max_poll_seconds", max_poll_seconds, 0, 3600)
        params["poll_interval_ms"] = _check_int("poll_interval_ms", poll_interval_ms, 1, 60_000)
        return self._fetch_messages("read_with_poll", params, queue)

    def _read_params(self, queue: str, vt: int, qty: int, conditional: dict | None) -> dict:
        validate_queue_name(queue)
        if conditional is not None and not isinstance(conditional, dict):
            raise InvalidArgument(f"conditional must be a dict, got {conditional!r}")
        return {
            "queue": queue,
            "vt": _check_int("vt", vt, 0),
            "qty": _check_int("qty", qty, 1, MAX_QTY),
            "conditional": _dump(conditional or {}, "conditional", queue),
        }

    def pop(self, queue: str, qty: int = 1) -> list[Message]:
        """Read and delete up to ``qty`` messages at once (at-most-once delivery)."""
        validate_queue_name(queue)
        qty = _check_int("qty", qty, 1, MAX_QTY)
        kept = self._fetch_kept(queue, "p", qty, ())
        if kept is not None:
            return [_message(row) for row in kept]
        return self._fetch_messages("pop", {"queue": queue, "qty": qty}, queue)

    # -- acknowledging ------------------------------------------------------

    @overload
    def archive(self, queue: str, msg_ids: int) -> bool: ...
    @overload
    def archive(self, queue: str, msg_ids: Iterable[int]) -> list[int]: ...

    def archive(self, queue: str, msg_ids: int | Iterable[int]) -> bool | list[int]:
        """Move messages to the archive: one id gives a bool, a list gives the ids moved."""
        return self._remove("archive", queue, msg_ids)

    @overload
    def delete(self, queue: str, msg_ids: int) -> bool: ...
    @overload
    def delete(self, queue: str, msg_ids: Iterable[int]) -> list[int]: ...

    def delete(self, queue: str, msg_ids: int | Iterable[int]) -> bool | list[int]:
        """Delete messages: one id gives a bool, a list gives the ids deleted."""
        return self._remove("delete", queue, msg_ids)

    def _remove(self, query: str, queue: str, msg_ids: int | Iterable[int]) -> bool | list[int]:
        validate_queue_name(queue)
        ids, single = _ids(msg_ids)
        params = {"queue": queue, "ids": _id_array(ids)}
        kept = self._fetch_kept(queue, _ACK_OPS[query], 1, (params["ids"],))
        if kept is None:
            kept = self._fetch(query, params, queue)
        done = [row[0] for row in kept]
        return bool(done) if single else sorted(done)

    @overload
    def set_vt(self, queue: str, msg_ids: int, vt: int | datetime) -> Message | None: ...
    @overload
    def set_vt(self, queue: str, msg_ids: Iterable[int], vt: int | datetime) -> list[Message]: ...

    def set_vt(
        self, queue: str, msg_ids: int | Iterable[int], vt: int | datetime
    ) -> Message | list[Message] | None:
        """Make messages visible ``vt`` seconds from now (or at a datetime); 0 releases them."""
        validate_queue_name(queue)
        ids, single = _ids(msg_ids)
        when = _check_when("vt", vt)
        query = "set_vt_at" if isinstance(when, datetime) else "set_vt"
        params = {"queue": queue, "ids": _id_array(ids), "vt": when}
        messages = self._fetch_messages(query, params, queue)
        if single:
            return messages[0] if messages else None
        return messages
