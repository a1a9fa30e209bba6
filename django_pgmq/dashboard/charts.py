"""A queue's charts: throughput and latency from its archive (or, for ranges longer
than a day, from ``pgmq.spark_stats`` when it has rows), queue length from QueueSample."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db.models import DateTimeField, Func, Max, Value
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _

from ..internal import InternalManager
from ..models import Queue, QueueSample
from ..records import StatsBucket, ThroughputBucket
from . import svg

# Chart ranges: window and bucket width. Buckets align on multiples of their width.
RANGES: dict[str, tuple[timedelta, timedelta]] = {
    "hour": (timedelta(hours=1), timedelta(minutes=1)),
    "day": (timedelta(days=1), timedelta(minutes=15)),
    "week": (timedelta(days=7), timedelta(hours=1)),
    "month": (timedelta(days=30), timedelta(hours=6)),
}
# Ranges whose x axis has a tick per day (or per week), at local midnight.
DAY_TICKS = {"week": 86400, "month": 7 * 86400}
# Past this window, throughput and latency come from pgmq.spark_stats when it has rows.
LONG = timedelta(days=1)
ORIGIN = datetime(2000, 1, 1, tzinfo=UTC)  # the origin pgmq._dashboard_throughput bins from


class DateBin(Func):
    """PostgreSQL's ``date_bin(stride, source, origin)``."""

    function = "date_bin"
    output_field = DateTimeField()


@dataclass(frozen=True)
class QueueCharts:
    """The SVG charts of one queue over one range."""

    range: str
    throughput: SafeString
    latency: SafeString
    queue_length: SafeString
    truncated: bool
    latency_truncated: bool
    source: str = "archive"  # or "spark": pgmq.spark_stats
    stats_missing: bool = False  # a long range, but no Spark stats for the queue
    stats_until: datetime | None = None  # the newest minute in pgmq.spark_stats


def _slots(start: datetime, end: datetime, bucket: timedelta) -> list[float]:
    """Unix times of every bucket start between ``start`` and ``end``."""
    width = bucket.total_seconds()
    first = (start.timestamp() // width) * width
    return [first + i * width for i in range(int((end.timestamp() - first) // width) + 1)]


def _clock(ts: float) -> str:
    """An x label of a short range: the local time of day."""
    return date_format(timezone.localtime(datetime.fromtimestamp(ts, UTC)), "H:i")


def _date(ts: float) -> str:
    """An x label of a long range: the local day, named in the active language."""
    return date_format(timezone.localtime(datetime.fromtimestamp(ts, UTC)), "D j M")


def _ticks(range_key: str, start: float, end: float) -> list[float]:
    """The x ticks of a range on the reader's clock: a week has one per local midnight."""
    offset = timezone.localtime(datetime.fromtimestamp(end, UTC)).utcoffset()
    seconds = offset.total_seconds() if offset is not None else 0.0
    step = DAY_TICKS.get(range_key)
    return svg.time_ticks(start, end, step=step, utc_offset=seconds)


def _series(label: str, slots: list[float], values: dict[float, float], *, bars: bool = False):
    return svg.Series(label, [(t, values.get(t)) for t in slots], bars=bars)


def lengths_by_slot(using: str, queue: str, start: datetime, bucket: timedelta) -> dict[str, dict]:
    """Highest sampled queue length, visible, in-flight and total counts per bucket, by
    Unix time."""
    rows = (
        QueueSample.objects.using(using)
        .filter(queue=queue, sampled_at__gte=start)
        .annotate(slot=DateBin(Value(bucket), "sampled_at", Value(ORIGIN)))
        .values("slot")
        .annotate(
            queue_length=Max("queue_length"),
            queue_visible_length=Max("queue_visible_length"),
            in_flight_length=Max("in_flight_length"),
            total=Max("total_messages"),
        )
        .order_by("slot")
    )
    figures: dict[str, dict] = {
        "queue_length": {},
        "queue_visible_length": {},
        "in_flight_length": {},
        "total": {},
    }
    for row in rows:
        values: Mapping[str, Any] = row
        for name, by_slot in figures.items():
            by_slot[values["slot"].timestamp()] = float(values[name])
    return figures


def sent_per_minute(
    totals: dict[float, float], bucket: timedelta, created: float | None = None
) -> dict[float, float]:
    """Messages sent per minute in each bucket, from the growth of the sampled total.

    ``total_messages`` is the queue's id sequence, exact at any volume, so this rate
    covers long ranges that the archive scan may cut short. Between two samples that
    are buckets apart (a sampler that skipped a minute, or started late) the growth
    is spread over every bucket between them, never dropped. ``created`` (the Unix
    time of the queue's bucket of creation, when in the range) counts as a sample of
    total 0: a queue's first sample then shows what was sent before it.
    """
    width = bucket.total_seconds()
    known = dict(totals)
    if created is not None and known and created < min(known):
        known[created] = 0.0
    slots = sorted(known)
    rates: dict[float, float] = {}
    for before, after in itertools.pairwise(slots):
        rate = max(known[after] - known[before], 0) / ((after - before) / 60)
        slot = before + width
        while slot <= after:
            rates[slot] = rate
            slot += width
    return rates


def _created_slot(using: str, queue: str, start: datetime, bucket: timedelta) -> float | None:
    """The Unix time of the bucket the queue was created in, when that is in the range."""
    rows = Queue.objects.using(using).filter(queue_name=queue)
    when = rows.values_list("created_at", flat=True).first()
    if when is None or when < start:
        return None
    width = bucket.total_seconds()
    return (when.timestamp() // width) * width


def _buckets(
    using: str, queue: str, window: timedelta, bucket: timedelta
) -> tuple[list[ThroughputBucket] | list[StatsBucket], str, bool]:
    """Throughput buckets, their source ("archive" or "spark"), and whether stats were missing.

    Past a day, ``pgmq.spark_stats`` answers when it holds rows for the queue in the
    window; otherwise the archive does, bounded by its row limits.
    """
    manager = InternalManager(using)
    if window > LONG:
        stats = manager.dashboard_spark_stats(queue, window=window, bucket=bucket)
        if stats:
            return stats, "spark", False
    archived = manager.dashboard_throughput(queue, window=window, bucket=bucket)
    return archived, "archive", window > LONG


def queue_charts(using: str, queue: str, range_key: str = "hour") -> QueueCharts:
    """Throughput (archived per minute), latency percentiles and queue length of ``queue``."""
    if range_key not in RANGES:
        range_key = "hour"
    window, bucket = RANGES[range_key]
    end = timezone.now()
    start = end - window
    slots = _slots(start, end, bucket)
    x_range = (slots[0], slots[-1] + bucket.total_seconds())
    frame: dict[str, Any] = {
        "x_range": x_range,
        "x_format": _date if window > LONG else _clock,
        "x_ticks": _ticks(range_key, *x_range),
        "empty_text": _("no data yet"),
        "few_text": _("too little data for a line yet"),
    }
    buckets, source, stats_missing = _buckets(using, queue, window, bucket)
    stats = [b for b in buckets if isinstance(b, StatsBucket)]  # all of them when from Spark
    minutes = bucket.total_seconds() / 60
    per_minute = {b.start.timestamp(): b.archived / minutes for b in buckets}
    latency = {
        label: {b.start.timestamp(): getattr(b, attr) for b in buckets}
        for label, attr in (("p50", "p50_sec"), ("p95", "p95_sec"), ("p99", "p99_sec"))
    }
    lengths = lengths_by_slot(using, queue, start, bucket)
    created = _created_slot(using, queue, start, bucket)
    rates = [
        _series(_("archived / min"), slots, per_minute, bars=True),
        _series(_("sent / min"), slots, sent_per_minute(lengths["total"], bucket, created)),
    ]
    origin = _("archive")
    if source == "spark":
        origin = _("Spark stats (pgmq_spark_stats)")
        retries = {b.start.timestamp(): b.retries / minutes for b in stats}
        rates.append(_series(_("retried / min"), slots, retries))
    return QueueCharts(
        range=range_key,
        throughput=svg.chart(
            rates,
            title=_("%(queue)s: messages archived and sent per minute (archived: from %(origin)s)")
            % {"queue": queue, "origin": origin},
            unit="",
            bar_width=bucket.total_seconds(),
            **frame,
        ),
        latency=svg.chart(
            [_series(label, slots, values) for label, values in latency.items()],
            title=_("%(queue)s: enqueue-to-archive latency (seconds, from %(origin)s)")
            % {"queue": queue, "origin": origin},
            unit="s",
            **frame,
        ),
        queue_length=svg.chart(
            [
                _series(_("queue length"), slots, lengths["queue_length"]),
                _series(_("visible"), slots, lengths["queue_visible_length"]),
                _series(_("in flight"), slots, lengths["in_flight_length"]),
            ],
            title=_("%(queue)s: queue length (sampled by a worker or pgmq_maintain)")
            % {"queue": queue},
            **frame,
        ),
        truncated=any(getattr(b, "truncated", False) for b in buckets),
        latency_truncated=any(getattr(b, "latency_truncated", False) for b in buckets),
        source=source,
        stats_missing=stats_missing,
        stats_until=stats[0].last_minute if stats else None,
    )
