"""Template tags of the dashboard: figures marked when estimated, durations, sparklines."""

from __future__ import annotations

from functools import lru_cache

from django import template
from django.template import Engine
from django.utils.formats import number_format
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from ..dashboard import display, svg
from ..records import QueueStats

register = template.Library()


def number(value: int | float | None) -> str:
    """Thousands-separated in the page's language (50,000; German 50.000), '-' for unknown."""
    return "-" if value is None else number_format(value, force_grouping=True)


@register.simple_tag
def figure(stats: QueueStats, name: str) -> SafeString:
    """A count from ``stats``, prefixed with ≈ and explained when it is an estimate."""
    value = getattr(stats, name)  # an old name (QueueStats.RENAMED) warns
    if stats.RENAMED.get(name, name) in stats.estimated:
        return format_html(
            '<span class="pgmq-est" title="{}">≈{}</span>',
            _("estimated from planner statistics or a sample"),
            number(value),
        )
    return format_html("{}", number(value))


@register.filter
def figure_of(stats: QueueStats, name: str) -> SafeString:
    """``{% figure %}`` as a filter, for use inside ``{% blocktranslate with ... %}``."""
    return figure(stats, name)


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
        return format_html('<span class="pgmq-muted">{}</span>', _("no samples"))
    return svg.sparkline(
        values, title=_("%s: queue length, last hour") % title, few_text=_("too few samples")
    )


@register.filter
def milliseconds(value: float | None) -> str:
    """A handler duration: '-' when unknown, '0.8 ms', '42 ms', '1.2 s'."""
    if value is None:
        return "-"
    if value >= 1000:
        return f"{value / 1000:.1f} s"
    return f"{value:.1f} ms" if value < 10 else f"{value:.0f} ms"


RANGE_LABELS = {
    "hour": gettext_lazy("last hour"),
    "day": gettext_lazy("last day"),
    "week": gettext_lazy("last week"),
    "month": gettext_lazy("last month"),
}
STATE_LABELS = {
    "archived": gettext_lazy("archived"),
    "visible": gettext_lazy("visible"),
    "in flight": gettext_lazy("in flight"),
    "delayed": gettext_lazy("delayed"),
}


@register.simple_tag
def range_label(key: str) -> str:
    """The chart range's tab label, translated."""
    return str(RANGE_LABELS.get(key, key))


@register.simple_tag
def state_label(state: str) -> str:
    """A message state, translated (the CSS class keeps the English key)."""
    return str(STATE_LABELS.get(state, state))


@lru_cache(maxsize=1)
def crumbs_as_list() -> bool:
    """Whether the admin's own breadcrumbs are a list (``<ol class="breadcrumbs">``, Django
    6) rather than links between arrows (``<div class="breadcrumbs">``, Django 5.2): read from
    the admin's base template, so the dashboard's crumbs always look like the admin's."""
    source = Engine.get_default().get_template("admin/base.html").source
    return '<ol class="breadcrumbs">' in source


@register.simple_tag
def crumbs_open() -> SafeString:
    """The start of the admin's breadcrumbs, in this Django's markup."""
    return mark_safe(
        '<ol class="breadcrumbs">' if crumbs_as_list() else '<div class="breadcrumbs">'
    )


@register.simple_tag
def crumbs_close() -> SafeString:
    return mark_safe("</ol>" if crumbs_as_list() else "</div>")


@register.simple_tag
def crumb(label: str, link: str | None = None, first: bool = False) -> SafeString:
    """One crumb in this Django's markup: a link, or (without ``link``) the current page.

    A long label (a queue name) ellipsizes, its whole text in the title.
    """
    inner = (
        format_html('<a href="{}" class="pgmq-crumb" title="{}">{}</a>', link, label, label)
        if link
        else format_html('<span class="pgmq-crumb" title="{}">{}</span>', label, label)
    )
    if crumbs_as_list():
        current = "" if link else mark_safe(' aria-current="page"')
        return format_html("<li{}>{}</li>\n", current, inner)  # spaced as the admin's are
    return inner if first else format_html(" &rsaquo; {}", inner)
