"""The dashboard's figures in Prometheus' text format, for ``path("pgmq/metrics", metrics)``.

Access: a request bearing ``Authorization: Bearer <PGMQ["METRICS_TOKEN"]>`` (when that
setting is set), or a logged-in staff user with the ``django_pgmq.view_queue``
permission. ``?db=<alias>`` selects another database.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable, Iterable

from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET

from .. import conf
from ..models import Worker
from .access import current_db
from .overview import QueueRow, load_overview

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

# name, type, help, value of a row (None: leave the sample out).
FAMILIES: list[tuple[str, str, str, Callable[[QueueRow], float | None]]] = [
    ("pgmq_queue_length", "gauge", "Messages in the queue.", lambda r: r.stats.depth),
    ("pgmq_queue_visible_length", "gauge", "Messages ready to read.", lambda r: r.stats.visible),
    (
        "pgmq_queue_in_flight_length",
        "gauge",
        "Read messages not yet visible again.",
        lambda r: r.stats.in_flight,
    ),
    (
        "pgmq_queue_delayed_length",
        "gauge",
        "Sent with a delay, not yet visible.",
        lambda r: r.stats.delayed,
    ),
    (
        "pgmq_queue_oldest_message_age_seconds",
        "gauge",
        "Age of the oldest message.",
        lambda r: r.stats.oldest_age_sec,
    ),
    (
        "pgmq_queue_oldest_visible_age_seconds",
        "gauge",
        "How long the oldest ready message has waited.",
        lambda r: r.stats.oldest_visible_age_sec,
    ),
    ("pgmq_archive_length", "gauge", "Messages in the archive.", lambda r: r.stats.archive_size),
    (
        "pgmq_archived_last_hour",
        "gauge",
        "Messages archived in the last hour.",
        lambda r: r.stats.archived_hour,
    ),
    (
        "pgmq_archived_last_day",
        "gauge",
        "Messages archived in the last day.",
        lambda r: r.stats.archived_day,
    ),
    (
        "pgmq_poison_messages",
        "gauge",
        "Messages read at least max_reads times.",
        lambda r: r.stats.poison,
    ),
    (
        "pgmq_dead_letter_length",
        "gauge",
        "Messages in the queue's dead-letter queue.",
        lambda r: r.dead_letter_depth,
    ),
    ("pgmq_queue_workers", "gauge", "Live workers consuming the queue.", lambda r: r.workers),
    (
        "pgmq_messages_total",
        "counter",
        "Messages ever sent to the queue.",
        lambda r: r.stats.total_messages,
    ),
]


def label_value(text: str) -> str:
    """A label value escaped as the text format requires."""
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(**labels: str) -> str:
    return ",".join(f'{k}="{label_value(v)}"' for k, v in labels.items())


def render_metrics(rows: Iterable[QueueRow], db: str, live_workers: int) -> str:
    """Every metric family for ``rows``, plus which figures are estimates."""
    rows = list(rows)
    lines: list[str] = []
    for name, kind, text, value in FAMILIES:
        lines += [f"# HELP {name} {text}", f"# TYPE {name} {kind}"]
        for row in rows:
            figure = value(row)
            if figure is not None:
                lines.append(f"{name}{{{_labels(database=db, queue=row.name)}}} {figure}")
    lines += [
        "# HELP pgmq_figure_estimated 1 when a queue's figure is an estimate, not a count.",
        "# TYPE pgmq_figure_estimated gauge",
    ]
    for row in rows:
        for figure in sorted(row.stats.estimated):
            labels = _labels(database=db, queue=row.name, figure=figure)
            lines.append(f"pgmq_figure_estimated{{{labels}}} 1")
    lines += [
        "# HELP pgmq_workers_live Workers whose heartbeat is current.",
        "# TYPE pgmq_workers_live gauge",
        f"pgmq_workers_live{{{_labels(database=db)}}} {live_workers}",
    ]
    return "\n".join(lines) + "\n"


def _token_ok(request: HttpRequest) -> bool:
    token = conf.get("METRICS_TOKEN")
    given = request.headers.get("Authorization", "")
    if not token or not given.startswith("Bearer "):
        return False
    return hmac.compare_digest(given.removeprefix("Bearer ").encode(), str(token).encode())


@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    """Prometheus scrape endpoint: 401 without credentials, 403 without the view permission."""
    if not _token_ok(request):
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated:
            response = HttpResponse("credentials required\n", status=401, content_type=CONTENT_TYPE)
            response["WWW-Authenticate"] = 'Bearer realm="pgmq metrics"'
            return response
        if not (user.is_active and user.is_staff and user.has_perm("django_pgmq.view_queue")):
            return HttpResponse("permission denied\n", status=403, content_type=CONTENT_TYPE)
    db = current_db(request)
    live = Worker.objects.using(db).alive().count()
    return HttpResponse(render_metrics(load_overview(db), db, live), content_type=CONTENT_TYPE)
