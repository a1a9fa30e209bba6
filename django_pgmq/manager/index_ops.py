"""QueueManager methods: per-queue indexes, built CONCURRENTLY after the commit that wants them.

See ``django_pgmq/index_builds.py`` and sql/22_index_builds.sql.
"""

from __future__ import annotations

from django.db import transaction

from .. import index_builds
from ..names import validate_queue_name
from .plumbing import Base


class IndexOps(Base):
    """Want a queue's FIFO index; build the wanted indexes."""

    def create_fifo_index(self, queue: str) -> None:
        """Give ``queue`` its FIFO-group index, built concurrently once this commits."""
        validate_queue_name(queue)
        self._fetch("create_fifo_index", {"queue": queue}, queue)
        self.build_indexes_after_commit()

    def build_pending_indexes(self) -> list[str]:
        """Build every wanted index now (``CREATE INDEX CONCURRENTLY``, autocommit, a
        connection of its own); the names of those built. Blocks until they are."""
        return index_builds.build_pending(self.using)

    def build_indexes_after_commit(self) -> None:
        """Once the current transaction commits (now, in autocommit), build the wanted
        indexes in a background thread: the caller never waits for a build."""
        transaction.on_commit(lambda: index_builds.build_in_background(self.using), self.using)
