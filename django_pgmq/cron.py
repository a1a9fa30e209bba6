"""The SQL's rules for a schedule's cron and time zone, in Python, for ``manage.py check``.

``check`` runs without a database, so it cannot ask ``pgmq._cron_parse`` and
``pgmq._check_time_zone`` (``sql/65_schedules.sql``); these functions follow them step
by step and refuse with the same words. tests/integration/test_cron_rules.py runs a
table of cases through both and fails when they disagree. Standard library only.
"""

from __future__ import annotations

import functools
import re
from zoneinfo import available_timezones

_ALIASES = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_EVERY = re.compile(
    r"@every ([0-9]{1,9}) ?(s|sec|secs|second|seconds|m|min|mins|minute|minutes|h|hour|hours)"
)
_MONTHS = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
_WEEKDAYS = ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT")
# (name, lowest, highest, names) of the five fields, in their order.
_FIELDS: tuple[tuple[str, int, int, tuple[str, ...] | None], ...] = (
    ("minute", 0, 59, None),
    ("hour", 0, 23, None),
    ("day-of-month", 1, 31, None),
    ("month", 1, 12, _MONTHS),
    ("day-of-week", 0, 7, _WEEKDAYS),
)
_MONTH_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_ZONE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*")


class CronError(ValueError):
    """A cron expression or time zone the SQL would refuse; the text is the SQL's."""


def check_cron(cron: str) -> None:
    """Refuse ``cron`` as ``pgmq._cron_parse`` does (CronError with its message)."""
    expr = re.sub(r"[ \t\n\r\f\v]+", " ", cron).strip(" ").lower()
    expr = _ALIASES.get(expr, expr)
    if expr.startswith("@"):
        every = _EVERY.fullmatch(expr)
        if every is None:
            raise CronError(
                f'cron "{cron}": unknown form (use five fields, @yearly, @monthly, @weekly, '
                "@daily, @hourly, or @every <n> seconds|minutes|hours)"
            )
        if int(every.group(1)) < 1:
            raise CronError(f'cron "{cron}": the interval must be 1 or more')
        return
    fields = expr.split(" ") if expr else []
    if len(fields) != 5:
        raise CronError(
            f'cron "{cron}": want 5 fields (minute hour day-of-month month day-of-week), '
            f"got {len(fields)}"
        )
    values = [_field(spec, *rule) for spec, rule in zip(fields, _FIELDS, strict=True)]
    days_or = not fields[2].startswith("*") and not fields[4].startswith("*")
    if not days_or and values[2][0] > max(_MONTH_DAYS[m - 1] for m in values[3]):
        raise CronError(
            f'cron field "day-of-month": {values[2][0]} never occurs in the months of "{fields[3]}"'
        )


def check_time_zone(time_zone: str) -> None:
    """Refuse ``time_zone`` as ``pgmq._check_time_zone`` does: an IANA name or UTC/GMT."""
    named = bool(_ZONE_NAME.fullmatch(time_zone))
    if not named or (time_zone not in ("UTC", "GMT") and time_zone.lower() not in _zones()):
        raise CronError(
            f'unknown time zone "{time_zone}" (want an IANA name such as Europe/Berlin or UTC)'
        )


@functools.cache
def _zones() -> frozenset[str]:
    """The tz database's names, lower case (PostgreSQL finds them in any case)."""
    return frozenset(name.lower() for name in available_timezones())


def _field(spec: str, field: str, lo: int, hi: int, names: tuple[str, ...] | None) -> list[int]:
    """The sorted values one field allows (``pgmq._cron_field``)."""
    found: set[int] = set()
    for item in spec.split(","):
        if item == "":
            raise CronError(f'cron field "{field}": empty item in "{spec}"')
        span, step = item, None
        if "/" in item:
            if not re.fullmatch(r"[^/]+/[0-9]{1,9}", item):
                raise CronError(
                    f'cron field "{field}": "{item}" has a bad step (want <range>/<number>)'
                )
            span, step = item.split("/")[0], int(item.split("/")[1])
            if step < 1:
                raise CronError(f'cron field "{field}": step {step} in "{item}" must be 1 or more')
        if span == "*":
            first, last = lo, hi
        elif "-" in span:
            if not re.fullmatch(r"[^-]+-[^-]+", span):
                raise CronError(f'cron field "{field}": "{span}" is not a range (want <from>-<to>)')
            first = _value(field, span.split("-")[0], lo, hi, names)
            last = _value(field, span.split("-")[1], lo, hi, names)
            if last < first:
                raise CronError(f'cron field "{field}": range "{span}" ends before it starts')
        else:
            first = _value(field, span, lo, hi, names)
            last = first if step is None else hi  # "5/15": from 5 to the highest
        found.update(range(first, last + 1, step or 1))
    if field == "day-of-week":
        found = {v % 7 for v in found}  # 7 is Sunday too
    return sorted(found)


def _value(field: str, token: str, lo: int, hi: int, names: tuple[str, ...] | None) -> int:
    """One number or name of a field (``pgmq._cron_value``)."""
    if names and token.upper() in names:
        return lo + names.index(token.upper())
    if not re.fullmatch(r"[0-9]{1,9}", token):
        named = f" or a name ({' '.join(names)})" if names else ""
        raise CronError(f'cron field "{field}": "{token}" is not a number{named}')
    value = int(token)
    if not lo <= value <= hi:
        raise CronError(f'cron field "{field}": {value} is out of range {lo}-{hi}')
    return value
