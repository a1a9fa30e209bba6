"""The dashboard's SVG renderer (no database): well-formed, escaped, honest about gaps."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from django_pgmq.dashboard import svg

NS = "{http://www.w3.org/2000/svg}"
FRAME = {"x_range": (0.0, 3600.0), "x_format": lambda t: f"t{int(t)}"}


def parse(markup: str) -> ET.Element:
    return ET.fromstring(markup)


@pytest.mark.parametrize(
    ("span", "step"), [(10, 2.5), (4, 1), (100, 25), (1000, 250), (7, 2), (0, 1), (3e6, 1e6)]
)
def test_nice_step(span, step):
    assert svg.nice_step(span) == step


def test_y_ticks_cover_the_top_from_zero():
    assert svg.y_ticks(9) == [0, 2.5, 5, 7.5, 10]
    assert svg.y_ticks(0) == [0, 1]


def test_time_ticks_fall_on_round_minutes():
    ticks = svg.time_ticks(1_000_030, 1_003_630)
    assert all(t % 600 == 0 for t in ticks)
    assert ticks[0] >= 1_000_030 and ticks[-1] <= 1_003_630
    assert len(ticks) <= 7


@pytest.mark.parametrize(
    ("value", "text"),
    [(950, "950"), (1234, "1.23k"), (2_500_000, "2.5M"), (0.25, "0.25"), (3.0, "3")],
)
def test_short_number(value, text):
    assert svg.short_number(value) == text


def test_chart_is_well_formed_and_escapes_text():
    series = [svg.Series("<b>x</b>", [(0, 1), (60, 2)])]
    markup = svg.chart(series, title='a "quoted" <title>', **FRAME)
    root = parse(markup)
    assert root.tag == NS + "svg"
    assert root.find(NS + "title").text == 'a "quoted" <title>'
    assert "<b>" not in markup
    assert any(t.text == "<b>x</b>" for t in root.iter(NS + "text"))


def test_a_gap_splits_the_line():
    points = [(0, 1), (60, 2), (120, None), (180, 3), (240, 4)]
    root = parse(svg.chart([svg.Series("s", points)], title="t", **FRAME))
    assert len(root.findall(f".//{NS}polyline")) == 2


def test_a_lonely_point_is_a_dot():
    root = parse(
        svg.chart([svg.Series("s", [(0, None), (60, 5), (120, None)])], title="t", **FRAME)
    )
    assert len(root.findall(f".//{NS}circle")) == 1


def test_bars_for_non_zero_buckets_only():
    series = svg.Series("n", [(0, 3), (60, 0), (120, 5), (180, None)], bars=True)
    root = parse(svg.chart([series], title="t", bar_width=60, **FRAME))
    bars = [r for r in root.iter(NS + "rect") if r.find(NS + "title") is not None]
    assert [b.find(NS + "title").text for b in bars] == ["3", "5"]
    assert float(bars[1].get("height")) > float(bars[0].get("height"))


def test_empty_chart_says_so():
    markup = svg.chart([svg.Series("s", [(0, None)])], title="t", **FRAME)
    assert "no data yet" in markup
    parse(markup)


def test_sparkline():
    root = parse(svg.sparkline([1, 2, None, 4, 5], title="q"))
    assert len(root.findall(f".//{NS}polyline")) == 2
    assert root.get("aria-label") == "q"


def test_day_ticks_fall_on_local_midnight():
    start = 1_000_000_000.0  # 2001-09-09 01:46:40 UTC
    ticks = svg.time_ticks(start, start + 7 * 86400, step=86400, utc_offset=2 * 3600)
    assert len(ticks) == 7
    assert all((t + 2 * 3600) % 86400 == 0 for t in ticks)


def test_a_chart_of_lone_points_says_it_has_too_little_data():
    """A fresh install's single sample is a dot at the right edge."""
    lone = svg.chart([svg.Series("s", [(0, None), (120, 5)])], title="t", **FRAME)
    assert "too little data for a line yet" in lone
    line = svg.chart([svg.Series("s", [(0, 4), (120, 5)])], title="t", **FRAME)
    assert "too little data" not in line and "no data yet" not in line


def test_a_sparkline_of_one_sample_draws_no_dot():
    one = svg.sparkline([None, None, 7], title="q", few_text="too few samples")
    assert "<circle" not in one and "too few samples" in one
    two = svg.sparkline([None, 6, 7], title="q")
    assert "<polyline" in two and "too few" not in two


def test_sent_per_minute_spreads_a_gap_between_samples_and_counts_from_creation():
    """90 sent between samples two minutes apart is not 0."""
    from datetime import timedelta

    from django_pgmq.dashboard.charts import sent_per_minute

    minute = timedelta(minutes=1)
    rates = sent_per_minute({0.0: 10, 60.0: 10, 180.0: 100}, minute)
    assert rates == {60.0: 0.0, 120.0: 45.0, 180.0: 45.0}
    fresh = sent_per_minute({300.0: 90}, minute, created=120.0)  # one sample, made at 120
    assert fresh == {180.0: 30.0, 240.0: 30.0, 300.0: 30.0}
