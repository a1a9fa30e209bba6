"""Internal: what the settings sync (schedule_settings.py) needs beyond the schedule API."""

from __future__ import annotations

from ..manager.plumbing import Base


class ScheduleSyncOps(Base):
    """Mark the schedules ``PGMQ["SCHEDULES"]`` declares, and find those it declared before."""

    def set_schedule_origin(self, names: list[str], origin: str | None) -> list[str]:
        """Record who declared these schedules ('settings' or None); the names changed."""
        rows = self._fetch("set_schedule_origin", {"names": names, "origin": origin}, None)
        return [row[0] for row in rows]

    def settings_schedule_names(self) -> list[str]:
        """The schedules marked as declared in settings."""
        return [row[0] for row in self._fetch("settings_schedule_names", {}, None)]

    def schedules_installed(self) -> bool:
        """Whether this database has the schedule API this code syncs through (0045 on)."""
        return bool(self._fetch("schedules_installed", {}, None)[0][0])
