"""Pausing a queue's consumption, for the admin and the worker, behind two functions.

A paused queue has its ``paused`` attribute set (``pgmq.set_queue_attributes``, as
``manage.py pgmq_pause`` does): the SQL API's reads return nothing for it, whatever
the client. Workers also read the set at each heartbeat and stop asking.
"""

from __future__ import annotations

from collections.abc import Iterable

from .internal import InternalManager
from .manager import QueueManager


def paused_queues(using: str, queues: Iterable[str] | None = None) -> frozenset[str]:
    """The paused queues among ``queues`` (every paused queue when None)."""
    paused = frozenset(InternalManager(using).paused_queues())
    return paused if queues is None else paused & frozenset(queues)


def set_paused(using: str, queue: str, paused: bool) -> None:
    """Pause (or resume) consumption of ``queue``; its other attributes are kept."""
    manager = QueueManager(using)
    if paused:
        manager.pause_queue(queue)
    else:
        manager.resume_queue(queue)
