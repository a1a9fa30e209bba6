"""A real ``celery worker`` subprocess for the acceptance tests (any app, any pool)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CELERY = str(Path(sys.executable).with_name("celery"))


class Worker:
    """A ``celery worker`` subprocess in its own process group, its output kept."""

    def __init__(
        self, env: dict[str, str], pool: str, queue: str, *extra: str, app: str = "example_project"
    ) -> None:
        self.name = f"h6-{uuid.uuid4().hex[:8]}"
        self.node = f"{self.name}@{socket.gethostname()}"
        command = [
            CELERY, "-A", app, "worker", "-P", pool, "-c", "2", "-Q", queue,
            "-n", self.node, "-l", "INFO", "--without-gossip", "--without-mingle",
            "--without-heartbeat", *extra,
        ]  # fmt: skip
        self.lines: list[str] = []
        self.ready = threading.Event()
        self.proc = subprocess.Popen(
            command,
            env=env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        threading.Thread(target=self._read, daemon=True).start()
        if not self.ready.wait(60):
            self.kill()
            pytest.fail(f"worker did not start:\n{self.output}")

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)
            if " ready." in line:
                self.ready.set()

    @property
    def output(self) -> str:
        return "".join(self.lines[-80:])

    def stop(self) -> int:
        """Warm shutdown (SIGTERM to the main process); returns the exit code."""
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(60)

    def kill(self) -> None:
        """kill -9 the worker and its pool processes, as a lost machine would."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(30)
