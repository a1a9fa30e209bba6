"""``python -m benchmarks.attributes``: what queue attributes cost, beside pgmq.

Three figures, one client on one connection each (the SQL API through psycopg):

- read+archive at batch 10: ours on a queue with ``priorities``, and ours on a plain
  queue, each against pgmq's plain queue (targets: >= 1.0x and >= 1.3x);
- send_batch of 100 messages with a ``deduplication_id`` each: ours on a queue with a
  ``deduplication_window`` against ours on a plain queue (target: >= 0.7x), and ours
  plain against pgmq.

Each figure is the median of ``--rounds`` timed runs, in messages per second.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import uuid

import psycopg
from psycopg.types.json import Jsonb

from .server import resolve
from .stores import Store

QUEUE = "attr_bench"
BATCH_SEND = 100


def connect(store: Store) -> psycopg.Connection:
    return psycopg.connect(**store.conninfo("attributes"), autocommit=True)


def fresh_queue(conn: psycopg.Connection, attributes: dict | None) -> str:
    """A new queue for one run (a new name: a session promotes a name to the hot path once)."""
    name = f"{QUEUE}_{uuid.uuid4().hex[:8]}"
    conn.execute("SELECT pgmq.create(%s)", [name])
    if attributes:
        conn.execute("SELECT pgmq.set_queue_attributes(%s, %s)", [name, Jsonb(attributes)])
    return name


def read_archive(conn: psycopg.Connection, attributes: dict | None, count: int) -> float:
    """Messages per second read (batch 10) and archived, from a queue of ``count``."""
    queue = fresh_queue(conn, attributes)
    body = Jsonb({"p": "x" * 100})
    for start in range(0, count, 1000):
        headers = [Jsonb({"priority": (start + n) % 7 - 3}) for n in range(1000)]
        conn.execute("SELECT pgmq.send_batch(%s, %s, %s)", [queue, [body] * len(headers), headers])
    conn.execute(f"VACUUM ANALYZE pgmq.q_{queue}")
    done = 0
    began = time.perf_counter()
    while True:
        ids = [r[0] for r in conn.execute("SELECT msg_id FROM pgmq.read(%s, 30, 10)", [queue])]
        if not ids:
            break
        conn.execute("SELECT pgmq.archive(%s, %s::bigint[])", [queue, ids])
        done += len(ids)
    return done / (time.perf_counter() - began)


def send_batches(conn: psycopg.Connection, attributes: dict | None, batches: int) -> float:
    """Messages per second sent in batches of 100, each with its own deduplication_id."""
    queue = fresh_queue(conn, attributes)
    body = Jsonb({"p": "x" * 100})
    began = time.perf_counter()
    for _ in range(batches):
        headers = [Jsonb({"deduplication_id": uuid.uuid4().hex}) for _ in range(BATCH_SEND)]
        conn.execute("SELECT pgmq.send_batch(%s, %s, %s)", [queue, [body] * BATCH_SEND, headers])
    return batches * BATCH_SEND / (time.perf_counter() - began)


def median(call, rounds: int) -> float:
    return statistics.median(call() for _ in range(rounds))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", help="A server to use (default: DATABASE_URL or embedded).")
    parser.add_argument("--data-dir", help="The embedded server's data folder.")
    parser.add_argument("--messages", type=int, default=20_000, help="Queue size for reads.")
    parser.add_argument("--batches", type=int, default=200, help="send_batch calls per run.")
    parser.add_argument("--rounds", type=int, default=3, help="Timed runs per figure.")
    args = parser.parse_args()
    server = resolve(args.dsn, args.data_dir)
    tag = uuid.uuid4().hex[:6]
    ours = Store("ours", server, f"bench_attr_ours_{tag}")
    pgmq = Store("pgmq", server, f"bench_attr_pgmq_{tag}")
    try:
        for store in (ours, pgmq):
            store.install()
        with connect(ours) as o, connect(pgmq) as p:
            n, r = args.messages, args.rounds
            fig = {
                "read+archive pgmq plain": median(lambda: read_archive(p, None, n), r),
                "read+archive ours plain": median(lambda: read_archive(o, None, n), r),
                "read+archive ours priorities": median(
                    lambda: read_archive(o, {"priorities": True}, n), r
                ),
                "send_batch pgmq plain": median(lambda: send_batches(p, None, args.batches), r),
                "send_batch ours plain": median(lambda: send_batches(o, None, args.batches), r),
                "send_batch ours dedup window": median(
                    lambda: send_batches(o, {"deduplication_window": 300}, args.batches), r
                ),
            }
    finally:
        for store in (ours, pgmq):
            store.close()
        server.drop_created()
    ratios = {
        "priorities read+archive / pgmq plain (target >= 1.0)": fig["read+archive ours priorities"]
        / fig["read+archive pgmq plain"],
        "plain read+archive / pgmq plain (target >= 1.3)": fig["read+archive ours plain"]
        / fig["read+archive pgmq plain"],
        "dedup send_batch / our plain send_batch (target >= 0.7)": fig[
            "send_batch ours dedup window"
        ]
        / fig["send_batch ours plain"],
        "plain send_batch / pgmq plain (target >= 1.3)": fig["send_batch ours plain"]
        / fig["send_batch pgmq plain"],
    }
    print(json.dumps({"server": server.describe(), "msgs_per_s": fig, "ratios": ratios}, indent=2))


if __name__ == "__main__":
    main()
