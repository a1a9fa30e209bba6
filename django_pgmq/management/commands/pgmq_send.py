"""manage.py pgmq_send: send one message, or many from a JSON-lines file."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

from django.core.management.base import CommandError
from django.db import transaction

from ...errors import PgmqError
from ...manager import QueueManager
from ..command_base import PgmqCommand, json_arg, json_object_arg, positive_int
from ..reference import ReferenceRow


class Command(PgmqCommand):
    help = """Send messages to a queue and print their ids, one per line.

The message is a JSON value given as an argument, or, with --file, one JSON
value per line of a file ('-' reads standard input), sent with send_batch in
chunks of --batch-size. All lines are sent in one transaction: a bad line
(empty, not JSON, or refused by the queue's attributes) sends nothing and
names its line number.

examples:
  manage.py pgmq_send orders '{"order_id": 42}'
  manage.py pgmq_send orders '"plain text"' --delay 60 --headers '{"trace": "abc"}'
  manage.py pgmq_send orders --file orders.jsonl
  printf '{"n": 1}\\n{"n": 2}\\n' | manage.py pgmq_send orders --file -
"""
    reference = ReferenceRow(
        usage="`pgmq_send QUEUE PAYLOAD` / `--file PATH`",
        prints="the new msg ids, one per line",
        fails="""the payload is empty or not JSON, `--headers` is not a JSON object, the delay
        is negative. With `--file`, lines go in chunks of `--batch-size` (500) through
        `send_batch`, all in one transaction: a bad line (empty, not JSON, `null`) sends nothing
        and the error names its line number""",
    )
    stealth_options = ("stdin",)

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("queue", metavar="QUEUE", help="Queue to send to.")
        parser.add_argument("payload", nargs="?", metavar="PAYLOAD", help="The message, as JSON.")
        parser.add_argument(
            "--file",
            metavar="PATH",
            help="Send every line of this JSON-lines file ('-' for standard input).",
        )
        parser.add_argument(
            "--delay",
            type=int,
            default=0,
            metavar="SECONDS",
            help="Keep the messages invisible for this many seconds (default: 0).",
        )
        parser.add_argument(
            "--headers",
            metavar="JSON",
            help="Headers for every message sent, as a JSON object.",
        )
        parser.add_argument(
            "--batch-size",
            type=positive_int,
            default=500,
            metavar="N",
            help="With --file: messages per send_batch call (default: 500).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if (options["payload"] is None) == (options["file"] is None):
            raise CommandError("give either a PAYLOAD argument or --file PATH (not both)")
        manager = self.manager(options)
        queue, delay = options["queue"], options["delay"]
        headers = json_object_arg(options["headers"], "--headers")
        if options["payload"] is not None:
            message = json_arg(options["payload"], "PAYLOAD")
            ids = [manager.send(queue, message, delay=delay, headers=headers)]
        else:
            ids = []
            with _open(options["file"], options.get("stdin")) as lines:
                chunks = _chunks(_payloads(lines), options["batch_size"])
                with transaction.atomic(using=manager.using):
                    for first, chunk in chunks:
                        ids += _send_chunk(manager, queue, first, chunk, delay, headers)
        for msg_id in ids:
            self.stdout.write(str(msg_id))


def _send_chunk(
    manager: QueueManager,
    queue: str,
    first: int,
    chunk: list[Any],
    delay: int,
    headers: dict[str, Any] | None,
) -> list[int]:
    """Send one chunk of lines with send_batch; an error names the line refused.

    When the queue refuses the chunk (too large, a bad priority ...), its lines are
    sent again one by one, each in a savepoint, to find the first one refused; the
    whole input is rolled back either way.
    """
    try:
        with transaction.atomic(using=manager.using):
            return manager.send_batch(
                queue,
                chunk,
                delay=delay,
                headers=None if headers is None else [headers] * len(chunk),
            )
    except PgmqError as exc:
        number = _refused_line(manager, queue, first, chunk, delay, headers)
        if number is None:
            last = first + len(chunk) - 1
            raise CommandError(f"lines {first}-{last}: {exc}") from exc
        raise CommandError(f"line {number}: {exc}") from exc


def _refused_line(
    manager: QueueManager,
    queue: str,
    first: int,
    chunk: list[Any],
    delay: int,
    headers: dict[str, Any] | None,
) -> int | None:
    """The number of the first line of ``chunk`` the queue refuses alone (None: none is)."""
    for number, message in enumerate(chunk, start=first):
        try:
            with transaction.atomic(using=manager.using):
                manager.send(queue, message, delay=delay, headers=headers)
        except PgmqError:
            return number
    return None


@contextmanager
def _open(path: str, stdin: IO[str] | None) -> Iterator[IO[str]]:
    """The JSON-lines input: a file, or standard input for '-'."""
    if path == "-":
        yield stdin or sys.stdin
        return
    try:
        handle = open(path, encoding="utf-8")  # noqa: SIM115 (closed below)
    except OSError as exc:
        raise CommandError(f"cannot read {path}: {exc.strerror}") from None
    with handle:
        yield handle


def _payloads(lines: IO[str]) -> Iterator[tuple[int, Any]]:
    """(line number, decoded JSON) for every line; an empty or non-JSON line is an error."""
    number = 0
    try:
        for number, line in enumerate(lines, start=1):
            yield number, json_arg(line, f"line {number}")
    except UnicodeDecodeError as exc:
        raise CommandError(f"line {number + 1}: not UTF-8 text: {exc.reason}") from None
    if number == 0:
        raise CommandError("the input has no lines: nothing to send")


def _chunks(payloads: Iterator[tuple[int, Any]], size: int) -> Iterator[tuple[int, list[Any]]]:
    """Group payloads into lists of ``size``, each with the line number of its first item."""
    chunk: list[Any] = []
    first = 1
    for number, payload in payloads:
        if not chunk:
            first = number
        chunk.append(payload)
        if len(chunk) == size:
            yield first, chunk
            chunk = []
    if chunk:
        yield first, chunk
