"""QueueManager methods: periodic schedules (cron in SQL, sql/65_schedules.sql).

The schedules live in ``pgmq.schedules`` and any pgmq client can drive them by
calling ``pgmq.enqueue_due_schedules()``; these methods create, change, list and
drive them from Django. A time zone left out is Django's ``TIME_ZONE`` (what a
Django project means by "3 o'clock"), or UTC when that is unset.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import DatabaseError
from django.utils import timezone

from ..errors import InvalidArgument, QueueNotFound
from ..names import validate_queue_name
from ..records import Schedule, ScheduledSend, ScheduleTick
from ..sqlrun import sqlstate
from .plumbing import Base, _dump, _json, _record

DEFAULT_CATCH_UP = timedelta(minutes=10)


def default_time_zone() -> str:
    """The time zone of a schedule that names none: Django's TIME_ZONE, else UTC."""
    return getattr(settings, "TIME_ZONE", None) or "UTC"


def as_catch_up(value: timedelta | int | float) -> timedelta:
    """A catch-up window from a timedelta or a number of seconds (0 or more)."""
    if isinstance(value, bool) or not isinstance(value, timedelta | int | float):
        raise InvalidArgument(f"catch_up must be seconds or a timedelta, got {value!r}")
    window = value if isinstance(value, timedelta) else timedelta(seconds=value)
    if window < timedelta(0):
        raise InvalidArgument(f"catch_up must be 0 or more, got {value!r}")
    return window


class ScheduleOps(Base):
    """Create, drop, enable, list, inspect and drive periodic schedules.

    A schedule lives in its queue's database. Routed (no ``using``), a schedule named
    alone is looked for in every queue database (`_schedule_database`), and listing and
    driving cover them all; with ``using``, only that database.
    """

    def create_schedule(
        self,
        name: str,
        cron: str,
        queue: str,
        message: Any = None,
        *,
        headers: dict[str, Any] | None = None,
        time_zone: str | None = None,
        catch_up: timedelta | int | float = DEFAULT_CATCH_UP,
        enabled: bool = True,
    ) -> None:
        """Create the schedule, or replace the one of that name (same cron and time
        zone: its next tick stays). Bad input raises `InvalidArgument` naming it, a
        missing queue `QueueNotFound`; nothing is written then."""
        validate_queue_name(queue)
        if headers is not None and not isinstance(headers, dict):
            raise InvalidArgument(f'schedule "{name}": headers must be a dict or None')
        params = {
            "name": name,
            "cron": cron,
            "queue": queue,
            "message": _dump({} if message is None else message, "message", queue),
            "headers": None if headers is None else _dump(headers, "headers", queue),
            "time_zone": time_zone or default_time_zone(),
            "catch_up": as_catch_up(catch_up),
            "enabled": enabled,
        }
        self._refuse_elsewhere(name, self.alias_for(queue))
        self._schedule_fetch("create_schedule", params, queue)

    def drop_schedule(self, name: str) -> bool:
        """Delete a schedule and its ticks; False when there was none of that name."""
        return bool(self._schedule_fetch("drop_schedule", {"name": name}, by_name=name)[0][0])

    def enable_schedule(self, name: str, enabled: bool = True) -> None:
        """Turn a schedule on (from the next tick after now) or off; `ScheduleNotFound`
        when there is none of that name."""
        params = {"name": name, "enabled": enabled}
        self._schedule_fetch("enable_schedule", params, by_name=name)

    def run_schedule_now(self, name: str) -> int:
        """Send the schedule's message now, outside its ticks; returns the message id."""
        return int(self._schedule_fetch("run_schedule_now", {"name": name}, by_name=name)[0][0])

    def list_schedules(self) -> list[Schedule]:
        """Every schedule, by name, with its last and next tick; routed, those of every
        queue database (``database`` names each one's)."""
        aliases = self.each_database()
        found = [
            self._schedule_of(row, alias)
            for alias in aliases
            for row in self._schedule_fetch("list_schedules", {}, alias=alias, named=True)
        ]
        return sorted(found, key=lambda s: s.name) if len(aliases) > 1 else found

    @staticmethod
    def _schedule_of(row: dict[str, Any], alias: str) -> Schedule:
        """A `Schedule` from a ``list_schedules`` row of database ``alias`` (by column name)."""
        return _record(
            Schedule,
            row,
            name=row["schedule_name"],
            queue=row["queue_name"],
            message=_json(row["message"]),
            headers=_json(row["headers"]),
            database=alias,
        )

    def get_schedule(self, name: str) -> Schedule | None:
        """The schedule of that name, or None; routed, `InvalidArgument` when two
        databases hold one of that name."""
        found = [s for s in self.list_schedules() if s.name == name]
        if len(found) > 1:
            raise self._ambiguous(name, [s.database for s in found])
        return found[0] if found else None

    def next_ticks(
        self, cron: str, time_zone: str | None = None, after: datetime | None = None, n: int = 5
    ) -> list[datetime]:
        """The next ``n`` ticks of a cron expression after ``after`` (default now), exclusive."""
        params = {
            "cron": cron,
            "time_zone": time_zone or default_time_zone(),
            "after": after or timezone.now(),
            "n": n,
        }
        return [row[0] for row in self._schedule_fetch("next_ticks", params)]

    def enqueue_due_schedules(self, at: datetime | None = None) -> list[ScheduledSend]:
        """Send every due tick not sent before (each exactly once, whoever calls);
        returns what this call sent. ``at`` defaults to the database's now()."""
        return [
            _record(ScheduledSend, row, database=alias)
            for alias in self.each_database()
            for row in self._schedule_fetch(
                "enqueue_due_schedules", {"at": at}, alias=alias, named=True
            )
        ]

    def schedule_ticks(self, name: str, limit: int = 20) -> list[ScheduleTick]:
        """The last ticks a schedule sent (or tried to), newest first."""
        params = {"name": name, "limit": limit}
        return [
            _record(ScheduleTick, row)
            for row in self._schedule_fetch("schedule_ticks", params, by_name=name, named=True)
        ]

    def _schedule_database(self, name: str) -> str:
        """The database holding the schedule ``name``: ``using``; routed over one database,
        that one; else the one database among them that holds it (``PGMQ["DATABASE"]``
        when none does: its "does not exist"). Two holding it: `InvalidArgument`."""
        aliases = self.each_database()
        if len(aliases) == 1:
            return aliases[0]
        schedule = self.get_schedule(name)
        return schedule.database if schedule is not None else self.using

    def _refuse_elsewhere(self, name: str, alias: str) -> None:
        """Refuse to create ``name`` in ``alias`` while another queue database holds it
        (routed only): the two would make every later call by name ambiguous."""
        if len(self.each_database()) == 1:
            return
        other = next((s for s in self.list_schedules() if s.name == name), None)
        if other is not None and other.database != alias:
            raise InvalidArgument(
                f'schedule "{name}" already exists in database {other.database!r} (queue '
                f'"{other.queue}"), and a schedule lives in its queue\'s database '
                f"({alias!r} here): remove it there first (manage.py pgmq_schedule remove "
                f"{name} --database {other.database}, or QueueManager(using="
                f"{other.database!r}).drop_schedule({name!r}))"
            )

    @staticmethod
    def _ambiguous(name: str, aliases: list[str]) -> InvalidArgument:
        listed = ", ".join(map(repr, aliases))
        return InvalidArgument(
            f'schedule "{name}" exists in several databases ({listed}): name one with '
            "--database ALIAS (manage.py pgmq_schedule), QueueManager(using=ALIAS) or "
            "?db=ALIAS (the admin)"
        )

    def _schedule_fetch(
        self,
        query: str,
        params: dict[str, Any],
        queue: str | None = None,
        *,
        alias: str | None = None,
        by_name: str | None = None,
        named: bool = False,
    ) -> list[Any]:
        """`_fetch` (`_fetch_named` when ``named``) for a schedule statement: in the database
        of ``queue`` (a schedule lives in its queue's), of ``alias``, or of the schedule
        ``by_name``; else ``using``."""
        if alias is None:
            if queue is not None:
                alias = self.alias_for(queue)
            elif by_name is not None:
                alias = self._schedule_database(by_name)
            else:
                alias = self.using
        try:
            fetch = self._fetch_named if named else self._fetch
            return fetch(query, params, None, alias=alias)
        except DatabaseError as exc:
            if queue is not None and sqlstate(exc) == "PQ002":
                raise QueueNotFound(queue, "a schedule sends to an existing queue") from exc
            raise
