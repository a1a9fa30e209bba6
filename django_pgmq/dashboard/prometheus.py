"""The dashboard's figures for Prometheus, exported with prometheus_client.

``path("pgmq/metrics", prometheus_metrics)`` serves them (``metrics``, the view's old
name, is a deprecated alias: "metrics" also names ``pgmq.metrics()`` and
``pgmq_metrics``). Each scrape runs one bounded SQL query
(`InternalManager.prometheus_scrape`: the admin's figures, from the one source
``pgmq._queue_figures`` that ``pgmq.metrics()`` reads too), and one for the limited
queues (`queue_limits`: max_in_flight, rate_limit), through a `PgmqCollector`; the reply
is OpenMetrics when the scraper asks for it (``Accept``), else Prometheus' text format.

Access: a request bearing ``Authorization: Bearer <PGMQ["METRICS_TOKEN"]>`` (when that
setting is set), or a logged-in staff user with the ``django_pgmq.view_queue``
permission. ``?db=<alias>`` selects one database; without it, every database that
holds queues (``PGMQ["QUEUE_DATABASES"]``), labelled by ``database``, with
``pgmq_database_up`` saying which could be read. ``PGMQ["READ_DATABASE"]``: the
figures come from the replica.
"""

from __future__ import annotations

import hmac
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET
from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import choose_encoder

from .. import conf, routing
from ..internal import InternalManager
from ..records import QueueLimits, Scrape, ScrapedQueue
from .access import current_db
from .overview import default_max_receive_count

PLAIN_TEXT = "text/plain; charset=utf-8"

# Gauges per queue: name, help, value of a queue (None: leave the sample out).
QUEUE_GAUGES: list[tuple[str, str, Callable[[ScrapedQueue, Scrape], float | None]]] = [
    ("pgmq_queue_length", "Messages in the queue.", lambda q, _: q.stats.queue_length),
    (
        "pgmq_queue_visible_length",
        "Messages ready to read.",
        lambda q, _: q.stats.queue_visible_length,
    ),
    (
        "pgmq_queue_in_flight_length",
        "Read messages not yet visible again.",
        lambda q, _: q.stats.in_flight_length,
    ),
    (
        "pgmq_queue_delayed_length",
        "Sent with a delay, not yet visible.",
        lambda q, _: q.stats.delayed_length,
    ),
    (
        "pgmq_queue_oldest_message_age_seconds",
        "Age of the oldest message.",
        lambda q, _: q.stats.oldest_msg_age_sec,
    ),
    (
        "pgmq_queue_oldest_visible_age_seconds",
        "How long the oldest ready message has waited.",
        lambda q, _: q.stats.oldest_visible_age_sec,
    ),
    ("pgmq_archive_length", "Messages in the archive.", lambda q, _: q.stats.archive_size),
    (
        "pgmq_archived_last_hour",
        "Messages archived in the last hour.",
        lambda q, _: q.stats.archived_hour,
    ),
    (
        "pgmq_archived_last_day",
        "Messages archived in the last day.",
        lambda q, _: q.stats.archived_day,
    ),
    (
        "pgmq_poison_messages",
        "Messages read at least max_receive_count times.",
        lambda q, _: q.stats.poison_length,
    ),
    (
        "pgmq_dead_letter_length",
        "Messages in the queue's dead-letter queue.",
        lambda q, scrape: _dead_letter_length(q, scrape),
    ),
    ("pgmq_queue_workers", "Live workers consuming the queue.", lambda q, _: q.workers),
]


# The ``figure`` label of pgmq_figure_estimated for the figures QueueStats renamed to
# pgmq's names: scrapers' alerts match the label's value, so it stays as it was.
ESTIMATED_LABELS = {
    "queue_length": "depth",
    "queue_visible_length": "visible",
    "in_flight_length": "in_flight",
    "delayed_length": "delayed",
    "poison_length": "poison",
}


def _dead_letter_length(queue: ScrapedQueue, scrape: Scrape) -> int | None:
    """Length of the queue's dead-letter queue; None when it does not exist."""
    for other in scrape.queues:
        if other.stats.queue_name == queue.dead_letter:
            return other.stats.queue_length
    return None


class PgmqCollector:
    """A prometheus_client collector of some databases' queues: one SQL query per database.

    Each database is read through its replica when ``PGMQ["READ_DATABASE"]`` names one
    (`routing.read_database`); its samples carry the queue database's alias. With
    ``tolerate_down``, a database that cannot be read is left out and reported by
    ``pgmq_database_up`` 0; otherwise its error ends the scrape.
    """

    def __init__(self, using: str | list[str], *, tolerate_down: bool = False) -> None:
        self.aliases = [using] if isinstance(using, str) else list(using)
        self.tolerate_down = tolerate_down

    def collect(self) -> Iterator[Metric]:
        scrapes: list[tuple[str, Scrape | None]] = []
        limits: list[tuple[str, list[QueueLimits]]] = []
        for alias in self.aliases:
            manager = InternalManager(routing.read_database(alias))
            try:
                scrape = manager.prometheus_scrape(
                    exact_limit=int(conf.get("DASHBOARD_EXACT_LIMIT")),
                    default_max_receive_count=default_max_receive_count(),
                )
                limits.append((alias, manager.queue_limits()))
            except DatabaseError:
                if not self.tolerate_down:
                    raise
                scrape = None
            scrapes.append((alias, scrape))
        yield from metric_families(scrapes)
        yield from limit_families(limits)


# Gauges per limited queue: name, help, value (None: leave the sample out).
LIMIT_GAUGES: list[tuple[str, str, Callable[[QueueLimits], float | None]]] = [
    ("pgmq_queue_max_in_flight", "The queue's max_in_flight.", lambda q: q.max_in_flight),
    (
        "pgmq_queue_limit_in_flight",
        "Messages counted against max_in_flight now.",
        lambda q: q.in_flight if q.max_in_flight else None,
    ),
    ("pgmq_queue_rate_limit_count", "The queue's rate_limit count.", lambda q: q.rate_count),
    (
        "pgmq_queue_rate_limit_seconds",
        "The queue's rate_limit window.",
        lambda q: q.rate_seconds,
    ),
    (
        "pgmq_queue_rate_limit_handed_out",
        "Messages handed out in the current rate_limit window.",
        lambda q: q.handed_out if q.rate_count else None,
    ),
]


def limit_families(limits: list[tuple[str, list[QueueLimits]]]) -> Iterator[Metric]:
    """The gauges of the queues with max_in_flight or rate_limit, by database."""
    for name, text, value in LIMIT_GAUGES:
        family = GaugeMetricFamily(name, text, labels=["database", "queue"])
        for db, rows in limits:
            for row in rows:
                figure = value(row)
                if figure is not None:
                    family.add_metric([db, row.queue_name], figure)
        yield family


def metric_families(scrapes: list[tuple[str, Scrape | None]]) -> Iterator[Metric]:
    """The metric families of scrapes by database: per-queue gauges and counters, workers,
    estimates, and whether each database could be read (None: it could not)."""
    labels = ["database", "queue"]
    read = [(db, scrape) for db, scrape in scrapes if scrape is not None]
    for name, text, value in QUEUE_GAUGES:
        family = GaugeMetricFamily(name, text, labels=labels)
        for db, scrape in read:
            for queue in scrape.queues:
                figure = value(queue, scrape)
                if figure is not None:
                    family.add_metric([db, queue.stats.queue_name], figure)
        yield family
    sent = CounterMetricFamily("pgmq_messages", "Messages ever sent to the queue.", labels=labels)
    for db, scrape in read:
        for queue in scrape.queues:
            sent.add_metric([db, queue.stats.queue_name], queue.stats.total_messages)
    yield sent
    estimated = GaugeMetricFamily(
        "pgmq_figure_estimated",
        "1 when a queue's figure is an estimate, not a count.",
        labels=[*labels, "figure"],
    )
    for db, scrape in read:
        for queue in scrape.queues:
            for name in sorted(ESTIMATED_LABELS.get(n, n) for n in queue.stats.estimated):
                estimated.add_metric([db, queue.stats.queue_name, name], 1)
    yield estimated
    live = GaugeMetricFamily(
        "pgmq_workers_live", "Workers whose heartbeat is current.", labels=["database"]
    )
    for db, alive in read:
        live.add_metric([db], alive.live_workers)
    yield live
    up = GaugeMetricFamily(
        "pgmq_database_up", "1 when the queue database could be read.", labels=["database"]
    )
    for db, maybe in scrapes:
        up.add_metric([db], 0 if maybe is None else 1)
    yield up


def _token_ok(request: HttpRequest) -> bool:
    token = conf.get("METRICS_TOKEN")
    given = request.headers.get("Authorization", "")
    if not token or not given.startswith("Bearer "):
        return False
    return hmac.compare_digest(given.removeprefix("Bearer ").encode(), str(token).encode())


@require_GET
def prometheus_metrics(request: HttpRequest) -> HttpResponse:
    """Prometheus scrape endpoint: 401 without credentials, 403 without the view permission."""
    if not _token_ok(request):
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated:
            response = HttpResponse("credentials required\n", status=401, content_type=PLAIN_TEXT)
            response["WWW-Authenticate"] = 'Bearer realm="pgmq metrics"'
            return response
        if not (user.is_active and user.is_staff and user.has_perm("django_pgmq.view_queue")):
            return HttpResponse("permission denied\n", status=403, content_type=PLAIN_TEXT)
    registry = CollectorRegistry(auto_describe=False)
    if "db" in request.GET or len(routing.queue_databases()) == 1:
        registry.register(PgmqCollector(current_db(request)))
    else:  # routed queues: every queue database; one that is down does not hide the others
        registry.register(PgmqCollector(routing.queue_databases(), tolerate_down=True))
    encode, content_type = choose_encoder(request.headers.get("Accept", ""))
    try:
        body = encode(registry)
    except DatabaseError as exc:  # the scrape fails visibly, as one line, not as a 500 page
        text = str(exc.__cause__ or exc).strip().splitlines()
        message = f"database unavailable: {text[0] if text else type(exc).__name__}\n"
        return HttpResponse(message, status=503, content_type=PLAIN_TEXT)
    return HttpResponse(body, content_type=content_type)


def deprecated_metrics(stacklevel: int = 3) -> Callable[[HttpRequest], HttpResponse]:
    """`prometheus_metrics`, warning that ``metrics``, its old name, is deprecated."""
    warnings.warn(
        "django_pgmq's Prometheus view `metrics` is deprecated: use prometheus_metrics",
        DeprecationWarning,
        stacklevel=stacklevel,
    )
    return prometheus_metrics


def __getattr__(name: str) -> Any:
    """``metrics``: the deprecated name of `prometheus_metrics` (it warns)."""
    if name == "metrics":
        return deprecated_metrics()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
