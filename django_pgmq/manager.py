"""QueueManager: every queue operation, on a Django database connection.

This is the only module that sends SQL for queue operations; the statements
live in ``sql/queries.sql``. Because it uses Django's connection, a call made
inside ``transaction.atomic()`` commits or rolls back with the caller's data.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any, overload

from django.core.serializers.json import DjangoJSONEncoder
from django.db import DatabaseError, connections, transaction
from psycopg import sql as psql

from . import conf, sqlfiles
from .dashboard.records import BrowsedMessage, QueueStats, ThroughputBucket
from .errors import (
    FeatureNotAvailable,
    InvalidArgument,
    InvalidPayload,
    InvalidQueueName,
    PgmqError,
    QueueNameConflict,
    QueueNotFound,
)
from .messages import Message, QueueInfo, QueueMetrics
from .names import notify_channel, table_name, validate_queue_name
from .notify import NotifyThrottle
from .partitions import Interval, Partition, PartitionChange, interval_text
from .topics import TopicBinding, TopicDelivery, TopicRoute

MAX_INT4 = 2**31 - 1
MAX_QTY = 100_000

# SQLSTATE of our SQL's errors (see sql/00_schema.sql) -> Python exception.
_SQLSTATE_ERRORS: dict[str, type[PgmqError]] = {
    "PQ000": FeatureNotAvailable,
    "PQ001": InvalidQueueName,
    "PQ003": QueueNameConflict,
    "PQ004": InvalidArgument,
    "0A000": FeatureNotAvailable,
    "22P02": InvalidPayload,  # not valid JSON (e.g. a lone surrogate)
    "22P05": InvalidPayload,  # \u0000 in a string: jsonb cannot store it
}


def _sqlstate(exc: BaseException) -> str | None:
    cause = exc.__cause__ or exc
    return getattr(cause, "sqlstate", None)


def _error_text(exc: BaseException) -> str:
    """The first line of a database error, with its DETAIL when it has one."""
    cause = exc.__cause__ or exc
    text = str(cause).splitlines()[0]
    detail = getattr(getattr(cause, "diag", None), "message_detail", None)
    return f"{text} ({detail})" if detail else text


def _translate(exc: DatabaseError, queue: str | None, alias: str) -> PgmqError | None:
    """The django-pgmq error a database error stands for, or None to re-raise it."""
    state = _sqlstate(exc)
    text = _error_text(exc)
    if state == "3F000":  # our statements name no schema but pgmq
        return FeatureNotAvailable(
            f"the pgmq SQL API is not installed in database {alias!r} ({text}): "
            f"run manage.py migrate django_pgmq --database {alias}"
        )
    if state in ("PQ002", "42P01") and queue is not None:
        return QueueNotFound(queue)
    if state in _SQLSTATE_ERRORS:
        prefix = f'queue "{queue}": ' if queue and state != "PQ003" else ""
        return _SQLSTATE_ERRORS[state](prefix + text)
    return None


def _check_int(name: str, value: object, low: int, high: int = MAX_INT4) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgument(f"{name} must be an integer, got {value!r}")
    if not low <= value <= high:
        raise InvalidArgument(f"{name} must be between {low} and {high}, got {value}")
    return value


def _check_when(name: str, value: object) -> int | datetime:
    """A delay or vt: whole seconds from now, or an aware datetime."""
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise InvalidArgument(f"{name} must be a timezone-aware datetime, got {value!r}")
        return value
    return _check_int(name, value, 0)


def _dump(value: Any, what: str, queue: str) -> str:
    try:
        return json.dumps(value, cls=DjangoJSONEncoder, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidPayload(f'queue "{queue}": {what} is not JSON-serializable: {exc}') from exc


def _dump_message(value: Any, queue: str) -> str:
    if value is None:
        raise InvalidPayload(f'queue "{queue}": message must not be None')
    return _dump(value, "message", queue)


def _dump_headers(value: Any, queue: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise InvalidPayload(f'queue "{queue}": headers must be a dict, got {type(value).__name__}')
    return _dump(value, "headers", queue)


def _ids(value: int | Iterable[int]) -> tuple[list[int], bool]:
    """Message ids as a list, and whether a single id was given."""
    if isinstance(value, int) and not isinstance(value, bool):
        return [_check_int("msg_id", value, 1, 2**63 - 1)], True
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise InvalidArgument(f"msg_id must be an integer or a list of integers, got {value!r}")
    return [_check_int("msg_id", v, 1, 2**63 - 1) for v in value], False


def _json(value: Any) -> Any:
    """Django's psycopg backend returns jsonb as text; decode it."""
    return json.loads(value) if isinstance(value, str) else value


def _message(row: Sequence[Any]) -> Message:
    msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers = row
    return Message(msg_id, read_ct, enqueued_at, last_read_at, vt, _json(message), _json(headers))


class QueueManager:
    """Queue operations on one database alias (default: ``PGMQ["DATABASE"]``)."""

    def __init__(self, using: str | None = None) -> None:
        self.using = using or conf.database_alias()
        if self.using not in connections.databases:
            raise InvalidArgument(f"database alias {self.using!r} is not in DATABASES")

    # -- plumbing -----------------------------------------------------------

    def _fetch(
        self,
        query: str,
        params: dict[str, Any],
        queue: str | None,
        identifiers: dict[str, str] | None = None,
    ) -> list[tuple]:
        """Run a named query and return its rows, with database errors translated.

        ``identifiers`` fill the query's ``{name}`` slots, quoted by psycopg.sql.
        """
        sql: str | psql.Composed = sqlfiles.queries()[query]
        if identifiers:
            sql = psql.SQL(sql).format(**{k: psql.Identifier(v) for k, v in identifiers.items()})
        try:
            with connections[self.using].cursor() as cursor:
                cursor.execute(sql, params)
                return cursor.fetchall() if cursor.description else []
        except DatabaseError as exc:
            translated = _translate(exc, queue, self.using)
            if translated is None:
                raise
            raise translated from exc

    # -- queues -------------------------------------------------------------

    def create_queue(self, queue: str, *, unlogged: bool = False) -> None:
        """Create a queue (idempotent); an unlogged queue is faster but lost on a crash."""
        validate_queue_name(queue)
        self._fetch("create_unlogged" if unlogged else "create", {"queue": queue}, queue)

    def drop_queue(self, queue: str) -> bool:
        """Drop a queue and its archive; False when there was no such queue."""
        validate_queue_name(queue)
        return bool(self._fetch("drop_queue", {"queue": queue}, queue)[0][0])

    def purge_queue(self, queue: str) -> int:
        """Delete every live message (the archive stays); returns how many."""
        validate_queue_name(queue)
        return int(self._fetch("purge_queue", {"queue": queue}, queue)[0][0])

    def list_queues(self) -> list[QueueInfo]:
        """Every queue, by name."""
        return [QueueInfo(*row) for row in self._fetch("list_queues", {}, None)]

    # -- sending ------------------------------------------------------------

    def send(
        self,
        queue: str,
        message: Any,
        *,
        delay: int | datetime = 0,
        headers: dict[str, Any] | None = None,
    ) -> int:
        """Enqueue one message, visible after ``delay`` seconds (or at a datetime)."""
        validate_queue_name(queue)
        when = _check_when("delay", delay)
        params = {
            "queue": queue,
            "msg": _dump_message(message, queue),
            "headers": _dump_headers(headers, queue),
            "delay": when,
        }
        query = "send_at" if isinstance(when, datetime) else "send"
        return int(self._fetch(query, params, queue)[0][0])

    def send_batch(
        self,
        queue: str,
        messages: Sequence[Any],
        *,
        delay: int | datetime = 0,
        headers: Sequence[dict[str, Any] | None] | None = None,
    ) -> list[int]:
        """Enqueue many messages in one statement; ids come back in the order given."""
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
        return [row[0] for row in self._fetch(query, params, queue)]

    # -- reading ------------------------------------------------------------

    def read(
        self, queue: str, *, vt: int = 30, qty: int = 1, conditional: dict | None = None
    ) -> list[Message]:
        """Claim up to ``qty`` visible messages, hidden from others for ``vt`` seconds."""
        params = self._read_params(queue, vt, qty, conditional)
        return [_message(row) for row in self._fetch("read", params, queue)]

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
        return [_message(row) for row in self._fetch("read_with_poll", params, queue)]

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
        params = {"queue": queue, "qty": _check_int("qty", qty, 1, MAX_QTY)}
        return [_message(row) for row in self._fetch("pop", params, queue)]

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
        done = [row[0] for row in self._fetch(query, {"queue": queue, "ids": ids}, queue)]
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
        rows = self._fetch(query, {"queue": queue, "ids": ids, "vt": when}, queue)
        messages = [_message(row) for row in rows]
        if single:
            return messages[0] if messages else None
        return messages

    # -- metrics ------------------------------------------------------------

    def metrics(self, queue: str) -> QueueMetrics:
        """Lengths, ages and total count of one queue."""
        validate_queue_name(queue)
        return QueueMetrics(*self._fetch("metrics", {"queue": queue}, queue)[0])

    def archive_count(self, queue: str) -> int:
        """How many messages the queue's archive (``pgmq.a_<queue>``) holds."""
        archive = table_name(queue, "a")
        return int(self._fetch("archive_count", {}, queue, {"archive": archive})[0][0])

    def metrics_all(self) -> list[QueueMetrics]:
        """Metrics of every queue, by name."""
        return [QueueMetrics(*row) for row in self._fetch("metrics_all", {}, None)]

    # -- dashboard (sql/90_dashboard.sql) -----------------------------------

    def dashboard_stats(
        self,
        queue: str | None = None,
        *,
        exact_limit: int = 50_000,
        max_reads: dict[str, int] | None = None,
    ) -> list[QueueStats]:
        """Dashboard figures of one queue or all; past ``exact_limit`` rows, estimates."""
        params: dict[str, Any] = {"exact_limit": _check_int("exact_limit", exact_limit, 1, 2**62)}
        if queue is None:
            params["max_reads"] = _dump(max_reads or {}, "max_reads", "*")
            rows = self._fetch("dashboard_all_stats", params, None)
        else:
            validate_queue_name(queue)
            params.update(queue=queue, max_reads=(max_reads or {}).get(queue))
            rows = self._fetch("dashboard_queue_stats", params, queue)
        return [QueueStats.from_row(row) for row in rows]

    def dashboard_throughput(
        self,
        queue: str,
        *,
        window: timedelta,
        bucket: timedelta,
        row_limit: int = 200_000,
        latency_limit: int = 20_000,
    ) -> list[ThroughputBucket]:
        """Archived messages per ``bucket`` over the last ``window``, with latency percentiles.

        At most ``row_limit`` (counts) and ``latency_limit`` (percentiles) of the newest
        archived rows are read; the buckets say when a limit cut the window short.
        """
        validate_queue_name(queue)
        params = {
            "queue": queue,
            "window": window,
            "bucket": bucket,
            "row_limit": _check_int("row_limit", row_limit, 1, 2**62),
            "latency_limit": _check_int("latency_limit", latency_limit, 1, 2**62),
        }
        rows = self._fetch("dashboard_throughput", params, queue)
        return [ThroughputBucket(*row) for row in rows]

    def browse_messages(
        self,
        queue: str,
        *,
        archive: bool = False,
        newest_first: bool = True,
        min_read_ct: int | None = None,
        header_key: str | None = None,
        header_value: str | None = None,
        contains: dict | list | None = None,
        after_id: int | None = None,
        before_id: int | None = None,
        page_size: int = 50,
    ) -> list[BrowsedMessage]:
        """One page of live (or archived) messages, filtered, keyset-paginated on msg_id."""
        validate_queue_name(queue)
        if contains is not None and not isinstance(contains, dict | list):
            raise InvalidArgument(f"contains must be a JSON object or array, got {contains!r:.60}")
        params = {
            "queue": queue,
            "from_archive": bool(archive),
            "newest_first": bool(newest_first),
            "min_read_ct": None if min_read_ct is None else _check_int("read_ct", min_read_ct, 0),
            "header_key": header_key or None,
            "header_value": header_value,
            "contains": None if contains is None else _dump(contains, "contains", queue),
            "after_id": None if after_id is None else _ids(after_id)[0][0],
            "before_id": None if before_id is None else _ids(before_id)[0][0],
            "page_size": _check_int("page_size", page_size, 1, 1000),
        }
        rows = self._fetch("dashboard_messages", params, queue)
        return [
            BrowsedMessage(*row[:6], _json(row[6]), _json(row[7]))  # type: ignore[misc]
            for row in rows
        ]

    def requeue(
        self,
        queue: str,
        msg_ids: Iterable[int],
        *,
        target: str | None = None,
        from_archive: bool = False,
    ) -> list[int]:
        """Move messages (archived ones, or dead letters) back into a live queue; new ids.

        ``queue`` is where they are now (its archive when ``from_archive``); ``target``
        (default: the same queue) receives them visible at once, with ``read_ct`` 0.
        """
        validate_queue_name(queue)
        target = validate_queue_name(target or queue)
        if target.lower() != queue.lower() and not any(
            info.queue_name.lower() == target.lower() for info in self.list_queues()
        ):
            raise QueueNotFound(target)
        ids, _ = _ids(list(msg_ids))
        params = {"source": queue, "target": target, "ids": ids, "from_archive": from_archive}
        return [row[0] for row in self._fetch("dashboard_requeue", params, queue)]

    # -- worker (sql/70_worker.sql, sql/40_notify.sql) -----------------------

    def set_vt_seconds(
        self, queue: str, msg_ids: Iterable[int], seconds: float, *, unread: bool = False
    ) -> list[int]:
        """Hide messages for ``seconds`` (fractions allowed); returns the ids moved.

        The worker's heartbeat, retry backoff and release. Rows another
        transaction is acknowledging are skipped, not waited for; ``unread``
        also takes back the read of messages handed back before their handler ran.
        """
        validate_queue_name(queue)
        ids, _ = _ids(list(msg_ids))
        if isinstance(seconds, bool) or not isinstance(seconds, int | float):
            raise InvalidArgument(f"seconds must be a number, got {seconds!r}")
        if not 0 <= seconds <= MAX_INT4:
            raise InvalidArgument(f"seconds must be between 0 and {MAX_INT4}, got {seconds}")
        params = {"queue": queue, "ids": ids, "seconds": float(seconds), "unread": bool(unread)}
        return sorted(row[0] for row in self._fetch("worker_set_vt_seconds", params, queue))

    def dead_letter(
        self, queue: str, msg_id: int, dead_letter_queue: str, error: str | None = None
    ) -> int | None:
        """Move a message to ``dead_letter_queue`` (created on demand) in one transaction.

        Its headers gain ``dead_letter``: source queue, msg_id, read_ct, enqueue and
        dead-letter times, ``error``. Returns its new id, or None if it was gone.
        """
        validate_queue_name(queue)
        validate_queue_name(dead_letter_queue)
        [msg], _ = _ids(msg_id)
        params = {"queue": queue, "id": msg, "dlq": dead_letter_queue, "error": error}
        return self._fetch("worker_dead_letter", params, queue)[0][0]

    def notify_insert_throttles(self) -> dict[str, int]:
        """Queues whose inserts notify listeners, with their throttle in milliseconds."""
        return dict(self._fetch("worker_notify_throttles", {}, None))

    def enable_notify_insert(self, queue: str, throttle_interval_ms: int = 250) -> None:
        """Make inserts into ``queue`` notify its channel (at most once per throttle window)."""
        validate_queue_name(queue)
        throttle = _check_int("throttle_interval_ms", throttle_interval_ms, 0)
        self._fetch("worker_enable_notify", {"queue": queue, "throttle": throttle}, queue)

    def disable_notify_insert(self, queue: str) -> None:
        """Stop notifying listeners of inserts into ``queue`` (a no-op when already off)."""
        validate_queue_name(queue)
        self._fetch("dashboard_disable_notify", {"queue": queue}, queue)

    def lock_messages(self, queue: str, msg_ids: Iterable[int]) -> list[int]:
        """Lock messages until the end of the current transaction; the ids still there.

        The worker's atomic handlers hold their messages this way: nobody else
        can archive, delete or read them meanwhile (readers skip locked rows).
        """
        validate_queue_name(queue)
        ids, _ = _ids(list(msg_ids))
        rows = self._fetch(
            "worker_lock_messages", {"ids": ids}, queue, {"queue": table_name(queue)}
        )
        return [row[0] for row in rows]

    # -- notifications (sql/40_notify.sql, notify.py) -------------------------

    def enable_notify(self, queue: str, throttle_ms: int = 250) -> None:
        """Notify ``pgmq.q_<queue>.INSERT`` at commit, at most once per ``throttle_ms``."""
        self.enable_notify_insert(queue, throttle_ms)

    def disable_notify(self, queue: str) -> None:
        """Stop insert notifications of ``queue`` (a no-op when they are off)."""
        self.disable_notify_insert(queue)

    def update_notify(self, queue: str, throttle_ms: int) -> None:
        """Change the throttle of a queue whose notifications are on."""
        validate_queue_name(queue)
        throttle = _check_int("throttle_ms", throttle_ms, 0)
        self._fetch("update_notify", {"queue": queue, "throttle": throttle}, queue)

    def list_notify_throttles(self) -> list[NotifyThrottle]:
        """Queues whose inserts notify, with their throttle and last notification."""
        return [NotifyThrottle(*row) for row in self._fetch("notify_throttles", {}, None)]

    def notify_channel(self, queue: str) -> str:
        """The channel to LISTEN on, spelled as pgmq.meta stores the name: ``pgmq.q_Orders.INSERT``.

        The trigger uses the stored spelling, so a listener asking for ``orders``
        still gets the channel of the queue created as ``Orders``.
        """
        validate_queue_name(queue)
        return notify_channel(self._fetch("stored_queue_name", {"queue": queue}, queue)[0][0])

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
        rows = self._fetch("read_grouped", params, queue, {"function": self._group_reader(mode)})
        return [_message(row) for row in rows]

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
        rows = self._fetch("read_grouped_with_poll", params, queue, {"function": function})
        return [_message(row) for row in rows]

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
        """Send one message to every queue bound to a matching pattern; how many queues got it."""
        key = self._text("routing_key", routing_key)
        params = {
            "key": key,
            "msg": self._topic_json(key, "message", message),
            "headers": self._topic_json(key, "headers", headers),
            "delay": _check_int("delay", delay, 0),
        }
        return int(self._fetch("send_topic", params, None)[0][0])

    def send_batch_topic(
        self,
        routing_key: str,
        messages: Sequence[Any],
        *,
        headers: Sequence[dict[str, Any] | None] | None = None,
        delay: int | datetime = 0,
    ) -> list[TopicDelivery]:
        """Send messages to every queue bound to a matching pattern; one row per message stored."""
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
        params = {
            "key": key,
            "msgs": [self._topic_json(key, "message", m) for m in messages],
            "headers": headers and [self._topic_json(key, "headers", h) for h in headers],
            "delay": when,
        }
        query = "send_batch_topic_at" if isinstance(when, datetime) else "send_batch_topic"
        return [TopicDelivery(*row) for row in self._fetch(query, params, None)]

    def list_topic_bindings(self, queue: str | None = None) -> list[TopicBinding]:
        """Every binding (of one queue, when given), newest first."""
        if queue is None:
            rows = self._fetch("list_topic_bindings", {}, None)
        else:
            validate_queue_name(queue)
            rows = self._fetch("list_queue_topic_bindings", {"queue": queue}, queue)
        return [TopicBinding(*row) for row in rows]

    def test_routing(self, routing_key: str) -> list[TopicRoute]:
        """The bindings a routing key would reach, without sending anything."""
        key = self._text("routing_key", routing_key)
        return [TopicRoute(*row) for row in self._fetch("test_routing", {"key": key}, None)]

    @staticmethod
    def _text(name: str, value: object) -> str:
        if not isinstance(value, str):
            raise InvalidArgument(f"{name} must be a string, got {value!r}")
        return value

    @staticmethod
    def _topic_json(key: str, what: str, value: Any) -> str | None:
        """A topic message or headers as JSON; errors name the routing key."""
        if value is None and what == "message":
            raise InvalidPayload(f'routing key "{key}": message must not be None')
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

    # -- partitioned queues (sql/45_partitions.sql) ---------------------------

    def create_partitioned_queue(
        self,
        queue: str,
        partition_interval: Interval = 10000,
        retention_interval: Interval | None = 100000,
        premake: int = 4,
    ) -> None:
        """Create a queue partitioned by msg_id ranges (an int) or time ranges (``"1 day"``).

        Partitions past ``retention_interval`` (None: keep all) are dropped by
        `maintain_partitions`, with their messages, read or not, as pgmq does.
        """
        validate_queue_name(queue)
        params = self._partition_params(partition_interval, retention_interval, "premake", premake)
        self._fetch("create_partitioned", {"queue": queue, **params}, queue)

    def convert_archive_partitioned(
        self,
        queue: str,
        partition_interval: Interval = 10000,
        retention_interval: Interval | None = 100000,
        leading_partition: int = 10,
    ) -> None:
        """Partition a queue's archive; its rows stay, in a first partition. Idempotent."""
        validate_queue_name(queue)
        params = self._partition_params(
            partition_interval, retention_interval, "leading_partition", leading_partition
        )
        self._fetch("convert_archive_partitioned", {"queue": queue, **params}, queue)

    @staticmethod
    def _partition_params(
        partition_interval: Interval, retention_interval: Interval | None, name: str, ahead: int
    ) -> dict[str, Any]:
        return {
            "partition_interval": interval_text("partition_interval", partition_interval),
            "retention_interval": interval_text(
                "retention_interval", retention_interval, optional=True
            ),
            "premake": _check_int(name, ahead, 1, 1000),
        }

    def partitioned_queues(self) -> list[str]:
        """Queues with a partitioned table (created partitioned, or with a converted archive)."""
        return [row[0] for row in self._fetch("partitioned_queues", {}, None)]

    def list_partitions(self, queue: str) -> list[Partition]:
        """The partitions of a queue's tables: live table first, each by range, default last."""
        validate_queue_name(queue)
        return [Partition(*row) for row in self._fetch("list_partitions", {"queue": queue}, queue)]

    def maintain_partitions(
        self, queue: str | None = None, *, lock_timeout: float | None = None
    ) -> list[PartitionChange]:
        """Create partitions ahead and drop those past retention, one queue per transaction.

        ``lock_timeout`` (seconds) bounds the wait for the table locks creating and
        dropping partitions need, so a long transaction on the queue makes this fail
        rather than stall every reader and writer queued behind it.
        """
        queues = [validate_queue_name(queue)] if queue is not None else self.partitioned_queues()
        if lock_timeout is not None and (
            isinstance(lock_timeout, bool)
            or not isinstance(lock_timeout, int | float)
            or not 0 < lock_timeout <= 3600
        ):
            raise InvalidArgument(f"lock_timeout must be 0-3600 seconds, got {lock_timeout!r}")
        changes: list[PartitionChange] = []
        for name in queues:
            with transaction.atomic(using=self.using):
                if lock_timeout is not None:
                    timeout = f"{max(1, round(lock_timeout * 1000))}ms"
                    self._fetch("set_local_lock_timeout", {"timeout": timeout}, None)
                rows = self._fetch("maintain_partitions", {"queue": name}, name)
            changes += [PartitionChange(*row) for row in rows]
        return changes
