"""The README's quick start: ``manage.py pgmq_demo`` as a real process, checked in the database."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run_demo(env: dict[str, str], *args: str) -> str:
    """Run the demo in a subprocess; it must exit 0. Returns its stdout."""
    result = subprocess.run(
        [sys.executable, "manage.py", "pgmq_demo", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return result.stdout


def archive_state(pg_connect, table: str) -> tuple[int, int, int, int, int]:
    """(rows, distinct n, min n, max n, rows not read exactly once) of an archive table."""
    from psycopg import sql

    with pg_connect() as conn:
        return conn.execute(
            sql.SQL(
                "SELECT count(*), count(DISTINCT message->>'n'), min((message->>'n')::int),"
                " max((message->>'n')::int), count(*) FILTER (WHERE read_ct <> 1)"
                " FROM pgmq.{}"
            ).format(sql.Identifier(table))
        ).fetchone()


@pytest.mark.slow
def test_demo_archives_every_message_and_reruns_clean(manager, subprocess_env, pg_connect):
    try:
        out = run_demo(subprocess_env)
        assert re.search(r"^archived: 10000 messages in pgmq\.a_demo$", out, re.MULTILINE)
        assert re.search(r"^demo +0 +0 +- +- +10000$", out, re.MULTILINE)
        assert "send    [" in out and "archive [" in out
        assert archive_state(pg_connect, "a_demo") == (10000, 10000, 0, 9999, 0)
        assert manager.metrics("demo").queue_length == 0

        # A second run starts from a fresh queue, with other batch sizes.
        out = run_demo(subprocess_env, "--messages", "2000", "--batch", "333", "--read-qty", "70")
        assert re.search(r"^archived: 2000 messages in pgmq\.a_demo$", out, re.MULTILINE)
        assert archive_state(pg_connect, "a_demo") == (2000, 2000, 0, 1999, 0)
    finally:
        manager.drop_queue("demo")


@pytest.mark.slow
def test_demo_on_a_named_queue(manager, subprocess_env, pg_connect, queue_name):
    name = queue_name.upper()
    try:
        out = run_demo(subprocess_env, "--messages", "250", "--queue", name)
        assert f"archived: 250 messages in pgmq.a_{queue_name}" in out
        assert archive_state(pg_connect, f"a_{queue_name}") == (250, 250, 0, 249, 0)
        assert name in {q.queue_name for q in manager.list_queues()}
    finally:
        manager.drop_queue(name)
