"""How figures and messages read on the page: durations, pretty JSON, message timings."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.utils.translation import gettext as _

from ..records import BrowsedMessage

SUMMARY_LENGTH = 100


def duration(seconds: float | None) -> str:
    """A short human duration: 0.4 s, 42 s, 3 min 5 s, 2 h 10 min, 3 d 4 h."""
    if seconds is None:
        return "-"
    seconds = abs(seconds)
    if seconds < 10:
        return f"{seconds:.1f} s"
    whole = int(seconds)
    for unit, size, sub_unit, sub_size in (
        ("d", 86400, "h", 3600),
        ("h", 3600, "min", 60),
        ("min", 60, "s", 1),
    ):
        if whole >= size:
            major, rest = divmod(whole, size)
            minor = rest // sub_size
            return f"{major} {unit} {minor} {sub_unit}" if minor else f"{major} {unit}"
    return f"{whole} s"


def pretty_json(value: Any) -> str:
    """Indented JSON for reading (non-ASCII kept as is)."""
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False)


def summary(value: Any) -> str:
    """One line of compact JSON, cut to SUMMARY_LENGTH characters."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= SUMMARY_LENGTH else text[: SUMMARY_LENGTH - 1] + "…"


def _when(text: Any) -> datetime | None:
    """A timestamp the worker wrote into headers (ISO 8601), or None when unreadable."""
    try:
        return datetime.fromisoformat(text) if isinstance(text, str) else None
    except ValueError:
        return None


@dataclass(frozen=True)
class MessageView:
    """A browsed message with what the page shows about it, relative to ``now``."""

    message: BrowsedMessage
    now: datetime

    def __getattr__(self, name: str) -> Any:
        return getattr(self.message, name)

    @property
    def state(self) -> str:
        m = self.message
        if m.archived_at is not None:
            return "archived"
        if m.vt <= self.now:
            return "visible"
        return "in flight" if m.read_ct else "delayed"

    @property
    def age(self) -> str:
        return duration((self.now - self.message.enqueued_at).total_seconds())

    @property
    def vt_text(self) -> str:
        """When it is (or became) visible: 'in 25 s' or '3 min ago'; '' once archived."""
        if self.message.archived_at is not None:
            return ""  # an archived message is never read again: its vt means nothing
        delta = (self.message.vt - self.now).total_seconds()
        if delta > 0:
            return _("in %s") % duration(delta)
        return _("%s ago") % duration(delta)

    @property
    def attempt_errors(self) -> list[dict[str, Any]]:
        """One entry per failed attempt (the worker's headers), the dead-letter error last."""
        headers = self.message.headers if isinstance(self.message.headers, dict) else {}
        entries = headers.get("attempt_errors")
        history = [
            {"attempt": e.get("attempt"), "at": _when(e.get("at")), "error": e.get("error")}
            for e in (entries if isinstance(entries, list) else [])
            if isinstance(e, dict)
        ]
        dead = headers.get("dead_letter")
        if isinstance(dead, dict) and dead.get("error"):
            when = _when(dead.get("dead_lettered_at"))
            history.append({"attempt": dead.get("read_ct"), "at": when, "error": dead["error"]})
        return history

    @property
    def latency(self) -> str:
        """Enqueue-to-archive time of an archived message."""
        m = self.message
        if m.archived_at is None:
            return ""
        return duration((m.archived_at - m.enqueued_at).total_seconds())

    @property
    def pretty(self) -> str:
        return pretty_json(self.message.message)

    @property
    def pretty_headers(self) -> str:
        return pretty_json(self.message.headers) if self.message.headers is not None else ""

    @property
    def summary(self) -> str:
        return summary(self.message.message)
