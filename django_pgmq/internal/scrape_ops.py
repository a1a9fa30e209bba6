"""Internal: the Prometheus endpoint's figures, one statement per scrape."""

from __future__ import annotations

from ..manager.plumbing import Base, _check_int
from ..names import DEAD_LETTER_SUFFIX
from ..records import Scrape, ScrapedQueue
from .dashboard_ops import queue_stats


class ScrapeOps(Base):
    """The Prometheus endpoint's read (sql/queries.sql: prometheus_scrape)."""

    def prometheus_scrape(self, *, exact_limit: int, default_max_receive_count: int) -> Scrape:
        """Every queue's dashboard figures (estimates past ``exact_limit`` rows), in one query.

        Poison counts against each queue's QueueConfig ``max_receive_count``, else
        ``default_max_receive_count``; dead-letter queues count none.
        """
        from ..models import QueueConfig, Worker

        params = {
            "exact_limit": _check_int("exact_limit", exact_limit, 1, 2**62),
            "default_max_receive_count": _check_int(
                "default_max_receive_count", default_max_receive_count, 0
            ),
            "dead_letter_suffix": DEAD_LETTER_SUFFIX,
        }
        tables = {"config": QueueConfig._meta.db_table, "worker": Worker._meta.db_table}
        rows = self._fetch_named("prometheus_scrape", params, None, tables)
        queues = [
            ScrapedQueue(queue_stats(row), row["dead_letter"], row["workers"])
            for row in rows
            if row["queue_name"] is not None
        ]
        return Scrape(queues, rows[0]["live_workers"] if rows else 0)
