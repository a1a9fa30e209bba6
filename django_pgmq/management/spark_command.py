"""What the ``pgmq_spark_*`` commands share: ``--master``, the session, the connection."""

from __future__ import annotations

import argparse
import re
from typing import TYPE_CHECKING, Any

from django.core.management.base import CommandError, CommandParser

from ..contrib.spark import require
from .command_base import PgmqCommand
from .reference import GuidePointer

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from ..contrib.spark.conninfo import ConnectionInfo

_DURATION = re.compile(r"(\d+)([smhdw])\Z")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def duration(text: str) -> int:
    """An argparse type: ``90s``, ``30m``, ``12h``, ``7d`` or ``2w`` as seconds."""
    match = _DURATION.match(text.strip().lower())
    if not match:
        raise argparse.ArgumentTypeError(
            f"must be a number and a unit (s, m, h, d, w) such as 7d, got {text!r}"
        )
    return int(match.group(1)) * _SECONDS[match.group(2)]


class SparkCommand(PgmqCommand):
    """A ``pgmq_*`` command that runs a Spark job and prints a line per stage."""

    # The Spark guide explains what each prints, for all three.
    reference = GuidePointer("the Spark pipeline", "[Spark](../guide/spark.md#pipeline-commands)")

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        parser.add_argument(
            "--master",
            default=None,
            help="Spark master URL (default: local[*], or what spark-submit set).",
        )
        return parser

    def spark(
        self, options: dict[str, Any], queue: str | None = None
    ) -> tuple[SparkSession, ConnectionInfo]:
        """The Spark session and the connection: ``--database``, else ``queue``'s database."""
        try:
            require()
        except ImportError as exc:
            raise CommandError(str(exc)) from None
        from ..contrib.spark import conninfo, session

        conn = conninfo.from_django(options["database"], queue)
        name = f"django-pgmq {self.__module__.rsplit('.', 1)[-1]}"
        return session.get_session(options["master"], app_name=name), conn

    def progress(self, line: str) -> None:
        """One progress line on stdout."""
        self.stdout.write(line)
        self.stdout.flush()
