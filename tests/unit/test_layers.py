"""The user API and the internal layer stay apart (design.md, "Layout")."""

from __future__ import annotations

import ast
from pathlib import Path

from django_pgmq.internal import (
    InternalManager,
    dashboard_ops,
    schedule_sync_ops,
    scrape_ops,
    task_ops,
    worker_ops,
)
from django_pgmq.manager import QueueManager

MANAGER = Path(__file__).resolve().parents[2] / "django_pgmq" / "manager"
INTERNAL_OPS = (
    worker_ops.WorkerOps,
    dashboard_ops.DashboardOps,
    scrape_ops.ScrapeOps,
    task_ops.TaskOps,
    schedule_sync_ops.ScheduleSyncOps,
)


def _methods(cls: type) -> set[str]:
    return {name for name, value in vars(cls).items() if callable(value)}


def test_the_internal_operations_are_not_on_the_user_api():
    internal = set().union(*map(_methods, INTERNAL_OPS))
    assert internal, "the internal layer defines no method"
    assert not {name for name in internal if hasattr(QueueManager, name)}


def test_the_internal_manager_has_the_user_api_and_the_internal_operations():
    for ops in INTERNAL_OPS:
        assert issubclass(InternalManager, ops), ops.__name__
    assert issubclass(InternalManager, QueueManager)


def test_the_manager_imports_nothing_of_its_callers():
    """The user layer knows no screen, worker or backend: they build on it, not it on them."""
    callers = ("internal", "dashboard", "worker", "tasks", "contrib", "management")
    found = []
    for path in sorted(MANAGER.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level >= 2 and node.module:
                if node.module.split(".")[0] in callers:
                    found.append(f"{path.name}: from {'.' * node.level}{node.module}")
            elif isinstance(node, ast.ImportFrom | ast.Import):
                names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
                names += [alias.name for alias in getattr(node, "names", [])]
                for name in names:
                    if any(name.startswith(f"django_pgmq.{c}") for c in callers):
                        found.append(f"{path.name}: {name}")
    assert found == []
