"""Each queue's effective consumer settings: command line, decorator, queue attributes,
`QueueConfig`, defaults.

The first of those that sets a value wins. The queue's own redrive attributes
(``max_receive_count``, ``dead_letter_queue``, set with ``pgmq_attributes`` or
the admin) are the user's explicit choice: they rank above `QueueConfig` (which
only mirrors what the last worker used) and the defaults, so a default never
overwrites them. An explicit worker option (command line or decorator) that
differs from them wins, and the worker says so at start in one WARNING line
naming both values. The result is written back to `QueueConfig`, so the admin
sees what the running workers use, and its max_receive_count and dead-letter
queue into the queue's attributes: a read past them moves the message in SQL, whoever reads it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..consumer_settings import CONSUMER_DEFAULTS, SETTINGS, ConsumerSettings
from ..errors import InsufficientPrivilege, InvalidArgument, QueueNotFound, first_line
from ..manager import QueueManager
from ..names import DEAD_LETTER_SUFFIX, MAX_QUEUE_NAME_LENGTH
from .registry import Consumer, check_settings, find_consumer

DEFAULTS: dict[str, Any] = CONSUMER_DEFAULTS  # declared once (QueueConfig's defaults too)
# Worker setting -> the queue attribute that holds the same choice in SQL.
_ATTRIBUTE = {s.name: s.attribute for s in SETTINGS if s.attribute}
_OPTION = {s.name: s.flag for s in SETTINGS if s.attribute}
# Worker setting -> the QueueConfig field holding it (the ones it stores).
_STORED = {s.name: s.stored for s in SETTINGS if s.stored}
_TYPES = {s.name: s.python_type for s in SETTINGS}

log = logging.getLogger("django_pgmq.worker")


@dataclass(frozen=True, kw_only=True)
class QueueSettings(ConsumerSettings):
    """How one queue is consumed: its handler and every setting (`ConsumerSettings`'
    fields), resolved."""

    queue: str
    consumer: Consumer
    priority: bool = False  # read highest header priority first (Django task queues)
    # False: a priority read that is its own transaction commits asynchronously (the
    # Tasks backend's OPTIONS "synchronous_commit"); True: durable, as every other read.
    synchronous_commit: bool = True

    def describe(self) -> str:
        """One line for the start-up log."""
        extra = "".join(
            [
                ", batch handler" if self.consumer.batch_handler else "",
                "" if self.consumer.atomic else ", not atomic",
                ", by priority" if self.priority else "",
                "" if self.synchronous_commit else ", asynchronous commit",
            ]
        )
        shown = ", ".join(s.in_log(getattr(self, s.name)) for s in SETTINGS)
        return f"{self.queue} (handler {self.consumer.path}, {shown}{extra})"


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
    queue: str,
    consumer: Consumer,
    overrides: Mapping[str, Any],
    stored: Any | None,
    attributes: Mapping[str, Any] | None = None,
) -> QueueSettings:
    """Merge command-line ``overrides``, the decorator, the queue's ``attributes``, a
    stored `QueueConfig` and defaults (first set wins)."""
    check_settings(**{k: v for k, v in overrides.items() if v is not None})
    attributes = attributes or {}

    def pick(name: str) -> Any:
        for value in (overrides.get(name), getattr(consumer, name)):
            if value is not None:
                return value
        value = attributes.get(_ATTRIBUTE.get(name, ""))
        if value is not None:
            return value
        field = _STORED.get(name)
        value = getattr(stored, field, None) if stored is not None and field else None
        if value not in (None, ""):
            return value
        return DEFAULTS.get(name)

    values = {name: pick(name) for name in _TYPES}
    values["dead_letter"] = values["dead_letter"] or default_dead_letter(queue)
    if values["dead_letter"].lower() == queue.lower():
        raise InvalidArgument(f'queue "{queue}" cannot be its own dead-letter queue')
    # As its field's type: a decorator's retry_delay=2 is 2.0.
    typed = {name: _TYPES[name](value) for name, value in values.items()}
    return QueueSettings(queue=queue, consumer=consumer, **typed)


def attribute_conflicts(
    queue: str, consumer: Consumer, overrides: Mapping[str, Any], attributes: Mapping[str, Any]
) -> str | None:
    """One line naming each explicit worker option that differs from the queue's attribute.

    None when they agree (or the queue sets no redrive attribute). The worker's
    value wins (it is written to the attributes); the line makes that visible.
    """
    if attributes.get("max_receive_count") is None:
        return None
    differences = []
    for name, attribute in _ATTRIBUTE.items():
        if overrides.get(name) is not None:
            value, source = overrides[name], _OPTION[name]
        elif getattr(consumer, name) is not None:
            value, source = getattr(consumer, name), f"{name}= of {consumer.path}"
        else:
            continue
        current = attributes.get(attribute)
        if value != current:
            shown = "0 (never dead-letter)" if name == "max_receive_count" and value == 0 else value
            differences.append(f"{source} {shown} vs attribute {attribute} {current}")
    if not differences:
        return None
    return (
        f'queue "{queue}": worker settings differ from the queue\'s attributes '
        f"({'; '.join(differences)}); the worker's win and are written to its attributes"
    )


def redrive_attributes(settings: QueueSettings) -> dict[str, Any]:
    """The queue attributes that make SQL dead-letter as the worker does (0: none)."""
    if not settings.max_receive_count:
        return {"max_receive_count": None, "dead_letter_queue": None}
    return {
        "max_receive_count": settings.max_receive_count,
        "dead_letter_queue": settings.dead_letter,
    }


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
        consumer = find_consumer(queue, handler)
        attributes = manager.get_queue_attributes(queue)
        conflict = attribute_conflicts(queue, consumer, overrides or {}, attributes)
        if conflict:
            log.warning(conflict)
        settings = resolve(
            queue, consumer, overrides or {}, configs.filter(pk=queue).first(), attributes
        )
        # INSERT ... ON CONFLICT: workers starting together never hit a duplicate key error.
        configs.bulk_create(
            [QueueConfig(queue=queue, **{f: getattr(settings, n) for n, f in _STORED.items()})],
            update_conflicts=True,
            unique_fields=["queue"],
            update_fields=[*_STORED.values(), "updated_at"],
        )
        # Only a change is written: the queue's policy is the owner's (or a
        # --manage-queues role's) to change, and an application role's worker runs on
        # attributes an owner's run (or pgmq_attributes) already set.
        wanted = redrive_attributes(settings)
        if any(attributes.get(key) != value for key, value in wanted.items()):
            try:
                manager.set_queue_attributes(queue, **wanted)
            except InsufficientPrivilege as exc:
                # Attributes are policy: the owner's or a --manage-queues role's. The
                # worker dead-letters as configured all the same; SQL readers follow once
                # applied.
                log.warning(
                    'queue "%s": the redrive settings (max_receive_count %s, dead_letter %s)'
                    " are not in its attributes, so other SQL readers do not dead-letter"
                    " alike: %s",
                    queue,
                    settings.max_receive_count,
                    settings.dead_letter,
                    first_line(exc),
                )
        result.append(settings)
    return result
