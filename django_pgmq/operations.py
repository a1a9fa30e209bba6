"""Migration operations that declare queues in a project's own migrations.

    from django_pgmq.operations import CreateQueue
    operations = [CreateQueue("orders")]

Both are reversible: reversing ``CreateQueue`` drops the queue (and its
messages); reversing ``DropQueue`` creates an empty queue again. They run only
on databases where the router lets the ``django_pgmq`` app migrate (where the
pgmq schema is), whichever app's migration holds them; ``hints`` go to the router.
With ``PGMQ["QUEUE_DATABASES"]``, a database that holds queues creates only the
queues routed to it (``migrate --database billing`` creates the ``billing.*`` ones).
"""

from __future__ import annotations

from typing import Any

from django.db import router
from django.db.migrations.operations.base import Operation

from . import routing
from .manager import QueueManager
from .names import validate_queue_name


class CreateQueue(Operation):
    """Create a queue when the migration runs forwards."""

    reversible = True
    reduces_to_sql = False

    def __init__(
        self, queue_name: str, unlogged: bool = False, hints: dict[str, Any] | None = None
    ) -> None:
        self.queue_name = validate_queue_name(queue_name)
        self.unlogged = unlogged
        self.hints = hints or {}

    def deconstruct(self) -> tuple[str, list[Any], dict[str, Any]]:
        kwargs: dict[str, Any] = {"unlogged": True} if self.unlogged else {}
        if self.hints:
            kwargs["hints"] = self.hints
        return (self.__class__.__qualname__, [self.queue_name], kwargs)

    def state_forwards(self, app_label: str, state: Any) -> None:
        pass  # queues are not model state

    def _manager(self, schema_editor: Any) -> QueueManager | None:
        """The queue manager of the migrated database, or None if pgmq does not live there,
        or if the queue is routed to another database that holds queues."""
        alias = schema_editor.connection.alias
        if not router.allow_migrate(alias, "django_pgmq", **self.hints):
            return None
        if routing.routed_elsewhere(self.queue_name, alias):
            return None
        return QueueManager(alias)

    def database_forwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        if manager := self._manager(schema_editor):
            manager.create_queue(self.queue_name, unlogged=self.unlogged)

    def database_backwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        if manager := self._manager(schema_editor):
            manager.drop_queue(self.queue_name)

    def describe(self) -> str:
        return f"Create pgmq queue {self.queue_name}"

    @property
    def migration_name_fragment(self) -> str:
        return f"create_queue_{self.queue_name.lower()}"


class DropQueue(CreateQueue):
    """Drop a queue (and its archive) when the migration runs forwards."""

    def database_forwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        super().database_backwards(app_label, schema_editor, from_state, to_state)

    def database_backwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        super().database_forwards(app_label, schema_editor, from_state, to_state)

    def describe(self) -> str:
        return f"Drop pgmq queue {self.queue_name}"

    @property
    def migration_name_fragment(self) -> str:
        return f"drop_queue_{self.queue_name.lower()}"
