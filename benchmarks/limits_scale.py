"""``python -m benchmarks.limits_scale``: what max_in_flight costs when much is in flight,
and what a limited queue's acknowledgements cost many sessions at once.
Real sessions on a real server; each figure the median of ``--rounds`` runs,
the runs interleaved. ``--phases`` picks some of the three below (all by default).

- read+archive at batch 10, one connection: a queue without attributes against one with
  max_in_flight 1,000,000 that is never reached (target: >= 0.7x): each figure's
  median, their ratio, and each round's own ratio with the median of those (a round
  runs both queues back to back, each first in turn, so a pair shares the machine's
  load). Each run's queue is new and dropped after it (untimed);
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
from .report import interleaved, interleaved_runs
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


PHASES = ("read-archive", "latency", "deletes")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", help="A server to use (default: DATABASE_URL or embedded).")
    parser.add_argument("--data-dir", help="The embedded server's data folder.")
    parser.add_argument("--db-prefix", default="bench_", help="Scratch database prefix.")
    parser.add_argument(
        "--phases",
        default=",".join(PHASES),
        type=lambda text: [p.strip() for p in text.split(",")],
        help=f"Comma-separated, of: {', '.join(PHASES)} (default: all).",
    )
    parser.add_argument("--messages", type=int, default=10_000, help="Queue size, read+archive.")
    parser.add_argument("--rounds", type=int, default=3, help="Timed runs per figure.")
    parser.add_argument("--sessions", type=int, default=16, help="Deleting sessions.")
    parser.add_argument("--per-session", type=int, default=500, help="Deletes per session.")
    parser.add_argument("--reads", type=int, default=100, help="Reads timed per latency figure.")
    args = parser.parse_args()
    unknown = [p for p in args.phases if p not in PHASES]
    if unknown or not args.phases:
        parser.error(
            f"--phases: unknown {', '.join(unknown) or '(none given)'}; "
            f"choose from {', '.join(PHASES)}"
        )
    server = resolve(args.dsn, args.data_dir)
    ours = Store("ours", server, f"{args.db_prefix}limscale_{uuid.uuid4().hex[:6]}")
    report: dict = {"server": server.describe()}
    try:
        ours.install()
        with connect(ours) as conn:
            if "read-archive" in args.phases:
                report.update(read_archive_figures(conn, args.messages, args.rounds))
            if "latency" in args.phases:
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
        if "deletes" in args.phases:
            report.update(delete_figures(ours, args.sessions, args.per_session, args.rounds))
    finally:
        ours.close()
        server.drop_created()
    print(json.dumps(report, indent=2))


def read_archive_figures(conn: psycopg.Connection, messages: int, rounds: int) -> dict:
    """read+archive of an unlimited queue against one with max_in_flight 1,000,000:
    medians, their ratio, and each round's ratio (the pairs) with their median."""
    runs = interleaved_runs(
        {
            "read+archive unlimited": lambda: read_archive(conn, None, messages),
            "read+archive max_in_flight 1e6": lambda: read_archive(conn, BIG, messages),
        },
        rounds,
    )
    medians = {key: statistics.median(values) for key, values in runs.items()}
    pairs = [
        limited / unlimited
        for unlimited, limited in zip(
            runs["read+archive unlimited"], runs["read+archive max_in_flight 1e6"], strict=True
        )
    ]
    return {
        "read_archive_msgs_per_s": medians,
        "read_archive_ratio (target >= 0.7)": (
            medians["read+archive max_in_flight 1e6"] / medians["read+archive unlimited"]
        ),
        "read_archive_round_ratios": [round(p, 3) for p in pairs],
        "read_archive_median_round_ratio": statistics.median(pairs),
    }


def delete_figures(store: Store, sessions: int, per: int, rounds: int) -> dict:
    """Deletes per second of ``sessions`` sessions, unread and in flight, on an unlimited
    queue, one with attributes that change nothing an acknowledgement does, and one with
    max_in_flight 1,000,000; and the ratios to the unlimited one."""
    dl = interleaved(
        {
            f"{kind} {label}": (lambda a=attrs, r=read_first: deletes(store, a, sessions, per, r))
            for kind, read_first in (("unread", False), ("in flight", True))
            for label, attrs in (
                ("unlimited", None),
                ("attributes, no limit", PLAIN_ATTRS),
                ("max_in_flight 1e6", BIG),
            )
        },
        rounds,
    )
    return {
        f"deletes_per_s_{sessions}_sessions": dl,
        "delete_ratios (target >= 0.8)": {
            f"{kind} {label} / unlimited": dl[f"{kind} {label}"] / dl[f"{kind} unlimited"]
            for kind in ("unread", "in flight")
            for label in ("attributes, no limit", "max_in_flight 1e6")
        },
    }


if __name__ == "__main__":
    main()
