"""The overview's data: each queue's figures with its dead-letter queue, workers and flags."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, fields
from datetime import timedelta
from itertools import pairwise
from typing import Any

from django.db.models import Max
from django.db.models.functions import TruncMinute
from django.utils import timezone
from django.utils.translation import gettext as _

from .. import conf
from ..internal import InternalManager
from ..models import Queue, QueueConfig, QueueSample, Worker
from ..names import DEAD_LETTER_SUFFIX
from ..pausing import paused_queues
from ..records import QueueLimits, QueueStats

TREND_WINDOW = timedelta(hours=1)
GROWTH_WINDOW = timedelta(minutes=15)


@dataclass
class QueueRow:
    """One overview line: a queue's figures and what the admin adds around them."""

    stats: QueueStats
    max_receive_count: int | None = None
    dead_letter: str | None = None
    dead_letter_length: int | None = None
    dead_letter_of: list[str] = field(default_factory=list)
    notify_ms: int | None = None
    workers: int = 0
    paused: bool = False
    limits: QueueLimits | None = None  # max_in_flight / rate_limit and where they stand
    length_trend: list[float | None] = field(default_factory=list)
    recent_lengths: list[int] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    url: str = ""  # its queue page, set by the view
    database: str = ""  # its database alias, set by the every-database overview

    @property
    def name(self) -> str:
        return self.stats.queue_name


@dataclass(frozen=True)
class Redrive:
    """A queue's redrive settings as the worker ranks them: the queue's own attributes,
    then its `QueueConfig` (what the last worker used), then the defaults."""

    max_receive_count: int | None = None  # the attribute, or None when the queue has none
    dead_letter_queue: str | None = None
    config: QueueConfig | None = None


def dead_letter_name(queue: str, redrive: Redrive) -> str:
    """The queue's dead-letter queue: its attribute's, its QueueConfig's, else ``<queue>_dlq``."""
    if redrive.dead_letter_queue:
        return redrive.dead_letter_queue
    if redrive.config is not None and redrive.config.dead_letter_queue:
        return redrive.config.dead_letter_queue
    return queue + DEAD_LETTER_SUFFIX


def default_max_receive_count() -> int:
    """``max_receive_count`` of a queue the worker has not configured yet (the model's default)."""
    return QueueConfig._meta.get_field("max_receive_count").get_default()


def max_receive_count_of(redrive: Redrive) -> int | None:
    """Reads after which a message counts as poison; None when it never does (0).

    The queue's own ``max_receive_count`` attribute first (what SQL dead-letters by), then
    its QueueConfig's, and the default only for a queue with neither.
    """
    if redrive.max_receive_count is not None:
        value = redrive.max_receive_count
    elif redrive.config is not None:
        value = redrive.config.max_receive_count
    else:
        value = default_max_receive_count()
    return value or None


def redrive_settings(using: str) -> dict[str, Redrive]:
    """Each queue's `Redrive` that differs from the defaults (attributes or a QueueConfig)."""
    configs = {c.queue: c for c in QueueConfig.objects.using(using)}
    attributes = InternalManager(using).redrive_attributes()
    return {
        name: Redrive(*attributes.get(name, (None, None)), config=configs.get(name))
        for name in {*configs, *attributes}
    }


def live_workers_by_queue(using: str) -> dict[str, int]:
    """How many live workers consume each queue."""
    counts: dict[str, int] = defaultdict(int)
    for queues in Worker.objects.using(using).alive().values_list("queues", flat=True):
        for name in queues or ():
            counts[name] += 1
    return counts


def length_trends(
    using: str, queues: list[str], since: timedelta = TREND_WINDOW
) -> dict[str, list[float | None]]:
    """Per queue of ``queues``, the highest sampled queue length of each minute since
    ``since`` ago."""
    now = timezone.now()
    start = (now - since).replace(second=0, microsecond=0)
    minutes = int(since.total_seconds() // 60) + 1
    rows = (
        QueueSample.objects.using(using)
        .filter(sampled_at__gte=start, queue__in=queues)
        .annotate(minute=TruncMinute("sampled_at"))
        .values_list("queue", "minute")
        .annotate(length=Max("queue_length"))
        .order_by()
    )
    trends: dict[str, list[float | None]] = {}
    for queue, minute, length in rows:
        slot = int((minute - start).total_seconds() // 60)
        if 0 <= slot < minutes:
            trends.setdefault(queue, [None] * minutes)[slot] = float(length)
    return trends


def recent_lengths(
    using: str, queues: list[str], since: timedelta = GROWTH_WINDOW
) -> dict[str, list[int]]:
    """Per queue of ``queues``, every queue length sampled since ``since`` ago, oldest first."""
    rows = (
        QueueSample.objects.using(using)
        .filter(sampled_at__gte=timezone.now() - since, queue__in=queues)
        .order_by("queue", "sampled_at", "id")
        .values_list("queue", "queue_length")
    )
    lengths: dict[str, list[int]] = {}
    for queue, length in rows:
        lengths.setdefault(queue, []).append(length)
    return lengths


def is_growing(lengths: list[int]) -> bool:
    """The queue length rose across the window: every sample at least the one before, the
    last above the first.

    A queue length that merely never fell (flat) is not growing.
    """
    return (
        len(lengths) >= 2 and all(b >= a for a, b in pairwise(lengths)) and lengths[-1] > lengths[0]
    )


NO_REDRIVE = Redrive()


def attention_flags(row: QueueRow) -> list[str]:
    """Why a queue needs a look: old backlog, growing queue length, no worker, poison, dead
    letters."""
    stats, flags = row.stats, []
    age = stats.oldest_visible_age_sec
    if age is not None and age > conf.get("DASHBOARD_BACKLOG_AGE"):
        flags.append(_("old backlog"))
    if stats.queue_length and is_growing(row.recent_lengths):  # an empty queue is not growing
        flags.append(_("growing"))
    if row.paused:
        flags.append(_("paused"))
    if stats.queue_visible_length and not row.workers and not row.dead_letter_of:
        flags.append(_("no live worker"))
    if stats.poison_length:
        flags.append(_("poison messages"))
    if row.dead_letter_length:
        flags.append(_("dead letters"))
    return flags


def _max_receive_counts(names: list[str], redrives: dict[str, Redrive], wanted: list[str]) -> dict:
    """max_receive_count of each of ``wanted`` that counts poison (dead-letter queues do not)."""
    dead_letter_queues = {dead_letter_name(n, redrives.get(n, NO_REDRIVE)) for n in names}
    return {
        n: m
        for n in wanted
        if n not in dead_letter_queues
        and (m := max_receive_count_of(redrives.get(n, NO_REDRIVE))) is not None
    }


def _stats(
    manager: InternalManager, names: list[str], redrives: dict[str, Redrive], wanted: list[str]
) -> dict[str, QueueRow]:
    """Figures of the queues ``wanted`` only, poison counted against each max_receive_count."""
    counts = _max_receive_counts(names, redrives, wanted)
    limit = conf.get("DASHBOARD_EXACT_LIMIT")
    stats = manager.dashboard_stats_of(wanted, exact_limit=limit, max_receive_count=counts)
    return {s.queue_name: QueueRow(s, max_receive_count=counts.get(s.queue_name)) for s in stats}


def _complete(
    rows: dict[str, QueueRow], names: list[str], redrives: dict[str, Redrive], using: str
) -> None:
    """Fill in dead letters, notifications, workers, trends and flags of ``rows`` (and no other)."""
    manager = InternalManager(using)
    existing = set(names)
    dead_letters = {
        name: dlq
        for name in rows
        if (dlq := dead_letter_name(name, redrives.get(name, NO_REDRIVE))) in existing
    }
    missing = sorted({dlq for dlq in dead_letters.values() if dlq not in rows})
    figures = {**(_stats(manager, names, redrives, missing) if missing else {}), **rows}
    for name, dlq in dead_letters.items():
        if dlq in figures:  # else dropped meanwhile
            rows[name].dead_letter = dlq
            rows[name].dead_letter_length = figures[dlq].stats.queue_length
    for name in names:
        dlq = dead_letter_name(name, redrives.get(name, NO_REDRIVE))
        if dlq in rows and name != dlq:
            rows[dlq].dead_letter_of.append(name)
    shown = list(rows)
    notify = manager.notify_throttles()
    paused = paused_queues(using)
    limits = {row.queue_name: row for row in manager.queue_limits()}
    workers = live_workers_by_queue(using)
    trends = length_trends(using, shown)
    recent = recent_lengths(using, shown)
    for name, row in rows.items():
        row.notify_ms = notify.get(name)
        row.workers = workers.get(name, 0)
        row.paused = name in paused
        row.limits = limits.get(name)
        row.length_trend = trends.get(name, [])
        row.recent_lengths = recent.get(name, [])
        row.flags = attention_flags(row)


def total_stats(rows: list[QueueRow]) -> QueueStats:
    """The overview's total row: every figure of `QueueStats` summed over ``rows`` (a
    figure a queue lacks, None, counts 0), but the ages (``*_sec``), which have no total
    and are None. Every figure that is not an age is a count, so a new count is summed
    without a word here. A sum is an estimate when one of its terms is."""
    values: dict[str, Any] = {}
    for figure in fields(QueueStats):
        name = figure.name
        if name == "queue_name":
            values[name] = ""
        elif name == "estimated":
            values[name] = frozenset().union(*(r.stats.estimated for r in rows))
        elif name.endswith("_sec"):
            values[name] = None
        else:
            values[name] = sum(getattr(r.stats, name) or 0 for r in rows)
    return QueueStats(**values)


def _names(using: str) -> list[str]:
    """Every queue's name, by name (one read of pgmq.meta)."""
    return list(
        Queue.objects.using(using).order_by("queue_name").values_list("queue_name", flat=True)
    )


def load_overview(using: str, queues: list[str]) -> list[QueueRow]:
    """The overview lines of ``queues``, in that order: figures, dead letters, workers, flags.

    Figures are computed for these queues (and their dead-letter queues) only.
    """
    redrives = redrive_settings(using)
    names = _names(using)
    rows = _stats(InternalManager(using), names, redrives, queues)
    _complete(rows, names, redrives, using)
    return [rows[name] for name in queues if name in rows]


def load_queue(using: str, queue: str) -> QueueRow:
    """One queue's overview line (raises QueueNotFound when it does not exist)."""
    manager = InternalManager(using)
    redrives = redrive_settings(using)
    names = _names(using)
    limit = conf.get("DASHBOARD_EXACT_LIMIT")
    counts = _max_receive_counts(names, redrives, [queue])
    stats = manager.dashboard_queue_stats(
        queue, exact_limit=limit, max_receive_count=counts.get(queue)
    )
    rows = {s.queue_name: QueueRow(s, max_receive_count=counts.get(s.queue_name)) for s in stats}
    first = next(iter(rows))
    _complete(rows, names, redrives, using)
    return rows[first]
