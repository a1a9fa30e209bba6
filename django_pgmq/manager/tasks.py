"""QueueManager methods for the Django Tasks backend: task queues read by priority.

The statements are in ``sql/tasks_queries.sql``, the functions in ``sql/75_tasks.sql``.
"""

from __future__ import annotations

from typing import Any

from django.db import DatabaseError, connections

from .. import sqlfiles
from ..messages import Message
from ..names import validate_queue_name
from .base import MAX_QTY, Base, _check_int, _message, _rows, _translate

QUERIES = "tasks_queries.sql"


class TaskOps(Base):
    """Task queues: made ready for priorities, and read highest priority first."""

    def enable_task_queue(self, queue: str) -> bool:
        """Create ``queue`` if missing and give it the priority index (idempotent).

        True when both were there already and committed: safe to remember.
        """
        validate_queue_name(queue)
        return bool(self._fetch_task_query("enable_task_queue", {"queue": queue}, queue)[0][0])

    def read_by_priority(self, queue: str, *, vt: int = 30, qty: int = 1) -> list[Message]:
        """Claim up to ``qty`` visible messages, highest header priority first, then oldest."""
        validate_queue_name(queue)
        params = {
            "queue": queue,
            "vt": _check_int("vt", vt, 0),
            "qty": _check_int("qty", qty, 1, MAX_QTY),
        }
        return [_message(row) for row in self._fetch_task_query("read_by_priority", params, queue)]

    def _fetch_task_query(self, name: str, params: dict[str, Any], queue: str) -> list[tuple]:
        """Run a statement of ``sql/tasks_queries.sql``, database errors translated."""
        connection = connections[self.using]
        try:
            return _rows(connection, sqlfiles.queries(QUERIES)[name], params)
        except DatabaseError as exc:
            translated = _translate(exc, queue, self.using)
            if translated is None:
                raise
            raise translated from exc
