"""``python -m benchmarks.attributes``: what queue attributes cost, beside pgmq.

Three figures, one client on one connection each (the SQL API through psycopg):

- read+archive at batch 10: ours on a queue with ``priorities``, and ours on a plain
  queue, each against pgmq's plain queue (targets: >= 1.0x and >= 1.3x);
- send_batch of 100 messages with a ``deduplication_id`` each: ours on a queue with a
  ``deduplication_window`` against ours on a plain queue (target: >= 0.7x), and ours
  plain against pgmq.

Each figure is the median of ``--rounds`` timed runs, in messages per second. The sends
also report, per message, the server process's CPU microseconds (when the server runs on
this machine) and WAL bytes; on a shared machine the CPU ratio moves less than the
throughput one.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import uuid

import psutil
import psycopg
from psycopg.types.json import Jsonb

from .machine import local_postgres
from .server import resolve
from .stores import Store

QUEUE = "attr_bench"
BATCH_SEND = 100


def connect(store: Store) -> psycopg.Connection:
    return psycopg.connect(**store.conninfo("attributes"), autocommit=True)


def fresh_queue(conn: psycopg.Connection, attributes: dict | None) -> str:
    """A new queue for one run (a new name, so no run sees another's rows or statistics)."""
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
    rate = done / (time.perf_counter() - began)
    # untimed: a run's queue would stay in the catalogue and slow every later round
    conn.execute("SELECT pgmq.drop_queue(%s)", [queue])
    return rate


def backend_cpu(conn: psycopg.Connection) -> float | None:
    """CPU seconds used so far by the server process behind conn (None: not on this machine)."""
    pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
    if not local_postgres([pid]):
        return None
    t = psutil.Process(pid).cpu_times()
    return t.user + t.system


def send_batches(conn: psycopg.Connection, attributes: dict | None, batches: int) -> dict:
    """Sends in batches of 100, each message with its own deduplication_id: messages per
    second, and per message the server's CPU microseconds (which other load on a shared
    machine disturbs less than wall time) and WAL bytes."""
    queue = fresh_queue(conn, attributes)
    body = Jsonb({"p": "x" * 100})
    cpu = backend_cpu(conn)
    lsn = conn.execute("SELECT pg_current_wal_lsn()").fetchone()[0]
    began = time.perf_counter()
    for _ in range(batches):
        headers = [Jsonb({"deduplication_id": uuid.uuid4().hex}) for _ in range(BATCH_SEND)]
        conn.execute("SELECT pgmq.send_batch(%s, %s, %s)", [queue, [body] * BATCH_SEND, headers])
    elapsed = time.perf_counter() - began
    sent = batches * BATCH_SEND
    wal = conn.execute("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), %s)", [lsn]).fetchone()[0]
    after = backend_cpu(conn)
    return {
        "msgs_per_s": sent / elapsed,
        "server_us": None if cpu is None or after is None else (after - cpu) * 1e6 / sent,
        "wal_bytes": float(wal) / sent,
    }


def median_of(call, rounds: int) -> dict:
    """Each figure of ``call``'s dict, the median over ``rounds`` runs."""
    runs = [call() for _ in range(rounds)]
    return {
        k: None if runs[0][k] is None else statistics.median(r[k] for r in runs) for k in runs[0]
    }


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
            }
            sends = {
                "send_batch pgmq plain": median_of(lambda: send_batches(p, None, args.batches), r),
                "send_batch ours plain": median_of(lambda: send_batches(o, None, args.batches), r),
                "send_batch ours dedup window": median_of(
                    lambda: send_batches(o, {"deduplication_window": 300}, args.batches), r
                ),
            }
            fig.update({k: v["msgs_per_s"] for k, v in sends.items()})
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
    dedup, plain = sends["send_batch ours dedup window"], sends["send_batch ours plain"]
    if dedup["server_us"] and plain["server_us"]:
        ratios["dedup send_batch / our plain, by server CPU per message (no target)"] = (
            plain["server_us"] / dedup["server_us"]
        )
    per_msg = {
        k: {"server_us": v["server_us"], "wal_bytes": v["wal_bytes"]} for k, v in sends.items()
    }
    report = {"server": server.describe(), "msgs_per_s": fig, "send_per_message": per_msg}
    print(json.dumps({**report, "ratios": ratios}, indent=2))


if __name__ == "__main__":
    main()
