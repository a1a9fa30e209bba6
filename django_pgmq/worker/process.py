"""Run a handler over a batch and settle each message: acknowledge, retry or dead-letter.

Atomic handlers (the default) run in chunks of up to `MAX_CHUNK` messages
sharing one transaction, committed at least every `COMMIT_EVERY` seconds. The
chunk first locks its messages, so nobody else can take, archive or delete
them until it commits (a message already gone is not run). Each handler runs
in a savepoint (sent only once the handler sends a query: see savepoint.py):
a failure undoes its own writes only, and the message is retried or
dead-lettered; the successful ones are archived (or deleted) in
one statement that commits with their handlers' writes. The first handler of
a chunk needs no savepoint: when it fails, the whole (so far empty)
transaction is rolled back instead, which saves two round trips per chunk.

Non-atomic handlers run outside any transaction; each message is acknowledged
right after its handler returns.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import logging
import threading
from collections.abc import Callable
from time import monotonic
from typing import Any

from asgiref.sync import async_to_sync
from django.db import connections

from .. import isolation, tracing
from ..internal import InternalManager
from ..records import Message
from . import retry
from .config import QueueSettings
from .errors import PoisonMessage, Unsettled
from .held import Holdings
from .logs import user_exc_info
from .outcome import Outcome
from .savepoint import LazySavepoint
from .settled import Settled
from .timing import TIMINGS

log = logging.getLogger("django_pgmq.worker")

COMMIT_EVERY = 1.0
MAX_CHUNK = 50  # savepoints per transaction, well under PostgreSQL's 64 cached subtransactions
MAX_ERROR_TEXT = 2000
# A retry counts as waiting this much longer than its backoff: the database starts
# the backoff a little after the worker does (see Holdings.retrying, --until-empty).
RETRY_MARGIN = 1.0

Reader = Callable[[int], list[Message]]  # reads up to n messages (0: none): see Processor.run


class _FirstFailed(Exception):
    """The first handler of a chunk failed: its transaction rolls back, then it is settled."""

    def __init__(self, message: Message, error: Exception, rest: list[Message]) -> None:
        super().__init__(str(error))
        self.message = message
        self.error = error
        self.rest = rest


async def _await(awaitable: Any) -> Any:
    return await awaitable


def call_handler(handler: Callable[[Any], Any], argument: Any) -> Any:
    """Call a handler; an ``async def`` one is awaited to the end on an event loop.

    asgiref runs the coroutine on a loop of its own while this thread waits, and
    runs its ``sync_to_async`` calls (the ORM's async methods) back on this
    thread, so they use this thread's connection and the chunk's transaction.
    """
    result = handler(argument)
    if inspect.isawaitable(result):
        return async_to_sync(_await)(result)
    return result


def error_text(exc: BaseException) -> str:
    """The error recorded in a dead letter's headers."""
    return f"{type(exc).__name__}: {exc}"[:MAX_ERROR_TEXT]


class Processor:
    """Settles batches of one queue, on the calling thread's database connection."""

    def __init__(
        self,
        settings: QueueSettings,
        manager: InternalManager,
        holdings: Holdings,
        stopping: threading.Event,
    ) -> None:
        self.settings = settings
        self.consumer = settings.consumer
        self.queue = settings.queue
        self.manager = manager
        self.holdings = holdings
        self.stopping = stopping
        self.connection = connections[manager.using]  # of the thread that runs the batches

    def run(
        self, messages: list[Message], read_next: Callable[[Reader], list[Message]] | None = None
    ) -> Outcome:
        """Handle ``messages``; once stopping, hand back the ones not started yet.

        ``read_next`` (atomic handlers) reads the next batch in the last chunk's
        transaction, in the statement that acknowledges the chunk: the read
        commits with this batch's acknowledgement (one commit per batch instead
        of two) and costs no round trip of its own. It is given a `Reader` (a
        quantity -> the messages read; 0: acknowledge only) and returns what
        was read, kept in `Outcome.following`.
        """
        outcome = Outcome()
        pending = self._without_unsettled(messages, outcome)
        try:
            if self.consumer.batch_handler:
                with self._transaction():
                    done = self._handle_batch(self._present(pending, outcome), outcome)
                    self._settle(done, read_next, outcome)
                pending = []
            with self._batch_scope(pending):
                while pending and not self.stopping.is_set():
                    try:
                        with self._transaction():
                            pending, done = self._run_chunk(pending, outcome)
                            self._settle(done, None if pending else read_next, outcome)
                    except _FirstFailed as failed:
                        self._fail([failed.message], failed.error, outcome)
                        pending = failed.rest
            if pending:  # after the scope: what it owes for the batch is written first
                ids = [m.msg_id for m in pending]
                outcome.released = len(self.manager.set_vt_seconds(self.queue, ids, 0, unread=True))
        finally:
            self.holdings.drop(self.queue, [m.msg_id for m in messages])
        return outcome

    def _settle(
        self,
        done: list[int],
        read_next: Callable[[Reader], list[Message]] | None,
        outcome: Outcome,
    ) -> None:
        """Acknowledge ``done``; with ``read_next`` (atomic), read the next batch in one go."""
        reads_ahead = self.consumer.atomic and not self.settings.priority
        if read_next is not None and reads_ahead and not self.stopping.is_set():
            reader = functools.partial(self._acknowledge_and_read, done)
            outcome.following = read_next(reader)
        elif done:
            self._acknowledge(done)
        outcome.done += len(done)

    def _acknowledge_and_read(self, done: list[int], qty: int) -> list[Message]:
        """Acknowledge ``done`` and read up to ``qty`` messages, in one statement if both."""
        if not qty:
            if done:
                self._acknowledge(done)
            return []
        settings = self.settings
        if not done:
            return self.manager.read(self.queue, vt=settings.vt, qty=qty)
        return self.manager.acknowledge_and_read(
            self.queue,
            done,
            delete=settings.on_success == "delete",
            vt=settings.vt,
            qty=qty,
            commit=self._commits_on_exit(),
        )

    def _commits_on_exit(self) -> bool:
        """Whether the chunk's atomic block is the outermost one and commits when it ends.

        Then its last statement may carry the COMMIT (one round trip less per
        batch): nothing runs between it and the end of the block, and Django's
        commit at the end finds the transaction over (psycopg sends nothing) and
        runs the on-commit callbacks. Inside a caller's transaction it may not.
        """
        connection = self.connection
        return (
            connection.commit_on_exit
            and len(connection.atomic_blocks) == 1
            and not connection.savepoint_ids
            and not connection.needs_rollback
        )

    def _without_unsettled(self, messages: list[Message], outcome: Outcome) -> list[Message]:
        """Dead-letter messages read too often without a verdict; the others."""
        pending = []
        for message in messages:
            if retry.unsettled_too_often(message.read_ct, self.settings.max_receive_count):
                error = Unsettled(
                    f"read {message.read_ct} times "
                    f"(max_receive_count {self.settings.max_receive_count}) "
                    "without being settled: the consumers running it died or overran its vt"
                )
                self._fail([message], error, outcome)
            else:
                pending.append(message)
        return pending

    def _run_chunk(
        self, pending: list[Message], outcome: Outcome
    ) -> tuple[list[Message], list[int]]:
        """Handle messages until the chunk is full or old.

        Returns the messages left for the next chunk and the ids to acknowledge.
        """
        todo = self._present(pending, outcome)
        done: list[int] = []
        opened = monotonic()
        first = self.consumer.atomic
        while todo and not self.stopping.is_set():
            message = todo.pop(0)
            if first:
                self._handle_first(message, todo)
                done.append(message.msg_id)
                first = False
            elif self._handle_one(message, outcome):
                done.append(message.msg_id)
            if len(done) >= MAX_CHUNK or monotonic() - opened >= COMMIT_EVERY:
                break
        return todo, done

    def _present(self, messages: list[Message], outcome: Outcome) -> list[Message]:
        """Atomic: lock the messages; those already gone (taken elsewhere) are not run."""
        if not self.consumer.atomic:
            return messages
        locked = set(self.manager.lock_messages(self.queue, [m.msg_id for m in messages]))
        gone = [m.msg_id for m in messages if m.msg_id not in locked]
        if gone:
            outcome.lost += len(gone)
            self.holdings.drop(self.queue, gone)
            log.warning(
                "%s: messages %s left the queue before they ran (their vt ran out and "
                "another consumer took them); skipped",
                self.queue,
                gone,
            )
        return [m for m in messages if m.msg_id in locked]

    def _handle_first(self, message: Message, rest: list[Message]) -> None:
        """Run the first handler of a chunk, without a savepoint (see the module's docstring)."""
        self.holdings.start(self.queue, [message.msg_id])
        try:
            result = self._call(self._decode(message))
        except Exception as exc:
            raise _FirstFailed(message, exc, rest) from exc
        self._record_result(message, result)

    def _handle_one(self, message: Message, outcome: Outcome) -> bool:
        """Run the handler on one message; True when it succeeded (to acknowledge)."""
        self.holdings.start(self.queue, [message.msg_id])
        try:
            with self._savepoint():
                result = self._call(self._decode(message))
        except Exception as exc:
            self._fail([message], exc, outcome)
            return False
        if isinstance(result, Settled):  # a handler that acknowledges, settled otherwise
            self.holdings.drop(self.queue, [message.msg_id])
            outcome.count_settled(result.how)
            return False
        self._record_result(message, result)
        if not self.consumer.atomic:
            if not self.consumer.acknowledges:
                self._acknowledge([message.msg_id])
            outcome.done += 1
            return False
        return True

    def _handle_batch(self, messages: list[Message], outcome: Outcome) -> list[int]:
        """Run the batch handler; the ids to acknowledge (none if it failed)."""
        self.holdings.start(self.queue, [m.msg_id for m in messages])
        decoded: list[Message] = []
        for message in messages:
            try:
                decoded.append(self._decode(message))
            except PoisonMessage as exc:
                self._fail([message], exc, outcome)
        if not decoded:
            return []
        try:
            with self._savepoint():
                self._call(decoded)
        except Exception as exc:
            self._fail(decoded, exc, outcome)
            return []
        return [m.msg_id for m in decoded]

    # -- helpers --------------------------------------------------------------

    def _call(self, argument: Any) -> Any:
        """Run the handler, its duration recorded for the admin (worker/timing.py); its result."""
        started = monotonic()
        try:
            with tracing.handling(self.queue, argument):
                return call_handler(self.consumer.handler, argument)
        finally:
            TIMINGS.add(self.queue, monotonic() - started)

    def _batch_scope(self, messages: list[Message]) -> contextlib.AbstractContextManager:
        """The consumer's scope around one batch's handler calls (non-atomic only), if any."""
        scope = self.consumer.batch_scope
        if scope is None or self.consumer.atomic or not messages:
            return contextlib.nullcontext()
        return scope(messages)

    def _transaction(self) -> contextlib.AbstractContextManager:
        """The transaction a chunk shares (none for non-atomic handlers): at READ COMMITTED
        whatever the project's level, as the next batch is read in it (isolation.py)."""
        if self.consumer.atomic:
            return isolation.read_committed(self.manager.using)
        return contextlib.nullcontext()

    def _savepoint(self) -> contextlib.AbstractContextManager:
        """One handler's savepoint in the chunk's transaction, sent only if it sends a query."""
        if self.consumer.atomic:
            return LazySavepoint(self.connection)
        return contextlib.nullcontext()

    def _decode(self, message: Message) -> Message:
        decode = self.consumer.decode
        if decode is None:
            return message
        try:
            return dataclasses.replace(message, message=decode(message.message))
        except Exception as exc:
            raise PoisonMessage(f"cannot decode the payload: {error_text(exc)}") from exc

    def _record_result(self, message: Message, result: Any) -> None:
        """A workflow step's handler: its return value becomes the step's result, finished
        by the acknowledgement that follows (docs/guide/workflows.md). Others: nothing."""
        headers = message.headers
        if isinstance(headers, dict) and "workflow" in headers and not isinstance(result, Settled):
            self.manager.workflow_settle(self.queue, message.msg_id, result)

    def _acknowledge(self, msg_ids: list[int]) -> None:
        """Archive (or delete) handled messages; with atomic handlers, in their transaction."""
        if self.settings.on_success == "delete":
            done = self.manager.delete(self.queue, msg_ids)
        else:
            done = self.manager.archive(self.queue, msg_ids)
        missing = sorted(set(msg_ids) - set(done))
        if missing and not self.consumer.atomic:
            log.warning(
                "%s: messages %s were gone when acknowledged: their vt ran out while the "
                "handler ran and another consumer took them",
                self.queue,
                missing,
            )

    def _fail(self, messages: list[Message], exc: Exception, outcome: Outcome) -> None:
        """Retry each message after a backoff, or dead-letter it (poison, or out of reads)."""
        settings = self.settings
        dead = {
            m.msg_id
            for m in messages
            if isinstance(exc, PoisonMessage)
            or retry.exhausted(m.read_ct, settings.max_receive_count)
        }
        delays = {
            m.msg_id: retry.backoff(m.read_ct, settings.retry_delay, cap=settings.max_retry_delay)
            for m in messages
            if m.msg_id not in dead
        }
        if delays:  # before the drop: --until-empty never sees them neither held nor waiting
            self.holdings.retrying(monotonic() + max(delays.values()) + RETRY_MARGIN)
        self.holdings.drop(self.queue, [m.msg_id for m in messages])  # no vt extension now
        notes = []
        unrecorded = []
        for message in messages:
            if message.msg_id in dead:
                new_id = self.manager.dead_letter(
                    self.queue, message.msg_id, settings.dead_letter, error_text(exc)
                )
                if new_id is None:
                    unrecorded.append(message.msg_id)
                    notes.append(f"{message.msg_id} not dead-lettered: gone")
                    continue
                outcome.dead += 1
                notes.append(f"{message.msg_id} dead-lettered to {settings.dead_letter}")
            else:
                delay = delays[message.msg_id]
                if not self.manager.hide_failed(self.queue, message.msg_id, delay, error_text(exc)):
                    unrecorded.append(message.msg_id)
                    notes.append(f"{message.msg_id} not retried: gone or locked")
                    continue
                outcome.retried += 1
                outcome.retry_at.append(monotonic() + delay)  # at or after its vt ends
                notes.append(f"{message.msg_id} retried in {delay:.2f}s (read {message.read_ct})")
        outcome.unrecorded += len(unrecorded)
        log.warning(
            "%s: handler failed: %s: %s",
            self.queue,
            "; ".join(notes),
            exc,
            exc_info=user_exc_info(exc),
        )
        if unrecorded:
            log.warning(
                "%s: the failure of messages %s was not recorded: they were gone (deleted, "
                "or taken by another consumer after their vt ran out) or locked by another "
                "transaction; whoever has them decides what becomes of them",
                self.queue,
                unrecorded,
            )
