"""QueueManager methods: FIFO group readers and topics (sql/50_fifo.sql, sql/60_topics.sql)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ..errors import (
    NULL_MESSAGE,
    CrossDatabaseTransaction,
    InvalidArgument,
    InvalidPayload,
)
from ..names import validate_queue_name
from ..records import Message, TopicBinding, TopicDelivery, TopicRoute
from .plumbing import (
    Base,
    _check_int,
    _check_when,
    _dump,
    _record,
    transactions_not_joined,
)


class RoutingOps(Base):
    """FIFO group readers and topic routing (sql/50_fifo.sql, sql/60_topics.sql)."""

    # -- FIFO groups (sql/50_fifo.sql) ----------------------------------------

    GROUP_READERS = {"fifo": "read_grouped", "rr": "read_grouped_rr", "head": "read_grouped_head"}

    def read_grouped(
        self, queue: str, vt: int = 30, qty: int = 1, mode: str = "fifo"
    ) -> list[Message]:
        """Claim messages by group (header ``x-pgmq-group``): in order, one reader per group.

        ``mode``: "fifo" fills from the oldest group first, "rr" takes one message
        per group per round, "head" only each group's first message.
        """
        params = self._group_params(queue, vt, qty)
        function = self._group_reader(mode)
        return self._fetch_messages("read_grouped", params, queue, {"function": function})

    def read_grouped_with_poll(
        self,
        queue: str,
        vt: int = 30,
        qty: int = 1,
        mode: str = "fifo",
        *,
        max_poll_seconds: int = 5,
        poll_interval_ms: int = 100,
    ) -> list[Message]:
        """Like `read_grouped`, but wait up to ``max_poll_seconds`` for a readable group."""
        params = self._group_params(queue, vt, qty)
        params["max_poll_seconds"] = _check_int("max_poll_seconds", max_poll_seconds, 0, 3600)
        params["poll_interval_ms"] = _check_int("poll_interval_ms", poll_interval_ms, 1, 60_000)
        function = self._group_reader(mode) + "_with_poll"
        return self._fetch_messages("read_grouped_with_poll", params, queue, {"function": function})

    def _group_params(self, queue: str, vt: int, qty: int) -> dict[str, Any]:
        validate_queue_name(queue)
        return {"queue": queue, "vt": _check_int("vt", vt, 0), "qty": _check_int("qty", qty, 1)}

    def _group_reader(self, mode: str) -> str:
        if mode not in self.GROUP_READERS:
            raise InvalidArgument(
                f"mode must be one of {', '.join(map(repr, self.GROUP_READERS))}, got {mode!r}"
            )
        return self.GROUP_READERS[mode]

    # -- topics (sql/60_topics.sql) -------------------------------------------

    def bind_topic(self, pattern: str, queue: str) -> None:
        """Route messages whose key matches ``pattern`` (``*`` one word, ``#`` any) to ``queue``."""
        validate_queue_name(queue)
        params = {"pattern": self._text("pattern", pattern), "queue": queue}
        self._fetch("bind_topic", params, queue)

    def unbind_topic(self, pattern: str, queue: str) -> bool:
        """Remove a binding; False when there was none."""
        validate_queue_name(queue)
        params = {"pattern": self._text("pattern", pattern), "queue": queue}
        return bool(self._fetch("unbind_topic", params, queue)[0][0])

    def send_topic(
        self,
        routing_key: str,
        message: Any,
        *,
        headers: dict[str, Any] | None = None,
        delay: int = 0,
    ) -> int:
        """Send one message to every queue bound to a matching pattern; how many queues got it.

        Routed, the bindings of every queue database count (`_send_topic_everywhere`).
        """
        key = self._text("routing_key", routing_key)
        params = {
            "key": key,
            "msg": self._topic_json(key, "message", message),
            "headers": self._topic_json(key, "headers", headers),
            "delay": _check_int("delay", delay, 0),
        }
        return sum(
            int(rows[0]["send_topic"])
            for _, rows in self._send_topic_everywhere(key, "send_topic", params)
        )

    def send_batch_topic(
        self,
        routing_key: str,
        messages: Sequence[Any],
        *,
        headers: Sequence[dict[str, Any] | None] | None = None,
        delay: int | datetime = 0,
    ) -> list[TopicDelivery]:
        """Send messages to every queue bound to a matching pattern; one row per message stored.

        Routed, the bindings of every queue database count (`_send_topic_everywhere`).
        """
        key = self._text("routing_key", routing_key)
        if isinstance(messages, str | bytes | dict) or not isinstance(messages, Sequence):
            raise InvalidPayload(
                f'routing key "{key}": messages must be a list, got {messages!r:.60}'
            )
        if headers is not None and len(headers) != len(messages):
            raise InvalidArgument(
                f'routing key "{key}": {len(headers)} headers given for {len(messages)} messages'
            )
        when = _check_when("delay", delay)
        params: dict[str, Any] = {
            "key": key,
            "msgs": [self._topic_json(key, "message", m) for m in messages],
            "headers": None
            if headers is None
            else [self._topic_json(key, "headers", h) for h in headers],
            "delay": when,
        }
        query = "send_batch_topic_at" if isinstance(when, datetime) else "send_batch_topic"
        return [
            _record(TopicDelivery, row, database=alias)
            for alias, rows in self._send_topic_everywhere(key, query, params)
            for row in rows
        ]

    def _send_topic_everywhere(
        self, key: str, query: str, params: dict[str, Any]
    ) -> list[tuple[str, list[dict[str, Any]]]]:
        """Run a topic send in each database (`each_database`): each sends to its own bindings.

        Each database's part is one statement, all or nothing there; the parts are not
        one transaction. Inside ``transaction.atomic()``, a database whose bindings the
        key matches but whose send could not join that transaction refuses the whole
        send first (`CrossDatabaseTransaction`, as `send` does), before anything is sent.
        """
        aliases = self.each_database()
        if len(aliases) > 1:
            for alias in aliases:
                open_on = transactions_not_joined(alias)
                if open_on and self._fetch("test_routing", {"key": key}, None, alias=alias):
                    raise CrossDatabaseTransaction(
                        f'routing key "{key}" matches bindings in database {alias!r}, but the '
                        f"send runs inside transaction.atomic() on "
                        f"{', '.join(map(repr, open_on))}: that copy could not commit or roll "
                        "back with that transaction. Send with QueueManager(using=...) once "
                        "per database to accept separate commits, or set "
                        "PGMQ['ALLOW_CROSS_DATABASE_SEND'] = True"
                    )
        return [(alias, self._fetch_named(query, params, None, alias=alias)) for alias in aliases]

    def list_topic_bindings(self, queue: str | None = None) -> list[TopicBinding]:
        """Every binding (of one queue, when given), newest first; routed, database by
        database (`each_database`), ``database`` naming each one's."""
        if queue is not None:
            validate_queue_name(queue)
            rows = self._fetch_named("list_queue_topic_bindings", {"queue": queue}, queue)
            alias = self.alias_for(queue)
            return [_record(TopicBinding, row, database=alias) for row in rows]
        return [
            _record(TopicBinding, row, database=alias)
            for alias in self.each_database()
            for row in self._fetch_named("list_topic_bindings", {}, None, alias=alias)
        ]

    def test_routing(self, routing_key: str) -> list[TopicRoute]:
        """The bindings a routing key would reach, without sending anything (routed: in
        every queue database)."""
        key = self._text("routing_key", routing_key)
        return [
            _record(TopicRoute, row, database=alias)
            for alias in self.each_database()
            for row in self._fetch_named("test_routing", {"key": key}, None, alias=alias)
        ]

    @staticmethod
    def _text(name: str, value: object) -> str:
        if not isinstance(value, str):
            raise InvalidArgument(f"{name} must be a string, got {value!r}")
        return value

    @staticmethod
    def _topic_json(key: str, what: str, value: Any) -> str | None:
        """A topic message or headers as JSON; errors name the routing key."""
        if value is None and what == "message":
            raise InvalidPayload(f'routing key "{key}": {NULL_MESSAGE}')
        if value is not None and what == "headers" and not isinstance(value, dict):
            raise InvalidPayload(
                f'routing key "{key}": headers must be a dict, got {type(value).__name__}'
            )
        try:
            return None if value is None else _dump(value, what, key)
        except InvalidPayload as exc:
            raise InvalidPayload(
                f'routing key "{key}": {what} is not JSON-serializable: {exc.__cause__}'
            ) from exc.__cause__
