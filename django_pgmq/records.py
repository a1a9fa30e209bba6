"""The records django-pgmq returns: plain frozen rows, one class per kind of row.

Every record class lives here, built from a SQL result by column name
(``manager/plumbing.py``'s ``_record``). Three sections:

- the public records, listed in ``__all__``: what `QueueManager` and the
  module-level functions return; users may rely on them (``django_pgmq`` re-exports
  them);
- the internal records, below the second banner and not in ``__all__``: what the
  internal layer (``django_pgmq/internal/``) returns to the worker, the admin and the
  Prometheus export; they may change in any release;
- the integrations' records, below the third banner and not in ``__all__`` (the package
  does not re-export them): what ``contrib/`` returns to its users (Spark's export run).

Standard library only (tests/unit/test_import_layers.py checks it), so any part may
import it without loading Django.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, ClassVar, NamedTuple
from uuid import UUID

__all__ = [
    "Message",
    "NotifyThrottle",
    "Partition",
    "PartitionChange",
    "QueueInfo",
    "QueueLimits",
    "QueueMetrics",
    "RetentionResult",
    "Schedule",
    "ScheduleTick",
    "ScheduledSend",
    "TopicBinding",
    "TopicDelivery",
    "TopicRoute",
    "WorkflowInfo",
    "WorkflowStep",
]


# Public records ----------------------------------------------------------------------


@dataclass(frozen=True)
class Message:
    """One message as pgmq's ``message_record`` returns it."""

    msg_id: int
    read_ct: int
    enqueued_at: datetime
    last_read_at: datetime | None
    vt: datetime
    message: Any
    headers: dict[str, Any] | None


@dataclass(frozen=True)
class QueueInfo:
    """A row of ``pgmq.list_queues()``."""

    queue_name: str
    is_partitioned: bool
    is_unlogged: bool
    created_at: datetime
    database: str = ""  # the alias of the database holding the queue


@dataclass(frozen=True)
class QueueMetrics:
    """A row of ``pgmq.metrics()``: lengths, ages in seconds, and all-time message count."""

    queue_name: str
    queue_length: int
    newest_msg_age_sec: int | None
    oldest_msg_age_sec: int | None
    total_messages: int
    scrape_time: datetime
    queue_visible_length: int
    default_partition_length: int | None
    database: str = ""  # the alias of the database holding the queue


@dataclass(frozen=True)
class NotifyThrottle:
    """A row of ``pgmq.list_notify_insert_throttles()``: a queue whose inserts notify."""

    queue_name: str
    throttle_interval_ms: int
    last_notified_at: datetime


@dataclass(frozen=True)
class QueueLimits:
    """A row of ``pgmq.queue_limits()``: a limited queue's limits and where it stands.

    ``in_flight`` counts messages read and not yet deleted, archived or visible again;
    ``handed_out`` those handed out in the current ``rate_seconds`` window;
    ``next_free_at`` is when a read can get a message again while the queue is at a limit.
    """

    queue_name: str
    max_in_flight: int | None
    in_flight: int
    rate_count: int | None
    rate_seconds: float | None
    handed_out: int
    next_free_at: datetime | None
    database: str = ""  # the alias of the database holding the queue


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
    """A row of ``pgmq.maintain_partitions()``: a partition created (with rows moved) or
    dropped, or a step skipped because its locks were not granted in time (action
    ``"create skipped"``, ``"drop skipped"``, or ``"queue skipped"`` with no table,
    partition or range); the next run tries a skipped step again."""

    queue: str
    partitioned_table: str | None
    action: str
    partition_name: str | None
    range_start: str | None
    range_end: str | None
    rows_moved: int | None


@dataclass(frozen=True)
class TopicBinding:
    """A row of ``pgmq.list_topic_bindings()``: messages whose key matches go to the queue."""

    pattern: str
    queue_name: str
    bound_at: datetime
    compiled_regex: str
    database: str = ""  # the alias of the database holding the binding (and the queue)


@dataclass(frozen=True)
class TopicRoute:
    """A row of ``pgmq.test_routing()``: a binding a routing key would reach."""

    pattern: str
    queue_name: str
    compiled_regex: str
    database: str = ""  # the alias of the database holding the binding (and the queue)


@dataclass(frozen=True)
class TopicDelivery:
    """A row of ``pgmq.send_batch_topic()``: one message stored in one queue."""

    queue_name: str
    msg_id: int
    database: str = ""  # the alias of the database holding the queue


@dataclass(frozen=True)
class RetentionResult:
    """What `enforce_retention` deleted from one queue."""

    queue_name: str
    expired: int
    archive_deleted: int


@dataclass(frozen=True)
class Schedule:
    """One row of ``pgmq.list_schedules()``, with the ticks skipped and who declared it."""

    name: str
    cron: str
    time_zone: str
    queue: str
    message: Any
    headers: dict[str, Any] | None
    catch_up: timedelta
    enabled: bool
    last_tick: datetime | None
    next_tick: datetime | None
    skipped: int
    origin: str | None  # "settings" for a schedule PGMQ["SCHEDULES"] declares
    database: str = ""  # the alias of the database holding it (its queue's)


@dataclass(frozen=True)
class ScheduledSend:
    """A message ``enqueue_due_schedules`` sent: which schedule, which tick, which message."""

    schedule_name: str
    queue_name: str
    tick: datetime
    msg_id: int
    database: str = ""  # the alias of the database that sent it


@dataclass(frozen=True)
class ScheduleTick:
    """A tick a schedule sent (``msg_id``), or tried to (``error``: why pgmq.send refused)."""

    tick: datetime
    queue_name: str
    msg_id: int | None
    error: str | None
    sent_at: datetime


@dataclass(frozen=True)
class WorkflowStep:
    """A row of ``pgmq.workflow_status()``: one step of a workflow and where it stands.

    ``status`` is waiting, sent, done, failed or cancelled; ``msg_id`` the step's message
    in ``queue_name`` once sent; ``result`` what ``complete`` recorded (None for a plain
    delete or archive); ``error`` what ``fail`` or a dead-letter move recorded.
    """

    step: str
    queue_name: str
    msg_id: int | None
    status: str
    result: Any
    error: Any
    sent_at: datetime | None
    finished_at: datetime | None


@dataclass(frozen=True)
class WorkflowInfo:
    """A row of ``pgmq.list_workflows()``: one workflow, its status and progress.

    ``status`` is running, done, failed or cancelled; ``steps_done`` counts the steps
    done (not failed or cancelled) of ``steps_total``.
    """

    workflow_id: int
    status: str
    on_failure: str
    steps_done: int
    steps_total: int
    created_at: datetime
    finished_at: datetime | None
    database: str = ""  # the alias of the database holding it


# Internal records (the internal layer's; not the user API) --------------------------


def _old_figure_name(old: str) -> Any:
    """A deprecated alias of a `QueueStats` figure (``QueueStats.RENAMED[old]``): reading
    it warns and gives the figure."""
    return property(
        lambda stats: stats._renamed(old),
        doc=f"Deprecated name of a figure, see QueueStats.RENAMED[{old!r}] (pgmq's name).",
    )


@dataclass(frozen=True)
class QueueStats:
    """One queue's dashboard figures; names in ``estimated`` are estimates, not counts."""

    queue_name: str
    queue_length: int
    queue_visible_length: int
    in_flight_length: int
    delayed_length: int
    oldest_msg_age_sec: int | None
    newest_msg_age_sec: int | None
    oldest_visible_age_sec: int | None
    archive_size: int
    archived_hour: int
    archived_day: int
    poison_length: int | None
    total_messages: int
    estimated: frozenset[str]

    # Deprecated names of figures (now pgmq's names), for templates that still say them.
    RENAMED: ClassVar[dict[str, str]] = {
        "depth": "queue_length",
        "visible": "queue_visible_length",
        "oldest_age_sec": "oldest_msg_age_sec",
        "in_flight": "in_flight_length",
        "delayed": "delayed_length",
        "newest_age_sec": "newest_msg_age_sec",
        "poison": "poison_length",
    }

    def _renamed(self, old: str) -> int | None:
        new = self.RENAMED[old]
        warnings.warn(
            f"QueueStats.{old} is deprecated: use {new}", DeprecationWarning, stacklevel=3
        )
        return getattr(self, new)

    depth = _old_figure_name("depth")
    visible = _old_figure_name("visible")
    oldest_age_sec = _old_figure_name("oldest_age_sec")
    in_flight = _old_figure_name("in_flight")
    delayed = _old_figure_name("delayed")
    newest_age_sec = _old_figure_name("newest_age_sec")
    poison = _old_figure_name("poison")


@dataclass(frozen=True)
class BrowsedMessage:
    """A live or archived message as the queue page shows it (``archived_at`` for archives)."""

    msg_id: int
    read_ct: int
    enqueued_at: datetime
    last_read_at: datetime | None
    vt: datetime
    archived_at: datetime | None
    message: Any
    headers: dict[str, Any] | None


@dataclass(frozen=True)
class ThroughputBucket:
    """Messages archived in one time bucket, with enqueue-to-archive latency percentiles.

    Percentiles are None for a bucket older than the rows the latency limit let in.
    """

    start: datetime
    archived: int
    p50_sec: float | None
    p95_sec: float | None
    p99_sec: float | None
    truncated: bool
    latency_truncated: bool


@dataclass(frozen=True)
class StatsBucket:
    """One time bucket of ``pgmq.spark_stats`` summed for the charts (see 91_dashboard_stats.sql).

    ``p50_sec`` is the archived-weighted mean of the minutes' medians; ``p95_sec`` and
    ``p99_sec`` the worst minute's; ``last_minute`` the newest minute stored for the queue.
    """

    start: datetime
    archived: int
    p50_sec: float | None
    p95_sec: float | None
    p99_sec: float | None
    retries: int
    last_minute: datetime


class ScrapedQueue(NamedTuple):
    """One queue's figures, its dead-letter queue's name and its live workers."""

    stats: QueueStats
    dead_letter: str
    workers: int


class Scrape(NamedTuple):
    """What one scrape reads: every queue, and the live workers of the database."""

    queues: list[ScrapedQueue]
    live_workers: int


# The integrations' records (contrib/; not re-exported by django_pgmq) ----------------


@dataclass(frozen=True)
class ExportRun:
    """One run of the Spark archive export, as recorded in ``pgmq.spark_export_run``
    (``contrib/spark/export.py``, ``pgmq_spark_export``)."""

    run_id: UUID
    cutoff: datetime
    max_msg_id: int
    exported: int | None
    stage: str


def _moved(module: str, name: str, home: dict[str, tuple[str, Any]]) -> Any:
    """``module.name`` for a name that moved (``home``: name -> (new module, value)), with a
    DeprecationWarning: the module ``__getattr__`` of the old modules messages, topics and
    partitions, of notify for `NotifyThrottle` and of contrib.spark.export for `ExportRun`."""
    if name not in home:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    where, value = home[name]
    warnings.warn(
        f"{module}.{name} is deprecated: import {name} from {where}",
        DeprecationWarning,
        stacklevel=3,
    )
    return value
