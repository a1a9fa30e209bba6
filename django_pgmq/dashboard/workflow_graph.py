"""A workflow's dependency graph as an inline SVG (no JavaScript, as the dashboard's charts).

Steps stand in columns by depth (a step's column is one past its deepest parent), in
their order within a column; an arrow goes from each parent to its child; a box's
colour is its step's status. Every text that reaches the markup is escaped here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from html import escape

from django.utils.safestring import SafeString, mark_safe

# The status of a step (pgmq.workflow_status) -> its box's fill and stroke.
COLOURS = {
    "waiting": ("#f4f4f4", "#999999"),
    "sent": ("#dbe9f4", "#417690"),
    "done": ("#dff0d8", "#6a9f3a"),
    "failed": ("#f8d7d3", "#c0392b"),
    "cancelled": ("#eeeeee", "#bbbbbb"),
}
MAX_STEPS = 300  # past this the page lists the steps without a drawing
BOX_W, BOX_H, GAP_X, GAP_Y, PAD = 150, 26, 50, 10, 10
LABEL_CHARS = 20


@dataclass(frozen=True)
class GraphStep:
    """One step as drawn: its name, status and the steps it runs after."""

    name: str
    status: str
    after: Sequence[str] = field(default_factory=tuple)


def columns(steps: Sequence[GraphStep]) -> list[list[GraphStep]]:
    """The steps by depth: roots first, each step one column past its deepest parent
    (in topological order, so a long chain needs no recursion; a step on a cycle, which
    SQL never stores, goes in the last column)."""
    by_name = {s.name: s for s in steps}
    waiting = {s.name: len([p for p in s.after if p in by_name]) for s in steps}
    children: dict[str, list[str]] = {}
    for step in steps:
        for parent in step.after:
            if parent in by_name:
                children.setdefault(parent, []).append(step.name)
    depth = {name: 0 for name, count in waiting.items() if count == 0}
    ready = list(depth)
    while ready:
        name = ready.pop()
        for child in children.get(name, ()):
            depth[child] = max(depth.get(child, 0), depth[name] + 1)
            waiting[child] -= 1
            if waiting[child] == 0:
                ready.append(child)
    last = max(depth.values(), default=-1) + 1
    laid: list[list[GraphStep]] = [[] for _ in range(last + 1)]
    for step in steps:
        laid[depth.get(step.name, last)].append(step)
    return [column for column in laid if column]


def _label(name: str) -> str:
    return name if len(name) <= LABEL_CHARS else name[: LABEL_CHARS - 1] + "…"


def graph(steps: Sequence[GraphStep], title: str, labels: Mapping[str, str]) -> SafeString:
    """The SVG of ``steps`` (at most `MAX_STEPS`); ``labels`` names each status for tooltips."""
    laid = columns(steps)
    where: dict[str, tuple[float, float]] = {}
    for x, column in enumerate(laid):
        for y, step in enumerate(column):
            where[step.name] = (PAD + x * (BOX_W + GAP_X), PAD + y * (BOX_H + GAP_Y))
    width = PAD * 2 + len(laid) * BOX_W + max(len(laid) - 1, 0) * GAP_X
    height = PAD * 2 + max((len(c) for c in laid), default=0) * (BOX_H + GAP_Y) - GAP_Y
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="pgmq-graph" role="img" '
        f'width="{width}" height="{max(height, BOX_H)}" '
        f'viewBox="0 0 {width} {max(height, BOX_H)}">',
        f"<title>{escape(title)}</title>",
        '<defs><marker id="pgmq-arrow" viewBox="0 0 10 10" refX="10" refY="5" '
        'markerWidth="6" markerHeight="6" orient="auto-start-reverse">'
        '<path d="M 0 0 L 10 5 L 0 10 z" fill="#888888"/></marker></defs>',
    ]
    for step in steps:
        x2, y2 = where[step.name]
        for parent in step.after:
            if parent in where:
                x1, y1 = where[parent]
                parts.append(
                    f'<line x1="{x1 + BOX_W:g}" y1="{y1 + BOX_H / 2:g}" x2="{x2:g}" '
                    f'y2="{y2 + BOX_H / 2:g}" stroke="#888888" stroke-width="1" '
                    'marker-end="url(#pgmq-arrow)"/>'
                )
    for step in steps:
        left, top = where[step.name]
        fill, stroke = COLOURS.get(step.status, COLOURS["waiting"])
        status = labels.get(step.status, step.status)
        parts.append(
            f'<g class="pgmq-step" data-step="{escape(step.name)}" '
            f'data-status="{escape(step.status)}">'
            f"<title>{escape(step.name)}: {escape(status)}</title>"
            f'<rect x="{left:g}" y="{top:g}" width="{BOX_W}" height="{BOX_H}" rx="4" '
            f'fill="{fill}" stroke="{stroke}"/>'
            f'<text x="{left + 8:g}" y="{top + BOX_H / 2 + 4:g}" font-size="12">'
            f"{escape(_label(step.name))}</text></g>"
        )
    parts.append("</svg>")
    return mark_safe("".join(parts))
