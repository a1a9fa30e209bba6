"""manage.py pgmq_metrics: queue lengths and ages, a page of queues at a time."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict
from typing import Any

from django.core.management.base import CommandError

from ...manager import QueueManager
from ...records import QueueLimits, QueueMetrics
from ..command_base import (
    PgmqCommand,
    format_table,
    metrics_table,
    non_negative_int,
    positive_int,
    record,
    to_json,
)
from ..reference import ReferenceRow

DEFAULT_LIMIT = 100


LIMITS_HEADERS = ("queue", "in flight", "max_in_flight", "handed out", "rate_limit")


def limits_table(limits: Iterable[QueueLimits], several: bool = False) -> str:
    """The limited queues' figures as an aligned table (a database column with ``several``)."""
    rows = [
        (
            row.queue_name,
            *((row.database,) if several else ()),
            row.in_flight if row.max_in_flight else None,
            row.max_in_flight,
            row.handed_out if row.rate_count else None,
            f"{row.rate_count}/{row.rate_seconds:g}s" if row.rate_count else None,
        )
        for row in limits
    ]
    headers = (LIMITS_HEADERS[0], "database", *LIMITS_HEADERS[1:]) if several else LIMITS_HEADERS
    first = 2 if several else 1
    return format_table(headers, rows, right=range(first, first + 3))


def _limits_json(row: QueueLimits | None) -> dict[str, Any] | None:
    if row is None:
        return None
    return {k: v for k, v in asdict(row).items() if k not in ("queue_name", "database")}


class Command(PgmqCommand):
    help = f"""Show metrics of some queues: length, visible, ages, total sent.

length counts the messages in the queue, visible those that can be read now;
newest/oldest age are the ages of the newest and oldest message; total counts
every message ever sent to the queue. A queue with max_in_flight or rate_limit
also shows, in a second table, its limits, the messages in flight now and those
handed out in the current window (JSON: a "limits" object, null for the others).

Without QUEUE names it shows the first {DEFAULT_LIMIT} queues by name; --limit and
--offset choose another page, --all shows every queue. When some queues are left
out, a line on stderr says which were shown and how to see the rest; stdout holds
only the table (or the JSON array).

With PGMQ['QUEUE_DATABASES'] routes and no --database, the queues of every queue
database are shown (PGMQ['DATABASE'] first, then each routed one, by name in each),
with a database column (JSON: a "database" key); a QUEUE named is looked up in its
routed database. --database limits it all to one database.

examples:
  manage.py pgmq_metrics
  manage.py pgmq_metrics orders emails
  manage.py pgmq_metrics --offset 100
  manage.py pgmq_metrics --all --json
"""
    reference = ReferenceRow(
        usage="`pgmq_metrics [QUEUE...]`",
        prints="""`queue, length, visible, newest age, oldest age, total` as an aligned table,
        or `--json` (pgmq's metrics rows, ages in seconds). Without QUEUE names: the first 100
        queues by name (`--limit N`, `--offset N` for another page, `--all` for every queue),
        and a line on stderr such as `queues 1-100 of 10,000 shown (by name); 9,900 more:
        --offset 100, or --all` when some are left out""",
        fails="""`--limit` is not a positive integer or `--offset` not a non-negative one;
        `--limit`, `--offset` or `--all` is given with QUEUE names""",
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "queues", nargs="*", metavar="QUEUE", help="Queues to show (default: all, paged)."
        )
        paging = parser.add_mutually_exclusive_group()
        paging.add_argument(
            "--limit",
            type=positive_int,
            metavar="N",
            help=f"Show at most N queues (default: {DEFAULT_LIMIT}).",
        )
        paging.add_argument("--all", action="store_true", help="Show every queue.")
        parser.add_argument(
            "--offset",
            type=non_negative_int,
            metavar="N",
            help="Skip the first N queues, by name (default: 0).",
        )
        parser.add_argument(
            "--json",
            action="store_true",
            help="Print a JSON array of pgmq.metrics() rows (ages in seconds) instead.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        several = self.several_databases(options)
        if options["queues"]:
            if options["limit"] or options["all"] or options["offset"] is not None:
                raise CommandError(
                    "--limit, --offset and --all page through all queues; "
                    "they cannot be combined with QUEUE names"
                )
            manager = self.manager(options)
            metrics = [manager.metrics(q) for q in options["queues"]]
        else:
            metrics = self.page(options)
        shown = {(m.database, m.queue_name) for m in metrics}
        limits = {
            (row.database, row.queue_name): row
            for row in self.manager(options).queue_limits()
            if (row.database, row.queue_name) in shown
        }
        if options["json"]:
            rows = [
                {
                    **record(m, several),
                    "limits": _limits_json(limits.get((m.database, m.queue_name))),
                }
                for m in metrics
            ]
            self.stdout.write(to_json(rows))
        elif metrics:
            self.stdout.write(metrics_table(metrics, several))
            if limits:
                self.stdout.write("")
                self.stdout.write(limits_table(limits.values(), several))
        else:
            self.stdout.write("no queues")

    def page(self, options: dict[str, Any]) -> list[QueueMetrics]:
        """The queues of the page asked for, database by database (``PGMQ["DATABASE"]``
        first) and by name in each; says on stderr what was left out.

        Only the page's queues are counted: a page of 100 among 10,000 queues costs
        what 100 queues cost. ``--all`` uses ``metrics_all()``, one pass over all.
        """
        manager = self.manager(options)  # routed: every queue database
        offset = options["offset"] or 0
        if options["all"]:
            metrics = manager.metrics_all()
            total = len(metrics)
            metrics = metrics[offset:]
        else:
            queues = manager.list_queues()
            total = len(queues)
            limit = options["limit"] or DEFAULT_LIMIT
            metrics = [
                QueueManager(q.database).metrics(q.queue_name)
                for q in queues[offset : offset + limit]
            ]
        shown = len(metrics)
        if shown < total:
            self.stderr.write(_left_out(offset, shown, total, paged=not options["all"]))
        return metrics


def _left_out(offset: int, shown: int, total: int, *, paged: bool) -> str:
    """The line saying which queues a page shows and how to see the others."""
    if not shown:
        return f"no queues at --offset {offset}: there are {total:,}"
    text = f"queues {offset + 1:,}-{offset + shown:,} of {total:,} shown (by name)"
    if offset + shown < total:
        text += f"; {total - offset - shown:,} more: --offset {offset + shown}"
    return text + (", or --all" if paged else "")
