"""The internal layer: what django-pgmq's own parts need beyond the user API.

`InternalManager` is `QueueManager` (the user API) plus the operations that only
django-pgmq's own parts call, one module per caller: ``worker_ops`` (the worker),
``dashboard_ops`` (the admin dashboard and its sampler), ``scrape_ops`` (the
Prometheus export), ``task_ops`` (the Django Tasks backend) and ``schedule_sync_ops``
(the settings' schedules); the rows they return are records in `django_pgmq.records`
(its internal section). They send SQL the same way as the user API (through
``manager/plumbing.py``), but they are not the user API: their names, arguments and
results may change in any release. User code calls `django_pgmq` or `QueueManager`.
"""

from __future__ import annotations

from ..manager import QueueManager
from .dashboard_ops import DashboardOps
from .schedule_sync_ops import ScheduleSyncOps
from .scrape_ops import ScrapeOps
from .task_ops import TaskOps
from .worker_ops import WorkerOps


class InternalManager(QueueManager, WorkerOps, DashboardOps, ScrapeOps, TaskOps, ScheduleSyncOps):
    """`QueueManager` plus what the worker, the admin, the metrics and the Tasks backend call.

    Internal: not part of the public API, and may change without notice.
    """


__all__ = ["InternalManager"]
