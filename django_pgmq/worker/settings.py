"""The worker's settings in ``PGMQ``, with their defaults."""

from __future__ import annotations

from typing import Any

from .. import conf

DEFAULTS: dict[str, Any] = {
    # Seconds between heartbeats: the worker's record, vt extension checks, samples.
    "WORKER_HEARTBEAT": 10.0,
    # Seconds between two samples of one queue (QueueSample), whichever worker takes them.
    "SAMPLE_INTERVAL": 60.0,
    # Days a sample is kept; older ones are deleted by the heartbeat.
    "SAMPLE_RETENTION_DAYS": 7,
}


def setting(key: str) -> Any:
    """``PGMQ[key]`` when set, else the worker's default."""
    value = conf.get(key)
    return DEFAULTS[key] if value is None else value
