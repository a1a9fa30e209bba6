"""QueueManager methods: workflows (steps advanced by their acknowledgement, sql/55_workflows.sql).

A workflow lives in one database, with its steps' queues. Routed (no ``using``),
``create_workflow`` runs in the database its queues route to (a spec whose queues route
to two databases is refused, naming both); ``complete`` and ``fail`` in their queue's;
the calls by workflow id look in every queue database, ``PGMQ["DATABASE"]`` first, and
use the first that holds the id (with several queue databases, pass ``using`` to be
exact: ids are numbered per database).
"""

from __future__ import annotations

import json
import re
from typing import Any

from django.db import DatabaseError, connections

from .. import conf
from ..errors import InvalidArgument, QueueNotFound, WorkflowNotFound
from ..names import validate_queue_name
from ..records import WorkflowInfo, WorkflowStep
from ..sqlrun import sqlstate
from ..workflows import Flow, as_steps
from .plumbing import Base, _check_int, _dump, _json, _record

_MISSING_QUEUE = re.compile(r'^(workflow step [^\n]*?): queue "([^"\n]+)" does not exist')
STATUSES = ("running", "done", "failed", "cancelled")
MAX = 2**63 - 1
RETENTION_BATCH = 1000  # workflows removed per statement (and per commit in autocommit)


class WorkflowOps(Base):
    """Create, settle, inspect, list and cancel workflows."""

    def create_workflow(
        self, steps: Flow | list[dict[str, Any]], on_failure: str = "cancel"
    ) -> int:
        """Create a workflow from a flow (``django_pgmq.workflows``) or a list of step dicts
        and send its first steps, in the caller's transaction; returns its id. A bad spec
        raises `InvalidArgument` (a missing queue `QueueNotFound`) naming the step; nothing
        is written then."""
        specs = as_steps(steps)
        alias = self._workflow_database(specs)
        params = {"steps": _dump(specs, "the workflow's steps", "-"), "on_failure": on_failure}
        try:
            return int(self._fetch("create_workflow", params, None, alias=alias)[0][0])
        except DatabaseError as exc:
            missing = _MISSING_QUEUE.match(str(exc)) if sqlstate(exc) == "PQ002" else None
            if missing:
                raise QueueNotFound(missing.group(2), f"{missing.group(1)} sends to it") from exc
            raise

    def _workflow_database(self, specs: list[dict[str, Any]]) -> str:
        """The one database the steps' queues route to; InvalidArgument naming two."""
        found: dict[str, str] = {}
        for spec in specs:
            queue = spec.get("queue") if isinstance(spec, dict) else None
            if isinstance(queue, str) and queue:
                found.setdefault(self.alias_for(queue), queue)
        if len(found) > 1:
            (a, qa), (b, qb) = list(found.items())[:2]
            raise InvalidArgument(
                f'a workflow\'s steps live in one database: queue "{qa}" is in database "{a}", '
                f'queue "{qb}" in database "{b}"'
            )
        return next(iter(found), self.using)

    def complete(self, queue: str, msg_id: int, result: Any = None) -> bool:
        """Finish a workflow step with ``result`` (its children get it in their
        ``workflow.results`` header) by archiving its message; any other message is
        just archived. False when the message is not there."""
        return self._settle("complete", queue, msg_id, "result", result)

    def fail(self, queue: str, msg_id: int, error: Any = None) -> bool:
        """Fail a workflow step with ``error`` by archiving its message (its dependents are
        cancelled, or sent with the error under on_failure "continue"); any other message
        is just archived. False when the message is not there."""
        return self._settle("fail", queue, msg_id, "error", error)

    def _settle(self, query: str, queue: str, msg_id: int, key: str, value: Any) -> bool:
        validate_queue_name(queue)
        params = {
            "queue": queue,
            "msg_id": _check_int("msg_id", msg_id, 1, MAX),
            key: _dump(value, key, queue),
        }
        return bool(self._fetch(query, params, queue)[0][0])

    def workflow_status(self, workflow_id: int) -> list[WorkflowStep]:
        """Every step of the workflow in the spec's order; `WorkflowNotFound` when there is
        no such workflow (finished ones go after ``PGMQ["WORKFLOW_RETENTION"]``)."""
        rows = self._by_workflow("workflow_status", workflow_id, named=True)
        return [
            _record(WorkflowStep, row, result=_json(row["result"]), error=_json(row["error"]))
            for row in rows
        ]

    def workflow_graph(self, workflow_id: int) -> list[dict[str, Any]]:
        """Every step with its message, headers and ``after`` names, in the spec's order:
        what the admin's page of a workflow draws (its dependency graph)."""
        rows = self._by_workflow("workflow_graph", workflow_id, named=True)
        json_columns = ("message", "headers", "result", "error")
        return [{k: _json(v) if k in json_columns else v for k, v in row.items()} for row in rows]

    def cancel_workflow(self, workflow_id: int) -> int:
        """Cancel the workflow's waiting and sent steps (sent ones' messages are deleted);
        returns how many steps were cancelled."""
        return int(self._by_workflow("cancel_workflow", workflow_id)[0][0])

    def list_workflows(
        self, status: str | None = None, limit: int = 100, before_id: int | None = None
    ) -> list[WorkflowInfo]:
        """Workflows newest first (ids below ``before_id`` when given, at most ``limit`` per
        database), only those of ``status`` (running, done, failed, cancelled) when given."""
        if status is not None and status not in STATUSES:
            raise InvalidArgument(f"workflow status is one of {', '.join(STATUSES)}: {status!r}")
        params = {
            "status": status,
            "max_rows": _check_int("limit", limit, 0, 2**31 - 1),
            "before_id": None if before_id is None else _check_int("before_id", before_id, 1, MAX),
        }
        return [
            _record(WorkflowInfo, row, database=alias)
            for alias in self.each_database()
            for row in self._fetch_named("list_workflows", params, None, alias=alias)
        ]

    def enforce_workflow_retention(self, keep: float | None = None) -> int:
        """Remove the workflows finished longer than ``keep`` seconds ago (default
        ``PGMQ["WORKFLOW_RETENTION"]``), in batches that each commit outside a transaction;
        returns how many went, over every queue database."""
        seconds = conf.workflow_retention_seconds() if keep is None else keep
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds < 0:
            raise InvalidArgument(f"workflow retention must be 0 or more seconds, got {keep!r}")
        params = {"keep_seconds": float(seconds), "batch": RETENTION_BATCH}
        removed = 0
        for alias in self.each_database():
            while True:
                gone = int(self._fetch("workflow_retention", params, None, alias=alias)[0][0])
                removed += gone
                if gone < RETENTION_BATCH or connections[alias].in_atomic_block:
                    break
        return removed

    def _by_workflow(self, query: str, workflow_id: int, *, named: bool = False) -> list[Any]:
        """Run a statement on workflow ``workflow_id`` in the first database that has it."""
        params = {"workflow_id": _check_int("workflow_id", workflow_id, 1, MAX)}
        fetch = self._fetch_named if named else self._fetch
        aliases = self.each_database()
        for alias in aliases:
            try:
                return fetch(query, params, None, alias=alias)
            except WorkflowNotFound:
                if alias == aliases[-1]:
                    raise
        raise WorkflowNotFound(f"workflow {workflow_id} does not exist")  # no database at all


def result_json(value: Any) -> str:
    """A handler's return value as the JSON a step records (its repr when not JSON)."""
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return json.dumps(repr(value))
