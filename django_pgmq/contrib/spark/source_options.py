"""The ``pgmq`` source's options, parsed once with an error naming the option at fault."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ...errors import InvalidArgument
from ...names import validate_queue_name
from . import conninfo

SOURCES = ("queue", "archive")
ACK_MODES = ("archive", "delete", "none")
_TRUE = ("true", "1", "yes")
_FALSE = ("false", "0", "no")


@dataclass(frozen=True)
class Options:
    """Everything the reader and writers need, checked; ``conn`` carries the secrets."""

    conn: conninfo.ConnectionInfo
    queue: str
    source: str = "queue"
    num_partitions: int = 1
    atomic: bool = False
    stale_stage_hours: int = 24
    writer_id: str | None = None
    consumer: str = "spark"
    vt: int = 300
    max_messages_per_batch: int = 1000
    ack: str = "archive"


def parse(raw: Mapping[str, str]) -> Options:
    """Check the options a user gave to ``spark.read``/``write``/``readStream``/``writeStream``."""
    queue = raw.get("queue")
    if not queue:
        raise InvalidArgument("option 'queue' is required: .option('queue', 'orders')")
    writer_id = raw.get("writerId") or None
    return Options(
        conn=conninfo.resolve(raw),
        queue=validate_queue_name(queue),
        source=choice(raw, "source", SOURCES, "queue"),
        num_partitions=integer(raw, "numPartitions", 1, 1, 10_000),
        atomic=boolean(raw, "atomic", False),
        stale_stage_hours=integer(raw, "staleStageHours", 24, 1, 24 * 365),
        writer_id=writer_id,
        consumer=text(raw, "consumer", "spark"),
        vt=integer(raw, "vt", 300, 1, 2**31 - 1),
        max_messages_per_batch=integer(raw, "maxMessagesPerBatch", 1000, 1, 10_000_000),
        ack=choice(raw, "ack", ACK_MODES, "archive"),
    )


def text(raw: Mapping[str, str], key: str, default: str) -> str:
    """A non-empty string option of at most 200 characters."""
    value = raw.get(key, default)
    if not value or len(value) > 200:
        raise InvalidArgument(f"option {key!r} must be 1 to 200 characters, got {value!r}")
    return value


def choice(raw: Mapping[str, str], key: str, allowed: tuple[str, ...], default: str) -> str:
    """One of ``allowed`` (case-insensitive)."""
    value = str(raw.get(key, default)).lower()
    if value not in allowed:
        raise InvalidArgument(
            f"option {key!r} must be one of {', '.join(allowed)}, got {raw.get(key)!r}"
        )
    return value


def integer(raw: Mapping[str, str], key: str, default: int, low: int, high: int) -> int:
    """An integer option between ``low`` and ``high``."""
    value = raw.get(key)
    if value is None:
        return default
    try:
        number = int(str(value).strip())
    except ValueError:
        raise InvalidArgument(f"option {key!r} must be an integer, got {value!r}") from None
    if not low <= number <= high:
        raise InvalidArgument(f"option {key!r} must be between {low} and {high}, got {number}")
    return number


def boolean(raw: Mapping[str, str], key: str, default: bool) -> bool:
    """A true/false option."""
    value = raw.get(key)
    if value is None:
        return default
    lowered = str(value).strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise InvalidArgument(f"option {key!r} must be true or false, got {value!r}")
