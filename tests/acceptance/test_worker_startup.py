"""Starting ``pgmq_consume``: waiting for the database (or not), and the log formats."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys

import pytest

from tests.worker_process import ROOT, WorkerProcess, start_worker_fixture  # noqa: F401

pytestmark = pytest.mark.slow

# Nothing listens on port 1: every connection attempt is refused at once.
UNREACHABLE = "postgres://postgres@127.0.0.1:1/nowhere"


def test_no_wait_exits_1_with_one_line_when_the_database_is_down(subprocess_env):
    done = subprocess.run(
        [sys.executable, "manage.py", "pgmq_consume", "jobs", "--no-wait"],
        cwd=ROOT,
        env={**subprocess_env, "DATABASE_URL": UNREACHABLE},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("CommandError: database error: ")
    assert "Traceback" not in done.stdout + done.stderr


def test_by_default_it_waits_for_the_database_and_stops_on_sigterm(subprocess_env):
    worker = WorkerProcess({**subprocess_env, "DATABASE_URL": UNREACHABLE}, ["jobs"])
    try:
        worker.wait_for(r"WARNING .*database 'default' unavailable \(attempt 1\): .*; retrying")
        worker.wait_for(r"database 'default' unavailable \(attempt 2\)")
        worker.signal(signal.SIGTERM)
        assert worker.wait() == 0
        worker.wait_for(r"SIGTERM received while waiting for database 'default': not started")
        assert "Traceback" not in worker.output
    finally:
        worker.stop()


def test_json_log_lines_name_the_worker_and_the_queue(queue, manager, start_worker):
    manager.send_batch(queue, [{"fail_times": 1}, {}])
    worker = start_worker(
        queue,
        "--handler",
        "tests.handlers.handle",
        "--retry-delay",
        "0.1",
        "--until-empty",
        "--poll-interval",
        "0.2",
        "--log-format",
        "json",
        "-v",
        "2",
    )
    assert worker.wait() == 0
    entries = [json.loads(line) for line in worker.lines]  # every line is one JSON object
    assert entries
    for entry in entries:
        assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$", entry["time"])
        assert entry["level"] in ("DEBUG", "INFO", "WARNING")
        assert entry["worker"] == f"{entry['worker'].split(':')[0]}:{worker.pid}"
        assert entry["queue"] == queue
    [failure] = [e for e in entries if "handler failed" in e["message"]]
    assert failure["level"] == "WARNING"
    assert "RuntimeError: planned failure" in failure["traceback"]
    assert any(e["message"].startswith("stopped (--until-empty: ") for e in entries)


def test_the_start_line_names_each_queues_throttle_once(queue, manager, start_worker):
    manager.enable_notify(queue, 250)
    worker = start_worker(queue, "--handler", "tests.handlers.handle", "--until-empty")
    assert worker.wait() == 0
    [start] = [line for line in worker.lines if " started on database " in line]
    assert f"wake-up: LISTEN/NOTIFY (throttle: {queue} 250ms)," in start
