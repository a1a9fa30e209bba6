"""The internal layer: what django-pgmq's own parts need beyond the user API.

`InternalManager` is `QueueManager` (the user API) plus the operations only the
worker, the admin dashboard, the Prometheus export and the Tasks backend call:
one module per client (``worker_ops``, ...). They send SQL the same way (through
``manager/base.py``), but they are not the user API: their names and arguments may
change in any release. User code calls `django_pgmq` or `QueueManager`, never this.
"""

from __future__ import annotations

from ..manager import QueueManager
from .dashboard_ops import DashboardOps
from .scrape_ops import ScrapeOps
from .worker_ops import WorkerOps


class InternalManager(QueueManager, WorkerOps, DashboardOps, ScrapeOps):
    """`QueueManager` plus the worker's, the dashboard's and the metrics export's operations."""


__all__ = ["InternalManager"]
