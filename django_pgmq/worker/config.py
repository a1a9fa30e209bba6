"""Each queue's effective consumer settings: command line, decorator, `QueueConfig`, defaults.

The first of those that sets a value wins; the result is written back to
`QueueConfig`, so the admin sees what the running workers use, and its max_reads and
dead-letter queue into the queue's attributes (``max_receive_count``,
``dead_letter_queue``): a read past them moves the message in SQL, whoever reads it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidArgument, QueueNotFound
from ..manager import QueueManager
from ..names import MAX_QUEUE_NAME_LENGTH
from .registry import Consumer, check_settings, find_consumer

DEFAULTS: dict[str, Any] = {
    "batch": 10,
    "vt": 30,
    "max_reads": 5,
    "on_success": "archive",
    "retry_delay": 1.0,
}
DEAD_LETTER_SUFFIX = "_dlq"
# QueueConfig field holding each setting (retry_delay is not stored).
_STORED = {
    "batch": "batch",
    "vt": "vt",
    "max_reads": "max_reads",
    "on_success": "on_success",
    "dead_letter": "dead_letter_queue",
}


@dataclass(frozen=True)
class QueueSettings:
    """How one queue is consumed: its handler and every setting, resolved."""

    queue: str
    consumer: Consumer
    batch: int
    vt: int
    max_reads: int
    dead_letter: str
    on_success: str
    retry_delay: float
    priority: bool = False  # read highest header priority first (Django task queues)

    def describe(self) -> str:
        """One line for the start-up log."""
        extra = "".join(
            [
                ", batch handler" if self.consumer.batch_handler else "",
                "" if self.consumer.atomic else ", not atomic",
                ", by priority" if self.priority else "",
            ]
        )
        return (
            f"{self.queue} (handler {self.consumer.path}, batch={self.batch}, vt={self.vt}s, "
            f"max_reads={self.max_reads or 'unlimited'}, dead_letter={self.dead_letter}, "
            f"on_success={self.on_success}, retry_delay={self.retry_delay:g}s{extra})"
        )


def default_dead_letter(queue: str) -> str:
    """``<queue>_dlq``, or an error asking for a name when that would be too long."""
    name = queue + DEAD_LETTER_SUFFIX
    if len(name) > MAX_QUEUE_NAME_LENGTH:
        raise InvalidArgument(
            f'queue "{queue}": its default dead-letter queue {name!r} is longer than '
            f"{MAX_QUEUE_NAME_LENGTH} characters; name one with dead_letter=... or --dead-letter"
        )
    return name


def _stored_queue_names(manager: QueueManager, queues: Iterable[str]) -> list[str]:
    """The queues as stored (names match case-insensitively), or `QueueNotFound`."""
    stored = {info.queue_name.lower(): info.queue_name for info in manager.list_queues()}
    result: list[str] = []
    for queue in queues:
        name = stored.get(queue.lower())
        if name is None:
            raise QueueNotFound(queue, "create it first (pgmq_create, or a CreateQueue migration)")
        if name not in result:
            result.append(name)
    return result


def resolve(
    queue: str, consumer: Consumer, overrides: Mapping[str, Any], stored: Any | None
) -> QueueSettings:
    """Merge command-line ``overrides``, the decorator, a stored `QueueConfig` and defaults."""
    check_settings(**{k: v for k, v in overrides.items() if v is not None})

    def pick(name: str) -> Any:
        for value in (overrides.get(name), getattr(consumer, name)):
            if value is not None:
                return value
        field = _STORED.get(name)
        value = getattr(stored, field, None) if stored is not None and field else None
        if value not in (None, ""):
            return value
        return DEFAULTS.get(name)

    dead_letter = pick("dead_letter") or default_dead_letter(queue)
    if dead_letter.lower() == queue.lower():
        raise InvalidArgument(f'queue "{queue}" cannot be its own dead-letter queue')
    return QueueSettings(
        queue=queue,
        consumer=consumer,
        batch=pick("batch"),
        vt=pick("vt"),
        max_reads=pick("max_reads"),
        dead_letter=dead_letter,
        on_success=pick("on_success"),
        retry_delay=float(pick("retry_delay")),
    )


def redrive_attributes(settings: QueueSettings) -> dict[str, Any]:
    """The queue attributes that make SQL dead-letter as the worker does (max_reads 0: none)."""
    if not settings.max_reads:
        return {"max_receive_count": None, "dead_letter_queue": None}
    return {"max_receive_count": settings.max_reads, "dead_letter_queue": settings.dead_letter}


def plan(
    queues: Iterable[str],
    *,
    handler: str | None = None,
    overrides: Mapping[str, Any] | None = None,
    using: str | None = None,
) -> list[QueueSettings]:
    """The settings of every queue to consume, checked, and saved to `QueueConfig`."""
    from ..models import QueueConfig

    manager = QueueManager(using)
    configs = QueueConfig.objects.using(manager.using)
    result = []
    for queue in _stored_queue_names(manager, queues):
        settings = resolve(
            queue, find_consumer(queue, handler), overrides or {}, configs.filter(pk=queue).first()
        )
        # INSERT ... ON CONFLICT: workers starting together never hit a duplicate key error.
        configs.bulk_create(
            [QueueConfig(queue=queue, **{f: getattr(settings, n) for n, f in _STORED.items()})],
            update_conflicts=True,
            unique_fields=["queue"],
            update_fields=[*_STORED.values(), "updated_at"],
        )
        manager.set_queue_attributes(queue, **redrive_attributes(settings))
        result.append(settings)
    return result
