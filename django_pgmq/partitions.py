"""Partitioned queues (sql/45_partitions.sql): interval arguments and records."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from .errors import InvalidArgument

Interval = int | str | timedelta


def interval_text(name: str, value: Interval | None, *, optional: bool = False) -> str | None:
    """A partition or retention interval as pgmq's SQL takes it: '10000' (msg_ids) or '1 day'."""
    if value is None and optional:
        return None
    if isinstance(value, timedelta):
        if value <= timedelta(0):
            raise InvalidArgument(f"{name} must be a positive duration, got {value!r}")
        if value % timedelta(days=1) == timedelta(0):
            return f"{value.days} days"
        return f"{value.days} days {value.seconds} seconds {value.microseconds} microseconds"
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 1:
            raise InvalidArgument(f"{name} must be a positive number of msg_ids, got {value}")
        return str(value)
    if isinstance(value, str) and value.strip():
        return value.strip()
    raise InvalidArgument(
        f"{name} must be a positive integer (msg_id ranges), a timedelta or an interval "
        f"such as '1 day' (time ranges), got {value!r}"
    )


@dataclass(frozen=True)
class Partition:
    """A row of ``pgmq.list_partitions()``: bounds are msg_ids or ISO times (None: default)."""

    partitioned_table: str
    partition_name: str
    range_start: str | None
    range_end: str | None
    is_default: bool


@dataclass(frozen=True)
class PartitionChange:
    """A row of ``pgmq.maintain_partitions()``: a partition created (with rows moved) or dropped."""

    queue: str
    partitioned_table: str
    action: str
    partition_name: str
    range_start: str
    range_end: str
    rows_moved: int | None
