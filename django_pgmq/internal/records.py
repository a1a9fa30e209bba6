"""The internal layer's records, now in `django_pgmq.records` (its internal section).

Kept importable from here while the other parts move their imports.
"""

from __future__ import annotations

from ..records import BrowsedMessage, QueueStats, StatsBucket, ThroughputBucket

__all__ = ["BrowsedMessage", "QueueStats", "StatsBucket", "ThroughputBucket"]
