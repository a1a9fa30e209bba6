"""`tests.record_sources` finds records read by position and follows rows read by name:
worked on small modules written here, so that its checks in
`tests/integration/test_records_read_by_name.py` can fail."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests import record_sources

STATEMENTS = {"list_queues", "metrics", "metrics_all"}
RECORDS = {"QueueInfo", "QueueMetrics"}


def found(tmp_path: Path, source: str) -> record_sources.Found:
    path = tmp_path / "module.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return record_sources.find(STATEMENTS, RECORDS, [path])


def test_records_built_by_position_are_found(tmp_path):
    result = found(
        tmp_path,
        """
        from django_pgmq.records import QueueInfo

        class Ops:
            def star(self):
                [row] = self._fetch("list_queues", {}, None)
                return QueueInfo(*row)

            def index(self):
                return [QueueInfo(row[0], row[1]) for row in self._fetch("list_queues", {}, None)]

            def unpacked(self):
                name, created = self._fetch("list_queues", {}, None)[0]
                return QueueInfo(queue_name=name, created_at=created)

            def looped(self):
                return [QueueInfo(n, c) for n, c in self._fetch("list_queues", {}, None)]

            def tuples(self):
                return [_record(QueueInfo, row) for row in self._fetch("list_queues", {}, None)]
        """,
    )
    assert [p.where.split("(")[1] for p in result.positional] == [
        "star)",
        "index)",
        "unpacked)",
        "looped)",
        "tuples)",
    ]
    assert all(p.statements == {"list_queues"} for p in result.positional)
    assert result.sources == []


def test_rows_read_by_name_are_followed_through_wrappers_and_builders(tmp_path):
    result = found(
        tmp_path,
        """
        from django_pgmq.records import QueueInfo, QueueMetrics

        def info(columns):
            return _record(QueueInfo, columns, database=columns["db"])

        class Ops:
            def _everywhere(self, query, *, named=False):
                fetch = self._fetch_named if named else self._fetch
                return [(alias, fetch(query, {}, None)) for alias in "ab"]

            def queues(self):
                return [info(row) for _, rows in self._everywhere("list_queues", named=True)
                        for row in rows]

            def metrics(self, all_of_them):
                query = "metrics_all" if all_of_them else "metrics"
                rows = self._fetch_named(query, {}, None)
                return [_record(QueueMetrics, r, database="x") for r in rows if r["seen"]]

            def unknown(self, rows):
                return [_record(QueueInfo, row) for row in rows]
        """,
    )
    assert result.positional == []
    got = {(s.statement, s.record, s.extras, s.read) for s in result.sources}
    assert got == {
        ("list_queues", "QueueInfo", frozenset({"database"}), frozenset({"db"})),
        ("metrics", "QueueMetrics", frozenset({"database"}), frozenset({"seen"})),
        ("metrics_all", "QueueMetrics", frozenset({"database"}), frozenset({"seen"})),
    }
    assert [w.split("(")[1] for w in result.unfollowed] == ["unknown)"]
    assert result.named == {"list_queues", "metrics", "metrics_all"}
