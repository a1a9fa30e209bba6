"""manage.py pgmq_schedule: list, add, remove, enable, disable and run periodic schedules."""

from __future__ import annotations

import argparse
from datetime import timedelta
from typing import Any

from django.core.management.base import CommandError

from ...manager import QueueManager
from ..attribute_args import duration
from ..command_base import (
    PgmqCommand,
    format_table,
    json_arg,
    json_object_arg,
    positive_int,
    to_json,
)
from ..reference import ReferenceRow


class Command(PgmqCommand):
    help = """Periodic schedules (cron in SQL): each sends its message to its queue at every
tick; the workers (pgmq_consume) and pgmq_maintain send the due ticks.

  list [--ticks N] [--json]    every schedule with its last and next tick(s)
  add NAME CRON QUEUE [...]    create or replace one (--message, --headers,
                               --time-zone, --catch-up, --disabled)
  remove NAME                  delete one and its ticks
  enable NAME / disable NAME   turn one on (from the next tick after now) or off
  run-now NAME                 send its message now, outside its ticks
  due                          send the due ticks now (what a worker does each second)

CRON is five fields (minute hour day-of-month month day-of-week), @yearly,
@monthly, @weekly, @daily, @hourly, or "@every N seconds|minutes|hours".

A schedule lives in its queue's database (PGMQ['QUEUE_DATABASES']). Without
--database: list and due cover every queue database (list adds a database column,
JSON a "database" key, when there are several); remove, enable, disable and run-now
find the schedule in whichever database holds it (when two hold that name, they
stop and ask for --database); add writes to the queue's database, and refuses a
name another database already holds. --database limits any of them to one database.

examples:
  manage.py pgmq_schedule list --ticks 3
  manage.py pgmq_schedule add nightly "0 3 * * *" reports --time-zone Europe/Berlin
  manage.py pgmq_schedule add ping "@every 30 seconds" health --message '{"ping": 1}'
  manage.py pgmq_schedule disable nightly
  manage.py pgmq_schedule run-now nightly
"""
    reference = ReferenceRow(
        usage="""`pgmq_schedule list [--ticks N] [--json]` / `add NAME CRON QUEUE` / `remove` /
        `enable` / `disable` / `run-now NAME` / `due`""",
        prints="""a table of schedules with their next tick(s) (`--json`: one object per line);
        `schedule "x" saved; next tick: ...`, `removed`, `enabled`, `disabled`, `sent message
        N`; `due`: one line per tick sent""",
        fails="""a bad cron, time zone, catch-up or JSON (nothing is written), a missing queue,
        an unknown schedule; with routes, a schedule name two databases hold (give `--database`,
        before or after the action) or an `add` of a name another database holds. See [Periodic
        schedules](../guide/schedules.md)""",
    )

    def add_arguments(self, parser: Any) -> None:
        actions = parser.add_subparsers(
            dest="action", metavar="ACTION", required=True, help="One of these actions:"
        )
        listing = actions.add_parser("list", help="Every schedule with its next tick(s).")
        listing.add_argument(
            "--ticks",
            type=positive_int,
            default=1,
            metavar="N",
            help="Show N next ticks (default 1).",
        )
        listing.add_argument("--json", action="store_true", help="One JSON object per line.")
        add = actions.add_parser("add", help="Create or replace a schedule.")
        add.add_argument("name", metavar="NAME")
        add.add_argument("cron", metavar="CRON")
        add.add_argument("queue", metavar="QUEUE")
        add.add_argument("--message", default="{}", metavar="JSON", help="default: {}")
        add.add_argument("--headers", metavar="JSON", help="A JSON object.")
        add.add_argument(
            "--time-zone", metavar="ZONE", help="IANA name (default: TIME_ZONE, else UTC)."
        )
        add.add_argument(
            "--catch-up",
            type=duration,
            default=600,
            metavar="DURATION",
            help="Send a missed tick up to this late (600, 10m, 2h; default 10m).",
        )
        add.add_argument("--disabled", action="store_true", help="Create it turned off.")
        for name, text in (
            ("remove", "Delete a schedule and its ticks."),
            ("enable", "Turn a schedule on."),
            ("disable", "Turn a schedule off."),
            ("run-now", "Send a schedule's message now."),
        ):
            actions.add_parser(name, help=text).add_argument("name", metavar="NAME")
        actions.add_parser("due", help="Send the due ticks now.")
        for action in actions.choices.values():  # --database after the action too
            action.add_argument(
                "--database",
                default=argparse.SUPPRESS,  # not given here: the one before the action stands
                help="Database alias to use (as before the action).",
            )

    def handle(self, *args: Any, **options: Any) -> None:
        manager = self.manager(options)
        action = options["action"]
        several = self.several_databases(options)
        if action == "list":
            self._list(manager, options["ticks"], options["json"], several)
        elif action == "add":
            manager.create_schedule(
                options["name"],
                options["cron"],
                options["queue"],
                json_arg(options["message"], "--message"),
                headers=json_object_arg(options["headers"], "--headers"),
                time_zone=options["time_zone"],
                catch_up=options["catch_up"],
                enabled=not options["disabled"],
            )
            schedule = manager.get_schedule(options["name"])
            next_tick = schedule.next_tick if schedule else None
            where = f" in database {schedule.database}" if schedule and several else ""
            self.stdout.write(
                f'schedule "{options["name"]}" saved{where}; next tick: {next_tick or "-"}'
            )
        elif action == "remove":
            if not manager.drop_schedule(options["name"]):
                raise CommandError(f'schedule "{options["name"]}" does not exist')
            self.stdout.write(f'schedule "{options["name"]}" removed')
        elif action in ("enable", "disable"):
            manager.enable_schedule(options["name"], action == "enable")
            self.stdout.write(f'schedule "{options["name"]}" {action}d')
        elif action == "run-now":
            msg_id = manager.run_schedule_now(options["name"])
            self.stdout.write(f'schedule "{options["name"]}": sent message {msg_id}')
        else:
            for sent in manager.enqueue_due_schedules():
                where = f" (database {sent.database})" if several else ""
                self.stdout.write(
                    f'schedule "{sent.schedule_name}": tick {sent.tick.isoformat()} sent to '
                    f'"{sent.queue_name}"{where} as message {sent.msg_id}'
                )

    def _list(self, manager: QueueManager, ticks: int, as_json: bool, several: bool) -> None:
        rows = []
        for s in manager.list_schedules():
            upcoming = []
            if s.next_tick is not None:  # from the next tick not sent yet, maybe due now
                after = s.next_tick - timedelta(microseconds=1)
                upcoming = manager.next_ticks(s.cron, s.time_zone, after=after, n=ticks)
            rows.append((s, upcoming))
        if as_json:
            for line in (
                {
                    "name": s.name,
                    "cron": s.cron,
                    "time_zone": s.time_zone,
                    "queue": s.queue,
                    "enabled": s.enabled,
                    "catch_up_seconds": s.catch_up.total_seconds(),
                    "last_tick": s.last_tick,
                    "next_ticks": upcoming,
                    "skipped": s.skipped,
                    "origin": s.origin,
                    **({"database": s.database} if several else {}),
                }
                for s, upcoming in rows
            ):
                self.stdout.write(to_json(line))
            return
        if not rows:
            self.stdout.write("no schedules")
            return
        table = [
            (
                s.name,
                s.cron,
                s.time_zone,
                s.queue,
                *((s.database,) if several else ()),
                "yes" if s.enabled else "no",
                s.last_tick.isoformat() if s.last_tick else None,
                ", ".join(t.isoformat() for t in upcoming) or None,
                s.skipped,
            )
            for s, upcoming in rows
        ]
        headers = (
            "name",
            "cron",
            "zone",
            "queue",
            *(("database",) if several else ()),
            "on",
            "last tick",
            "next",
            "skipped",
        )
        self.stdout.write(format_table(headers, table, right=(len(headers) - 1,)))
