"""A small server-side SVG chart renderer: line/bar charts and sparklines, no JavaScript.

Charts are inline ``<svg>`` elements, so the dashboard needs no CDN, no network and
no chart library. Every text that reaches the markup is escaped here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

from django.utils.safestring import SafeString, mark_safe

PALETTE = ("#417690", "#e8883a", "#c0392b", "#6a9f3a", "#8e6bb8")
_TIME_STEPS = (60, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 604800)


@dataclass(frozen=True)
class Series:
    """One named series of (x, y) points; x is usually a Unix time, y None for a gap."""

    label: str
    points: Sequence[tuple[float, float | None]]
    bars: bool = False


def short_number(value: float) -> str:
    """A compact label: 950, 1.2k, 3.4M."""
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= limit:
            return f"{value / limit:.3g}{suffix}"
    return f"{value:.3g}" if value != int(value) else str(int(value))


def nice_step(span: float, count: int = 4) -> float:
    """A round step (1, 2, 2.5 or 5 times a power of ten) splitting ``span`` in ~count parts."""
    if span <= 0:
        return 1.0
    raw = span / count
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 2.5, 5, 10):
        if raw <= factor * power:
            return factor * power
    return 10 * power


def y_ticks(top: float, count: int = 4) -> list[float]:
    """Ticks from 0 covering ``top``, on a round step."""
    step = nice_step(top, count)
    return [i * step for i in range(math.ceil(top / step) + 1 if top > 0 else 2)]


def time_ticks(
    start: float,
    end: float,
    max_ticks: int = 7,
    *,
    step: int | None = None,
    utc_offset: float = 0.0,
) -> list[float]:
    """Unix times on a round interval (minutes, hours, days) within [start, end].

    ``utc_offset`` (seconds east of UTC) puts hour and day ticks on the reader's
    local clock, e.g. day ticks at local midnight; ``step`` forces the interval.
    """
    span = end - start
    if step is None:
        step = next((s for s in _TIME_STEPS if span / s <= max_ticks), _TIME_STEPS[-1])
    first = math.ceil((start + utc_offset) / step) * step - utc_offset
    return [float(t) for t in range(int(first), int(end) + 1, step)]


def _attrs(**attrs: object) -> str:
    return " ".join(
        f'{k.rstrip("_").replace("_", "-")}="{escape(str(v))}"' for k, v in attrs.items()
    )


def _tag(name: str, content: str = "", **attrs: object) -> str:
    return f"<{name} {_attrs(**attrs)}>{content}</{name}>"


class _Frame:
    """Maps data coordinates to pixels inside the chart's plot area."""

    def __init__(self, width: int, height: int, x_range: tuple[float, float], top: float) -> None:
        self.left, self.right, self.top_px, self.bottom = 48, width - 10, 24, height - 22
        self.x0, self.x1 = x_range
        self.y1 = top

    def x(self, value: float) -> float:
        span = (self.x1 - self.x0) or 1
        return round(self.left + (value - self.x0) / span * (self.right - self.left), 1)

    def y(self, value: float) -> float:
        return round(self.bottom - value / (self.y1 or 1) * (self.bottom - self.top_px), 1)


def _axes(frame: _Frame, ticks: list[float], x_labels: list[tuple[float, str]], unit: str) -> str:
    parts = []
    for tick in ticks:
        y = frame.y(tick)
        parts.append(
            _tag("line", x1=frame.left, x2=frame.right, y1=y, y2=y, class_="pgmq-grid")
            + _tag(
                "text",
                escape(short_number(tick) + unit),
                x=frame.left - 4,
                y=y + 4,
                text_anchor="end",
            )
        )
    for x_value, label in x_labels:
        x = frame.x(x_value)
        parts.append(
            _tag("line", x1=x, x2=x, y1=frame.bottom, y2=frame.bottom + 4, class_="pgmq-axis")
            + _tag("text", escape(label), x=x, y=frame.bottom + 16, text_anchor="middle")
        )
    parts.append(
        _tag(
            "line",
            x1=frame.left,
            x2=frame.right,
            y1=frame.bottom,
            y2=frame.bottom,
            class_="pgmq-axis",
        )
    )
    return "".join(parts)


def _line(frame: _Frame, series: Series, color: str) -> str:
    """A polyline per run of non-None points, so gaps in the data stay visible."""
    runs: list[list[tuple[float, float]]] = [[]]
    for x, y in series.points:
        if y is None:
            runs.append([])
        else:
            runs[-1].append((frame.x(x), frame.y(y)))
    parts = []
    for run in runs:
        if len(run) > 1:
            points = " ".join(f"{x},{y}" for x, y in run)
            parts.append(
                _tag("polyline", points=points, fill="none", stroke=color, stroke_width=1.6)
            )
        elif run:
            parts.append(_tag("circle", cx=run[0][0], cy=run[0][1], r=1.8, fill=color))
    return "".join(parts)


def _bars(frame: _Frame, series: Series, color: str, bar_width: float) -> str:
    width_px = max(frame.x(frame.x0 + bar_width) - frame.x(frame.x0) - 1, 1)
    return "".join(
        _tag(
            "rect",
            _tag("title", escape(f"{short_number(y)}")),
            x=frame.x(x),
            y=frame.y(y),
            width=round(width_px, 1),
            height=round(frame.bottom - frame.y(y), 1),
            fill=color,
        )
        for x, y in series.points
        if y
    )


def _legend(series: Sequence[Series], left: int) -> str:
    parts, x = [], left
    for index, item in enumerate(series):
        color = PALETTE[index % len(PALETTE)]
        parts.append(_tag("rect", x=x, y=6, width=10, height=10, fill=color))
        parts.append(_tag("text", escape(item.label), x=x + 14, y=15))
        x += 24 + 7 * len(item.label)
    return "".join(parts)


def chart(
    series: Sequence[Series],
    *,
    title: str,
    x_range: tuple[float, float],
    x_format: Callable[[float], str],
    unit: str = "",
    bar_width: float = 0,
    width: int = 560,
    height: int = 180,
    x_ticks: Sequence[float] | None = None,
    empty_text: str = "no data yet",
    few_text: str = "too little data for a line yet",
) -> SafeString:
    """A line (or bar) chart of ``series`` over ``x_range``, with axes, grid and legend.

    ``x_ticks`` (Unix times) default to round times of UTC; ``empty_text`` shows without
    data, ``few_text`` when no series has two points to join (lone dots only, as on a
    fresh install: the chart says why it shows no line).
    """
    values = [y for s in series for _, y in s.points if y is not None]
    ticks = y_ticks(max(values, default=0))
    frame = _Frame(width, height, x_range, ticks[-1])
    x_labels = [(t, x_format(t)) for t in (time_ticks(*x_range) if x_ticks is None else x_ticks)]
    body = _axes(frame, ticks, x_labels, unit)
    for index, item in enumerate(series):
        color = PALETTE[index % len(PALETTE)]
        body += _bars(frame, item, color, bar_width) if item.bars else _line(frame, item, color)
    note = empty_text if not values else "" if _drawable(series) else few_text
    if note:
        body += _tag(
            "text",
            escape(note),
            x=width / 2,
            y=height / 2,
            text_anchor="middle",
            class_="pgmq-empty",
        )
    body += _legend(series, frame.left)
    svg = _tag(
        "svg",
        _tag("title", escape(title)) + body,
        xmlns="http://www.w3.org/2000/svg",
        viewBox=f"0 0 {width} {height}",
        width=width,
        height=height,
        role="img",
        aria_label=title,
        class_="pgmq-chart",
    )
    return mark_safe(svg)  # every text above went through escape()


def _drawable(series: Sequence[Series]) -> bool:
    """Whether a chart has a bar, or a line of two points or more, to show."""
    for item in series:
        known = [y for _, y in item.points if y is not None]
        if (item.bars and any(known)) or (not item.bars and len(known) >= 2):
            return True
    return False


def sparkline(
    values: Sequence[float | None],
    *,
    title: str,
    width: int = 120,
    height: int = 26,
    few_text: str = "too few samples",
) -> SafeString:
    """A tiny axis-less trend line of evenly spaced values (None leaves a gap).

    With fewer than two values there is no trend: ``few_text`` instead of a lone dot.
    """
    points = [(float(i), v) for i, v in enumerate(values)]
    top = max((v for v in values if v is not None), default=0) or 1
    frame = _Frame(width, height, (0.0, float(max(len(values) - 1, 1))), top)
    frame.left, frame.right, frame.top_px, frame.bottom = 1, width - 1, 2, height - 2
    if sum(v is not None for v in values) < 2:
        body = _tag(
            "text", escape(few_text), x=width / 2, y=height / 2 + 4, text_anchor="middle",
            class_="pgmq-empty",
        )  # fmt: skip
    else:
        body = _line(frame, Series(title, points), PALETTE[0])
    svg = _tag(
        "svg",
        _tag("title", escape(title)) + body,
        xmlns="http://www.w3.org/2000/svg",
        viewBox=f"0 0 {width} {height}",
        width=width,
        height=height,
        role="img",
        aria_label=title,
        class_="pgmq-sparkline",
    )
    return mark_safe(svg)  # every text above went through escape()
