"""A savepoint made only when the handler inside it touches the database.

Each atomic handler runs in a savepoint so its failure undoes only its own
writes. With Django's ``atomic()`` that costs two round trips per message
(``SAVEPOINT`` and ``RELEASE``) even when the handler sends no query. Here the
``SAVEPOINT`` is sent just before the handler's first query (through a Django
execute wrapper); a handler that sends none costs nothing, and its failure has
nothing to undo on the server. The ``transaction.on_commit`` callbacks a failed
handler registered are dropped, as ``atomic()`` would.
"""

from __future__ import annotations

from types import TracebackType
from typing import Any

from django.db import connections, transaction

# Django 6.1 renamed savepoint() to savepoint_create() and deprecated the old name.
_savepoint_create = getattr(transaction, "savepoint_create", transaction.savepoint)


class LazySavepoint:
    """Context manager: a savepoint around one handler call, created on its first query.

    ``connection`` is the Django connection of the handler's thread (a
    ``DatabaseWrapper``, or the alias to look it up by).
    """

    def __init__(self, connection: Any) -> None:
        if isinstance(connection, str):
            connection = connections[connection]
        self.connection = connection
        self.using = connection.alias
        self.sid: str | None = None
        self._creating = False
        self._mark = 0

    def __enter__(self) -> LazySavepoint:
        connection = self.connection
        self._mark = len(connection.run_on_commit)
        # What connection.execute_wrapper() does, without its generator-based context manager.
        connection.execute_wrappers.append(self._before_query)
        return self

    def _before_query(self, execute: Any, sql: Any, params: Any, many: bool, context: Any) -> Any:
        """Create the savepoint before the first query the handler sends."""
        if self.sid is None and not self._creating:
            self._creating = True
            self.sid = _savepoint_create(using=self.using)  # its query passes through here
        return execute(sql, params, many, context)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        connection = self.connection
        connection.execute_wrappers.pop()
        if exc_type is None and not connection.needs_rollback:
            if self.sid is None:
                return
            try:
                transaction.savepoint_commit(self.sid, using=self.using)
                return
            except BaseException:
                self._undo(connection)  # e.g. the handler swallowed a failed query
                raise
        self._undo(connection)

    def _undo(self, connection: Any) -> None:
        """Roll the handler's writes back and forget its on-commit callbacks."""
        connection.needs_rollback = False  # before the rollback, which is a query too
        del connection.run_on_commit[self._mark :]
        if self.sid is not None:
            try:
                transaction.savepoint_rollback(self.sid, using=self.using)
            except BaseException:
                connection.needs_rollback = True  # the chunk's transaction is lost
                raise
