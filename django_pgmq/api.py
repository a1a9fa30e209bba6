"""The public API, declared once: every other list of it is derived from this module.

``django_pgmq.__all__``, the module-level functions (``django_pgmq.send`` ...), the async
twins on `QueueManager` and on the module (``asend`` ...), the members documented in
docs/reference/python.md and the tests' lists all come from the tuples below;
tests/unit/test_public_api.py fails when any of them drifts. Standard library only: the
package imports it without Django settings.
"""

from __future__ import annotations

# QueueManager methods that are also module-level functions on the queue's database.
MODULE_FUNCTIONS: tuple[str, ...] = (
    "create_queue",
    "drop_queue",
    "purge_queue",
    "list_queues",
    "send",
    "send_batch",
    "read",
    "read_with_poll",
    "pop",
    "archive",
    "delete",
    "set_vt",
    "metrics",
    "metrics_all",
    "get_queue_attributes",
    "set_queue_attributes",
    "create_schedule",
    "drop_schedule",
    "enable_schedule",
    "run_schedule_now",
    "list_schedules",
    "next_ticks",
    "enqueue_due_schedules",
    "create_workflow",
    "complete",
    "fail",
    "workflow_status",
    "cancel_workflow",
    "list_workflows",
)

# The other public QueueManager methods (on the manager only: they name an alias's queues).
MANAGER_METHODS: tuple[str, ...] = (
    "archive_count",
    "pause_queue",
    "resume_queue",
    "enforce_retention",
    "enforce_workflow_retention",
    "workflow_graph",
    "redrive",
    "dead_letter_sources",
    "queue_limits",
    "enable_notify",
    "disable_notify",
    "update_notify",
    "list_notify_throttles",
    "notify_throttles",
    "notify_channel",
    "read_grouped",
    "read_grouped_with_poll",
    "create_fifo_index",
    "build_pending_indexes",
    "bind_topic",
    "unbind_topic",
    "send_topic",
    "send_batch_topic",
    "list_topic_bindings",
    "test_routing",
    "create_partitioned_queue",
    "convert_archive_partitioned",
    "list_partitions",
    "partitioned_queues",
    "maintain_partitions",
    "get_schedule",
    "schedule_ticks",
    "grant_app_role",
    "revoke_app_role",
)

# Every public method; each has an async twin named with an ``a`` in front.
PUBLIC_METHODS: tuple[str, ...] = MODULE_FUNCTIONS + MANAGER_METHODS

# Public-named members of QueueManager that are no queue operation (no SQL of their own,
# so no async twin, and not documented as API): the routing answer and an on-commit hook.
HELPERS: tuple[str, ...] = (
    "GROUP_READERS",
    "alias_for",
    "each_database",
    "build_indexes_after_commit",
)

# The exceptions ``django_pgmq`` re-exports (from ``django_pgmq.errors``).
ERRORS: tuple[str, ...] = (
    "PgmqError",
    "CrossDatabaseTransaction",
    "FeatureNotAvailable",
    "InsufficientPrivilege",
    "InvalidArgument",
    "InvalidPayload",
    "InvalidQueueName",
    "QueueNameConflict",
    "QueueNotFound",
    "ScheduleNotFound",
    "WorkflowNotFound",
)

# Imported on first use (Spark executors and plain Celery apps skip Django's ORM).
LAZY: dict[str, str] = {"QueueManager": ".manager", "consumer": ".worker"}


def twin(name: str) -> str:
    """The async twin's name of the public method ``name``."""
    return f"a{name}"


def package_all(records: list[str]) -> list[str]:
    """``django_pgmq.__all__``: the errors, the public ``records``, the lazy names, the
    module-level functions and their async twins."""
    functions = [*MODULE_FUNCTIONS, *map(twin, MODULE_FUNCTIONS)]
    return sorted({*ERRORS, *records, *LAZY, *functions})
