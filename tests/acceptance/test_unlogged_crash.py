"""An unlogged queue survives a crash of PostgreSQL without reusing ids.

Its messages are lost by design, but its id sequence is logged: after an immediate
shutdown (no checkpoint, a crash and recovery) new messages get new ids, so archiving
them never collides with the ids the (logged) archive already holds.

Runs its own embedded server (data in a temporary folder), as test_worker_restart does.
"""

from __future__ import annotations

import subprocess
import sys

import psycopg
import pytest
from psycopg.conninfo import make_conninfo

from tests.acceptance.test_worker_faults import stop_server
from tests.acceptance.test_worker_restart import database_url, own_server, start_again
from tests.worker_process import ROOT

pytestmark = pytest.mark.slow

__all__ = ["own_server"]  # the fixture, shared with test_worker_restart


def test_ids_go_on_after_a_crash_and_archive_works(own_server, subprocess_env):
    data, params = own_server
    env = {**subprocess_env, "DATABASE_URL": database_url(params)}
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True
    )

    def sql(statement: str) -> list[tuple]:
        with psycopg.connect(make_conninfo(**params), autocommit=True) as conn:
            cur = conn.execute(statement)
            return cur.fetchall() if cur.description else []

    sql("SELECT pgmq.create_unlogged('fast')")
    before = [
        r[0] for r in sql("SELECT pgmq.send('fast', '{\"n\": 1}') FROM generate_series(1, 3)")
    ]
    assert sql("SELECT count(*) FROM pgmq.archive('fast', ARRAY[1, 2, 3]::bigint[])") == [(3,)]

    stop_server(data, "immediate")
    start_again(data, params["host"])

    assert sql("SELECT count(*) FROM pgmq.q_fast") == [(0,)]  # unlogged: emptied by recovery
    [(after,)] = sql("SELECT pgmq.send('fast', '{\"n\": 2}')")
    assert after > max(before)
    assert sql(f"SELECT count(*) FROM pgmq.archive('fast', ARRAY[{after}]::bigint[])") == [(1,)]
    assert sql("SELECT count(*) FROM pgmq.a_fast") == [(4,)]
