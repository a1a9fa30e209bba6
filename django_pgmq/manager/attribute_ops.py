"""QueueManager methods: queue attributes (SQS-grade, kept in SQL for every client).

The attributes live in ``pgmq.queue_attributes`` and are enforced by the SQL API
(sql/25_attributes.sql); these methods only read and write them, pause and resume
a queue, run retention, and redrive a dead-letter queue.
"""

from __future__ import annotations

import logging
from typing import Any

from django.db import connections

from ..names import validate_queue_name
from ..records import QueueLimits, RetentionResult
from .plumbing import Base, _check_int, _dump, _json, _record

logger = logging.getLogger(__name__)

RETENTION_BATCH = 5000  # rows per statement and commit (pgmq.enforce_retention's too)


class AttributeOps(Base):
    """Get and set queue attributes; pause, resume, retention and redrive."""

    def get_queue_attributes(self, queue: str) -> dict[str, Any]:
        """The queue's attributes (``{}`` for none)."""
        validate_queue_name(queue)
        return _json(self._fetch("get_queue_attributes", {"queue": queue}, queue)[0][0])

    def set_queue_attributes(self, queue: str, **attributes: Any) -> dict[str, Any]:
        """Merge attributes into the queue's (``None`` removes one); returns the whole set.

        A bad key or value raises `InvalidArgument` naming it, and changes nothing.
        Turning ``priorities`` on wants the priority index: built at once on a small
        queue, else concurrently before this returns (outside a transaction; a build kept
        waiting by an open transaction goes on in the background) or once the transaction
        commits (sends never wait for it; reads work meanwhile).
        """
        validate_queue_name(queue)
        params = {"queue": queue, "attributes": _dump(attributes, "attributes", queue)}
        merged = _json(self._fetch("set_queue_attributes", params, queue)[0][0])
        if attributes.get("priorities") is True:
            self.build_indexes_after_commit(queue, now=True)  # type: ignore[attr-defined]
        return merged

    def pause_queue(self, queue: str) -> dict[str, Any]:
        """Stop reads (read, pop, the FIFO readers) from returning messages; sends go on."""
        return self.set_queue_attributes(queue, paused=True)

    def resume_queue(self, queue: str) -> dict[str, Any]:
        """Undo `pause_queue`."""
        return self.set_queue_attributes(queue, paused=None)

    def queue_limits(self, queue: str | None = None) -> list[QueueLimits]:
        """The limits of ``queue`` (or of every queue with ``max_in_flight`` or ``rate_limit``)
        and where each stands now: in flight, handed out in the current window. Routed and
        without ``queue``: those of every queue database."""
        if queue is not None:
            validate_queue_name(queue)
            aliases = [self.alias_for(queue)]
        else:
            aliases = self.each_database()
        return [
            _record(QueueLimits, row, database=alias)
            for alias in aliases
            for row in self._fetch_named("queue_limits", {"queue": queue}, queue, alias=alias)
        ]

    def dead_letter_sources(self, queue: str) -> list[str]:
        """The queues whose ``dead_letter_queue`` attribute names ``queue``."""
        validate_queue_name(queue)
        return [row[0] for row in self._fetch("dead_letter_sources", {"queue": queue}, queue)]

    def enforce_retention(
        self, queue: str | None = None, *, batch_size: int = RETENTION_BATCH
    ) -> list[RetentionResult]:
        """Delete messages and archived rows past the queues' retention attributes.

        Outside a transaction each batch of ``batch_size`` rows of each queue commits on
        its own, so deleted rows are never held locked across batches or queues (and
        vacuum is not held back). Inside ``transaction.atomic()`` it all joins the
        caller's transaction, as ``pgmq.enforce_retention()`` does.
        """
        if queue is not None:
            validate_queue_name(queue)
        if connections[self.using].in_atomic_block:
            rows = self._fetch_named("enforce_retention", {"queue": queue}, queue)
            return [_record(RetentionResult, row) for row in rows]
        size = _check_int("batch_size", batch_size, 1)
        done = []
        for row in self._fetch_named("retention_queues", {"queue": queue}, queue):
            name = row["queue_name"]
            expired = archive_deleted = 0
            while True:
                params = {"queue": name, "batch_size": size}
                [batch] = self._fetch_named("retention_batch", params, name)
                gone, archived = batch["expired"], batch["archive_deleted"]
                expired, archive_deleted = expired + gone, archive_deleted + archived
                if gone < size and archived < size:
                    break
            if row["reported"]:
                done.append(RetentionResult(name, expired, archive_deleted))
        return done

    def redrive(
        self, dead_letter_queue: str, *, conditional: dict | None = None, limit: int | None = None
    ) -> dict[str, int]:
        """Move dead letters back to the queues they came from (those whose message
        contains ``conditional``, at most ``limit``); returns how many went to each queue.

        Messages naming an invalid or missing queue stay, logged as a warning."""
        validate_queue_name(dead_letter_queue)
        params = {
            "queue": dead_letter_queue,
            "conditional": _dump(conditional or {}, "conditional", dead_letter_queue),
            "limit": limit,
        }
        rows = self._fetch_named("redrive", params, dead_letter_queue)
        for row in rows:
            name, skipped = row["source_queue"], row["skipped"]
            if skipped:  # the SQL left them in the dead-letter queue (and sent a NOTICE)
                logger.warning(
                    'redrive of "%s": %d message(s) name queue %s in their dead_letter header, '
                    "not a valid or existing queue; they stay",
                    dead_letter_queue,
                    skipped,
                    "(none)" if name is None else f'"{name}"',
                )
        return {r["source_queue"]: int(r["moved"]) for r in rows if not r["skipped"]}
