"""QueueManager methods: partitioned queues and their maintenance (sql/45_partitions.sql)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db import transaction

from ..errors import (
    InvalidArgument,
)
from ..names import validate_queue_name
from ..records import Partition, PartitionChange
from .plumbing import (
    Base,
    _check_int,
    _record,
)

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


class PartitionOps(Base):
    """Partitioned queues and their maintenance (sql/45_partitions.sql)."""

    # -- partitioned queues (sql/45_partitions.sql) ---------------------------

    def create_partitioned_queue(
        self,
        queue: str,
        partition_interval: Interval = 10000,
        retention_interval: Interval | None = 100000,
        premake: int = 4,
    ) -> None:
        """Create a queue partitioned by msg_id ranges (an int) or time ranges (``"1 day"``).

        Partitions past ``retention_interval`` (None: keep all) are dropped by
        `maintain_partitions`, with their messages, read or not, as pgmq does.
        """
        validate_queue_name(queue)
        params = self._partition_params(partition_interval, retention_interval, "premake", premake)
        self._fetch("create_partitioned", {"queue": queue, **params}, queue)

    def convert_archive_partitioned(
        self,
        queue: str,
        partition_interval: Interval = 10000,
        retention_interval: Interval | None = 100000,
        leading_partition: int = 10,
    ) -> None:
        """Partition a queue's archive; its rows stay, in a first partition. Idempotent."""
        validate_queue_name(queue)
        params = self._partition_params(
            partition_interval, retention_interval, "leading_partition", leading_partition
        )
        self._fetch("convert_archive_partitioned", {"queue": queue, **params}, queue)

    @staticmethod
    def _partition_params(
        partition_interval: Interval, retention_interval: Interval | None, name: str, ahead: int
    ) -> dict[str, Any]:
        return {
            "partition_interval": interval_text("partition_interval", partition_interval),
            "retention_interval": interval_text(
                "retention_interval", retention_interval, optional=True
            ),
            "premake": _check_int(name, ahead, 1, 1000),
        }

    def partitioned_queues(self) -> list[str]:
        """Queues with a partitioned table (created partitioned, or with a converted archive)."""
        return [row[0] for row in self._fetch("partitioned_queues", {}, None)]

    def list_partitions(self, queue: str) -> list[Partition]:
        """The partitions of a queue's tables: live table first, each by range, default last."""
        validate_queue_name(queue)
        rows = self._fetch_named("list_partitions", {"queue": queue}, queue)
        return [_record(Partition, row) for row in rows]

    def maintain_partitions(
        self, queue: str | None = None, *, lock_timeout: float | None = None
    ) -> list[PartitionChange]:
        """Create partitions ahead and drop those past retention, one queue per transaction.

        Each step (a partition created or dropped, the queue's lock) waits for its locks
        at most ``lock_timeout`` seconds capped at 1 (default 0.2): readers and writers of
        the queue queue behind such a request, so that is also the longest they wait for
        maintenance. A step not granted its locks by then is skipped (a change whose
        action is ``"create skipped"``, ``"drop skipped"`` or ``"queue skipped"``) and
        tried again on the next run.
        """
        queues = [validate_queue_name(queue)] if queue is not None else self.partitioned_queues()
        if lock_timeout is not None and (
            isinstance(lock_timeout, bool)
            or not isinstance(lock_timeout, int | float)
            or not 0 < lock_timeout <= 3600
        ):
            raise InvalidArgument(f"lock_timeout must be 0-3600 seconds, got {lock_timeout!r}")
        changes: list[PartitionChange] = []
        for name in queues:
            with transaction.atomic(using=self.alias_for(name)):
                if lock_timeout is not None:
                    timeout = f"{max(1, round(lock_timeout * 1000))}ms"
                    self._fetch("set_local_lock_timeout", {"timeout": timeout}, name)
                rows = self._fetch_named("maintain_partitions", {"queue": name}, name)
            changes += [_record(PartitionChange, row) for row in rows]
        return changes
