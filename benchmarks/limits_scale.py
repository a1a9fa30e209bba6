"""``python -m benchmarks.limits_scale``: what max_in_flight costs when much is in flight,
and what a limited queue's acknowledgements cost many sessions at once.
Real sessions on a real server; each figure the median of ``--rounds`` runs,
the runs interleaved.

- read+archive at batch 10, one connection: a queue without attributes against one with
  max_in_flight 1,000,000 that is never reached (target: >= 0.7x);
- one read of 10 with 5,000, then 20,000, messages in flight, on a queue without
  attributes and one with max_in_flight 50,000 (the claim's cost must not grow with what
  is in flight; the queue's own read walks the messages in flight either way): median
  milliseconds;
- 16 sessions of single deletes (``pgmq.delete(q, id)``, autocommit), each its own ids:
  of unread messages, and of messages in flight (read beforehand, so each delete of the
  limited queue frees a slot); a queue without attributes against one with
  max_in_flight 1,000,000 (target: >= 0.8x), and one whose attributes change nothing an
  acknowledgement does (the attribute path's own cost, apart from the limit's). Deletes
  per second, all sessions together.
"""

from __future__ import annotations

import argparse
import json
import statistics
import threading
import time
import uuid

import psycopg
from psycopg.types.json import Jsonb

from .attributes import connect, read_archive
from .report import interleaved
from .server import resolve
from .stores import Store

BIG = {"max_in_flight": 1_000_000}
# Attributes that change nothing an acknowledgement does: the attribute path's own cost.
PLAIN_ATTRS = {"priorities": False}


def new_queue(conn: psycopg.Connection, attributes: dict | None, messages: int) -> str:
    name = f"lim_{uuid.uuid4().hex[:10]}"
    conn.execute("SELECT pgmq.create(%s)", [name])
    if attributes:
        conn.execute("SELECT pgmq.set_queue_attributes(%s, %s)", [name, Jsonb(attributes)])
    body = Jsonb({"p": "x" * 100})
    for start in range(0, messages, 1000):
        n = min(1000, messages - start)
        conn.execute("SELECT pgmq.send_batch(%s, %s)", [name, [body] * n])
    conn.execute(f"VACUUM ANALYZE pgmq.q_{name}")
    return name


def read_latency(conn: psycopg.Connection, held: int, reads: int, attributes: dict | None) -> float:
    """Median ms of a read of 10 (each archived after) with ``held`` in flight."""
    queue = new_queue(conn, attributes, held + reads * 10 + 10)
    for _ in range(0, held, 1000):
        conn.execute("SELECT count(*) FROM pgmq.read(%s, 3600, %s)", [queue, min(1000, held)])
    times = []
    for _ in range(reads):
        began = time.perf_counter()
        ids = [r[0] for r in conn.execute("SELECT msg_id FROM pgmq.read(%s, 3600, 10)", [queue])]
        times.append((time.perf_counter() - began) * 1000)
        conn.execute("SELECT pgmq.archive(%s, %s::bigint[])", [queue, ids])
    conn.execute("SELECT pgmq.drop_queue(%s)", [queue])
    return statistics.median(times)


def deletes(
    store: Store, attributes: dict | None, sessions: int, per: int, read_first: bool
) -> float:
    """Deletes per second, ``sessions`` sessions each deleting its own ``per`` messages one
    at a time."""
    with connect(store) as admin:
        queue = new_queue(admin, attributes, sessions * per)
        ids = [r[0] for r in admin.execute(f"SELECT msg_id FROM pgmq.q_{queue} ORDER BY msg_id")]
        if read_first:
            for _ in range(0, len(ids), 1000):
                admin.execute("SELECT count(*) FROM pgmq.read(%s, 3600, 1000)", [queue])
    conns = [connect(store) for _ in range(sessions)]
    barrier = threading.Barrier(sessions + 1)
    done = [0] * sessions
    failures: list[BaseException] = []

    def run(i: int) -> None:
        try:
            conn = conns[i]
            mine = ids[i::sessions]
            barrier.wait()
            for msg_id in mine:
                conn.execute("SELECT pgmq.delete(%s, %s::bigint)", [queue, msg_id])
                done[i] += 1
        except BaseException as exc:  # reported below
            failures.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(sessions)]
    for t in threads:
        t.start()
    barrier.wait()
    began = time.perf_counter()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - began
    for conn in conns:
        conn.close()
    assert not failures, failures
    with connect(store) as admin:
        admin.execute("SELECT pgmq.drop_queue(%s)", [queue])
    return sum(done) / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", help="A server to use (default: DATABASE_URL or embedded).")
    parser.add_argument("--data-dir", help="The embedded server's data folder.")
    parser.add_argument("--messages", type=int, default=10_000, help="Queue size, read+archive.")
    parser.add_argument("--rounds", type=int, default=3, help="Timed runs per figure.")
    parser.add_argument("--sessions", type=int, default=16, help="Deleting sessions.")
    parser.add_argument("--per-session", type=int, default=500, help="Deletes per session.")
    parser.add_argument("--reads", type=int, default=100, help="Reads timed per latency figure.")
    args = parser.parse_args()
    server = resolve(args.dsn, args.data_dir)
    ours = Store("ours", server, f"bench_limscale_{uuid.uuid4().hex[:6]}")
    report: dict = {"server": server.describe()}
    try:
        ours.install()
        with connect(ours) as conn:
            ra = interleaved(
                {
                    "read+archive unlimited": lambda: read_archive(conn, None, args.messages),
                    "read+archive max_in_flight 1e6": lambda: read_archive(
                        conn, BIG, args.messages
                    ),
                },
                args.rounds,
            )
            report["read_archive_msgs_per_s"] = ra
            report["read_archive_ratio (target >= 0.7)"] = (
                ra["read+archive max_in_flight 1e6"] / ra["read+archive unlimited"]
            )
            # The queue's own read walks the messages in flight (msg_id order), limited
            # or not: the unlimited figure is the floor.
            report["read_ms"] = {
                f"{label}, {held} in flight": read_latency(conn, held, args.reads, attrs)
                for held in (5_000, 20_000)
                for label, attrs in (
                    ("unlimited", None),
                    ("max_in_flight 50000", {"max_in_flight": 50_000}),
                )
            }
        dl = interleaved(
            {
                f"{kind} {label}": (
                    lambda a=attrs, r=read_first: deletes(
                        ours, a, args.sessions, args.per_session, r
                    )
                )
                for kind, read_first in (("unread", False), ("in flight", True))
                for label, attrs in (
                    ("unlimited", None),
                    ("attributes, no limit", PLAIN_ATTRS),
                    ("max_in_flight 1e6", BIG),
                )
            },
            args.rounds,
        )
        report[f"deletes_per_s_{args.sessions}_sessions"] = dl
        report["delete_ratios (target >= 0.8)"] = {
            f"{kind} {label} / unlimited": dl[f"{kind} {label}"] / dl[f"{kind} unlimited"]
            for kind in ("unread", "in flight")
            for label in ("attributes, no limit", "max_in_flight 1e6")
        }
    finally:
        ours.close()
        server.drop_created()
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
