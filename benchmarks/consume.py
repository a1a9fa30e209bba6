"""The Python worker as a target: ``manage.py pgmq_consume`` processes on the ``ours`` database."""

from __future__ import annotations

import importlib.util
import signal
import subprocess
import sys
import tempfile
import time

from .server import REPO
from .stores import QUEUE, Store, django_env

HANDLERS = {"worker": "benchmarks.handlers.noop", "worker-batch": "benchmarks.handlers.noop_batch"}
READY_TIMEOUT = 120.0


def available() -> bool:
    """Whether this checkout has the worker command (``pgmq_consume``)."""
    try:
        return importlib.util.find_spec("django_pgmq.management.commands.pgmq_consume") is not None
    except ModuleNotFoundError:
        return False


class WorkerPool:
    """``count`` worker processes (concurrency 1 each), started and stopped together."""

    def __init__(self, store: Store, kind: str, count: int, batch: int) -> None:
        self.store = store
        self.apps = [f"bench-worker-{i}" for i in range(count)]
        self.command = [
            sys.executable,
            str(REPO / "manage.py"),
            "pgmq_consume",
            QUEUE,
            "--handler",
            HANDLERS[kind],
            "--batch",
            str(batch),
            "--concurrency",
            "1",
            "-v",
            "0",
        ]
        self.procs: list[subprocess.Popen] = []
        self.logs: list = []

    def start(self) -> None:
        """Start the workers and wait until each has connected (Django is up)."""
        for app in self.apps:
            env = django_env(self.store.server, self.store.dbname, PGAPPNAME=app)
            # A file, not a pipe: a chatty worker never blocks; closed in stop().
            log = tempfile.TemporaryFile("w+")  # noqa: SIM115
            self.logs.append(log)
            self.procs.append(
                subprocess.Popen(self.command, cwd=REPO, env=env, stdout=log, stderr=log)
            )
        deadline = time.monotonic() + READY_TIMEOUT
        waiting = list(self.apps)
        while waiting:
            waiting = [app for app in waiting if not self.store.backends(app)]
            dead = [p for p in self.procs if p.poll() is not None]
            if dead:
                raise RuntimeError(f"pgmq_consume exited: {self._log(self.procs.index(dead[0]))}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"pgmq_consume did not connect within {READY_TIMEOUT}s")
            time.sleep(0.1)

    def stop(self) -> list[str]:
        """SIGTERM (a graceful stop), then kill what is left; errors the workers printed."""
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        errors = []
        for i, proc in enumerate(self.procs):
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            text = self._log(i)
            if proc.returncode not in (0, -signal.SIGTERM) or "Traceback" in text:
                errors.append(f"exit {proc.returncode}: {text}")
        for log in self.logs:
            log.close()
        self.procs.clear()
        self.logs.clear()
        return errors

    def _log(self, index: int) -> str:
        """The end of a worker's output."""
        log = self.logs[index]
        log.flush()
        log.seek(0)
        return log.read()[-1500:]
