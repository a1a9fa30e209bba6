"""``python -m benchmarks.schedules``: what ``pgmq.enqueue_due_schedules()`` costs a call.

``--schedules`` schedules (default 10,000) with cron expressions ``M H-23/3 * * *`` (a
random minute, every three hours from a random hour 0-2): each fires every 10,800 s, so
together about one tick is due per second, bunched at the minutes as cron does. The
benchmark calls ``pgmq.enqueue_due_schedules(at)`` once per simulated second for
``--seconds`` seconds (as the workers do once a real second) and reports the time per
call: every call, the calls that sent something, and the idle calls (nothing due: one
probe of the partial index on ``next_tick``), with the shared buffers an idle call
touches. There is no pgmq counterpart to compare with: pgmq has no schedules.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
import uuid
from datetime import timedelta

import psycopg

from .server import resolve
from .stores import Store

QUEUE = "schedule_bench"


def create_schedules(conn: psycopg.Connection, count: int, seed: int) -> None:
    """``count`` schedules of one tick per 3 hours each, spread over minutes and hours."""
    rng = random.Random(seed)
    crons = [f"{rng.randrange(60)} {rng.randrange(3)}-23/3 * * *" for _ in range(count)]
    conn.execute("SELECT pgmq.create(%s)", [QUEUE])
    names = [f"bench_{n}" for n in range(count)]
    with conn.transaction():
        for start in range(0, count, 1000):
            conn.execute(
                "SELECT pgmq.create_schedule(schedule_name => n, cron => c, queue_name => %s)"
                " FROM unnest(%s::text[], %s::text[]) AS t(n, c)",
                [QUEUE, names[start : start + 1000], crons[start : start + 1000]],
            )
    conn.execute("VACUUM ANALYZE pgmq.schedules")


def call_every_second(conn: psycopg.Connection, seconds: int) -> dict:
    """One call per simulated second from now; times in milliseconds."""
    start = conn.execute("SELECT date_trunc('second', now())").fetchone()[0]
    busy, idle, sent = [], [], 0
    for s in range(seconds):
        at = start + timedelta(seconds=s + 1)
        began = time.perf_counter()
        rows = conn.execute("SELECT * FROM pgmq.enqueue_due_schedules(at => %s)", [at]).fetchall()
        elapsed = (time.perf_counter() - began) * 1000
        (busy if rows else idle).append(elapsed)
        sent += len(rows)
    every = busy + idle
    return {
        "calls": len(every),
        "ticks_sent": sent,
        "ticks_per_second": sent / seconds,
        "ms_per_call_mean": statistics.fmean(every),
        "ms_per_call_p50": statistics.median(every),
        "ms_per_call_p99": sorted(every)[int(len(every) * 0.99) - 1],
        "ms_per_call_max": max(every),
        "calls_that_sent": len(busy),
        "ms_per_sending_call_mean": statistics.fmean(busy) if busy else None,
        "ms_per_sending_call_max": max(busy) if busy else None,
        "idle_calls": len(idle),
        "ms_per_idle_call_p50": statistics.median(idle) if idle else None,
    }


def idle_call_buffers(conn: psycopg.Connection) -> dict:
    """What an idle call reads: the plan's shared buffers (one index probe)."""
    plan = conn.execute(
        "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT * FROM pgmq.schedules x"
        " WHERE x.enabled AND x.next_tick <= now() - interval '1 day'"
        " ORDER BY x.next_tick FOR UPDATE SKIP LOCKED"
    ).fetchone()[0][0]
    top = plan["Plan"]
    began = time.perf_counter()
    for _ in range(1000):
        conn.execute("SELECT * FROM pgmq.enqueue_due_schedules(at => now() - interval '1 day')")
    return {
        "idle_call_ms": (time.perf_counter() - began),  # 1000 calls: seconds = ms per call
        "idle_scan_shared_buffers": top.get("Shared Hit Blocks", 0)
        + top.get("Shared Read Blocks", 0),
        "idle_scan_node": top["Plans"][0]["Node Type"] if top.get("Plans") else top["Node Type"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", help="A server to use (default: DATABASE_URL or embedded).")
    parser.add_argument("--data-dir", help="The embedded server's data folder.")
    parser.add_argument("--schedules", type=int, default=10_000, help="How many schedules.")
    parser.add_argument("--seconds", type=int, default=1800, help="Simulated seconds (calls).")
    parser.add_argument("--seed", type=int, default=24, help="Seed of the cron expressions.")
    args = parser.parse_args()
    server = resolve(args.dsn, args.data_dir)
    store = Store("ours", server, f"bench_sched_{uuid.uuid4().hex[:6]}")
    try:
        store.install()
        with psycopg.connect(**store.conninfo("schedules"), autocommit=True) as conn:
            began = time.perf_counter()
            create_schedules(conn, args.schedules, args.seed)
            created = time.perf_counter() - began
            figures = call_every_second(conn, args.seconds)
            figures |= idle_call_buffers(conn)
    finally:
        store.close()
        server.drop_created()
    report = {
        "server": server.describe(),
        "schedules": args.schedules,
        "create_ms_per_schedule": created * 1000 / args.schedules,
        **figures,
    }
    print(json.dumps(report, indent=2, default=str))


if __name__ == "__main__":
    main()
