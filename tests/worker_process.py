"""Run ``manage.py pgmq_consume`` as a real process and follow its log, for the worker tests."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
WAIT = 30.0  # seconds: a safety net for a hung test, never a performance threshold


class WorkerProcess:
    """One worker process; its merged stdout/stderr is collected line by line."""

    def __init__(self, env: dict[str, str], args: list[str]) -> None:
        self.args = args
        self.proc = subprocess.Popen(
            [sys.executable, "manage.py", "pgmq_consume", *args],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=1,
        )
        self.lines: list[str] = []
        self._eof = False
        self._changed = threading.Condition()
        threading.Thread(target=self._collect, daemon=True).start()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _collect(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with self._changed:
                self.lines.append(line.rstrip("\n"))
                self._changed.notify_all()
        with self._changed:
            self._eof = True
            self._changed.notify_all()

    @property
    def output(self) -> str:
        with self._changed:
            return "\n".join(self.lines)

    def wait_for(self, pattern: str, *, after: int = 0, timeout: float = WAIT) -> int:
        """Wait for a log line matching ``pattern`` (from line ``after``); its index."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                for index in range(after, len(self.lines)):
                    if regex.search(self.lines[index]):
                        return index
                if self._eof:
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._changed.wait(min(left, 0.1))
        raise AssertionError(
            f"no line matching {pattern!r} (exit code {self.proc.poll()}); output:\n{self.output}"
        )

    def count(self, pattern: str) -> int:
        """How many log lines match ``pattern``."""
        regex = re.compile(pattern)
        with self._changed:
            return sum(1 for line in self.lines if regex.search(line))

    def signal(self, sig: int) -> None:
        self.proc.send_signal(sig)

    def wait(self, timeout: float = WAIT) -> int:
        """Wait for the process to exit; its exit code."""
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"worker still running after {timeout}s:\n{self.output}") from None

    def stop(self) -> None:
        """End the process if it still runs (test clean-up)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)


def wait_until(check: Callable[[], object], what: str, timeout: float = WAIT) -> object:
    """Poll ``check`` until it returns something truthy; fail naming ``what`` if it never does."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


@pytest.fixture(name="start_worker")
def start_worker_fixture(
    queue: str, subprocess_env: dict[str, str]
) -> Iterator[Callable[..., WorkerProcess]]:
    """Start ``pgmq_consume`` processes on the test database; all killed after the test.

    Depends on ``queue`` so workers stop before the queue is dropped.
    """
    started: list[WorkerProcess] = []

    def start(*args: str, env: dict[str, str] | None = None) -> WorkerProcess:
        worker = WorkerProcess(env or subprocess_env, [str(a) for a in args])
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.stop()
