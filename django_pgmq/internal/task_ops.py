"""Internal: the Django Tasks backend's operations: task queues read by priority.

The statements are in ``sql/queries.sql`` (Tasks section), the functions in ``sql/75_tasks.sql``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import connections

from ..manager.plumbing import (
    MAX_QTY,
    Base,
    _check_int,
    _check_when,
    _dump_headers,
    _dump_message,
)
from ..names import validate_queue_name
from ..records import Message


class TaskOps(Base):
    """Task queues: made ready for priorities, and read highest priority first."""

    def enable_task_queue(self, queue: str) -> bool:
        """Create ``queue`` if missing and want its priority index (idempotent).

        True when both were made by a committed transaction (the index built, or wanted
        and built concurrently by someone): safe to remember.
        """
        validate_queue_name(queue)
        ready = bool(self._fetch("enable_task_queue", {"queue": queue}, queue)[0][0])
        if not ready:  # the priority index may be wanted: built concurrently after the commit
            self.build_indexes_after_commit()  # type: ignore[attr-defined]
        return ready

    def read_by_priority(
        self, queue: str, *, vt: int = 30, qty: int = 1, synchronous_commit: bool = True
    ) -> list[Message]:
        """Claim up to ``qty`` visible messages, highest header priority first, then oldest.

        ``synchronous_commit=False`` (the Tasks backend's option): when the read is its own
        transaction, its commit does not wait for its WAL flush (`_commit_variant`).
        """
        validate_queue_name(queue)
        params = {
            "queue": queue,
            "vt": _check_int("vt", vt, 0),
            "qty": _check_int("qty", qty, 1, MAX_QTY),
        }
        query = self._commit_variant("read_by_priority", queue, synchronous_commit)
        return self._fetch_messages(query, params, queue)

    def _commit_variant(self, query: str, queue: str | None, synchronous_commit: bool) -> str:
        """``query``, or its ``_async_commit`` twin (``SET LOCAL synchronous_commit = off``
        for its own transaction) when the caller opted out of synchronous commit and the
        statement is a transaction of its own (autocommit, no atomic block): never
        turned off for a transaction the caller holds open, whose other work did not ask.
        """
        if synchronous_commit:
            return query
        connection = connections[self.alias_for(queue)]
        if connection.autocommit and not connection.in_atomic_block:
            return query + "_async_commit"
        return query

    def task_enqueue(
        self,
        queue: str,
        message: dict[str, Any],
        priority: int,
        run_after: datetime | None,
        row: dict[str, Any],
    ) -> int:
        """Send a task's message and insert its result ``row``, in one call; the msg_id.

        ``row``: ``id``, ``backend``, ``task_path``, ``args`` and ``kwargs`` (JSON text),
        ``run_after``, ``enqueued_at``, ``max_attempts``; the queue, the priority and
        the message id fill the rest. ``run_after`` (aware) is the message's delay, None
        for none. On the caller's connection and transaction.
        """
        validate_queue_name(queue)
        params = {
            **row,
            "queue": queue,
            "msg": _dump_message(message, queue),
            "headers": _dump_headers({"priority": priority}, queue),
            "priority": _check_int("priority", priority, -100, 100),
            "delay": None if run_after is None else _check_when("run_after", run_after),
        }
        rows = self._fetch_prepared("task_enqueue", params, queue)
        return int(rows[0][0])

    def task_finish_and_start(
        self, queue: str | None, params: dict[str, Any], *, synchronous_commit: bool = True
    ) -> list[dict[str, Any]]:
        """Store a verdict and delete its message, and/or mark the next result RUNNING.

        ``params``: ``done_id`` (None: no verdict), ``done_msg_id``, ``done_status``,
        ``done_finished_at``, ``done_return_value`` and ``done_errors`` (JSON text);
        ``id`` (None: nothing to start), ``now``, ``worker``; ``queue`` holds the
        finished task's message (None without a verdict). One call, one transaction
        (Django's autocommit). The started row (the results table's columns, by name), if any.
        ``synchronous_commit=False``: that commit does not wait for its WAL flush
        (`_commit_variant`).
        """
        if queue is not None:
            validate_queue_name(queue)
        query = self._commit_variant("task_finish_and_start", queue, synchronous_commit)
        return self._fetch_named(query, {**params, "queue": queue}, queue)
