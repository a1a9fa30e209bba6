"""The worker's log lines: each carries a timestamp, its level, the worker's id and its queue.

A filter on the ``django_pgmq.worker`` logger gives every record ``worker_id``
(``host:pid``, as the admin's workers page shows it) and ``queue`` (the queue
the thread is working on, see `queue_context`; else the worker's queues), so a
project's own handlers can use ``%(worker_id)s`` and ``%(queue)s`` too.
``pgmq_consume --log-format text|json`` writes them to stderr; JSON is one
object per line, for log shippers.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import sys
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

LOGGER = "django_pgmq.worker"
# Other loggers whose lines a worker writes from its own threads (the index builds it
# starts in the background): they carry the worker's context too.
WORKER_THREAD_LOGGERS = ("django_pgmq.index_builds",)
FORMATS = ("text", "json")
TEXT_FORMAT = "%(asctime)s %(levelname)s [%(worker_id)s] [%(queue)s] %(message)s"

_queue: ContextVar[str | None] = ContextVar("pgmq_log_queue", default=None)


# Packages between the worker and a handler or task: their frames are not the user's.
_RUNNERS = ("django_pgmq", "asgiref", "django_tasks", "django.tasks")

ExcInfo = tuple[type[BaseException], BaseException, TracebackType | None]


def user_exc_info(exc: BaseException) -> ExcInfo:
    """The traceback to log for a failed handler or task: the user's error (not the
    exception the runner raised to report it, such as a task's RetryTask), from the
    first frame of the user's code on."""
    shown = exc
    if getattr(exc, "reports_cause", False):
        shown = exc.__cause__ or exc.__context__ or exc
    tb = shown.__traceback__
    while tb is not None and tb.tb_next is not None and _is_runner(tb):
        tb = tb.tb_next
    if tb is not None and _is_runner(tb):  # nothing but the runner's frames: all of them
        tb = shown.__traceback__
    return type(shown), shown, tb


def _is_runner(tb: TracebackType) -> bool:
    return str(Path(tb.tb_frame.f_code.co_filename).resolve()).startswith(_runner_dirs())


def _runner_dirs() -> tuple[str, ...]:
    """The folders of `_RUNNERS` (imported by the time a handler fails)."""
    found = (sys.modules.get(name) for name in _RUNNERS)
    return tuple(str(Path(m.__file__).resolve().parent) + os.sep for m in found if m and m.__file__)


def worker_id() -> str:
    """This process as the admin names workers: ``host:pid``."""
    return f"{socket.gethostname()}:{os.getpid()}"


@contextlib.contextmanager
def queue_context(queue: str) -> Iterator[None]:
    """Within it, this thread's worker log lines name ``queue``."""
    token = _queue.set(queue)
    try:
        yield
    finally:
        _queue.reset(token)


class WorkerContext(logging.Filter):
    """Adds ``worker_id`` and ``queue`` to every record (keeps values given with ``extra``)."""

    def __init__(self, queues: Sequence[str] = ()) -> None:
        super().__init__()
        self.queues = ",".join(queues) or "-"

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "worker_id"):
            record.worker_id = worker_id()
        if not hasattr(record, "queue"):
            record.queue = _queue.get() or self.queues
        return True


def _utc_time(record: logging.LogRecord) -> str:
    return datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds")


class TextFormatter(logging.Formatter):
    """``<UTC ISO time> LEVEL [host:pid] [queue] message``; usable in a project's LOGGING.

    Records of other loggers (no worker context) show ``-`` for the worker and queue.
    """

    def __init__(self) -> None:
        super().__init__(TEXT_FORMAT, defaults={"worker_id": "-", "queue": "-"})

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        return _utc_time(record)


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, worker, queue, thread, message.

    ``traceback`` is added when the record carries one; usable in a project's LOGGING.
    """

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": _utc_time(record),
            "level": record.levelname,
            "logger": record.name,
            "worker": getattr(record, "worker_id", None),
            "queue": getattr(record, "queue", None),
            "thread": record.threadName,
            "message": record.getMessage(),
        }
        if record.exc_info:
            entry["traceback"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


def configure(level: int, log_format: str | None, queues: Sequence[str] = ()) -> logging.Logger:
    """Set up the worker's logger: its context filter (also on `WORKER_THREAD_LOGGERS`),
    its level, and where lines go.

    With ``log_format`` given, lines go to stderr in that format (and not also to
    the project's handlers); without it, to the project's handlers when it has
    configured some for this logger, else to stderr as text.
    """
    logger = logging.getLogger(LOGGER)
    logger.setLevel(level)
    for named in (logger, *map(logging.getLogger, WORKER_THREAD_LOGGERS)):
        for old in [f for f in named.filters if isinstance(f, WorkerContext)]:
            named.removeFilter(old)
        named.addFilter(WorkerContext(queues))
    if log_format is None and logger.hasHandlers():
        return logger
    for stale in [h for h in logger.handlers if getattr(h, "pgmq_worker", False)]:
        logger.removeHandler(stale)
    handler = logging.StreamHandler(sys.stderr)
    handler.pgmq_worker = True  # type: ignore[attr-defined]
    handler.setFormatter(JsonFormatter() if log_format == "json" else TextFormatter())
    logger.addHandler(handler)
    if log_format is not None:
        logger.propagate = False
    return logger
