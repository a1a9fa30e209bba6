"""Reading the example settings starts no server: only a connection does."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_commands_that_need_no_database_start_no_embedded_server(tmp_path):
    data = tmp_path / "pgdata"
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env.update(PGMQ_EMBEDDED_DIR=str(data), DJANGO_SETTINGS_MODULE="example_project.settings")
    for args in (["check"], ["pgmq_send", "--help"], ["pgmq_consume", "--help"]):
        done = subprocess.run(
            [sys.executable, str(ROOT / "manage.py"), *args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
    assert not data.exists(), "a server was started for commands that need no database"


def test_the_embedded_entry_names_the_backend_and_the_folder(tmp_path):
    from django_pgmq import embedded

    entry = embedded.django_database(tmp_path / "d", "app")
    assert entry["ENGINE"] == "django_pgmq.embedded_backend"
    assert entry["NAME"] == "app" and entry["EMBEDDED_DIR"] == str((tmp_path / "d").resolve())
    assert not (tmp_path / "d").exists()
