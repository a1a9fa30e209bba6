"""Periodic schedules from Django: the Python API, PGMQ["SCHEDULES"], the command, Django Tasks."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import transaction
from django.test import override_settings

import django_pgmq as pgmq
from django_pgmq.internal import InternalManager
from django_pgmq.models import TaskResultRecord
from django_pgmq.schedule_settings import declared, problems, sync_schedules
from django_pgmq.tasks.compat import task_backends
from django_pgmq.tasks.runner import TaskRunner

AT = datetime(2026, 6, 1, 8, 0, tzinfo=UTC)
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def q(db, queue_name) -> str:
    pgmq.create_queue(queue_name)
    return queue_name


def start_at(name: str, tick: datetime) -> None:
    """Make a schedule's next tick a chosen one (create starts after now())."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE pgmq.schedules SET next_tick = %s WHERE schedule_name = %s", [tick, name]
        )


# -- the Python API ----------------------------------------------------------------------------


def test_the_module_api_creates_lists_sends_and_drops(q):
    pgmq.create_schedule(
        "py_every", "*/10 * * * *", q, {"n": 1}, headers={"h": 1}, time_zone="Europe/Berlin"
    )
    [schedule] = [s for s in pgmq.list_schedules() if s.name == "py_every"]
    assert (schedule.cron, schedule.queue, schedule.time_zone) == (
        "*/10 * * * *",
        q,
        "Europe/Berlin",
    )
    assert schedule.message == {"n": 1} and schedule.headers == {"h": 1}
    assert schedule.catch_up == timedelta(minutes=10) and schedule.enabled
    assert schedule.origin is None and schedule.skipped == 0
    start_at("py_every", AT)
    sent = pgmq.enqueue_due_schedules(at=AT + timedelta(minutes=1))
    assert [(s.schedule_name, s.queue_name, s.tick) for s in sent] == [("py_every", q, AT)]
    [message] = pgmq.read(q, vt=30, qty=10)
    assert message.msg_id == sent[0].msg_id
    assert message.headers == {
        "h": 1,
        "schedule": {"name": "py_every", "tick": "2026-06-01T10:00:00+02:00"},
    }
    ticks = InternalManager().schedule_ticks("py_every")
    assert [(t.tick, t.msg_id, t.error) for t in ticks] == [(AT, message.msg_id, None)]
    assert pgmq.drop_schedule("py_every") is True
    assert pgmq.drop_schedule("py_every") is False


def test_a_time_zone_left_out_is_django_s_time_zone(q, settings):
    settings.TIME_ZONE = "America/New_York"
    pgmq.create_schedule("py_tz", "0 9 * * *", q)
    assert pgmq.QueueManager().get_schedule("py_tz").time_zone == "America/New_York"
    ticks = pgmq.next_ticks("0 9 * * *", after=datetime(2026, 3, 6, 20, tzinfo=UTC), n=2)
    assert [t.astimezone(UTC).hour for t in ticks] == [14, 13]  # 9:00 EST, then 9:00 EDT


@pytest.mark.parametrize(
    ("call", "error", "text"),
    [
        (
            lambda q: pgmq.create_schedule("py_bad", "61 * * * *", q),
            pgmq.InvalidArgument,
            'cron field "minute": 61 is out of range 0-59',
        ),
        (
            lambda q: pgmq.create_schedule("py_bad", "* * * * *", q, time_zone="Nowhere/Land"),
            pgmq.InvalidArgument,
            'unknown time zone "Nowhere/Land"',
        ),
        (
            lambda q: pgmq.create_schedule("py_bad", "* * * * *", "missing_q"),
            pgmq.QueueNotFound,
            'queue "missing_q" does not exist',
        ),
        (
            lambda q: pgmq.create_schedule("py_bad", "* * * * *", q, catch_up=-5),
            pgmq.InvalidArgument,
            "catch_up must be 0 or more",
        ),
        (
            lambda q: pgmq.enable_schedule("ghost", True),
            pgmq.ScheduleNotFound,
            'schedule "ghost" does not exist',
        ),
        (lambda q: pgmq.run_schedule_now("ghost"), pgmq.ScheduleNotFound, "ghost"),
    ],
)
def test_errors_are_pgmq_errors_naming_the_cause(q, call, error, text):
    with pytest.raises(error, match=text), transaction.atomic():
        call(q)
    assert [s for s in pgmq.list_schedules() if s.name == "py_bad"] == []


def test_enable_disable_and_run_now(q):
    pgmq.create_schedule("py_onoff", "0 0 1 1 *", q, {"k": "v"})
    pgmq.enable_schedule("py_onoff", False)
    schedule = pgmq.QueueManager().get_schedule("py_onoff")
    assert not schedule.enabled and schedule.next_tick is None
    pgmq.enable_schedule("py_onoff", True)
    assert pgmq.QueueManager().get_schedule("py_onoff").next_tick is not None
    msg_id = pgmq.run_schedule_now("py_onoff")
    [message] = pgmq.read(q, vt=30, qty=10)
    assert message.msg_id == msg_id and message.headers["schedule"]["manual"] is True


# -- PGMQ["SCHEDULES"] -------------------------------------------------------------------------


def pgmq_settings(schedules: dict) -> dict:
    return {"DATABASE": "default", "SCHEDULES": schedules}


def test_settings_schedules_are_applied_and_a_removed_one_is_disabled(db, queue_name):
    first = {
        "set_a": {"cron": "*/5 * * * *", "queue": queue_name, "message": {"a": 1}},
        "set_b": {"cron": "@hourly", "queue": queue_name, "time_zone": "UTC", "catch_up": 60},
    }
    with override_settings(PGMQ=pgmq_settings(first)):
        done = sync_schedules()
    assert done.applied == ["set_a", "set_b"] and done.disabled == []
    mine = {s.name: s for s in pgmq.list_schedules() if s.name in first}
    assert {n: (s.origin, s.enabled) for n, s in mine.items()} == {
        "set_a": ("settings", True),
        "set_b": ("settings", True),
    }
    assert mine["set_b"].catch_up == timedelta(seconds=60)
    assert any(qi.queue_name == queue_name for qi in pgmq.list_queues())  # made for it
    with override_settings(PGMQ=pgmq_settings({"set_a": first["set_a"]})):
        done = sync_schedules()
        assert done.disabled == ["set_b"]
        again = sync_schedules()  # applying the same settings again changes nothing
    assert again.disabled == []
    mine = {s.name: s for s in pgmq.list_schedules() if s.name in first}
    assert (mine["set_b"].enabled, mine["set_b"].origin) == (False, None)
    assert (mine["set_a"].enabled, mine["set_a"].origin) == (True, "settings")


def test_applying_the_same_settings_again_keeps_the_next_tick(db, queue_name):
    entry = {"set_keep": {"cron": "* * * * *", "queue": queue_name}}
    with override_settings(PGMQ=pgmq_settings(entry)):
        sync_schedules()
        start_at("set_keep", AT)
        sync_schedules()
    assert pgmq.QueueManager().get_schedule("set_keep").next_tick == AT


def test_migrate_applies_the_settings_schedules(db, queue_name):
    entry = {"set_migrate": {"cron": "@daily", "queue": queue_name}}
    with override_settings(PGMQ=pgmq_settings(entry)):
        call_command("migrate", "django_pgmq", verbosity=0)
    assert pgmq.QueueManager().get_schedule("set_migrate").origin == "settings"


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ({"queue": "q"}, "'cron' must be a cron expression"),
        ({"cron": "* * * * *"}, "'queue' must name a queue"),
        ({"cron": "* * * * *", "queue": "bad name!"}, "queue name"),
        ({"cron": "* * * * *", "queue": "q", "colour": 1}, "unknown key(s) colour"),
        (
            {"cron": "* * * * *", "queue": "q", "time_zone": "Mars/Base"},
            'unknown time zone "Mars/Base"',
        ),
        ({"cron": "* * * * *", "queue": "q", "enabled": "yes"}, "'enabled' must be True or False"),
        ({"cron": "* * * * *", "queue": "q", "catch_up": -1}, "catch_up must be 0 or more"),
        ({"cron": "* * * * *", "queue": "q", "headers": [1]}, "'headers' must be a dict"),
        ({"cron": "* * * * *", "queue": "q", "message": {1, 2}}, "not JSON serializable"),
        ({"cron": "* * * * *", "queue": "q", "args": [1]}, "args go(es) with 'task'"),
        ({"cron": "* * * * *", "task": "tests.task_funcs.nope"}, "nope"),
        ({"cron": "* * * * *", "task": "tests.task_funcs.echo", "message": {}}, "not both"),
        (
            {"cron": "* * * * *", "task": "tests.task_funcs.echo", "args": 1},
            "'args' must be a list",
        ),
        (
            {"cron": "* * * * *", "task": "tests.task_funcs.echo", "backend": "nope"},
            "task backend 'nope' is not an alias of the TASKS setting (known: 'default', ",
        ),
        ("not a dict", "must be a dict"),
    ],
)
def test_checks_name_what_is_wrong_with_a_settings_schedule(entry, problem):
    [text] = problems({"broken": entry})
    assert text.startswith("schedule 'broken': ") and problem in text


def test_manage_py_check_reports_bad_settings_schedules():
    from django.core import checks

    with override_settings(PGMQ=pgmq_settings({"broken": {"cron": "* * * * *"}})):
        found = [m for m in checks.run_checks() if m.id == "django_pgmq.E007"]
    assert len(found) == 1 and "'queue' must name a queue" in found[0].msg


def test_a_bad_cron_in_settings_fails_the_sync_naming_it_and_writes_nothing(db, queue_name):
    entries = {
        "set_ok": {"cron": "* * * * *", "queue": queue_name},
        "set_bad": {"cron": "* * * * * *", "queue": queue_name},
    }
    with (
        override_settings(PGMQ=pgmq_settings(entries)),
        pytest.raises(
            ImproperlyConfigured,
            match="schedule 'set_bad': cron \"\\* \\* \\* \\* \\* \\*\": want 5 fields",
        ),
    ):
        sync_schedules()
    assert pgmq.QueueManager().get_schedule("set_ok") is None


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ({"cron": "61 * * * *"}, 'cron field "minute": 61 is out of range 0-59'),
        ({"cron": "0 0 30 2 *"}, 'cron field "day-of-month": 30 never occurs'),
        ({"cron": "@every 0 seconds"}, "the interval must be 1 or more"),
        ({"cron": "* * * * *", "time_zone": "Mars/Base"}, 'unknown time zone "Mars/Base"'),
    ],
)
def test_check_refuses_what_the_sql_would_naming_schedule_and_field(entry, problem):
    from django.core import checks

    schedules = {"minutely-ping": {"queue": "pings", **entry}}
    with override_settings(PGMQ=pgmq_settings(schedules)):
        [found] = [m for m in checks.run_checks() if m.id == "django_pgmq.E007"]
    assert found.level == checks.ERROR
    assert found.msg.startswith("schedule 'minutely-ping': ") and problem in found.msg


BAD_CRON_SETTINGS = """
from example_project.settings import *  # noqa: F403

PGMQ = {**PGMQ, "SCHEDULES": {"minutely-ping": {"cron": "61 * * * *", "queue": "pings"}}}
"""


@pytest.mark.slow
@pytest.mark.parametrize("skip_checks", [False, True])
def test_migrate_with_a_bad_cron_says_so_without_a_traceback(
    subprocess_env, transactional_db, tmp_path, skip_checks
):
    (tmp_path / "bad_cron_settings.py").write_text(BAD_CRON_SETTINGS)
    env = {
        **subprocess_env,
        "DJANGO_SETTINGS_MODULE": "bad_cron_settings",
        "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)]),
    }
    args = ["migrate", "-v0", *(["--skip-checks"] if skip_checks else [])]
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    expected = "schedule 'minutely-ping': cron field \"minute\": 61 is out of range 0-59"
    errors = [line for line in done.stderr.splitlines() if expected in line]
    assert len(errors) == 1, done.stderr
    if skip_checks:  # the checks skipped: the schedules' sync after migrating says it
        assert done.stderr.splitlines() == [errors[0]]
        assert errors[0].startswith("CommandError: migrated, but PGMQ['SCHEDULES']: ")


# -- Django Tasks ------------------------------------------------------------------------------


def test_a_task_schedule_enqueues_the_task_with_a_result_row_once_per_tick(db):
    entry = {"nightly_add": {"cron": "0 3 * * *", "task": "tests.task_funcs.add", "args": [2, 3]}}
    with override_settings(PGMQ=pgmq_settings(entry)):
        [item] = declared()
        sync_schedules()
    assert item.queue == "emails" and item.message == {
        "task": "tests.task_funcs.add",
        "args": [2, 3],
        "kwargs": {},
    }
    pgmq.purge_queue("emails")
    tick = AT.replace(hour=3)  # 03:00 in UTC, the project's TIME_ZONE
    start_at("nightly_add", tick)
    [sent] = pgmq.enqueue_due_schedules(at=tick)
    manager = InternalManager()
    runner = TaskRunner(task_backends["default"], "emails")
    [message] = manager.read_by_priority("emails", vt=0, qty=10)
    [again] = manager.read_by_priority("emails", vt=30, qty=10)  # the same message, read twice
    assert again.msg_id == message.msg_id == sent.msg_id
    runner.run(again)
    records = TaskResultRecord.objects.filter(msg_id=sent.msg_id, queue_name="emails")
    [record] = records
    assert (record.task_path, record.status, record.return_value) == (
        "tests.task_funcs.add",
        "SUCCESSFUL",
        5,
    )
    result = task_backends["default"].get_result(str(record.id))
    assert result.return_value == 5
    runner.run(message)  # its earlier read comes back: the finished result is not run again
    assert records.count() == 1
    assert pgmq.enqueue_due_schedules(at=tick) == []


# -- manage.py pgmq_schedule -------------------------------------------------------------------


def run(*args: str) -> str:
    out = io.StringIO()
    with transaction.atomic():  # a failing one rolls back alone, as in its own process
        call_command("pgmq_schedule", *args, stdout=out)
    return out.getvalue()


def test_the_command_adds_lists_disables_runs_and_removes(q):
    assert "saved; next tick" in run(
        "add", "cmd_s", "30 2 * * *", q, "--time-zone", "Europe/Berlin", "--message", '{"x": 1}'
    )
    listing = run("list", "--ticks", "2")
    assert "cmd_s" in listing and "Europe/Berlin" in listing
    [line] = [json.loads(x) for x in run("list", "--json").splitlines() if '"cmd_s"' in x]
    assert line["cron"] == "30 2 * * *" and len(line["next_ticks"]) == 1 and line["enabled"]
    assert "disabled" in run("disable", "cmd_s")
    assert "enabled" in run("enable", "cmd_s")
    assert "sent message" in run("run-now", "cmd_s")
    assert [m.message for m in pgmq.read(q, vt=30, qty=10)] == [{"x": 1}]
    assert "removed" in run("remove", "cmd_s")
    with pytest.raises(CommandError, match='schedule "cmd_s" does not exist'):
        run("remove", "cmd_s")
    with pytest.raises(CommandError, match='cron field "hour": 25 is out of range 0-23'):
        run("add", "cmd_bad", "0 25 * * *", q)
    with pytest.raises(CommandError, match='schedule "ghost" does not exist'):
        run("enable", "ghost")


def test_pgmq_maintain_sends_the_due_ticks(q):
    from django.db import connection

    pgmq.create_schedule("maint_s", "* * * * *", q, {"m": 1})
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE pgmq.schedules SET next_tick = date_trunc('minute', now())"
            " WHERE schedule_name = 'maint_s'"
        )
    out = io.StringIO()
    call_command("pgmq_maintain", stdout=out)
    assert 'schedule "maint_s": tick' in out.getvalue() and f'queue "{q}"' in out.getvalue()
    assert [m.message for m in pgmq.read(q, vt=30, qty=10)] == [{"m": 1}]


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("SCHEDULE_INTERVAL", 0),
        ("SCHEDULE_INTERVAL", "1"),
        ("WORKER_SCHEDULES", 1),
        ("SCHEDULES", []),
    ],
)
def test_bad_schedule_settings_are_reported_by_check(key, value):
    from django_pgmq.conf import check_settings

    with override_settings(PGMQ={"DATABASE": "default", key: value}):
        errors = [e.msg for e in check_settings()]
    assert any(f"PGMQ[{key!r}]" in e for e in errors), errors


@pytest.mark.django_db(transaction=True)
def test_the_async_twins(queue_name):
    import asyncio

    async def run() -> list:
        await pgmq.acreate_queue(queue_name)
        await pgmq.acreate_schedule("async_s", "@daily", queue_name)
        found = [s.name for s in await pgmq.alist_schedules() if s.name == "async_s"]
        ticks = await pgmq.QueueManager().anext_ticks("@daily", "UTC", AT, 2)
        await pgmq.adrop_schedule("async_s")
        await pgmq.adrop_queue(queue_name)
        return [found, ticks]

    found, ticks = asyncio.run(run())
    assert found == ["async_s"]
    assert ticks == [datetime(2026, 6, 2, tzinfo=UTC), datetime(2026, 6, 3, tzinfo=UTC)]


def test_worker_start_applies_the_settings_and_logs_a_bad_one(db, queue_name, caplog):
    from django_pgmq.management.commands.pgmq_consume import apply_schedules

    good = {"start_s": {"cron": "@hourly", "queue": queue_name}}
    with override_settings(PGMQ=pgmq_settings(good)):
        apply_schedules("default")
    assert pgmq.QueueManager().get_schedule("start_s").origin == "settings"
    bad = {"start_s": {"cron": "@fortnightly", "queue": queue_name}}
    with override_settings(PGMQ=pgmq_settings(bad)), caplog.at_level("ERROR"), transaction.atomic():
        apply_schedules("default")
    [record] = [r for r in caplog.records if r.levelname == "ERROR"]
    assert record.getMessage().startswith(
        "schedules from settings not applied: PGMQ['SCHEDULES']: schedule 'start_s': "
        'cron "@fortnightly": unknown form'
    )
    assert "\n" not in record.getMessage() and record.exc_info is None
    assert pgmq.QueueManager().get_schedule("start_s").cron == "@hourly"
