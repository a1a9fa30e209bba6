"""Internal: the admin dashboard's statistics and browsing (sql/90_dashboard.sql)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from ..errors import (
    InvalidArgument,
    QueueNotFound,
)
from ..manager.plumbing import (
    Base,
    _check_int,
    _dump,
    _ids,
    _json,
    _record,
)
from ..names import validate_queue_name
from ..records import BrowsedMessage, QueueInfo, QueueStats, StatsBucket, ThroughputBucket


def queue_stats(columns: dict[str, Any]) -> QueueStats:
    """`QueueStats` from a ``pgmq._dashboard_stats`` row read by column name.

    The row is the queue figures of ``pgmq._queue_figures`` (sql/30_metrics.sql, the one
    source ``pgmq.metrics()`` reads too) under its own names, with the archive's.
    """
    return _record(QueueStats, columns, estimated=frozenset(columns.get("estimated") or ()))


class DashboardOps(Base):
    """The admin dashboard's statistics and message browsing (sql/90_dashboard.sql)."""

    if TYPE_CHECKING:  # QueueOps's, which InternalManager combines with this

        def list_queues(self) -> list[QueueInfo]: ...

    # -- dashboard (sql/90_dashboard.sql) -----------------------------------

    def dashboard_all_stats(
        self, *, exact_limit: int = 50_000, max_receive_count: dict[str, int] | None = None
    ) -> list[QueueStats]:
        """Dashboard figures of every queue; past ``exact_limit`` rows, estimates.

        ``max_receive_count`` maps queue names to the read count poison is counted against.
        """
        params = {
            "exact_limit": _check_int("exact_limit", exact_limit, 1, 2**62),
            "max_receive_count": _dump(max_receive_count or {}, "max_receive_count", "*"),
        }
        return [queue_stats(row) for row in self._fetch_named("dashboard_all_stats", params, None)]

    def dashboard_queue_stats(
        self, queue: str, *, exact_limit: int = 50_000, max_receive_count: int | None = None
    ) -> list[QueueStats]:
        """Dashboard figures of ``queue`` (one record); past ``exact_limit`` rows, estimates.

        ``max_receive_count``: the read count poison is counted against (None: none).
        """
        validate_queue_name(queue)
        params = {
            "queue": queue,
            "exact_limit": _check_int("exact_limit", exact_limit, 1, 2**62),
            "max_receive_count": max_receive_count,
        }
        return [
            queue_stats(row) for row in self._fetch_named("dashboard_queue_stats", params, queue)
        ]

    def dashboard_stats_of(
        self,
        queues: Iterable[str],
        *,
        exact_limit: int = 50_000,
        max_receive_count: dict[str, int] | None = None,
    ) -> list[QueueStats]:
        """Dashboard figures of ``queues`` only (unknown ones left out), in their order.

        Idle queues (no page in either table) cost a catalogue row; see 90_dashboard.sql.
        """
        params: dict[str, Any] = {
            "names": list(queues),
            "exact_limit": _check_int("exact_limit", exact_limit, 1, 2**62),
            "max_receive_count": _dump(max_receive_count or {}, "max_receive_count", "*"),
        }
        rows = self._fetch_named("dashboard_stats_of", params, None)
        return [queue_stats(row) for row in rows]

    def dashboard_idle_queues(self, queues: Iterable[str]) -> dict[str, bool]:
        """Each existing queue of ``queues``: whether it is idle (no page in either table)."""
        rows = self._fetch_named("dashboard_idle_queues", {"names": list(queues)}, None)
        return {row["queue_name"]: row["idle"] for row in rows}

    def dashboard_record_samples(self, stats: list[QueueStats]) -> int:
        """Write one `QueueSample` per queue of ``stats``, in one statement; how many."""
        from ..models import QueueSample

        params = {
            "queues": [s.queue_name for s in stats],
            "queue_lengths": [s.queue_length for s in stats],
            "queue_visible_lengths": [s.queue_visible_length for s in stats],
            "in_flight_lengths": [s.in_flight_length for s in stats],
            "delayed_lengths": [s.delayed_length for s in stats],
            "archive_sizes": [s.archive_size for s in stats],
            "totals": [s.total_messages for s in stats],
            "oldest_ages": [s.oldest_msg_age_sec for s in stats],
        }
        table = {"sample": QueueSample._meta.db_table}
        return self._fetch("dashboard_record_samples", params, None, table)[0][0]

    def dashboard_claim_sampler(self) -> bool:
        """Whether this transaction is the database's queue sampler (an advisory lock).

        Held until the caller's transaction ends; call it inside ``transaction.atomic``.
        """
        return bool(self._fetch("dashboard_claim_sampler", {}, None)[0][0])

    def paused_queues(self) -> list[str]:
        """The queues whose ``paused`` attribute is set (see `pause_queue`)."""
        return [row[0] for row in self._fetch("paused_queues", {}, None)]

    def dashboard_throughput(
        self,
        queue: str,
        *,
        window: timedelta,
        bucket: timedelta,
        row_limit: int = 200_000,
        latency_limit: int = 20_000,
    ) -> list[ThroughputBucket]:
        """Archived messages per ``bucket`` over the last ``window``, with latency percentiles.

        At most ``row_limit`` (counts) and ``latency_limit`` (percentiles) of the newest
        archived rows are read; the buckets say when a limit cut the window short.
        """
        validate_queue_name(queue)
        params = {
            "queue": queue,
            "window": window,
            "bucket": bucket,
            "row_limit": _check_int("row_limit", row_limit, 1, 2**62),
            "latency_limit": _check_int("latency_limit", latency_limit, 1, 2**62),
        }
        rows = self._fetch_named("dashboard_throughput", params, queue)
        return [_record(ThroughputBucket, row, start=row["bucket_start"]) for row in rows]

    def browse_messages(
        self,
        queue: str,
        *,
        archive: bool = False,
        newest_first: bool = True,
        min_read_ct: int | None = None,
        header_key: str | None = None,
        header_value: str | None = None,
        contains: dict | list | None = None,
        after_id: int | None = None,
        before_id: int | None = None,
        page_size: int = 50,
    ) -> list[BrowsedMessage]:
        """One page of live (or archived) messages, filtered, keyset-paginated on msg_id."""
        validate_queue_name(queue)
        if contains is not None and not isinstance(contains, dict | list):
            raise InvalidArgument(f"contains must be a JSON object or array, got {contains!r:.60}")
        params = {
            "queue": queue,
            "from_archive": bool(archive),
            "newest_first": bool(newest_first),
            "min_read_ct": None if min_read_ct is None else _check_int("read_ct", min_read_ct, 0),
            "header_key": header_key or None,
            "header_value": header_value,
            "contains": None if contains is None else _dump(contains, "contains", queue),
            "after_id": None if after_id is None else _ids(after_id)[0][0],
            "before_id": None if before_id is None else _ids(before_id)[0][0],
            "page_size": _check_int("page_size", page_size, 1, 1000),
        }
        rows = self._fetch_named("browse_messages", params, queue)
        return [
            _record(
                BrowsedMessage, row, message=_json(row["message"]), headers=_json(row["headers"])
            )
            for row in rows
        ]

    def dashboard_match_count(
        self, queue: str, *, archive: bool = False, **filters: Any
    ) -> tuple[int, int | None]:
        """How many live (or archived) messages match ``filters``, and the highest id."""
        [row] = self._fetch_named(
            "dashboard_match_count", self._match_params(queue, archive, filters), queue
        )
        return row["matched"], row["last_id"]

    def dashboard_match_batch(
        self,
        queue: str,
        *,
        archive: bool = False,
        after_id: int = 0,
        up_to_id: int,
        max_rows: int = 1000,
        **filters: Any,
    ) -> list[int]:
        """The next ids (ascending) matching ``filters`` in (``after_id``, ``up_to_id``]."""
        params = {
            **self._match_params(queue, archive, filters),
            "after_id": _check_int("after_id", after_id, 0, 2**63 - 1),
            "up_to_id": _check_int("up_to_id", up_to_id, 0, 2**63 - 1),
            "max_rows": _check_int("max_rows", max_rows, 1, 10_000),
        }
        return [row[0] for row in self._fetch("dashboard_match_batch", params, queue)]

    def _match_params(self, queue: str, archive: bool, filters: dict[str, Any]) -> dict[str, Any]:
        """The filter parameters of the dashboard_match_* statements (as browse_messages's)."""
        validate_queue_name(queue)
        unknown = set(filters) - {"min_read_ct", "header_key", "header_value", "contains"}
        if unknown:
            raise InvalidArgument(f"unknown message filter(s): {', '.join(sorted(unknown))}")
        contains, min_read_ct = filters.get("contains"), filters.get("min_read_ct")
        if contains is not None and not isinstance(contains, dict | list):
            raise InvalidArgument(f"contains must be a JSON object or array, got {contains!r:.60}")
        return {
            "queue": queue,
            "from_archive": bool(archive),
            "min_read_ct": None if min_read_ct is None else _check_int("read_ct", min_read_ct, 0),
            "header_key": filters.get("header_key") or None,
            "header_value": filters.get("header_value"),
            "contains": None if contains is None else _dump(contains, "contains", queue),
        }

    def dashboard_requeue(
        self,
        queue: str,
        msg_ids: Iterable[int],
        *,
        target: str | None = None,
        from_archive: bool = False,
    ) -> list[int]:
        """Move messages (archived ones, or dead letters) back into a live queue; new ids.

        ``queue`` is where they are now (its archive when ``from_archive``); ``target``
        (default: the same queue) receives them visible at once, with ``read_ct`` 0.
        """
        validate_queue_name(queue)
        target = validate_queue_name(target or queue)
        if target.lower() != queue.lower() and not any(
            info.queue_name.lower() == target.lower() for info in self.list_queues()
        ):
            raise QueueNotFound(target)
        ids, _ = _ids(list(msg_ids))
        params = {"source": queue, "target": target, "ids": ids, "from_archive": from_archive}
        return [row[0] for row in self._fetch("dashboard_requeue", params, queue)]

    def dashboard_spark_stats(
        self, queue: str, *, window: timedelta, bucket: timedelta
    ) -> list[StatsBucket]:
        """``pgmq.spark_stats`` of ``queue`` summed per ``bucket`` over the last ``window``.

        Empty when the table is missing or holds nothing for the queue in the window,
        so the caller can fall back to the archive.
        """
        validate_queue_name(queue)
        params = {"queue": queue, "window": window, "bucket": bucket}
        rows = self._fetch_named("dashboard_spark_stats", params, queue)
        return [_record(StatsBucket, row, start=row["bucket_start"]) for row in rows]
