"""This worker's row in the `Worker` table, for the admin: who runs, where, since when.

A clean stop removes the row; a killed worker stops heartbeating, its row
expires within two heartbeats (the admin then shows it *stale*) and the next
heartbeat of any worker deletes it. A worker whose row went meanwhile (its
heartbeats failed, e.g. while PostgreSQL restarted) registers again.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from django.db.models import DateTimeField, ExpressionWrapper
from django.db.models.functions import Now

STALE_AFTER_BEATS = 2  # a killed worker's row looks stale (then goes) within two beats


class Presence:
    """Registers, refreshes and removes one worker's row."""

    def __init__(self, using: str, queues: Sequence[str], concurrency: int, interval: float):
        self.using = using
        self.queues = list(queues)
        self.concurrency = concurrency
        self.stale_after = timedelta(seconds=STALE_AFTER_BEATS * interval)
        self.pk: int | None = None

    def _expires(self) -> ExpressionWrapper:
        return ExpressionWrapper(Now() + self.stale_after, output_field=DateTimeField())

    def _objects(self) -> Any:
        from ..models import Worker

        return Worker.objects.using(self.using)

    def register(self, processed: int = 0, failed: int = 0) -> None:
        """Create the row (and clear out expired ones)."""
        self.prune()
        row = self._objects().create(
            host=socket.gethostname(),
            pid=os.getpid(),
            queues=self.queues,
            concurrency=self.concurrency,
            expires_at=self._expires(),
            processed=processed,
            failed=failed,
        )
        self.pk = row.pk

    def beat(self, processed: int, failed: int) -> None:
        """Refresh the row with the counts so far; re-create it if it was aged out meanwhile."""
        updated = (
            self._objects()
            .filter(pk=self.pk)
            .update(
                heartbeat_at=Now(),
                expires_at=self._expires(),
                processed=processed,
                failed=failed,
            )
        )
        if not updated:
            self.register(processed, failed)
        self.prune()

    def unregister(self) -> None:
        """Remove the row (clean stop)."""
        if self.pk is not None:
            self._objects().filter(pk=self.pk).delete()
            self.pk = None

    def prune(self) -> int:
        """Delete the rows of workers that stopped heartbeating; how many."""
        return self._objects().expired().delete()[0]
