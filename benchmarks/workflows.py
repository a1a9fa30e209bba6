"""``python -m benchmarks.workflows``: what workflows cost the acknowledgement.

Three figures, each the median of ``--rounds`` timed runs, the variants interleaved:

- (a) read+archive at batch 10 of plain messages (no ``workflow`` header), one session:
  ours with the workflow trigger on the queue (every queue has it), ours with the trigger
  dropped from that queue (what it cost before workflows), and pgmq's SQL. The trigger's
  only cost for a plain message is its WHEN test (target: no measurable difference);
- (b) one acknowledgement (``pgmq.archive`` of one id), one session: of a plain message,
  of a workflow step with no step after it, and of a chain's step (its acknowledgement
  sends the next step), each against the plain one (target: a step's >= 0.5x, that is at
  most 2x the time);
- (c) 8 sessions at a barrier acknowledging (single archives) the 9,999 parents of a
  10,000-step chord, against 8 sessions archiving 9,999 plain messages (target >= 0.5x);
  the callback is checked to be sent exactly once.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
import uuid

import psycopg
from psycopg.types.json import Jsonb

from .attributes import connect
from .report import interleaved
from .server import resolve
from .stores import Store

SESSIONS = 8
A_ON = "(a) read+archive b10, plain messages: ours, trigger on"
A_OFF = "(a) read+archive b10, plain messages: ours, trigger dropped"
A_PGMQ = "(a) read+archive b10, plain messages: pgmq's SQL"
B_PLAIN = "(b) single archive: plain message"
B_STEP = "(b) single archive: a step, nothing after it"
B_CHAIN = "(b) single archive: a chain's step (sends the next)"
C_PLAIN = "(c) 8 sessions, single archives: plain messages"
C_CHORD = "(c) 8 sessions, single archives: a chord's parents"
RATIOS = (
    ("(a) trigger on / trigger dropped (target: 1.0 within noise)", A_ON, A_OFF),
    ("(a) trigger on / pgmq's SQL", A_ON, A_PGMQ),
    ("(a) trigger dropped / pgmq's SQL", A_OFF, A_PGMQ),
    ("(b) a step / plain (target >= 0.5)", B_STEP, B_PLAIN),
    ("(b) a chain's step / plain", B_CHAIN, B_PLAIN),
    ("(c) chord parents / plain (target >= 0.5)", C_CHORD, C_PLAIN),
)


def fresh_queue(conn: psycopg.Connection, with_trigger: bool = True) -> str:
    """A new queue; without its workflow trigger when asked (pgmq's SQL has none)."""
    name = f"wf_bench_{uuid.uuid4().hex[:8]}"
    conn.execute("SELECT pgmq.create(%s)", [name])
    if not with_trigger:
        conn.execute(f"DROP TRIGGER IF EXISTS pgmq_workflow_ack ON pgmq.q_{name}")
    return name


def read_archive(conn: psycopg.Connection, count: int, with_trigger: bool = True) -> float:
    """Plain messages per second read (batch 10) and archived, from a queue of ``count``."""
    queue = fresh_queue(conn, with_trigger)
    body = Jsonb({"p": "x" * 100})
    for _ in range(0, count, 1000):
        conn.execute("SELECT pgmq.send_batch(%s, %s)", [queue, [body] * 1000])
    conn.execute(f"VACUUM ANALYZE pgmq.q_{queue}")
    done = 0
    began = time.perf_counter()
    while ids := [r[0] for r in conn.execute("SELECT msg_id FROM pgmq.read(%s, 30, 10)", [queue])]:
        conn.execute("SELECT pgmq.archive(%s, %s::bigint[])", [queue, ids])
        done += len(ids)
    return done / (time.perf_counter() - began)


def steps(queue: str, count: int, shape: str) -> list[dict]:
    """``count`` independent steps ("group"), or ``count`` chains of two ("chain": each
    first step's acknowledgement sends its second)."""
    spec = [{"step": f"s{n}", "queue": queue, "message": {"n": n}} for n in range(count)]
    if shape == "chain":
        spec += [
            {"step": f"t{n}", "queue": queue, "message": {}, "after": [f"s{n}"]}
            for n in range(count)
        ]
    return spec


def single_acks(conn: psycopg.Connection, count: int, shape: str | None) -> float:
    """Acknowledgements per second (one pgmq.archive per message) of ``count`` messages:
    plain (shape None) or the first steps of a workflow of that shape."""
    queue = fresh_queue(conn)
    if shape is None:
        conn.execute("SELECT pgmq.send_batch(%s, %s)", [queue, [Jsonb({"n": 1})] * count])
    else:
        conn.execute("SELECT pgmq.create_workflow(%s)", [Jsonb(steps(queue, count, shape))])
    ids = [r[0] for r in conn.execute(f"SELECT msg_id FROM pgmq.q_{queue} ORDER BY 1")][:count]
    conn.execute(f"VACUUM ANALYZE pgmq.q_{queue}")
    began = time.perf_counter()
    for msg_id in ids:
        conn.execute("SELECT pgmq.archive(%s, %s::bigint)", [queue, msg_id])
    return len(ids) / (time.perf_counter() - began)


def concurrent_acks(store: Store, parents: int, chord: bool) -> float:
    """Acknowledgements per second by `SESSIONS` sessions at a barrier, single archives of
    ``parents`` messages: a chord's parents (checking its callback is sent once) or plain."""
    with connect(store) as admin:
        queue, callback = fresh_queue(admin), fresh_queue(admin)
        if chord:
            spec = steps(queue, parents, "group")
            spec.append(
                {"step": "cb", "queue": callback, "message": {}, "after": [s["step"] for s in spec]}
            )
            admin.execute("SELECT pgmq.create_workflow(%s)", [Jsonb(spec)])
        else:
            for start in range(0, parents, 1000):
                n = min(1000, parents - start)
                admin.execute("SELECT pgmq.send_batch(%s, %s)", [queue, [Jsonb({"n": 1})] * n])
        ids = [r[0] for r in admin.execute(f"SELECT msg_id FROM pgmq.q_{queue} ORDER BY 1")]
        admin.execute(f"VACUUM ANALYZE pgmq.q_{queue}")
        conns = [connect(store) for _ in range(SESSIONS)]
        barrier = threading.Barrier(SESSIONS + 1)
        errors: list[BaseException] = []

        def run(i: int) -> None:
            try:
                barrier.wait()
                for msg_id in ids[i::SESSIONS]:
                    conns[i].execute("SELECT pgmq.archive(%s, %s::bigint)", [queue, msg_id])
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=run, args=(i,)) for i in range(SESSIONS)]
        for t in threads:
            t.start()
        barrier.wait()
        began = time.perf_counter()
        for t in threads:
            t.join()
        elapsed = time.perf_counter() - began
        for c in conns:
            c.close()
        if errors:
            raise errors[0]
        if chord:
            sent = admin.execute(f"SELECT count(*) FROM pgmq.q_{callback}").fetchone()[0]
            assert sent == 1, f"the callback was sent {sent} times"
        return len(ids) / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", help="A server to use (default: DATABASE_URL or embedded).")
    parser.add_argument("--data-dir", help="The embedded server's data folder.")
    parser.add_argument("--messages", type=int, default=20_000, help="Queue size for (a).")
    parser.add_argument("--acks", type=int, default=2_000, help="Acknowledgements per run of (b).")
    parser.add_argument("--parents", type=int, default=9_999, help="The chord's parents in (c).")
    parser.add_argument("--rounds", type=int, default=3, help="Timed runs per figure.")
    parser.add_argument("--only", choices=("a", "b", "c"), help="Measure one figure only.")
    parser.add_argument("--db-prefix", default="bench_wf_", help="Scratch database prefix.")
    args = parser.parse_args()
    wanted = {args.only} if args.only else {"a", "b", "c"}
    server = resolve(args.dsn, args.data_dir)
    tag = uuid.uuid4().hex[:6]
    ours = Store("ours", server, f"{args.db_prefix}ours_{tag}")
    pgmq = Store("pgmq", server, f"{args.db_prefix}pgmq_{tag}")
    fig: dict[str, float] = {}
    try:
        for store in (ours, pgmq):
            store.install()
        with connect(ours) as o, connect(pgmq) as p:
            n, r = args.messages, args.rounds
            if "a" in wanted:
                fig |= interleaved(
                    {
                        A_ON: lambda: read_archive(o, n),
                        A_OFF: lambda: read_archive(o, n, with_trigger=False),
                        A_PGMQ: lambda: read_archive(p, n, with_trigger=False),
                    },
                    r,
                    warm_up=True,
                )
            if "b" in wanted:
                fig |= interleaved(
                    {
                        B_PLAIN: lambda: single_acks(o, args.acks, None),
                        B_STEP: lambda: single_acks(o, args.acks, "group"),
                        B_CHAIN: lambda: single_acks(o, args.acks, "chain"),
                    },
                    r,
                    warm_up=True,
                )
        if "c" in wanted:
            fig |= interleaved(
                {
                    C_PLAIN: lambda: concurrent_acks(ours, args.parents, chord=False),
                    C_CHORD: lambda: concurrent_acks(ours, args.parents, chord=True),
                },
                r,
                warm_up=True,
            )
    finally:
        for store in (ours, pgmq):
            store.close()
        server.drop_created()
    ratios = {
        name: fig[top] / fig[bottom] for name, top, bottom in RATIOS if top in fig and bottom in fig
    }
    print(json.dumps({"server": server.describe(), "per_second": fig, "ratios": ratios}, indent=2))


if __name__ == "__main__":
    main()
