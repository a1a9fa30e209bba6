"""Handlers: the ``@consumer`` decorator, the registry it fills, and finding handlers.

Handlers live in an installed app's ``consumers.py`` (imported by
`autodiscover`) or are named on the command line with ``--handler dotted.path``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import autodiscover_modules, import_string

from ..consumer_settings import NAMES, SETTINGS
from ..errors import InvalidArgument
from ..names import validate_queue_name


@dataclass(frozen=True)
class Consumer:
    """A handler and what its decorator set; None means "not set here".

    Its settings are those `consumer_settings` declares, typed here by hand (as the
    decorator's keywords) for type checkers and IDEs: tests/unit/test_consumer_settings.py
    fails when either differs from the declaration."""

    handler: Callable[..., Any]
    queue: str | None = None
    batch: int | None = None
    vt: int | None = None
    max_receive_count: int | None = None
    dead_letter: str | None = None
    on_success: str | None = None
    retry_delay: float | None = None
    max_retry_delay: float | None = None
    batch_handler: bool = False
    atomic: bool = True
    decode: Callable[[Any], Any] | None = None
    # Not atomic only: the handler acknowledges its message itself, in its own last
    # statement (Django tasks: the result row and the delete in one round trip).
    acknowledges: bool = False
    # Not atomic only: a context manager the processor enters around the handler calls
    # of one batch, with the messages it is about to run (Django tasks: a finished
    # task's verdict is written with the next task's start, the last one on exit).
    batch_scope: Callable[[list[Any]], AbstractContextManager[Any]] | None = None

    @property
    def path(self) -> str:
        """The handler's dotted path, for logs and ``--handler``."""
        return f"{self.handler.__module__}.{self.handler.__qualname__}"


_REGISTRY: dict[str, Consumer] = {}


def check_settings(**values: Any) -> None:
    """Refuse consumer settings out of range, naming the bad one (None: not set here).

    Each is checked as `consumer_settings` declares it; shared by the decorator and the
    command line (through `resolve`)."""
    unknown = sorted(set(values) - NAMES)
    if unknown:
        raise TypeError(f"not a consumer setting: {', '.join(unknown)}")
    for setting in SETTINGS:
        value = values.get(setting.name)
        if value is not None:
            setting.kind.check(setting.name, value)


def consumer(
    queue: str | None = None,
    *,
    batch: int | None = None,
    vt: int | None = None,
    max_receive_count: int | None = None,
    dead_letter: str | None = None,
    on_success: str | None = None,
    retry_delay: float | None = None,
    max_retry_delay: float | None = None,
    batch_handler: bool = False,
    atomic: bool = True,
    decode: Callable[[Any], Any] | None = None,
    max_reads: int | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated function as the handler of ``queue`` for ``pgmq_consume``.

    It takes one `Message` (a list with ``batch_handler=True``). Without a queue
    the settings are only attached, for ``pgmq_consume --handler``. ``atomic=False``
    runs it outside the transaction of its acknowledgement (for outside side
    effects); ``decode`` turns the payload into what the handler gets, and a
    payload it cannot decode is dead-lettered. ``max_receive_count`` is the
    number of reads after which a failing message is dead-lettered (0: never),
    the queue attribute of the same name; ``max_reads`` is its deprecated alias.
    """
    if queue is not None:
        validate_queue_name(queue)
    if max_reads is not None:
        if max_receive_count is not None:
            raise InvalidArgument(
                "max_reads is the deprecated name of max_receive_count: give only max_receive_count"
            )
        warnings.warn(
            "@consumer(max_reads=...) is deprecated: use max_receive_count=...",
            DeprecationWarning,
            stacklevel=2,
        )
        max_receive_count = max_reads
    # Every declared setting, by the name of its keyword here.
    settings = {name: value for name, value in locals().items() if name in NAMES}
    check_settings(**settings)

    def register(handler: Callable[..., Any]) -> Callable[..., Any]:
        spec = Consumer(
            handler, queue, batch_handler=batch_handler, atomic=atomic, decode=decode, **settings
        )
        known = _REGISTRY.get(queue) if queue is not None else None
        if known is not None and known.path != spec.path:
            raise ImproperlyConfigured(
                f"queue {queue!r} has two handlers: {known.path} and {spec.path}"
            )
        if queue is not None:
            _REGISTRY[queue] = spec
        handler.pgmq_consumer = spec  # type: ignore[attr-defined]
        return handler

    return register


def autodiscover() -> None:
    """Import the ``consumers`` module of every installed app, registering its handlers."""
    autodiscover_modules("consumers")


def registered() -> dict[str, Consumer]:
    """Every registered handler, by queue."""
    return dict(_REGISTRY)


def import_handler(path: str) -> Consumer:
    """The consumer named by a dotted path: a decorated function keeps its settings."""
    try:
        obj = import_string(path)
    except ImportError as exc:
        raise ImproperlyConfigured(f"cannot import handler {path!r}: {exc}") from exc
    spec = getattr(obj, "pgmq_consumer", None)
    if isinstance(spec, Consumer):
        return spec
    if not callable(obj):
        raise ImproperlyConfigured(f"handler {path!r} is not callable")
    return Consumer(obj)


def find_consumer(queue: str, handler_path: str | None = None) -> Consumer:
    """The consumer of ``queue``: ``--handler`` when given, else the registered one."""
    if handler_path:
        return import_handler(handler_path)
    spec = _REGISTRY.get(queue)
    if spec is None:
        raise ImproperlyConfigured(
            f"no handler for queue {queue!r}: decorate one with "
            f"@django_pgmq.consumer({queue!r}) in an installed app's consumers.py, "
            "or pass --handler dotted.path"
        )
    return spec
