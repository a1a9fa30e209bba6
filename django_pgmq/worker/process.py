"""Run a handler over a batch and settle each message: acknowledge, retry or dead-letter.

An atomic handler runs in a savepoint together with its message's archive (or
delete), so its writes and the acknowledgement commit or roll back together;
quick messages share one transaction (committed at least every
`COMMIT_EVERY` seconds), so one failure undoes nothing but its own savepoint.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import threading
from dataclasses import dataclass
from time import monotonic

from django.db import transaction

from ..manager import QueueManager
from ..messages import Message
from . import retry
from .config import QueueSettings
from .errors import PoisonMessage
from .held import Holdings

log = logging.getLogger("django_pgmq.worker")

COMMIT_EVERY = 1.0
MAX_ERROR_TEXT = 2000


class AckLost(Exception):
    """Messages left the queue while their handler ran (vt ran out, another worker took them)."""

    def __init__(self, msg_ids: list[int]) -> None:
        self.msg_ids = msg_ids
        super().__init__(f"messages {msg_ids} were no longer in the queue when acknowledged")


@dataclass
class Outcome:
    """What became of a batch's messages."""

    done: int = 0
    retried: int = 0
    dead: int = 0
    lost: int = 0
    released: int = 0

    @property
    def failed(self) -> int:
        return self.retried + self.dead

    @property
    def finished(self) -> int:
        """Messages whose handler ran, whatever the result."""
        return self.done + self.retried + self.dead + self.lost

    def summary(self) -> str:
        parts = [f"{self.done} done", f"{self.retried} retried", f"{self.dead} dead-lettered"]
        parts += [f"{self.lost} lost to another worker"] if self.lost else []
        parts += [f"{self.released} released"] if self.released else []
        return ", ".join(parts)


def error_text(exc: BaseException) -> str:
    """The error recorded in a dead letter's headers."""
    return f"{type(exc).__name__}: {exc}"[:MAX_ERROR_TEXT]


class Processor:
    """Settles batches of one queue, on the calling thread's database connection."""

    def __init__(
        self,
        settings: QueueSettings,
        manager: QueueManager,
        holdings: Holdings,
        stopping: threading.Event,
    ) -> None:
        self.settings = settings
        self.queue = settings.queue
        self.manager = manager
        self.holdings = holdings
        self.stopping = stopping

    def run(self, messages: list[Message]) -> Outcome:
        """Handle ``messages``; once stopping, hand back the ones not started yet."""
        outcome = Outcome()
        pending = list(messages)
        try:
            if self.settings.consumer.batch_handler:
                with self._transaction():
                    self._handle_batch(pending, outcome)
                pending = []
            while pending and not self.stopping.is_set():
                with self._transaction():
                    opened = monotonic()
                    while pending and not self.stopping.is_set():
                        self._handle_one(pending.pop(0), outcome)
                        if monotonic() - opened >= COMMIT_EVERY:
                            break
            if pending:
                ids = [m.msg_id for m in pending]
                outcome.released = len(self.manager.set_vt_seconds(self.queue, ids, 0, unread=True))
        finally:
            self.holdings.drop(self.queue, [m.msg_id for m in messages])
        return outcome

    # -- one message ----------------------------------------------------------

    def _handle_one(self, message: Message, outcome: Outcome) -> None:
        self.holdings.start(self.queue, [message.msg_id])
        try:
            with self._savepoint():
                self.settings.consumer.handler(self._decode(message))
                self._acknowledge([message.msg_id])
        except AckLost as exc:
            outcome.lost += 1
            log.warning("%s: %s; its handler's writes were rolled back", self.queue, exc)
        except Exception as exc:
            self._fail([message], exc, outcome)
        else:
            outcome.done += 1
        finally:
            self.holdings.drop(self.queue, [message.msg_id])

    # -- a batch handler ------------------------------------------------------

    def _handle_batch(self, messages: list[Message], outcome: Outcome) -> None:
        self.holdings.start(self.queue, [m.msg_id for m in messages])
        decoded: list[Message] = []
        for message in messages:
            try:
                decoded.append(self._decode(message))
            except PoisonMessage as exc:
                self._fail([message], exc, outcome)
        if not decoded:
            return
        ids = [m.msg_id for m in decoded]
        try:
            with self._savepoint():
                self.settings.consumer.handler(decoded)
                self._acknowledge(ids)
        except AckLost as exc:
            outcome.lost += len(exc.msg_ids)
            present = [m for m in decoded if m.msg_id not in exc.msg_ids]
            self._fail(present, exc, outcome)
        except Exception as exc:
            self._fail(decoded, exc, outcome)
        else:
            outcome.done += len(decoded)

    # -- helpers --------------------------------------------------------------

    def _transaction(self) -> contextlib.AbstractContextManager:
        """The transaction quick messages share (none for non-atomic handlers)."""
        if self.settings.consumer.atomic:
            return transaction.atomic(using=self.manager.using)
        return contextlib.nullcontext()

    _savepoint = _transaction  # nested in the shared transaction, atomic() is a savepoint

    def _decode(self, message: Message) -> Message:
        decode = self.settings.consumer.decode
        if decode is None:
            return message
        try:
            return dataclasses.replace(message, message=decode(message.message))
        except Exception as exc:
            raise PoisonMessage(f"cannot decode the payload: {error_text(exc)}") from exc

    def _acknowledge(self, msg_ids: list[int]) -> None:
        if self.settings.on_success == "delete":
            done = self.manager.delete(self.queue, msg_ids)
        else:
            done = self.manager.archive(self.queue, msg_ids)
        missing = sorted(set(msg_ids) - set(done))
        if missing:
            raise AckLost(missing)

    def _fail(self, messages: list[Message], exc: Exception, outcome: Outcome) -> None:
        """Retry each message after a backoff, or dead-letter it (poison, or out of reads)."""
        if not messages:
            return
        self.holdings.drop(self.queue, [m.msg_id for m in messages])  # no vt extension now
        settings = self.settings
        notes = []
        for message in messages:
            if isinstance(exc, PoisonMessage) or retry.exhausted(
                message.read_ct, settings.max_reads
            ):
                new_id = self.manager.dead_letter(
                    self.queue, message.msg_id, settings.dead_letter, error_text(exc)
                )
                outcome.dead += new_id is not None
                notes.append(f"{message.msg_id} dead-lettered to {settings.dead_letter}")
            else:
                delay = retry.backoff(message.read_ct, settings.retry_delay)
                self.manager.set_vt_seconds(self.queue, [message.msg_id], delay)
                outcome.retried += 1
                notes.append(f"{message.msg_id} retried in {delay:.2f}s (read {message.read_ct})")
        log.warning("%s: handler failed: %s: %s", self.queue, "; ".join(notes), exc, exc_info=exc)
