"""Django Tasks: django-pgmq's PgmqBackend against django-tasks-db's DatabaseBackend.

    python -m benchmarks.tasks [--tasks N] [--samples N] [--concurrency N] [--dsn DSN]

For each backend, in a scratch database of its own on one server, in one run:
N tasks (a task that returns its argument; then one that sleeps 1 ms first) enqueued
in one transaction (after one enqueue outside it, so the queue exists; the best of three
such transactions is the enqueue rate), then run by
one worker process (``pgmq_consume --tasks``,
``db_worker``), results stored; throughput is N
over the time from the first task's start to the last one's finish, as recorded
in the results. Then, with an idle worker, the delay from an enqueue's commit to
the task's start (p50, p99). Each backend runs in a child process with its own
settings (benchmarks/tasks_settings.py); the scratch databases are dropped.
The peer is not a dependency of the project: ``pip install django-tasks-db`` first.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from typing import Any

from .worker import REPO, database_url, recreate, server_params

BACKENDS = ("pgmq", "db")
ENQUEUE_ROUNDS = 3


def worker_command(backend: str, concurrency: int, until_empty: bool) -> list[str]:
    """The worker process of ``backend``: drains and exits, or waits (the latency phase)."""
    if backend == "pgmq":
        args = ["pgmq_consume", "--tasks", "--concurrency", str(concurrency), "--batch", "10"]
        return [*args, "--until-empty", "--poll-interval", "0.05"] if until_empty else args
    return ["db_worker", "--batch", "--no-startup-delay"] if until_empty else ["db_worker"]


# -- the child: one backend, its own settings -----------------------------------------


def child(backend: str, count: int, samples: int, concurrency: int) -> dict[str, Any]:
    """Run both phases for ``backend`` (settings already point at its database)."""
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    from benchmarks.task_funcs import echo, pause

    env = dict(os.environ)
    results: dict[str, Any] = {"backend": backend, "tasks": count}
    results.update(throughput(echo, backend, count, concurrency, env))
    slow = throughput(pause, backend, count, concurrency, env)
    results["run_1ms_per_s"] = slow["run_per_s"]
    results.update(latency(echo, backend, samples, env))
    return results


def _result_model(backend: str) -> Any:
    if backend == "pgmq":
        from django_pgmq.models import TaskResultRecord

        return TaskResultRecord
    from django_tasks_db.models import DBTaskResult

    return DBTaskResult


def throughput(echo: Any, backend: str, count: int, concurrency: int, env: dict) -> dict:
    from django.db import transaction
    from django.db.models import Max, Min

    model = _result_model(backend)
    # One enqueue first, outside the timed transaction, for both backends: the task queue
    # exists and the connection is warm, as in a request handler of a running project.
    echo.enqueue(-1)
    # The best of ENQUEUE_ROUNDS transactions: the backends run minutes apart, and on a
    # shared machine one slow round says more about the load than about the backend.
    enqueue_seconds = float("inf")
    for _ in range(ENQUEUE_ROUNDS):
        model.objects.all().delete()
        if backend == "pgmq":
            import django_pgmq

            django_pgmq.purge_queue(echo.queue_name)
        started = time.perf_counter()
        with transaction.atomic():
            for i in range(count):
                echo.enqueue(i)
        enqueue_seconds = min(enqueue_seconds, time.perf_counter() - started)
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "manage.py", *worker_command(backend, concurrency, True), "-v", "0"],
        cwd=REPO,
        env=env,
        check=True,
    )
    wall = time.perf_counter() - started
    done = model.objects.filter(status="SUCCESSFUL")
    span = done.aggregate(first=Min("started_at"), last=Max("finished_at"))
    seconds = (span["last"] - span["first"]).total_seconds()
    assert done.count() == count, f"{backend}: {done.count()} of {count} tasks succeeded"
    return {
        "enqueue_per_s": count / enqueue_seconds,
        "run_per_s": count / seconds,
        "worker_wall_s": wall,
    }


def latency(echo: Any, backend: str, samples: int, env: dict) -> dict:
    """Commit of an enqueue -> the task's start, with an idle worker (p50, p99, in ms)."""
    from datetime import UTC, datetime

    model = _result_model(backend)
    worker = subprocess.Popen(
        [sys.executable, "manage.py", *worker_command(backend, 1, False), "-v", "0"],
        cwd=REPO,
        env=env,
    )
    delays = []
    try:
        echo.enqueue(-1)  # warm up: the worker is up once it has run this one
        _wait_started(model, 1, timeout=60)
        for _ in range(samples):
            time.sleep(0.05)  # idle
            result = echo.enqueue(0)
            committed = datetime.now(UTC)
            row = _wait_started(model, 1, pk=result.id)
            delays.append((row.started_at - committed).total_seconds() * 1000)
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(60)
    delays.sort()
    return {
        "latency_p50_ms": statistics.median(delays),
        "latency_p99_ms": delays[min(len(delays) - 1, int(len(delays) * 0.99))],
    }


def _wait_started(model: Any, count: int, pk: Any = None, timeout: float = 30) -> Any:
    deadline = time.monotonic() + timeout
    rows = model.objects.filter(pk=pk) if pk else model.objects.all()
    while time.monotonic() < deadline:
        row = rows.exclude(started_at=None).order_by("-started_at").first()
        if row is not None and row.status == "SUCCESSFUL":
            return row
        time.sleep(0.002)
    raise TimeoutError("the task did not run")


# -- the driver -------------------------------------------------------------------------


def run_backend(server: dict, dbname: str, backend: str, args: argparse.Namespace) -> dict:
    recreate(server, dbname)
    env = dict(os.environ)
    env.update(
        DATABASE_URL=database_url(server, dbname),
        DJANGO_SETTINGS_MODULE="benchmarks.tasks_settings",
        DJANGO_DEBUG="0",
        BENCH_TASKS_BACKEND=backend,
    )
    try:
        out = subprocess.run(
            [
                *(sys.executable, "-m", "benchmarks.tasks", "--child", backend),
                *("--tasks", str(args.tasks), "--samples", str(args.samples)),
                *("--concurrency", str(args.concurrency)),
            ],
            cwd=REPO,
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )
    finally:
        recreate(server, dbname, drop_only=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def report(ours: dict, peer: dict, concurrency: int) -> str:
    star = " *" if concurrency > 1 else ""
    rows = [
        ("enqueue, one transaction (tasks/s)", "enqueue_per_s", True),
        (
            f"run no-op, one worker process (tasks/s){star}",
            "run_per_s",
            True,
        ),
        (
            f"run 1 ms, one worker process (tasks/s){star}",
            "run_1ms_per_s",
            True,
        ),
        ("idle worker: commit -> start p50 (ms)", "latency_p50_ms", False),
        ("idle worker: commit -> start p99 (ms)", "latency_p99_ms", False),
    ]
    lines = [
        f"{'':44} {'django-pgmq':>12} {'django-tasks-db':>16} {'ratio':>7}",
    ]
    for label, key, higher in rows:
        a, b = ours[key], peer[key]
        if min(a, b) <= 0:  # a delay under the clock's resolution: no ratio to give
            lines.append(f"{label:44} {a:12,.1f} {b:16,.1f} {'-':>7}")
            continue
        ratio = a / b if higher else b / a
        lines.append(f"{label:44} {a:12,.1f} {b:16,.1f} {ratio:6.2f}x")
    if concurrency > 1:
        lines.append(f"* django-pgmq with --concurrency {concurrency} (threads of one process)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.tasks", description=__doc__)
    parser.add_argument("--tasks", type=int, default=3_000, help="Tasks in each throughput run.")
    parser.add_argument("--samples", type=int, default=100, help="Latency samples.")
    parser.add_argument("--concurrency", type=int, default=1, help="django-pgmq worker threads.")
    parser.add_argument("--dsn", help="Server (any database on it); default: DATABASE_URL.")
    parser.add_argument("--db-prefix", default="bench_tasks_", help="Scratch database prefix.")
    parser.add_argument("--child", choices=BACKENDS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.tasks, args.samples, args.concurrency)))
        return 0
    if importlib.util.find_spec("django_tasks_db") is None:
        print("the peer is missing: pip install django-tasks-db (benchmark only)", file=sys.stderr)
        return 2
    server = server_params(args.dsn)
    ours = run_backend(server, f"{args.db_prefix}ours", "pgmq", args)
    peer = run_backend(server, f"{args.db_prefix}db", "db", args)
    print(f"{args.tasks} tasks; load average at the end: {os.getloadavg()[0]:.2f}")
    print(report(ours, peer, args.concurrency))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
