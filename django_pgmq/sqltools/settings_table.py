"""The worker guide's table of consumer settings, made from their declaration.

The rows come from ``consumer_settings.SETTINGS`` (option, keyword, default, what it
sets) and stand between the markers under "Settings" in docs/guide/worker.md.
``python -m django_pgmq.sqltools.regenerate`` writes it; its ``--check`` (CI) and
tests/unit/test_consumer_settings.py fail while it is stale.
"""

from __future__ import annotations

from pathlib import Path

from ..consumer_settings import SETTINGS, Setting
from . import regions

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guide" / "worker.md"
REGION = "consumer settings"  # its markers: regions.markers(REGION)


def _row(setting: Setting) -> str:
    option = f"`{setting.flag}`" if setting.is_switch else f"`{setting.flag} {setting.metavar}`"
    stored = f"`{setting.stored}`" if setting.stored else "no"
    default = setting.default_text(markdown=True)
    return f"| {option} | `{setting.name}` | {default} | {stored} | {setting.help} |"


def render(settings: tuple[Setting, ...] = SETTINGS) -> str:
    """The Markdown table, one row per declared setting."""
    rows = [
        "| option | `@consumer(...)` keyword | default | kept in `QueueConfig` | what it sets |",
        "|---|---|---|---|---|",
        *map(_row, settings),
    ]
    return "\n".join(rows) + "\n"


def table_in(text: str) -> str:
    """The generated table as it stands in the guide's text."""
    return regions.region(text, REGION)


def rendered() -> dict[Path, str]:
    """What the guide should hold: its text with the table as the declaration makes it."""
    return {GUIDE: regions.with_region(GUIDE.read_text(encoding="utf-8"), REGION, render())}
