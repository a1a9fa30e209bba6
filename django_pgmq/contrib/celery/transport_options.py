"""Transport options (Celery's ``broker_transport_options``), with defaults and checks."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from django_pgmq.errors import InvalidArgument

ACK_ACTIONS = ("archive", "delete")


@dataclass(frozen=True)
class Options:
    """What the transport reads from ``broker_transport_options``.

    ``visibility_timeout``: seconds a fetched message stays hidden; renewed every third of
    it while the worker that holds it is alive, so it bounds how long a dead worker's
    messages wait. ``on_ack``: ``"archive"`` (keep in ``pgmq.a_<queue>``) or ``"delete"``.
    ``database``: Django alias for ``django-pgmq://`` (default: the database
    ``PGMQ["QUEUE_DATABASES"]`` gives the queue ``<queue_name_prefix>celery``, else
    ``PGMQ["DATABASE"]``).
    ``polling_interval``: longest idle wait between reads when no notification came.
    """

    visibility_timeout: int = 1800
    on_ack: str = "archive"
    database: str | None = None
    queue_name_prefix: str = ""
    notify: bool = True
    polling_interval: float = 10.0
    max_batch: int = 100
    cleanup_interval: float = 60.0

    @classmethod
    def from_transport_options(cls, raw: Mapping[str, Any]) -> Options:
        """Options from a ``transport_options`` mapping; other keys (kombu's own) are ignored."""
        known = {f.name for f in fields(cls)}
        options = cls(**{key: value for key, value in raw.items() if key in known})
        options.check()
        return options

    def check(self) -> None:
        """Raise `InvalidArgument` naming the first bad option."""
        _require(
            _is_int(self.visibility_timeout) and self.visibility_timeout >= 1,
            "visibility_timeout must be a whole number of seconds >= 1",
            self.visibility_timeout,
        )
        _require(self.on_ack in ACK_ACTIONS, "on_ack must be 'archive' or 'delete'", self.on_ack)
        _require(
            self.database is None or isinstance(self.database, str),
            "database must be a Django database alias",
            self.database,
        )
        _require(
            isinstance(self.queue_name_prefix, str),
            "queue_name_prefix must be a string",
            self.queue_name_prefix,
        )
        _require(isinstance(self.notify, bool), "notify must be True or False", self.notify)
        for name in ("polling_interval", "cleanup_interval"):
            value = getattr(self, name)
            ok = isinstance(value, int | float) and not isinstance(value, bool) and value > 0
            _require(ok, f"{name} must be a positive number of seconds", value)
        _require(
            _is_int(self.max_batch) and 1 <= self.max_batch <= 10_000,
            "max_batch must be an integer between 1 and 10000",
            self.max_batch,
        )

    @property
    def renew_every(self) -> float:
        """Seconds between renewals of the visibility of held messages."""
        return max(self.visibility_timeout / 3, 0.5)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _require(condition: bool, message: str, value: object) -> None:
    if not condition:
        raise InvalidArgument(f"broker_transport_options: {message}, got {value!r}")
