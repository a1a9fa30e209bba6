"""Build the per-queue indexes the SQL wants, CONCURRENTLY, outside any caller's transaction.

Priorities, task queues and FIFO groups want an index on the queue's table; a plain
CREATE INDEX in the caller's transaction would hold every send to that queue until
it commits. So the SQL only records the wish (sql/22_index_builds.sql) and this module
runs ``CREATE INDEX CONCURRENTLY IF NOT EXISTS`` on a connection of its own, in
autocommit: right after the commit that wanted one (in a background thread), from
every worker now and then, and from ``manage.py pgmq_maintain``. An index left invalid
by a failed build is dropped (concurrently) and built again. One session builds a
given index at a time (an advisory lock); the others skip it. A role builds only the
indexes of tables it owns: an application role's wishes on the owner's queues wait for
the owner's ``pgmq_maintain`` (or a worker running as the owner).

The background builds (after a commit, and the workers') wait at most
`BACKGROUND_LOCK_TIMEOUT` for a lock: a build waits for every transaction older than
it, and one of those that then takes a lock the build holds (``purge_queue``, a drop)
would otherwise deadlock with it, and PostgreSQL might abort the caller's transaction
rather than the build. The background build gives way instead and tries again later
(`BACKGROUND_TRIES`); ``pgmq_maintain`` waits as long as it takes.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import psycopg
from psycopg import sql

from .names import table_name

logger = logging.getLogger(__name__)

# The indexed expressions per kind (the same as pgmq.pending_indexes() writes).
EXPRESSIONS = {
    "priority": sql.SQL("pgmq._task_priority(headers) DESC, msg_id"),
    "fifo": sql.SQL("pgmq._fifo_group(headers), msg_id"),
}
# Only indexes this role may build: on tables it owns (or whose owner it is a member of).
_PENDING = """
SELECT p.queue_name, p.index_name, p.kind, p.invalid FROM pgmq.pending_indexes() p
WHERE pg_has_role((SELECT c.relowner FROM pg_class c
                   WHERE c.oid = format('pgmq.%I', pgmq.format_table_name(p.queue_name, 'q'))
                                 ::regclass), 'USAGE')
"""
_LOCK = "SELECT pg_try_advisory_lock(hashtext('pgmq.index_build.' || %s))"
_UNLOCK = "SELECT pg_advisory_unlock(hashtext('pgmq.index_build.' || %s))"

# A background build gives way after this long waiting for a lock, then tries again
# after 1, 4, 16 ... seconds, this many times in all.
BACKGROUND_LOCK_TIMEOUT = "500ms"
BACKGROUND_TRIES = 4

_background: threading.Thread | None = None
_background_lock = threading.Lock()


def build_pending(using: str, lock_timeout: str | None = None) -> list[str]:
    """Build every wanted index now, one after the other; the names of those built.

    Blocks until each build is done (a build waits for transactions older than it),
    or, with ``lock_timeout``, skips a build that waited that long for a lock.
    """
    with _connect(using) as conn:
        if lock_timeout is not None:
            conn.execute(sql.SQL("SET lock_timeout = {}").format(sql.Literal(lock_timeout)))
        return build_on(conn)


def build_pending_dsn(dsn: str) -> list[str]:
    """`build_pending` on the database a libpq connection string names (no Django alias)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        return build_on(conn)


def build_on(conn: psycopg.Connection) -> list[str]:
    """Build the wanted indexes on ``conn`` (in autocommit); the names of those built."""
    built: list[str] = []
    for queue, index, kind, invalid in conn.execute(_PENDING).fetchall():
        locked = conn.execute(_LOCK, [index]).fetchone()
        if not (locked and locked[0]):
            continue  # another session is building it
        try:
            if invalid:  # left by a failed build: drop it, then build again
                conn.execute(
                    sql.SQL("DROP INDEX CONCURRENTLY IF EXISTS {}").format(
                        sql.Identifier("pgmq", index)
                    )
                )
            conn.execute(
                sql.SQL("CREATE INDEX CONCURRENTLY IF NOT EXISTS {} ON {} ({})").format(
                    sql.Identifier(index),
                    sql.Identifier("pgmq", table_name(queue)),
                    EXPRESSIONS[kind],
                )
            )
            built.append(index)
        except psycopg.errors.LockNotAvailable:
            # gave way (lock_timeout): left invalid or not made; the next run builds it
            logger.info("building pgmq.%s gave way to a lock holder; tried again later", index)
        finally:
            conn.execute(_UNLOCK, [index])
    conn.execute(_PENDING).fetchall()  # clears the rows of the indexes just built
    return built


def _build_logged(using: str) -> None:
    for attempt in range(BACKGROUND_TRIES):
        try:
            for index in build_pending(using, lock_timeout=BACKGROUND_LOCK_TIMEOUT):
                logger.info("built index pgmq.%s", index)
            if not _still_wanted(using):
                return
        except Exception:
            logger.exception("building the wanted queue indexes failed; the next run retries")
            return
        time.sleep(4**attempt)


def _still_wanted(using: str) -> bool:
    """Whether an index this role may build is still wanted (a build gave way)."""
    with _connect(using) as conn:
        return bool(conn.execute(_PENDING).fetchall())


def _connect(using: str) -> psycopg.Connection:
    """An autocommit connection of its own to ``using``'s database, named for the builds."""
    from .worker.listener import connection_params  # the worker package imports the manager

    params: dict[str, Any] = connection_params(using)
    params["application_name"] = "django-pgmq index build"
    return psycopg.connect(**params)


def build_in_background(using: str) -> threading.Thread:
    """Start `build_pending` in a daemon thread, unless one runs already; that thread."""
    global _background
    with _background_lock:
        if _background is None or not _background.is_alive():
            _background = threading.Thread(
                target=_build_logged, args=(using,), name="pgmq-index-build", daemon=True
            )
            _background.start()
        return _background


def wait_for_background(timeout: float | None = None) -> None:
    """Wait until this process's background build, if any, is over (tests, shutdown)."""
    thread = _background
    if thread is not None:
        thread.join(timeout)
