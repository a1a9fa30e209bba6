"""Facts declared once: a queue's notification channels (SQL's pgmq._queue_channel,
mirrored by names.py) and the default dead-letter suffix (names.DEAD_LETTER_SUFFIX,
given to the Prometheus scrape as a parameter)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from django_pgmq.dashboard.overview import NO_REDRIVE, dead_letter_name
from django_pgmq.names import (
    DEAD_LETTER_SUFFIX,
    FREE_EVENT,
    INSERT_EVENT,
    limit_channel,
    notify_channel,
)
from django_pgmq.worker.config import default_dead_letter

SQL = Path(__file__).resolve().parents[2] / "django_pgmq" / "sql"
# A channel spelled out in SQL text rather than by pgmq._queue_channel.
_SPELLED = re.compile(r"'pgmq\.q_'\s*\|\|")


@pytest.mark.parametrize("queue", ["orders", "Mixed_Case-1"])
def test_python_and_sql_name_the_same_channels(tx, queue):
    """Fails when names.CHANNEL and pgmq._queue_channel (or _limit_channel) differ."""
    row = tx.execute(
        "SELECT pgmq._queue_channel(%s, %s), pgmq._queue_channel(%s, %s), pgmq._limit_channel(%s)",
        [queue, INSERT_EVENT, queue, FREE_EVENT, queue],
    ).fetchone()
    assert row == (notify_channel(queue), limit_channel(queue), limit_channel(queue))


def test_no_sql_body_spells_a_channel_itself():
    """Every channel in the live SQL comes from pgmq._queue_channel (05_names.sql)."""
    spelled = [
        f"{path.name}: {line.strip()}"
        for path in sorted(SQL.glob("*.sql"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if _SPELLED.search(line) and "_queue_channel" not in line
    ]
    declaration = [s for s in spelled if s.startswith("05_names.sql") and "'.' || event" in s]
    assert spelled == declaration and len(declaration) == 1, spelled


def test_the_dead_letter_suffix_is_one(internal, queue):
    """The worker, the overview and the Prometheus scrape name the same default."""
    expected = queue + DEAD_LETTER_SUFFIX
    assert default_dead_letter(queue) == expected
    assert dead_letter_name(queue, NO_REDRIVE) == expected
    scrape = internal.prometheus_scrape(exact_limit=100, default_max_receive_count=5)
    assert {q.stats.queue_name: q.dead_letter for q in scrape.queues}[queue] == expected
