"""Template tags of the dashboard: figures marked when estimated, durations, sparklines."""

from __future__ import annotations

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from ..dashboard import display, svg
from ..dashboard.records import QueueStats

register = template.Library()


def number(value: int | float | None) -> str:
    """Thousands-separated, '-' for unknown."""
    return "-" if value is None else f"{value:,}"


@register.simple_tag
def figure(stats: QueueStats, name: str) -> SafeString:
    """A count from ``stats``, prefixed with ≈ and explained when it is an estimate."""
    value = getattr(stats, name)
    if name in stats.estimated:
        return format_html(
            '<span class="pgmq-est" title="estimated from planner statistics or a sample">'
            "≈{}</span>",
            number(value),
        )
    return format_html("{}", number(value))


@register.filter
def thousands(value: int | float | None) -> str:
    return number(value)


@register.filter
def duration(seconds: float | None) -> str:
    return display.duration(seconds)


@register.filter
def sparkline(values: list[float | None], title: str = "") -> SafeString:
    """An inline SVG trend of ``values``; empty when there are no samples."""
    if not values or all(v is None for v in values):
        return mark_safe('<span class="pgmq-muted">no samples</span>')
    return svg.sparkline(values, title=f"{title}: depth, last hour")
