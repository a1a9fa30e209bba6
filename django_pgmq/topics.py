"""Deprecated module: its records moved to `django_pgmq.records` (also in `django_pgmq`).

``from django_pgmq.topics import TopicBinding`` still works, with a DeprecationWarning.
"""

from __future__ import annotations

from typing import Any

from . import records

_MOVED = ("TopicBinding", "TopicRoute", "TopicDelivery")


def __getattr__(name: str) -> Any:
    home = {n: ("django_pgmq.records", getattr(records, n)) for n in _MOVED}
    return records._moved(__name__, name, home)
