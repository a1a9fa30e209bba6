"""``python -m benchmarks.limits``: what max_in_flight and rate_limit cost, and how fast a
reader at the limit wakes when a slot frees.

- read+archive at batch 10, one connection: pgmq's plain queue, ours without attributes
  (the unlimited path, unchanged by the limits), and ours with limits that are never
  reached (max_in_flight 100, rate_limit 10^9 per second, and both), each limited figure
  against our unlimited one (target: >= 0.7x);
- wake-up: a queue with max_in_flight 1 and its one slot taken; a second session LISTENs
  on the queue's FREE channel (as the worker's listener does), a third archives the
  message in flight; the time from the archive's commit to the waiting session holding
  the next message (notification received, read returned it). p50 and p95 over
  ``--wakeups`` trials (target: p50 < 10 ms).

Each throughput figure is the median of ``--rounds`` timed runs, the figures interleaved.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import uuid

from psycopg import sql
from psycopg.types.json import Jsonb

from .attributes import connect, read_archive
from .report import interleaved
from .server import resolve
from .stores import Store

LIMITS = {
    "max_in_flight 100": {"max_in_flight": 100},
    "rate_limit 1e9/s": {"rate_limit": {"count": 1_000_000_000, "seconds": 1}},
    "both": {"max_in_flight": 100, "rate_limit": {"count": 1_000_000_000, "seconds": 1}},
}


def wakeups(store: Store, trials: int) -> list[float]:
    """Milliseconds from an archive's commit to a session waiting at the limit holding the
    next message, ``trials`` times."""
    queue = f"limit_wake_{uuid.uuid4().hex[:8]}"
    with connect(store) as admin:
        admin.execute("SELECT pgmq.create(%s)", [queue])
        admin.execute(
            "SELECT pgmq.set_queue_attributes(%s, %s)", [queue, Jsonb({"max_in_flight": 1})]
        )
        admin.execute(
            "SELECT pgmq.send_batch(%s, %s)", [queue, [Jsonb({"n": n}) for n in range(trials + 1)]]
        )
    times: list[float] = []
    with connect(store) as waiter, connect(store) as archiver:
        waiter.execute(sql.SQL("LISTEN {}").format(sql.Identifier(f"pgmq.q_{queue}.FREE")))
        [held] = [r[0] for r in waiter.execute("SELECT msg_id FROM pgmq.read(%s, 300, 1)", [queue])]
        for _ in range(trials):
            assert waiter.execute("SELECT * FROM pgmq.read(%s, 300, 1)", [queue]).fetchall() == []
            archiver.execute("SELECT pgmq.archive(%s, %s::bigint)", [queue, held])
            committed = time.perf_counter()
            for _note in waiter.notifies(timeout=5, stop_after=1):
                pass
            rows = waiter.execute("SELECT msg_id FROM pgmq.read(%s, 300, 1)", [queue]).fetchall()
            times.append((time.perf_counter() - committed) * 1000)
            assert len(rows) == 1, "woken, but no slot"
            held = rows[0][0]
        waiter.execute("SELECT pgmq.drop_queue(%s)", [queue])
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", help="A server to use (default: DATABASE_URL or embedded).")
    parser.add_argument("--data-dir", help="The embedded server's data folder.")
    parser.add_argument("--messages", type=int, default=10_000, help="Queue size for reads.")
    parser.add_argument("--rounds", type=int, default=3, help="Timed runs per figure.")
    parser.add_argument("--wakeups", type=int, default=200, help="Wake-up trials.")
    args = parser.parse_args()
    server = resolve(args.dsn, args.data_dir)
    tag = uuid.uuid4().hex[:6]
    ours = Store("ours", server, f"bench_limits_ours_{tag}")
    pgmq = Store("pgmq", server, f"bench_limits_pgmq_{tag}")
    try:
        for store in (ours, pgmq):
            store.install()
        with connect(ours) as o, connect(pgmq) as p:
            runs: dict[str, tuple] = {
                "read+archive pgmq plain": (p, None),
                "read+archive ours unlimited": (o, None),
                **{f"read+archive ours {label}": (o, a) for label, a in LIMITS.items()},
            }
            fig = interleaved(
                {
                    key: lambda c=conn, a=attributes: read_archive(c, a, args.messages)
                    for key, (conn, attributes) in runs.items()
                },
                args.rounds,
            )
        wake = wakeups(ours, args.wakeups)
    finally:
        for store in (ours, pgmq):
            store.close()
        server.drop_created()
    unlimited = fig["read+archive ours unlimited"]
    ratios = {
        "unlimited / pgmq plain": unlimited / fig["read+archive pgmq plain"],
        **{
            f"{label} / unlimited (target >= 0.7)": fig[f"read+archive ours {label}"] / unlimited
            for label in LIMITS
        },
    }
    quantiles = statistics.quantiles(wake, n=20)
    wakeup = {"p50_ms": statistics.median(wake), "p95_ms": quantiles[18], "trials": len(wake)}
    report = {"server": server.describe(), "msgs_per_s": fig, "ratios": ratios, "wakeup": wakeup}
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
