"""``manage.py check``'s cron and time-zone rules (``django_pgmq.cron``) are the SQL's.

Each case goes through the SQL (``pgmq._cron_parse``, ``pgmq._check_time_zone``) and
through the Python twin: both accept it, or both refuse it with the same words.
"""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connection, transaction

from django_pgmq import cron

CRONS = [
    "* * * * *",
    "0 3 * * *",
    "*/15 9-17 * * mon-fri",
    "5/15 * * * *",
    "0 0 1,15 * *",
    "0 0 * jan,jul *",
    "0 0 * JAN-mar SUN",
    "0 0 * * 7",
    "0 0 29 2 *",
    "0 0 31 * *",
    "  0   3  *  *  *  ",
    "0\t3 * * *",
    "@yearly",
    "@annually",
    "@monthly",
    "@weekly",
    "@DAILY",
    "@midnight",
    "@hourly",
    "@every 30 seconds",
    "@every 5m",
    "@every 2 hours",
    "@every 1sec",
    # refused
    "61 * * * *",
    "* 24 * * *",
    "* * 0 * *",
    "* * 32 * *",
    "* * * 13 *",
    "* * * * 8",
    "* * * foo *",
    "* * * * funday",
    "x * * * *",
    "-1 * * * *",
    "* * * *",
    "* * * * * *",
    "",
    "   ",
    "@every 0 seconds",
    "@every 5 days",
    "@sometimes",
    "1,,2 * * * *",
    "*/0 * * * *",
    "*/x * * * *",
    "1/2/3 * * * *",
    "5-1 * * * *",
    "1-2-3 * * * *",
    "-5 * * * *",
    "0 0 30 2 *",
    "0 0 31 4,6,9,11 *",
    "0 0 31 2 mon",
    "1234567890 * * * *",
    "0 0 * 0 *",
]
ZONES = [
    "UTC",
    "GMT",
    "Europe/Berlin",
    "America/Argentina/Buenos_Aires",
    "europe/berlin",
    "Etc/GMT+3",
    "CET",
    "EST5EDT",
    "Mars/Olympus",
    "PST",
    "UTC+3",
    "",
    "Europe/",
    "../etc/passwd",
    "Europe/Berlin ",
]


def sql_refusal(statement: str, value: str) -> str | None:
    """The SQL's error text for ``value`` (None: accepted)."""
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(statement, [value])
    except DatabaseError as exc:
        return str(exc.__cause__ or exc).splitlines()[0]
    return None


def python_refusal(check, value: str) -> str | None:
    try:
        check(value)
    except cron.CronError as exc:
        return str(exc)
    return None


@pytest.mark.parametrize("expression", CRONS)
def test_a_cron_is_refused_in_the_same_words_as_the_sql(db, expression):
    expected = sql_refusal("SELECT pgmq._cron_parse(%s::text)", expression)
    assert python_refusal(cron.check_cron, expression) == expected


@pytest.mark.parametrize("zone", ZONES)
def test_a_time_zone_is_refused_in_the_same_words_as_the_sql(db, zone):
    expected = sql_refusal("SELECT pgmq._check_time_zone(%s::text)", zone)
    assert python_refusal(cron.check_time_zone, zone) == expected


def test_the_table_holds_both_kinds_of_case(db):
    refused = [c for c in CRONS if sql_refusal("SELECT pgmq._cron_parse(%s::text)", c)]
    assert 0 < len(refused) < len(CRONS)
