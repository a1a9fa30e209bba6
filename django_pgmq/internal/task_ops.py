"""Internal: the Django Tasks backend's operations: task queues read by priority.

The statements are in ``sql/tasks_queries.sql``, the functions in ``sql/75_tasks.sql``.
"""

from __future__ import annotations

import functools
from datetime import datetime
from typing import Any

from django.db import DatabaseError, connections
from psycopg import sql as psql

from .. import sqlfiles
from ..manager.plumbing import (
    MAX_QTY,
    Base,
    _check_int,
    _check_when,
    _dump_headers,
    _dump_message,
    _message,
    _prepared_rows,
    _rows,
    _translate,
)
from ..messages import Message
from ..names import validate_queue_name

QUERIES = "tasks_queries.sql"


class TaskOps(Base):
    """Task queues: made ready for priorities, and read highest priority first."""

    def enable_task_queue(self, queue: str) -> bool:
        """Create ``queue`` if missing and want its priority index (idempotent).

        True when both were made by a committed transaction (the index built, or wanted
        and built concurrently by someone): safe to remember.
        """
        validate_queue_name(queue)
        ready = bool(self._fetch_task_query("enable_task_queue", {"queue": queue}, queue)[0][0])
        if not ready:  # the priority index may be wanted: built concurrently after the commit
            self.build_indexes_after_commit()  # type: ignore[attr-defined]
        return ready

    def read_by_priority(self, queue: str, *, vt: int = 30, qty: int = 1) -> list[Message]:
        """Claim up to ``qty`` visible messages, highest header priority first, then oldest."""
        validate_queue_name(queue)
        params = {
            "queue": queue,
            "vt": _check_int("vt", vt, 0),
            "qty": _check_int("qty", qty, 1, MAX_QTY),
        }
        return [_message(row) for row in self._fetch_task_query("read_by_priority", params, queue)]

    def enqueue_task(
        self,
        queue: str,
        message: dict[str, Any],
        priority: int,
        delay: int | datetime,
        results_table: str,
        row: dict[str, Any],
    ) -> int:
        """Send a task's message and insert its result ``row``, in one statement; the msg_id.

        ``row``: ``id``, ``backend``, ``task_path``, ``args`` and ``kwargs`` (JSON text),
        ``run_after``, ``enqueued_at``, ``max_attempts``; the queue, the priority and
        the message id fill the rest. On the caller's connection and transaction.
        """
        validate_queue_name(queue)
        when = _check_when("delay", delay)
        params = {
            **row,
            "queue": queue,
            "msg": _dump_message(message, queue),
            "headers": _dump_headers({"priority": priority}, queue),
            "priority": _check_int("priority", priority, -100, 100),
            "delay": when,
        }
        # No delay goes as pgmq.send's timestamp form with NULL ("none given", as an
        # integer 0 is): the integer form is a PL/pgSQL call more that converts to it.
        timed = isinstance(when, datetime) or when == 0
        if when == 0:
            params["delay"] = None
        name = "task_enqueue_at" if timed else "task_enqueue"
        rows = self._fetch_task_query(name, params, queue, results_table, prepared=True)
        return int(rows[0][0])

    def finish_task(
        self, queue: str, msg_id: int, results_table: str, params: dict[str, Any]
    ) -> bool:
        """Write a task's verdict into its result row and delete its message, in one statement.

        ``params``: ``id``, ``status``, ``finished_at``, ``return_value`` and ``errors``
        (JSON text). True when the message was deleted (false: no such result row,
        or the message was gone).
        """
        validate_queue_name(queue)
        params = {**params, "queue": queue, "msg_id": _check_int("msg_id", msg_id, 1, 2**63 - 1)}
        rows = self._fetch_task_query("task_finish", params, queue, results_table)
        return bool(rows and rows[0][0])

    def _fetch_task_query(
        self,
        name: str,
        params: dict[str, Any],
        queue: str,
        results_table: str | None = None,
        prepared: bool = False,
    ) -> list[tuple]:
        """Run a statement of ``sql/tasks_queries.sql``, database errors translated.

        ``prepared``: as a prepared statement when the project allows them (see
        `_prepared_rows`).
        """
        alias = self.alias_for(queue)
        connection = connections[alias]
        statement = task_statement(name, results_table)
        try:
            if prepared:
                rows = _prepared_rows(connection, statement, params)
                if rows is not None:
                    return rows
            return _rows(connection, statement, params)
        except DatabaseError as exc:
            translated = _translate(exc, queue, alias)
            if translated is None:
                raise
            raise translated from exc


@functools.lru_cache(maxsize=32)
def task_statement(name: str, results_table: str | None = None) -> str:
    """A statement of ``sql/tasks_queries.sql``, its ``{results}`` slot the quoted table name."""
    text = sqlfiles.queries(QUERIES)[name]
    if results_table is None:
        return text
    return psql.SQL(text).format(results=psql.Identifier(results_table)).as_string(None)
