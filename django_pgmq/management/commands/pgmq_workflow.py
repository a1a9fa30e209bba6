"""manage.py pgmq_workflow: list workflows, show one step by step, cancel one."""

from __future__ import annotations

import argparse
from typing import Any

from ...manager.workflow_ops import STATUSES
from ..command_base import PgmqCommand, format_table, positive_int, to_json
from ..reference import ReferenceRow


class Command(PgmqCommand):
    help = """Workflows (chains, groups and chords of steps, sql/55_workflows.sql): each step is
a message, done when it is acknowledged; the step after it is then sent.

  list [--status S] [--limit N] [--json]   workflows, newest first, with their progress
  show ID [--json]                         every step: queue, message id, status, result
  cancel ID                                cancel its waiting and sent steps

A workflow lives in its queues' database; without --database, show and cancel use
the first queue database that holds the id, and list covers every one.

examples:
  manage.py pgmq_workflow list --status running
  manage.py pgmq_workflow show 42
  manage.py pgmq_workflow cancel 42
"""
    reference = ReferenceRow(
        usage="""`pgmq_workflow list [--status S] [--limit N] [--json]` / `show ID [--json]` /
        `cancel ID`""",
        prints="""`list`: a table of workflows newest first (id, status, steps done/total,
        failure policy, created; `--json`: one object per line); `show`: one line per step
        (step, queue, msg_id, status, result, error, finished); `cancel`: `workflow 42: 3
        step(s) cancelled`""",
        fails="""an unknown workflow id (`workflow 42 does not exist`), a status other than
        running, done, failed, cancelled. See [Workflows](../guide/workflows.md)""",
    )

    def add_arguments(self, parser: Any) -> None:
        actions = parser.add_subparsers(
            dest="action", metavar="ACTION", required=True, help="One of these actions:"
        )
        listing = actions.add_parser("list", help="Workflows, newest first.")
        listing.add_argument("--status", choices=STATUSES, help="Only workflows in this state.")
        listing.add_argument(
            "--limit", type=positive_int, default=100, metavar="N", help="At most N (100)."
        )
        listing.add_argument("--json", action="store_true", help="One JSON object per line.")
        show = actions.add_parser("show", help="Every step of one workflow.")
        show.add_argument("workflow_id", type=positive_int, metavar="ID")
        show.add_argument("--json", action="store_true", help="One JSON object per step.")
        cancel = actions.add_parser("cancel", help="Cancel a workflow's unfinished steps.")
        cancel.add_argument("workflow_id", type=positive_int, metavar="ID")
        for action in actions.choices.values():  # --database after the action too
            action.add_argument(
                "--database",
                default=argparse.SUPPRESS,
                help="Database alias to use (as before the action).",
            )

    def handle(self, *args: Any, **options: Any) -> None:
        manager = self.manager(options)
        action = options["action"]
        if action == "cancel":
            count = manager.cancel_workflow(options["workflow_id"])
            self.stdout.write(f"workflow {options['workflow_id']}: {count} step(s) cancelled")
        elif action == "show":
            self._show(manager.workflow_status(options["workflow_id"]), options["json"])
        else:
            found = manager.list_workflows(status=options["status"], limit=options["limit"])
            self._list(found, options["json"], self.several_databases(options))

    def _show(self, steps: list[Any], as_json: bool) -> None:
        if as_json:
            for s in steps:
                self.stdout.write(to_json(s.__dict__))
            return
        rows = [
            (
                s.step,
                s.queue_name,
                s.msg_id,
                s.status,
                None if s.result is None else to_json(s.result),
                None if s.error is None else to_json(s.error),
                s.finished_at.isoformat() if s.finished_at else None,
            )
            for s in steps
        ]
        headers = ("step", "queue", "msg_id", "status", "result", "error", "finished")
        self.stdout.write(format_table(headers, rows, right=(2,)))

    def _list(self, found: list[Any], as_json: bool, several: bool) -> None:
        if as_json:
            for w in found:
                fields = dict(w.__dict__)
                if not several:
                    fields.pop("database")
                self.stdout.write(to_json(fields))
            return
        if not found:
            self.stdout.write("no workflows")
            return
        rows = [
            (
                w.workflow_id,
                *((w.database,) if several else ()),
                w.status,
                f"{w.steps_done}/{w.steps_total}",
                w.on_failure,
                w.created_at.isoformat(),
            )
            for w in found
        ]
        headers = (
            "id",
            *(("database",) if several else ()),
            "status",
            "done",
            "on_failure",
            "created",
        )
        self.stdout.write(format_table(headers, rows, right=(0,)))
