"""What every ``pgmq_*`` command shares: the --database option, error handling, output formats.

Commands are thin shells over `QueueManager`: they parse, call and print. Any
`PgmqError`, database error or bad argument reaches the user as one line on
stderr and exit status 1, never as a traceback (``--traceback`` still shows one).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from datetime import datetime
from typing import Any, ClassVar, NoReturn

import psycopg
from django.core.management.base import (
    BaseCommand,
    CommandError,
    CommandParser,
    DjangoHelpFormatter,
)
from django.db import DatabaseError

from .. import conf, routing
from ..consumer_settings import int_at_least
from ..errors import PgmqError
from ..manager import QueueManager
from ..records import QueueMetrics
from .reference import GuidePointer, ReferenceRow

# SQLSTATEs that mean the SQL API is not installed in this database.
_NOT_INSTALLED = {"3F000", "42883"}


class UsageError(CommandError):
    """The command line itself is wrong (unknown option, value of the wrong type)."""


class _HelpFormatter(DjangoHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Django's option order, but keep the line breaks of the examples in ``help``."""


def one_line(text: object) -> str:
    """Collapse a (possibly multi-line) message to one line."""
    return "; ".join(part.strip() for part in str(text).splitlines() if part.strip())


def database_error_text(exc: DatabaseError) -> str:
    """A one-line description of a database error, with a hint when pgmq is not installed."""
    cause = exc.__cause__ or exc
    text = f"database error: {one_line(cause)}"
    if getattr(cause, "sqlstate", None) in _NOT_INSTALLED:
        text += " (is django-pgmq migrated? run: manage.py migrate)"
    return text


def _parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """``parser`` and the parsers of its sub-commands, recursively."""
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):  # aliases share a parser
                found += _parsers(sub)
    return found


def _report_usage_errors(parser: argparse.ArgumentParser) -> None:
    """Make ``parser`` raise `UsageError` (one line, exit 1) instead of exiting with 2."""

    def error(message: str) -> NoReturn:
        raise UsageError(f"{message} (see: {parser.prog.strip()} --help)")

    parser.error = error  # type: ignore[method-assign]


def _parse_intermixed(parser: argparse.ArgumentParser) -> None:
    """Accept options anywhere (``pgmq_send q --delay 5 '{}'``) and option values that
    look like options (``--retention -1d``: refused by its type, with its own message)."""
    parse_args = parser.parse_args
    has_actions = any(isinstance(a, argparse._SubParsersAction) for a in parser._actions)

    def parse(args: Sequence[str] | None = None, namespace: Any = None) -> Any:
        args = _glue_option_values(parser, list(sys.argv[1:] if args is None else args))
        # argparse cannot intermix with sub-commands (pgmq_schedule), and its intermixed
        # parsing loses "--" (after which "-a" is a queue's name, not an option)
        if has_actions or "--" in args:
            return parse_args(args, namespace)
        return parser.parse_intermixed_args(args, namespace)

    parser.parse_args = parse  # type: ignore[method-assign,assignment]


def _glue_option_values(parser: argparse.ArgumentParser, args: list[str]) -> list[str]:
    """``--opt -1d`` as ``--opt=-1d`` for each long option that takes one value, so that
    argparse hands a value starting with '-' (not itself an option) to the option's type."""
    flags = {flag for each in _parsers(parser) for flag in each._option_string_actions}
    takes_one = {
        flag
        for each in _parsers(parser)
        for flag, action in each._option_string_actions.items()
        if flag.startswith("--") and action.nargs is None
    }
    glued: list[str] = []
    for arg in args:
        if glued and glued[-1] in takes_one and arg.startswith("-") and arg not in flags:
            glued[-1] = f"{glued[-1]}={arg}"
        else:
            glued.append(arg)
    return glued


class PgmqCommand(BaseCommand):
    """Base of the ``pgmq_*`` commands: adds ``--database`` and turns errors into one line."""

    # What the command reference says of the command: its row (what it prints, when it
    # fails) or the guide that explains it. Every command declares one, beside its help;
    # the reference's table is generated from them (sqltools.command_table).
    reference: ClassVar[ReferenceRow | GuidePointer]

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        for each in _parsers(parser):  # the command's, and each action's (pgmq_schedule add)
            _report_usage_errors(each)
        _parse_intermixed(parser)
        parser.add_argument(
            "--database",
            default=None,
            help=(
                "Database alias to use (default: each queue's database by "
                "PGMQ['QUEUE_DATABASES'], else PGMQ['DATABASE'], here "
                f"{conf.database_alias()!r})."
            ),
        )
        return parser

    def run_from_argv(self, argv: list[str]) -> None:
        """Report a bad command line like any other error: one line, exit status 1."""
        try:
            super().run_from_argv(argv)
        except UsageError as exc:
            self.stderr.write(f"CommandError: {exc}")
            sys.exit(exc.returncode)

    def execute(self, *args: Any, **options: Any) -> Any:
        try:
            return super().execute(*args, **options)
        except PgmqError as exc:
            raise CommandError(one_line(exc)) from exc
        except DatabaseError as exc:
            raise CommandError(database_error_text(exc)) from exc
        except psycopg.Error as exc:  # a driver error Django did not wrap: still one line
            raise CommandError(f"database error: {one_line(exc)}") from exc

    def manager(self, options: dict[str, Any]) -> QueueManager:
        """The queue manager for ``--database``; without it, routed (each queue's database)."""
        return QueueManager(using=options["database"])

    def databases(self, options: dict[str, Any]) -> list[str]:
        """``--database``, or every database that holds queues (`routing.queue_databases`)."""
        if options["database"]:
            return [options["database"]]
        return routing.queue_databases()

    def several_databases(self, options: dict[str, Any]) -> bool:
        """Whether the output covers several databases: then it names each row's."""
        return len(self.databases(options)) > 1

    def add_msg_ids(self, parser: argparse.ArgumentParser) -> None:
        """The ``QUEUE MSG_ID [MSG_ID ...]`` positional arguments."""
        parser.add_argument("queue", metavar="QUEUE", help="The queue holding the messages.")
        parser.add_argument(
            "msg_ids",
            nargs="+",
            type=int,
            metavar="MSG_ID",
            help="Message id(s), as printed by send.",
        )

    def check_found(self, queue: str, asked: Sequence[int], done: Iterable[int]) -> None:
        """Note the ids that were not found on stderr; fail when none of them was."""
        found = set(done)
        missing = ", ".join(str(i) for i in dict.fromkeys(asked) if i not in found)
        if not found:
            raise CommandError(f'no such message in queue "{queue}": {missing}')
        if missing:
            self.stderr.write(f'not found in queue "{queue}": {missing}')

    def write_json_lines(self, records: Iterable[Any]) -> None:
        """Print one JSON object per record (a `Message` or another dataclass) per line."""
        for record in records:
            self.stdout.write(to_json(asdict(record)))


class RemoveCommand(PgmqCommand):
    """pgmq_archive and pgmq_delete: call one manager method on ids, say which were done."""

    method = ""  # the QueueManager method: "archive" or "delete"
    done = ""  # its past tense, for the output

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        self.add_msg_ids(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        queue, asked = options["queue"], options["msg_ids"]
        done = getattr(self.manager(options), self.method)(queue, asked)
        self.check_found(queue, asked, done)
        ids = " ".join(str(i) for i in done)
        self.stdout.write(f'{self.done} {len(done)} message(s) in queue "{queue}": {ids}')


def positive_int(text: str) -> int:
    """An argparse type: an integer of at least 1."""
    return int_at_least(text, 1, "a positive integer")


def non_negative_int(text: str) -> int:
    """An argparse type: an integer of at least 0."""
    return int_at_least(text, 0, "a non-negative integer")


def json_arg(text: str, what: str) -> Any:
    """Decode a JSON command-line argument, or fail naming which argument is bad."""
    if not text.strip():
        raise CommandError(f"{what} is empty: give a JSON value, e.g. '{{\"id\": 1}}'")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CommandError(f"{what} is not valid JSON: {exc}") from None


def json_object_arg(text: str | None, what: str) -> dict[str, Any] | None:
    """Decode an optional JSON-object argument (``--headers``, ``--conditional``)."""
    if text is None:
        return None
    value = json_arg(text, what)
    if not isinstance(value, dict):
        raise CommandError(f"{what} must be a JSON object, got {type(value).__name__}: {text}")
    return value


def _default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON-serializable")


def record(value: Any, several: bool) -> dict[str, Any]:
    """A record (`QueueInfo`, `QueueMetrics`, ...) as a dict for JSON output; its
    ``database`` key only when the output covers several databases."""
    fields = asdict(value)
    if not several:
        fields.pop("database", None)
    return fields


def to_json(value: Any) -> str:
    """Compact JSON with datetimes as ISO-8601, for machine-readable output."""
    return json.dumps(value, default=_default, ensure_ascii=False)


def format_table(
    headers: Sequence[str], rows: Iterable[Sequence[Any]], right: Sequence[int] = ()
) -> str:
    """An aligned text table; columns whose index is in ``right`` align right; None shows '-'."""
    cells = [["-" if v is None else str(v) for v in row] for row in rows]
    widths = [max([len(h)] + [len(row[i]) for row in cells]) for i, h in enumerate(headers)]

    def line(values: Sequence[str]) -> str:
        return "  ".join(
            v.rjust(w) if i in right else v.ljust(w)
            for i, (v, w) in enumerate(zip(values, widths, strict=True))
        ).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths])] + [line(r) for r in cells])


def format_age(seconds: int | None) -> str | None:
    """A duration in seconds, readable: ``42s``, ``3m 05s``, ``2h 10m``, ``4d 03h``."""
    if seconds is None:
        return None
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    days, hours = divmod(hours, 24)
    if days:
        return f"{days}d {hours:02d}h"
    if hours:
        return f"{hours}h {minutes:02d}m"
    if minutes:
        return f"{minutes}m {secs:02d}s"
    return f"{secs}s"


METRICS_HEADERS = ("queue", "length", "visible", "newest age", "oldest age", "total")


def metrics_table(metrics: Iterable[QueueMetrics], several: bool = False) -> str:
    """The metrics of queues as an aligned table (shared by pgmq_metrics and pgmq_demo);
    with ``several``, a database column after the queue's name."""
    rows = [
        (
            m.queue_name,
            *((m.database,) if several else ()),
            m.queue_length,
            m.queue_visible_length,
            format_age(m.newest_msg_age_sec),
            format_age(m.oldest_msg_age_sec),
            m.total_messages,
        )
        for m in metrics
    ]
    headers = (METRICS_HEADERS[0], "database", *METRICS_HEADERS[1:]) if several else METRICS_HEADERS
    first = 2 if several else 1
    return format_table(headers, rows, right=range(first, first + 5))
