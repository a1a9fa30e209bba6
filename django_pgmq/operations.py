"""Migration operations that declare queues in a project's own migrations.

    from django_pgmq.operations import CreateQueue
    operations = [CreateQueue("orders")]

Both are reversible: reversing ``CreateQueue`` drops the queue (and its
messages); reversing ``DropQueue`` creates an empty queue again.
"""

from __future__ import annotations

from typing import Any

from django.db.migrations.operations.base import Operation

from .manager import QueueManager
from .names import validate_queue_name


class CreateQueue(Operation):
    """Create a queue when the migration runs forwards."""

    reversible = True
    reduces_to_sql = False

    def __init__(self, queue_name: str, unlogged: bool = False) -> None:
        self.queue_name = validate_queue_name(queue_name)
        self.unlogged = unlogged

    def deconstruct(self) -> tuple[str, list[Any], dict[str, Any]]:
        kwargs = {"unlogged": True} if self.unlogged else {}
        return (self.__class__.__qualname__, [self.queue_name], kwargs)

    def state_forwards(self, app_label: str, state: Any) -> None:
        pass  # queues are not model state

    def database_forwards(self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any) -> None:
        QueueManager(schema_editor.connection.alias).create_queue(
            self.queue_name, unlogged=self.unlogged
        )

    def database_backwards(self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any) -> None:
        QueueManager(schema_editor.connection.alias).drop_queue(self.queue_name)

    def describe(self) -> str:
        return f"Create pgmq queue {self.queue_name}"

    @property
    def migration_name_fragment(self) -> str:
        return f"create_queue_{self.queue_name.lower()}"


class DropQueue(CreateQueue):
    """Drop a queue (and its archive) when the migration runs forwards."""

    def database_forwards(self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any) -> None:
        super().database_backwards(app_label, schema_editor, from_state, to_state)

    def database_backwards(self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any) -> None:
        super().database_forwards(app_label, schema_editor, from_state, to_state)

    def describe(self) -> str:
        return f"Drop pgmq queue {self.queue_name}"

    @property
    def migration_name_fragment(self) -> str:
        return f"drop_queue_{self.queue_name.lower()}"
