"""A kombu virtual channel whose queues are pgmq queues.

Declarations and bindings are stored in the database (``pgmq.celery_queue``,
``pgmq.celery_binding``), so every process routes alike; a publish is one SQL call
that routes in the database and inserts into each target queue. Fetching is
``pgmq.read`` of as many messages as the prefetch window allows (``pgmq.pop`` for
consumers that do not acknowledge).
"""

from __future__ import annotations

import contextlib
import logging
from collections import deque
from datetime import UTC, datetime, timedelta
from queue import Empty
from typing import TYPE_CHECKING, Any

import psycopg
from amqp.protocol import queue_declare_ok_t
from kombu.exceptions import ChannelError
from kombu.exceptions import ConnectionError as KombuConnectionError
from kombu.transport import virtual
from kombu.transport.base import to_rabbitmq_queue_arguments
from kombu.utils.uuid import uuid

from ... import errors, sqlrun
from . import database
from .naming import pgmq_queue_name
from .qos import QoS, by_queue, delivery_tag

if TYPE_CHECKING:
    from .transport import Transport

logger = logging.getLogger(__name__)


def _gone(exc: Exception) -> bool:
    """True when an error says the queue no longer exists (dropped meanwhile)."""
    if isinstance(exc, errors.QueueNotFound):
        return True
    return errors.lookup(getattr(exc, "sqlstate", None)) is errors.QueueNotFound


def eta_of(message: dict[str, Any]) -> datetime | None:
    """When a Celery message asks to be visible (its ``eta`` header), or None if it does not.

    None (no countdown or eta) lets the queue's ``delivery_delay`` attribute apply. An
    eta is explicit: an aware one is the time, a naive one (the worker applies its own
    time zone and holds the message) or one in the past means now.
    """
    eta = (message.get("headers") or {}).get("eta")
    if not isinstance(eta, str):
        return None
    try:
        when = datetime.fromisoformat(eta)
    except ValueError:
        return None
    now = datetime.now(UTC)
    if when.tzinfo is None or when <= now:
        return now
    return when


# Keys of a Celery message's headers (``apply_async(headers=...)``) that pgmq's queue
# attributes read from a message's headers: they go into the pgmq headers too.
PGMQ_HEADERS = ("deduplication_id",)


# Celery's priorities (0-9, higher first as in AMQP; up to 10 accepted) onto the pgmq
# header "priority" (-100..100, higher first): n becomes 10 * n, so 9 is 90, and 0, the
# priority of a message that sets none, is the header's default 0.
CELERY_PRIORITY_STEP = 10
CELERY_PRIORITY_MAX = 10


def pgmq_priority(priority: Any) -> int | None:
    """The pgmq ``priority`` header for a Celery priority, or None when it has none (or 0)."""
    if isinstance(priority, bool) or not isinstance(priority, int | float) or priority <= 0:
        return None
    return int(min(priority, CELERY_PRIORITY_MAX)) * CELERY_PRIORITY_STEP or None


def pgmq_headers_of(message: dict[str, Any]) -> str | None:
    """The pgmq headers of a Celery message (JSON), or None when it sets none of them.

    They carry the keys the queue attributes read: ``deduplication_id`` (from the task's
    headers) and ``priority`` (from ``apply_async(priority=)``, ``task_default_priority``
    or a route's ``priority``, mapped by `pgmq_priority`).
    """
    headers = message.get("headers") or {}
    picked = {key: headers[key] for key in PGMQ_HEADERS if headers.get(key) is not None}
    priority = pgmq_priority((message.get("properties") or {}).get("priority"))
    if priority is not None:
        picked["priority"] = priority
    return database.dump(picked) if picked else None


def _expired(payload: dict[str, Any], enqueued_at: datetime, read_at: datetime | None) -> bool:
    """True when the message's own ``expiration`` (ms, set by the publisher) has passed."""
    expiration = (payload.get("properties") or {}).get("expiration")
    if expiration in (None, "") or read_at is None:
        return False
    try:
        return read_at - enqueued_at > timedelta(milliseconds=float(expiration))
    except (TypeError, ValueError):
        return False


class Channel(virtual.Channel):
    """Declares, routes, fetches and settles through the pgmq SQL API."""

    QoS = QoS
    connection: Transport
    supports_fanout = True
    body_encoding = None  # see encode_body: text stays text
    from_transport_options = ()  # options come from Options, once per transport

    def __init__(self, connection: Transport, **kwargs: Any) -> None:
        super().__init__(connection, **kwargs)
        self.options = connection.options
        self._no_ack_queues: set[str] = set()
        self.pending_acks: deque[str] = deque()

    # -- names and SQL ------------------------------------------------------

    def pgmq_name(self, queue: str) -> str:
        """The pgmq queue for a Celery queue name."""
        return pgmq_queue_name(queue, self.options.queue_name_prefix)

    def _run(self, name: str, **params: Any) -> list[tuple]:
        return self.connection.sessions.run(name, params)

    # -- queues and bindings ------------------------------------------------

    def queue_declare(
        self,
        queue: str | None = None,
        passive: bool = False,
        durable: bool = True,
        exclusive: bool = False,
        auto_delete: bool = False,
        arguments: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> queue_declare_ok_t:
        """Create the pgmq queue (unlogged when not durable) and record its AMQP arguments."""
        queue = queue or f"amq.gen-{uuid()}"
        if passive:
            if not self._has_queue(queue):
                raise ChannelError(
                    f"NOT_FOUND - no queue {queue!r} (pgmq queue {self.pgmq_name(queue)!r})",
                    (50, 10),
                    "Channel.queue_declare",
                    "404",
                )
        else:
            args = arguments or {}
            self._run(
                "celery_declare_queue",
                queue=self.pgmq_name(queue),
                celery_name=queue,
                durable=bool(durable) and not exclusive,
                auto_delete=bool(auto_delete or exclusive),
                expires_ms=_milliseconds(args.get("x-expires")),
                ttl_ms=_milliseconds(args.get("x-message-ttl")),
            )
            if args.get("x-max-priority"):
                # A priority queue in AMQP's terms (task_queue_max_priority, or
                # Queue(max_priority=)): the queue's priorities attribute orders its reads.
                self._run("celery_enable_priorities", queue=self.pgmq_name(queue))
        consumers = self._run("celery_consumer_count", queue=self.pgmq_name(queue))[0][0]
        return queue_declare_ok_t(queue, self._size(queue), consumers)

    def prepare_queue_arguments(self, arguments: dict, **kwargs: Any) -> dict:
        """AMQP queue arguments (``x-expires``, ``x-message-ttl`` in ms) from kombu's."""
        return to_rabbitmq_queue_arguments(arguments, **kwargs)

    def _has_queue(self, queue: str, **kwargs: Any) -> bool:
        return bool(self._run("celery_queue_exists", queue=self.pgmq_name(queue))[0][0])

    def _size(self, queue: str) -> int:
        """Messages ready to be fetched (AMQP's message_count)."""
        return int(self._run("celery_queue_length", queue=self.pgmq_name(queue))[0][0])

    def _purge(self, queue: str) -> int:
        return int(self._run("purge_queue", queue=self.pgmq_name(queue))[0][0])

    def queue_delete(
        self, queue: str, if_unused: bool = False, if_empty: bool = False, **kwargs: Any
    ) -> int:
        """Drop the pgmq queue with its archive and bindings; returns messages it held."""
        name = self.pgmq_name(queue)
        if not self._has_queue(queue):
            return 0
        size = self._size(queue)
        if if_empty and size:
            return 0
        if if_unused and self._run("celery_consumer_count", queue=name)[0][0]:
            return 0
        # A queue the transport created is the owner's: dropped by the owner's function.
        if self._run("celery_delete_queue", queue=name)[0][0] is None:
            self._run("drop_queue", queue=name)
        self.state.queue_bindings_delete(queue)
        return size

    def _queue_bind(self, exchange: str, routing_key: str, pattern: Any, queue: str) -> None:
        """Store a binding (called by kombu's ``queue_bind``)."""
        self._run(
            "celery_bind",
            exchange=exchange,
            exchange_type=self.typeof(exchange).type,
            routing_key=routing_key or "",
            queue=self.pgmq_name(queue),
        )

    def queue_unbind(
        self,
        queue: str,
        exchange: str | None = None,
        routing_key: str = "",
        arguments: dict | None = None,
        **kwargs: Any,
    ) -> None:
        super().queue_unbind(queue, exchange, routing_key, arguments, **kwargs)
        self._run(
            "celery_unbind",
            exchange=exchange or "amq.direct",
            routing_key=routing_key or "",
            queue=self.pgmq_name(queue),
        )

    def exchange_delete(self, exchange: str, if_unused: bool = False, nowait: bool = False) -> None:
        """Forget the exchange and its bindings (queues stay, as in AMQP)."""
        self._run("celery_delete_exchange", exchange=exchange)
        self.state.exchanges.pop(exchange, None)

    # -- publishing ---------------------------------------------------------

    def basic_publish(
        self, message: dict[str, Any], exchange: str, routing_key: str, **kwargs: Any
    ) -> int:
        """Insert the message into every queue the exchange routes it to; one SQL call.

        With ``django-pgmq://`` this runs on Django's connection of the calling thread, so
        inside ``transaction.atomic()`` the message exists only if the block commits.
        """
        self._inplace_augment_message(message, exchange, routing_key)
        params = {
            "msg": database.dump(message),
            "headers": pgmq_headers_of(message),
            "deliver_at": eta_of(message),
            "notify": self.options.notify,
        }
        sender = self.connection.sender
        if exchange:
            params.update(exchange=exchange, routing_key=routing_key or "")
            delivered = database.refused(sender.run, "celery_publish", params)[0][0]
        elif routing_key:
            params["queue"] = self.pgmq_name(routing_key)
            sent = database.refused(sender.run, "celery_send", params)
            delivered = int(sent[0][0] is not None)
        else:
            delivered = 0
        self.connection.poke()
        if not delivered and not exchange:
            # As in AMQP, an unroutable message is dropped: typically a reply to a client
            # that has gone away. Exchanges without bindings (events) drop silently.
            logger.warning("message dropped: no queue named %r", routing_key)
        return delivered

    def encode_body(self, body: Any, encoding: str | None = None) -> tuple[Any, str | None]:
        """Bodies go into jsonb: UTF-8 text as a string (readable in SQL), else base64."""
        if isinstance(body, bytes | bytearray | memoryview):
            try:
                return bytes(body).decode("utf-8"), "utf-8"
            except UnicodeDecodeError:
                return super().encode_body(bytes(body), "base64")
        return body, encoding

    def decode_body(self, body: Any, encoding: str | None = None) -> Any:
        """The body as it was published (bytes stay bytes)."""
        if encoding == "utf-8" and isinstance(body, str):
            return body.encode("utf-8")
        return super().decode_body(body, encoding)

    def _put(self, queue: str, message: dict[str, Any], **kwargs: Any) -> None:
        self.basic_publish(message, "", queue)

    # -- consuming ----------------------------------------------------------

    def basic_consume(
        self, queue: str, no_ack: bool, callback: Any, consumer_tag: str, **kwargs: Any
    ) -> None:
        super().basic_consume(queue, no_ack, callback, consumer_tag, **kwargs)
        if no_ack:
            self._no_ack_queues.add(queue)
        self.connection.consumer_added(self.pgmq_name(queue))

    def basic_cancel(self, consumer_tag: str) -> None:
        queue = self._tag_to_queue.get(consumer_tag)
        super().basic_cancel(consumer_tag)
        if queue is not None:
            if queue not in self._active_queues:
                self._no_ack_queues.discard(queue)
            self.connection.consumer_removed(self.pgmq_name(queue))

    def basic_get(self, queue: str, no_ack: bool = False, **kwargs: Any) -> Any:
        """Fetch one message now, or None."""
        payloads = self._fetch(queue, 1, no_ack)
        if not payloads:
            return None
        message = self.Message(payloads[0], channel=self)
        if not no_ack:
            self.qos.append(message, message.delivery_tag)
        return message

    def _get_and_deliver(self, queue: str, callback: Any) -> None:
        """Fetch as many messages as the prefetch window allows and hand each over."""
        no_ack = queue in self._no_ack_queues
        room = None if no_ack else self.qos.can_consume_max_estimate()
        payloads = self._fetch(
            queue, min(room or self.options.max_batch, self.options.max_batch), no_ack
        )
        if not payloads:
            raise Empty()
        for index, payload in enumerate(payloads):
            try:
                callback(payload, queue)
            except BaseException:
                if not no_ack:
                    self.release([p["properties"]["delivery_tag"] for p in payloads[index + 1 :]])
                raise

    def active_pgmq_queues(self) -> list[str]:
        """pgmq queues this channel would read now (none while its prefetch window is full)."""
        if not self._consumers or not self.qos.can_consume():
            return []
        return sorted({self.pgmq_name(queue) for queue in self._active_queues})

    def _fetch(self, queue: str, qty: int, no_ack: bool) -> list[dict[str, Any]]:
        """Read (or pop) up to ``qty`` messages as kombu payloads; expired ones are dropped."""
        name = self.pgmq_name(queue)
        vt = self.options.visibility_timeout
        try:
            # Message rows in sqlrun.MESSAGE_COLUMNS order, read by column name.
            if no_ack:
                params: dict[str, Any] = {"queue": name, "qty": qty}
                rows = self.connection.sessions.run("celery_pop", params, sqlrun.MESSAGES)
            else:
                params = {"queue": name, "vt": vt, "qty": qty}
                rows = self.connection.sessions.run("celery_read", params, sqlrun.MESSAGES)
        except (psycopg.Error, errors.QueueNotFound) as exc:
            if not _gone(exc):
                raise
            # Someone dropped the queue under its consumers. Reported as a connection error
            # so that Celery reconnects, which declares the queue again.
            raise KombuConnectionError(
                f"queue {queue!r} (pgmq queue {name!r}) was dropped while consumed"
            ) from exc
        payloads, expired = [], []
        for msg_id, read_ct, enqueued_at, read_at, _vt, payload, _headers in rows:
            tag = delivery_tag(name, msg_id, read_ct)
            if _expired(payload, enqueued_at, read_at):
                expired.append(tag)
                continue
            properties = payload.setdefault("properties", {})
            properties["delivery_tag"] = tag
            properties.setdefault("delivery_info", {})["redelivered"] = read_ct > 1
            payloads.append(payload)
        if expired and not no_ack:
            self._ack(expired, archive=False)
        return payloads

    # -- settling (called by QoS, possibly from other threads) ---------------

    def settle(self, tags: list[str]) -> None:
        """Acknowledge: archive or delete (``on_ack``), batched by the drain loop if one runs."""
        if self._closed_for(tags, "acknowledged"):
            return
        if not self.connection.defer_acks(self, tags):
            self._ack(tags)

    def flush_acks(self) -> None:
        """Send the acknowledgements the drain loop collected, one statement per queue."""
        tags: list[str] = []
        with contextlib.suppress(IndexError):
            while True:
                tags.append(self.pending_acks.popleft())
        if tags:
            self._ack(tags)

    def release(self, tags: list[str]) -> None:
        """Make these messages visible now (requeue, shutdown)."""
        if self._closed_for(tags, "released"):
            return
        notify = self.options.notify
        self._each_queue("celery_release", tags, notify=notify)
        self.connection.poke()
        self.connection.wakeup()

    def renew(self) -> None:
        """Push the visibility timeout of every held message forward."""
        vt = self.options.visibility_timeout
        self._each_queue("celery_extend", self.qos.held(), vt=vt)

    def _closed_for(self, tags: list[str], what: str) -> bool:
        """True (with a warning) when this channel is closed, as after a lost connection.

        Closing released every message still held, so these come back to a worker.
        """
        if self.connection is not None:
            return False
        logger.warning("%d message(s) not %s: their channel is closed", len(tags), what)
        return True

    def _ack(self, tags: list[str], archive: bool | None = None) -> None:
        if archive is None:
            archive = self.options.on_ack == "archive"
        self._each_queue("celery_ack", tags, archive=archive)

    def _each_queue(self, statement: str, tags: list[str], **params: Any) -> None:
        """Run a statement for the messages of each queue; a queue dropped meanwhile is skipped."""
        for queue, ids in by_queue(tags).items():
            try:
                self._run(statement, queue=queue, ids=ids, **params)
            except (psycopg.Error, errors.QueueNotFound) as exc:
                if not _gone(exc):
                    raise
                logger.debug("queue %s is gone; %s skipped", queue, statement)


def _milliseconds(value: Any) -> int | None:
    """An AMQP duration argument (milliseconds) as an int, or None."""
    if value is None:
        return None
    return int(value)
