"""QueueManager methods: per-queue indexes, built at once by the SQL where that blocks no
writer, else CONCURRENTLY before the method returns (outside a transaction) or after the
commit that wants them.

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
        """Give ``queue`` its FIFO-group index: built when this returns outside a
        transaction (unless a transaction holding the queue keeps it waiting, then in the
        background), else once the transaction commits."""
        validate_queue_name(queue)
        if transaction.get_connection(self.alias_for(queue)).in_atomic_block:
            self._fetch("defer_index_builds", {}, queue)
        self._fetch("create_fifo_index", {"queue": queue}, queue)
        self.build_indexes_after_commit(queue, now=True)

    def build_pending_indexes(self, lock_timeout: str | None = None) -> list[str]:
        """Build every wanted index now (``CREATE INDEX CONCURRENTLY``, autocommit, a
        connection of its own); the names of those built. Blocks until they are, or with
        ``lock_timeout`` (e.g. ``"10s"``) leaves an index whose build waited that long for
        a lock (an older transaction still open) wanted."""
        return index_builds.build_pending(self.using, lock_timeout=lock_timeout)

    def build_indexes_after_commit(self, queue: str | None = None, *, now: bool = False) -> None:
        """Build the indexes ``queue`` (None: any queue) wants and the SQL deferred.

        Without ``now``: once the current transaction commits (at once in autocommit), in a
        background thread; the caller never waits for a build. With ``now``: before this
        returns, or inside a transaction once it commits (at the end of the outermost
        ``atomic`` block, never in it): ``CREATE INDEX CONCURRENTLY`` on a connection of
        its own, waiting at most `index_builds.FOREGROUND_LOCK_TIMEOUT` for a lock (such a
        build waits for every older transaction, an idle consumer's too); what is left
        then is built in a background thread.
        """
        alias = self.alias_for(queue)
        if not now:
            transaction.on_commit(lambda: index_builds.build_in_background(alias), alias)
        elif transaction.get_connection(alias).in_atomic_block:
            transaction.on_commit(
                lambda: index_builds.build_now_or_in_background(alias, queue), alias, robust=True
            )
        else:
            index_builds.build_now_or_in_background(alias, queue)
