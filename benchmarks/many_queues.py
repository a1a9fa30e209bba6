"""``python -m benchmarks.many_queues``: the cost of one queue among thousands.

At each count (1,000, 5,000, 10,000 queues by default) it times, on django-pgmq and
on pgmq's own SQL in a scratch database of the same server: creating and dropping a
queue, a new session's first send and first read, a send, and reads the memory of a
session after it used 1 queue and 300 queues; then list_queues and metrics_all.
Ratios are ours / pgmq's: below 1.0 ours costs less. Then, on django-pgmq's database
only (pgmq has none), the admin overview and a queue sampler round
(``benchmarks/admin_overview.py``), printed without a ratio.
"""

from __future__ import annotations

import argparse
import json
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
        fig["metrics_all() (ms)"] = median_ms([timed(lambda: run(conn, "metrics_all"))])
    return fig


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
    print(f"\n{count:,} queues{'':22} {'django-pgmq':>12} {'pgmq 1.13':>12} {'ratio':>7}")
    for key, value in ours.items():
        ratio = value / peer[key] if peer[key] else float("nan")
        print(f"  {key:<36} {value:>12.2f} {peer[key]:>12.2f} {ratio:>6.2f}x")


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
            for key, value in admin_figures(stores[0]).items():
                print(f"  {key:<36} {value:>12.2f}", flush=True)
    finally:
        for store in stores:
            store.close()
        server.drop_created()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
