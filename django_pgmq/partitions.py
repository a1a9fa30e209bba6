"""Deprecated module: its records moved to `django_pgmq.records` (also in `django_pgmq`),
``interval_text`` to `django_pgmq.manager.partition_ops` (the methods that take intervals).

``from django_pgmq.partitions import Partition`` still works, with a DeprecationWarning.
"""

from __future__ import annotations

from typing import Any

from . import records


def __getattr__(name: str) -> Any:
    from .manager import partition_ops

    home = {
        n: ("django_pgmq.records", getattr(records, n)) for n in ("Partition", "PartitionChange")
    }
    home |= {
        n: (partition_ops.__name__, getattr(partition_ops, n))
        for n in ("Interval", "interval_text")
    }
    return records._moved(__name__, name, home)
