"""Subprocesses of the example project reach the same test database as the tests."""

import subprocess
import sys
from pathlib import Path

import django_pgmq as pgmq

ROOT = Path(__file__).resolve().parents[2]


def test_manage_py_subprocess_sees_the_test_database(queue, subprocess_env):
    pgmq.send(queue, {"n": 1})
    out = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "shell",
            "-c",
            f"import django_pgmq as p; print(p.metrics({queue!r}).queue_length)",
        ],
        cwd=ROOT,
        env=subprocess_env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert out.stdout.strip().splitlines()[-1] == "1"
