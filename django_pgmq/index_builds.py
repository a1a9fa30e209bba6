"""Build the per-queue indexes the SQL wants, CONCURRENTLY, outside any caller's transaction.

Priorities, task queues and FIFO groups want an index on the queue's table; a plain
CREATE INDEX in the caller's transaction would hold every send to that queue until
it commits. So the SQL builds it at once only where that blocks no writer (a small
table, a call that is its own transaction, a short lock_timeout), else records the wish
(sql/22_index_builds.sql), and this module runs ``CREATE INDEX CONCURRENTLY IF NOT
EXISTS`` on a connection of its own, in autocommit: before the manager's method (or a
management command) returns when it runs outside a transaction, else right after the
commit that wanted one (in a background thread), from every worker now and then, and
from ``manage.py pgmq_maintain``. An index left invalid
by a failed build is dropped (concurrently) and built again. One session builds a
given index at a time (an advisory lock); the others skip it. A role builds only the
indexes of tables it owns: an application role's wishes on the owner's queues wait for
the owner's ``pgmq_maintain`` (or a worker running as the owner).

A build never meets the DDL on its queue's table (drop_queue, purge_queue,
convert_archive_partitioned, the notify trigger): both take the queue's table lock
(``pgmq._queue_table_lock_key``, an advisory lock), the DDL for its transaction, a build
at session level around its CREATE INDEX CONCURRENTLY. A build waits for every
transaction older than it, so a DDL waiting for the build would deadlock with it: the
build gives way instead. While it runs, a second connection looks every
`GIVE_WAY_POLL` seconds for a session waiting for that lock and cancels the build (a
libpq cancel request, no privilege needed); the build then releases the lock, waits
for the DDL's transaction to end and, unless the queue is gone, starts again (at most
`GIVE_WAY_RETRIES` times; after that the index stays wanted for the next run).

The background builds (after a commit, and the workers') also wait at most
`BACKGROUND_LOCK_TIMEOUT` for any lock (a build waits for every older transaction, a
consumer's too), then give way and try again later (`BACKGROUND_TRIES`);
``pgmq_maintain`` waits at most `MAINTAIN_LOCK_TIMEOUT` and leaves the rest to its next run.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import sql

from . import conf, sqlrun
from .errors import first_line
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
WHERE pg_catalog.pg_has_role(
    (SELECT c.relowner FROM pg_catalog.pg_class c
     WHERE c.oid = pg_catalog.to_regclass(pg_catalog.format(
         'pgmq.%I', pgmq.format_table_name(p.queue_name::text, 'q'::text)))),
    'USAGE'::text)
"""
# One session builds a given index at a time (the bigint key space).
_LOCK = "SELECT pg_catalog.pg_try_advisory_lock(pg_catalog.hashtext('pgmq.index_build.' || %s))"
_UNLOCK = "SELECT pg_catalog.pg_advisory_unlock(pg_catalog.hashtext('pgmq.index_build.' || %s))"
# Whether the index is valid (no row: missing).
_INDEX_STATE = """
SELECT i.indisvalid FROM pg_catalog.pg_index i
WHERE i.indexrelid = pg_catalog.to_regclass(pg_catalog.format('pgmq.%%I', %s::text))
"""
# The queue's table lock, held at session level around a build: the key of
# pgmq._queue_table_lock_key (sql/00_schema.sql), computed here too so that a build
# runs on a database not migrated yet (where no DDL takes the lock).
TABLE_LOCK_CLASS = 1885826417  # the bytes 'pgmq'
_TABLE_KEY = "SELECT %s::integer, pg_catalog.hashtext(pg_catalog.lower(%s::text))"
_TABLE_TRY_LOCK = "SELECT pg_catalog.pg_try_advisory_lock(%s, %s)"
_TABLE_UNLOCK = "SELECT pg_catalog.pg_advisory_unlock(%s, %s)"
_TABLE_EXISTS = """
SELECT pg_catalog.to_regclass(
           pg_catalog.format('pgmq.%%I', pgmq.format_table_name(%s::text, 'q'::text))) IS NOT NULL
       AND EXISTS (SELECT 1 FROM pgmq.meta m
                   WHERE pg_catalog.lower(m.queue_name::text) = pg_catalog.lower(%s::text))
"""
# A session waiting for the table lock (a drop, a purge): the build must give way.
_DDL_WAITING = """
SELECT EXISTS (SELECT 1 FROM pg_locks l
               WHERE l.locktype = 'advisory' AND NOT l.granted AND l.objsubid = 2
                 AND l.classid = %s::integer::oid AND l.objid = %s::integer::oid
                 AND l.database = (SELECT d.oid FROM pg_database d
                                   WHERE d.datname = pg_catalog.current_database()))
"""

# A background build gives way after this long waiting for a lock, then tries again
# after 1, 4, 16 ... seconds, this many times in all.
BACKGROUND_LOCK_TIMEOUT = "500ms"
BACKGROUND_TRIES = 4
# A build a method or command runs before it returns waits this long for a lock, then
# leaves the index to a background build.
FOREGROUND_LOCK_TIMEOUT = "2s"
# pgmq_maintain's builds wait this long for a lock (an older transaction, a DDL), then
# leave the index to the next run.
MAINTAIN_LOCK_TIMEOUT = "10s"
# How often a running build looks for a DDL waiting for it (seconds; well below
# PostgreSQL's deadlock_timeout, 1 s by default), how long a build taking the table lock
# waits between tries, and how often it starts again after giving way.
GIVE_WAY_POLL = 0.05
GIVE_WAY_RETRIES = 5

_background: threading.Thread | None = None
_background_lock = threading.Lock()


def build_pending(
    using: str, lock_timeout: str | None = None, queue: str | None = None
) -> list[str]:
    """Build every wanted index now (of ``queue`` only, if given), one after the other;
    the names of those built.

    Blocks until each build is done (a build waits for transactions older than it),
    or, with ``lock_timeout``, skips a build that waited that long for a lock.
    """
    with _connect(using) as conn:
        if lock_timeout is None:
            return build_on(conn, queue=queue)
        conn.execute(sql.SQL("SET lock_timeout = {}").format(sql.Literal(lock_timeout)))
        wait = conn.execute("SELECT extract(epoch FROM current_setting('lock_timeout')::interval)")
        return build_on(conn, lock_wait=float(wait.fetchone()[0]), queue=queue)  # type: ignore[index]


def build_now_or_in_background(using: str, queue: str | None = None) -> list[str]:
    """Build ``queue``'s wanted indexes (None: every one) before returning, waiting at most
    `FOREGROUND_LOCK_TIMEOUT` for a lock; what is still wanted then is left to a
    background thread. The names of those built now."""
    built = build_pending(using, lock_timeout=FOREGROUND_LOCK_TIMEOUT, queue=queue)
    if _still_wanted(using):
        build_in_background(using)
    return built


def build_pending_dsn(dsn: str) -> list[str]:
    """`build_pending` on the database a libpq connection string names (no Django alias)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        return build_on(conn)


def build_on(
    conn: psycopg.Connection, lock_wait: float | None = None, queue: str | None = None
) -> list[str]:
    """Build the wanted indexes on ``conn`` (in autocommit); the names of those built.

    ``lock_wait``: how long to wait for a queue's table lock held by a DDL or by another
    build (seconds; None: as long as it takes); the index is left for the next run then.
    ``queue``: only that queue's indexes.
    """
    built: list[str] = []
    only = None if queue is None else queue.lower()
    for wanted in sqlrun.by_name(conn.execute(_PENDING)):
        name, index, kind = wanted["queue_name"], wanted["index_name"], wanted["kind"]
        if only is not None and name.lower() != only:
            continue
        # Another session building it: a background build leaves it to that one,
        # pgmq_maintain (no lock_wait) waits for it to end, then looks again.
        if not _poll(conn, _LOCK, [index], None if lock_wait is None else 0):
            continue
        try:
            state = conn.execute(_INDEX_STATE, [index]).fetchone()
            if state and state[0]:
                continue  # built meanwhile, by the session it waited for
            if _build_one(conn, name, index, kind, state is not None, lock_wait):
                built.append(index)
        finally:
            conn.execute(_UNLOCK, [index])
    conn.execute(_PENDING).fetchall()  # clears the rows of the indexes just built
    return built


def _build_one(
    conn: psycopg.Connection,
    queue: str,
    index: str,
    kind: str,
    invalid: bool,
    lock_wait: float | None,
) -> bool:
    """Build one index under its queue's table lock; whether it was built.

    Skipped when the queue is gone (dropped while the build waited); started again after
    giving way to a DDL (a drop, a purge) that waited for the lock.
    """
    key = conn.execute(_TABLE_KEY, [TABLE_LOCK_CLASS, queue]).fetchone()
    assert key is not None
    for _ in range(GIVE_WAY_RETRIES):
        if not _take_table_lock(conn, key, lock_wait):
            logger.info("building pgmq.%s waits for a change to its queue; tried later", index)
            return False
        try:
            exists = conn.execute(_TABLE_EXISTS, [queue, queue]).fetchone()
            if not (exists and exists[0]):
                return False  # the queue was dropped: nothing to build
            with _giving_way(conn, key) as gave_way:
                try:
                    _create_index(conn, queue, index, kind, invalid)
                    return True
                except psycopg.errors.QueryCanceled:
                    if not gave_way():
                        raise
                    logger.info("building pgmq.%s gave way to a change to its queue", index)
                    invalid = True  # it may have left an invalid index behind
                except psycopg.errors.LockNotAvailable:
                    # gave way (lock_timeout): left invalid or not made; the next run builds it
                    logger.info("building pgmq.%s gave way to a lock holder; tried later", index)
                    return False
        finally:
            _release_table_lock(conn, key)
    return False


def _create_index(
    conn: psycopg.Connection, queue: str, index: str, kind: str, invalid: bool
) -> None:
    table = table_name(queue)
    leaves = conn.execute(_LEAVES, [index, table]).fetchall()
    if leaves:  # a partitioned queue: CONCURRENTLY cannot build on its parent
        _create_partitioned_index(conn, table, index, kind, leaves)
        return
    if invalid:  # left by a failed build: drop it, then build again
        conn.execute(
            sql.SQL("DROP INDEX CONCURRENTLY IF EXISTS {}").format(sql.Identifier("pgmq", index))
        )
    conn.execute(
        sql.SQL("CREATE INDEX CONCURRENTLY IF NOT EXISTS {} ON {} ({})").format(
            sql.Identifier(index),
            sql.Identifier("pgmq", table_name(queue)),
            EXPRESSIONS[kind],
        )
    )


def _take_table_lock(conn: psycopg.Connection, key: Any, wait: float | None) -> bool:
    """Take the queue's table lock at session level, trying every `GIVE_WAY_POLL` s.

    Tries rather than queues for it: a build waiting in the lock's queue would look
    like a DDL to the build holding it, which would give way to it.
    """
    return _poll(conn, _TABLE_TRY_LOCK, key, wait)


def _poll(conn: psycopg.Connection, try_lock: str, args: Any, wait: float | None) -> bool:
    """Run ``try_lock`` every `GIVE_WAY_POLL` s until it is true or ``wait`` s passed."""
    deadline = None if wait is None else time.monotonic() + wait
    while True:
        row = conn.execute(try_lock, args).fetchone()
        if row and row[0]:
            return True
        if deadline is not None and time.monotonic() >= deadline:
            return False
        time.sleep(GIVE_WAY_POLL)


def _release_table_lock(conn: psycopg.Connection, key: Any) -> None:
    try:
        conn.execute(_TABLE_UNLOCK, key)
    except psycopg.errors.QueryCanceled:  # a late cancel request: once more
        conn.execute(_TABLE_UNLOCK, key)


@contextmanager
def _giving_way(conn: psycopg.Connection, key: Any) -> Iterator[Any]:
    """While the block runs, cancel ``conn``'s statement once a session waits for the
    queue's table lock; yields a callable telling whether it did."""
    done = threading.Event()
    cancelled = threading.Event()
    guard = threading.Lock()  # no cancel request once the block is over
    params: dict[str, Any] = {"autocommit": True, "application_name": "django-pgmq index build"}
    if conn.info.password:
        params["password"] = conn.info.password

    def watch() -> None:
        try:
            with psycopg.connect(conn.info.dsn, **params) as look:
                while not done.wait(GIVE_WAY_POLL):
                    row = look.execute(_DDL_WAITING, key).fetchone()
                    if row and row[0]:
                        with guard:
                            if not done.is_set():
                                cancelled.set()
                                conn.cancel_safe()
                        return
        except psycopg.Error:
            logger.exception("watching an index build for a waiting drop failed")

    watcher = threading.Thread(target=watch, name="pgmq-index-build-watch", daemon=True)
    watcher.start()
    try:
        yield cancelled.is_set
    finally:
        with guard:
            done.set()
        watcher.join()


def _build_logged(using: str) -> None:
    for attempt in range(BACKGROUND_TRIES):
        try:
            for index in build_pending(using, lock_timeout=BACKGROUND_LOCK_TIMEOUT):
                logger.info("built index pgmq.%s", index)
            if not _still_wanted(using):
                return
        except psycopg.OperationalError as exc:
            # The server went away or refused us (a restart, a failover): a line, not a
            # traceback; the worker's next sampling run builds them.
            logger.warning(
                "building the wanted queue indexes stopped: the database is unavailable (%s);"
                " the next run retries",
                first_line(exc),
            )
            return
        except Exception:
            logger.exception("building the wanted queue indexes failed; the next run retries")
            return
        time.sleep(4**attempt)


def _still_wanted(using: str) -> bool:
    """Whether an index this role may build is still wanted (a build gave way)."""
    return bool(still_wanted(using))


def still_wanted(using: str) -> list[str]:
    """The names of the indexes this role may build that are still wanted."""
    with _connect(using) as conn:
        return [row["index_name"] for row in sqlrun.by_name(conn.execute(_PENDING))]


def _connect(using: str) -> psycopg.Connection:
    """An autocommit connection of its own to ``using``'s database, named for the builds."""
    name = "django-pgmq index build"  # whatever the alias's own application_name is
    params = {**conf.connection_params(using, name), "application_name": name}
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


# A partitioned queue table's leaf partitions (none for a plain table), each with the
# index of that leaf already attached to the parent's index `index`, if any.
_LEAVES = """
SELECT c.relname::text AS leaf,
       (SELECT i.indexrelid FROM pg_catalog.pg_index i
        JOIN pg_catalog.pg_inherits h ON h.inhrelid = i.indexrelid
        WHERE i.indrelid = c.oid
          AND h.inhparent = pg_catalog.to_regclass(pg_catalog.format('pgmq.%%I', %s::text)))
           IS NOT NULL AS attached
FROM pg_catalog.pg_partition_tree(
         pg_catalog.to_regclass(pg_catalog.format('pgmq.%%I', %s::text))) t
JOIN pg_catalog.pg_class c ON c.oid = t.relid
WHERE t.isleaf AND t.level > 0
ORDER BY 1
"""


def _leaf_index_name(leaf: str, table: str, index: str) -> str:
    """The name of a leaf partition's part of ``index``: the leaf's name and the index's
    suffix, shortened with a hash of the leaf's name where that passes 63 bytes."""
    suffix = index[len(table) :]
    name = leaf + suffix
    if len(name.encode()) <= 63:
        return name
    digest = hashlib.md5(leaf.encode()).hexdigest()[:8]
    return f"{leaf[: 63 - len(suffix) - 9]}_{digest}{suffix}"


def _create_partitioned_index(
    conn: psycopg.Connection, table: str, index: str, kind: str, leaves: list[Any]
) -> None:
    """A partitioned table's index without holding its writers: the parent's index ON ONLY
    the parent (invalid until complete), each leaf's built CONCURRENTLY and attached; the
    parent's becomes valid once every leaf's is attached. A leaf made later by partition
    maintenance gets its part when it is attached (PostgreSQL builds it then)."""
    conn.execute(
        sql.SQL("CREATE INDEX IF NOT EXISTS {} ON ONLY {} ({})").format(
            sql.Identifier(index), sql.Identifier("pgmq", table), EXPRESSIONS[kind]
        )
    )
    for leaf, attached in leaves:
        if attached:
            continue
        part = _leaf_index_name(leaf, table, index)
        state = conn.execute(_INDEX_STATE, [part]).fetchone()
        if state is not None and not state[0]:  # left invalid by a failed build
            conn.execute(
                sql.SQL("DROP INDEX CONCURRENTLY IF EXISTS {}").format(sql.Identifier("pgmq", part))
            )
        conn.execute(
            sql.SQL("CREATE INDEX CONCURRENTLY IF NOT EXISTS {} ON {} ({})").format(
                sql.Identifier(part), sql.Identifier("pgmq", leaf), EXPRESSIONS[kind]
            )
        )
        conn.execute(
            sql.SQL("ALTER INDEX {} ATTACH PARTITION {}").format(
                sql.Identifier("pgmq", index), sql.Identifier("pgmq", part)
            )
        )
