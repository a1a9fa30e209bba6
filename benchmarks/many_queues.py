"""``python -m benchmarks.many_queues``: the cost of one queue among thousands.

At each count (1,000, 5,000, 10,000 queues by default) it times, on django-pgmq and
on pgmq's own SQL in a scratch database of the same server: creating and dropping a
queue, a new session's first send and first read, a send, and reads the memory of a
session after it used 1 queue and 300 queues; then list_queues and metrics_all (in a
new session, and again in the same one). Ratios are ours / pgmq's: below 1.0 ours
costs less. Then, on django-pgmq's database only (pgmq has none), the admin overview
and a queue sampler round (``benchmarks/admin_overview.py``) and the commands
``pgmq_list`` and ``pgmq_metrics`` end to end (a new process each, Django's start
included, shown on its own as ``manage.py check``), printed without a ratio. At the
last count, one message goes into every queue and metrics_all is timed again: no
queue is idle then.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

import psycopg

from .server import REPO, resolve
from .sqlfile import statement
from .stores import Store, django_env

SAMPLES = 7


def run(conn: psycopg.Connection, query: str, **params: object) -> list[tuple]:
    cur = conn.execute(statement("many.sql", query), params or None)
    return cur.fetchall() if cur.description else []


def timed(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def grow(store: Store, count: int) -> None:
    """Create queues q00000 ... until the database has ``count``."""
    with psycopg.connect(**store.conninfo("many"), autocommit=True) as conn:
        have = run(conn, "queue_count")[0][0]
        for n in range(have, count):
            run(conn, "create_queue", name=f"q{n:05d}")


def measure(store: Store, count: int, used: int) -> dict[str, float]:
    """The figures of one database holding ``count`` queues."""
    info = store.conninfo("many")
    fig: dict[str, float] = {}
    with psycopg.connect(**info, autocommit=True) as conn:
        names = [f"extra_{n}" for n in range(SAMPLES)]
        fig["create one queue (ms)"] = median_ms(
            [timed(lambda n=n: run(conn, "create_queue", name=n)) for n in names]
        )
        fig["drop one queue (ms)"] = median_ms(
            [timed(lambda n=n: run(conn, "drop_queue", name=n)) for n in names]
        )
        run(conn, "send", name="q00000")
        fig["send (ms)"] = median_ms(
            [timed(lambda: run(conn, "send", name="q00000")) for _ in range(200)]
        )
    for first in ("send", "read"):
        samples = []
        for n in range(SAMPLES):
            with psycopg.connect(**info, autocommit=True) as conn:
                queue = f"q{(n * 137) % count:05d}"
                samples.append(timed(lambda q=queue, f=first: run(conn, f, name=q)))
        fig[f"new session's first {first} (ms)"] = median_ms(samples)
    for n_used in (1, used):
        with psycopg.connect(**info, autocommit=True) as conn:
            for n in range(n_used):
                queue = f"q{(n * 31) % count:05d}"
                run(conn, "send", name=queue)
                run(conn, "read", name=queue)
            fig[f"session memory after {n_used} queue(s) (MB)"] = (
                run(conn, "backend_memory")[0][0] / 2**20
            )
    with psycopg.connect(**info, autocommit=True) as conn:
        fig["list_queues() (ms)"] = median_ms([timed(lambda: run(conn, "list_queues"))])
        fig.update(metrics_all_figures(store))
    return fig


def metrics_all_figures(store: Store, label: str = "") -> dict[str, float]:
    """metrics_all() in a new session (the median of 3), then again in the last one."""
    new, warm = [], 0.0
    try:
        for _ in range(3):
            with psycopg.connect(**store.conninfo("many"), autocommit=True) as conn:
                new.append(timed(lambda c=conn: run(c, "metrics_all")))
                warm = timed(lambda c=conn: run(c, "metrics_all"))
    except psycopg.errors.OutOfMemory as exc:
        # pgmq's metrics_all() holds a lock per table it reads: past the server's lock
        # table (max_locks_per_transaction) it fails; report that instead of a figure.
        print(f"{store.key}: metrics_all(){label} failed: {exc.diag.message_primary}", flush=True)
        new, warm = [math.nan], math.nan
    return {
        f"metrics_all(){label}, new session (ms)": median_ms(new),
        f"metrics_all(){label}, again (ms)": warm * 1000,
    }


def busy_figures(store: Store) -> dict[str, float]:
    """metrics_all() once every queue holds a message (none idle)."""
    with psycopg.connect(**store.conninfo("many"), autocommit=True) as conn:
        after = ""
        while after is not None:
            after = run(conn, "send_everywhere", after=after, limit=500)[0][0]
    return metrics_all_figures(store, " with every queue busy")


COMMANDS = {
    "manage.py check (Django's start)": ["check"],
    "manage.py pgmq_list": ["pgmq_list"],
    "manage.py pgmq_metrics (first 100)": ["pgmq_metrics"],
    "manage.py pgmq_metrics --all": ["pgmq_metrics", "--all"],
}


def command_figures(store: Store) -> dict[str, float]:
    """Each command end to end, as a user runs it: a new process (median of 3)."""
    env = django_env(store.server, store.dbname)
    figures = {}
    for key, args in COMMANDS.items():
        command = [sys.executable, str(REPO / "manage.py"), *args]
        samples = []
        for _ in range(3):
            start = time.perf_counter()
            subprocess.run(command, cwd=REPO, env=env, check=True, capture_output=True)
            samples.append(time.perf_counter() - start)
        figures[f"{key} (ms)"] = median_ms(samples)
    return figures


def admin_figures(store: Store) -> dict[str, float]:
    """The admin overview's and the sampler's times on ``store``, from a Django process."""
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.admin_overview"],
        cwd=REPO,
        env=django_env(store.server, store.dbname),
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if done.returncode:
        raise RuntimeError(f"benchmarks.admin_overview failed:\n{done.stdout}\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def report(count: int, ours: dict[str, float], peer: dict[str, float]) -> None:
    print(f"\n{count:,} queues{'':40} {'django-pgmq':>12} {'pgmq 1.13':>12} {'ratio':>7}")
    for key, value in ours.items():
        ratio = value / peer[key] if peer[key] else float("nan")
        print(f"  {key:<54} {value:>12.2f} {peer[key]:>12.2f} {ratio:>6.2f}x")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.many_queues", description=__doc__)
    parser.add_argument("--counts", default="1000,5000,10000", help="queue counts to measure at")
    parser.add_argument("--used", type=int, default=300, help="queues a session uses (memory)")
    parser.add_argument(
        "--dsn",
        help="libpq DSN or URL of the server (default: DATABASE_URL, else the embedded server)",
    )
    parser.add_argument("--data-dir", help="embedded server data folder")
    parser.add_argument("--db-prefix", default="bench_many_", help="scratch database prefix")
    args = parser.parse_args(argv)
    counts = [int(c) for c in args.counts.split(",")]
    server = resolve(args.dsn, args.data_dir)
    stores = [Store(key, server, f"{args.db_prefix}{key}") for key in ("ours", "pgmq")]
    try:
        for store in stores:
            store.install()
        for count in counts:
            figures = {}
            for store in stores:
                started = time.perf_counter()
                grow(store, count)
                print(
                    f"{store.key}: {count:,} queues made in {time.perf_counter() - started:.0f} s",
                    flush=True,
                )
                figures[store.key] = measure(store, count, min(args.used, count))
            report(count, figures["ours"], figures["pgmq"])
            alone = {**admin_figures(stores[0]), **command_figures(stores[0])}
            for key, value in alone.items():
                print(f"  {key:<54} {value:>12.2f}", flush=True)
        busy = {store.key: busy_figures(store) for store in stores}
        report(counts[-1], busy["ours"], busy["pgmq"])
    finally:
        for store in stores:
            store.close()
        server.drop_created()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
