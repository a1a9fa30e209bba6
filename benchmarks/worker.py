"""The worker (``pgmq_consume``) against pgmq's ``read_with_poll`` path, in one run.

    python -m benchmarks.worker [--messages N] [--samples N] [--dsn DSN]

Prints, for one worker with a no-op handler, messages per second at batch 1,
10 and 100, and the wake-up latency (send committed -> handler starts), p50
and p99, with LISTEN/NOTIFY and with polling only; each next to the same
measure of a loop over pgmq's own ``read_with_poll`` + ``archive`` (pgmq's SQL
from the ``pgmq`` wheel, installed at run time in a scratch database) and
their ratio; the default-throttle wake-up is measured for a trickle (a send every
10-30 ms) and for isolated sends. Last, eight producers sending single messages
while a worker consumes, with notifications off and on. Two scratch databases
are created on the server (DATABASE_URL or --dsn, else the project's embedded
PostgreSQL) and dropped at the end.
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import statistics
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from time import perf_counter, sleep
from typing import Any
from urllib.parse import quote

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict
from psycopg.types.json import Jsonb

REPO = Path(__file__).resolve().parent.parent
QUEUE = "bench"
BATCHES = (1, 10, 100)
POLL_SECONDS = 0.1  # the worker's poll-only interval, as read_with_poll's default 100 ms

# pgmq's read_with_poll path, on the peer database (pgmq's own SQL functions).
PEER_READ = "SELECT msg_id, message FROM pgmq.read_with_poll(%s, 30, %s, %s, 100)"
PEER_ARCHIVE = "SELECT pgmq.archive(%s, %s::bigint)"
SEND = "SELECT pgmq.send(%s, %s)"
SEND_BATCH = "SELECT pgmq.send_batch(%s, %s::jsonb[])"


# -- the server and its scratch databases --------------------------------------------


def server_params(dsn: str | None) -> dict[str, Any]:
    """psycopg parameters of the server (--dsn, DATABASE_URL, else the embedded one)."""
    dsn = dsn or os.environ.get("DATABASE_URL")
    if dsn:
        keep = ("host", "port", "user", "password", "dbname")
        return {k: v for k, v in conninfo_to_dict(dsn).items() if k in keep}
    from django_pgmq import embedded

    folder = os.environ.get("PGMQ_EMBEDDED_DIR", str(REPO / ".pgdata" / "data"))
    return embedded.connection_params(folder, "postgres")


def database_url(params: dict[str, Any], dbname: str) -> str:
    """A DATABASE_URL (for Django's settings) for ``dbname`` on the server."""
    host = quote(str(params.get("host") or "localhost"), safe="")
    user = quote(str(params.get("user") or "postgres"), safe="")
    password = f":{quote(str(params['password']), safe='')}" if params.get("password") else ""
    port = f":{params['port']}" if params.get("port") else ""
    return f"postgres://{user}{password}@{host}{port}/{dbname}"


def recreate(params: dict[str, Any], dbname: str, *, drop_only: bool = False) -> None:
    """Drop ``dbname`` (and create it afresh unless ``drop_only``)."""
    with psycopg.connect(**{**params, "dbname": "postgres"}, autocommit=True) as conn:
        name = sql.Identifier(dbname)
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(name))
        if not drop_only:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(name))


def setup_ours(params: dict[str, Any], dbname: str) -> None:
    """Point Django at ``dbname`` and migrate it (django-pgmq's SQL API)."""
    os.environ["DATABASE_URL"] = database_url(params, dbname)
    os.environ["DJANGO_DEBUG"] = "0"  # DEBUG would record every query
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "example_project.settings")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    logging.getLogger("django_pgmq.worker").setLevel(logging.WARNING)


def setup_peer(params: dict[str, Any]) -> None:
    """Install pgmq's own SQL (from the ``pgmq`` wheel) in the peer database."""
    from pgmq.install import install_pgmq_from_sql

    with psycopg.connect(**params) as conn:
        install_pgmq_from_sql(conn=conn)


# -- django-pgmq's worker ---------------------------------------------------------------


def fresh_queue(notify_throttle_ms: int | None = None) -> None:
    """An empty ``bench`` queue on django-pgmq's database."""
    from django_pgmq import QueueManager

    manager = QueueManager()
    manager.drop_queue(QUEUE)
    manager.create_queue(QUEUE)
    if notify_throttle_ms is not None:
        manager.enable_notify(QUEUE, notify_throttle_ms)


def make_worker(handler: Callable[[Any], None], **options: Any) -> Any:
    """A worker of the ``bench`` queue running ``handler``."""
    from django_pgmq.worker.config import resolve
    from django_pgmq.worker.registry import Consumer
    from django_pgmq.worker.worker import Worker, WorkerOptions

    batch = options.pop("batch", 10)
    settings = resolve(QUEUE, Consumer(handler), {"batch": batch, "vt": 30}, None)
    return Worker([settings], WorkerOptions(heartbeat=5.0, **options))


def ours_throughput(batch: int, count: int) -> float:
    """Messages per second of one worker thread draining ``count`` messages."""
    from django_pgmq import QueueManager
    from django_pgmq.worker.fleet import run_workers

    fresh_queue()
    manager = QueueManager()
    for start in range(0, count, 1000):
        manager.send_batch(QUEUE, [{"i": i} for i in range(start, min(start + 1000, count))])
    stamps: list[float] = []
    worker = make_worker(
        lambda message: stamps.append(perf_counter()),
        batch=batch,
        max_messages=count,
        listen=False,
        poll_interval=0.05,
    )
    run_workers([worker])
    return rate(stamps)


@contextmanager
def running(worker: Any) -> Iterator[None]:
    """``worker`` running in a thread (`fleet.run_workers`), started and idle; stopped after."""
    from django_pgmq.worker.fleet import run_workers

    thread = threading.Thread(target=run_workers, args=([worker],), daemon=True)
    thread.start()
    sleep(1.0)  # let it start, read the empty queue and go idle
    try:
        yield
    finally:
        worker.stop()
        thread.join(10)


def ours_latency(
    params: dict[str, Any],
    samples: int,
    *,
    listen: bool,
    throttle_ms: int = 0,
    gaps: tuple[float, float] = (0.01, 0.05),
) -> list[float]:
    """Send -> handler-start delays of a worker, woken by NOTIFY or by polling."""
    fresh_queue(notify_throttle_ms=throttle_ms if listen else None)
    seen: dict[int, float] = {}
    arrived = threading.Event()

    def handler(message: Any) -> None:
        seen[message.message["i"]] = perf_counter()
        arrived.set()

    worker = make_worker(handler, batch=1, listen=listen, poll_interval=POLL_SECONDS)
    with running(worker):
        return measure_latency(params, samples, seen, arrived, gaps)


def producers_rate(params: dict[str, Any], notify: bool, producers: int, seconds: float) -> float:
    """Messages per second of ``producers`` threads, each sending single messages in its
    own transaction, while a worker (LISTEN/NOTIFY when ``notify``) consumes them."""
    fresh_queue(notify_throttle_ms=250 if notify else None)
    worker = make_worker(lambda message: None, batch=10, listen=notify, poll_interval=0.05)
    with running(worker):
        return _produce_for(params, producers, seconds)


def _produce_for(params: dict[str, Any], producers: int, seconds: float) -> float:
    """Messages per second of ``producers`` threads sending single messages for ``seconds``."""
    counts = [0] * producers
    stop = threading.Event()

    def produce(n: int) -> None:
        with psycopg.connect(**params, autocommit=True) as conn:
            while not stop.is_set():
                conn.execute(SEND, [QUEUE, Jsonb({"n": n})])
                counts[n] += 1

    threads = [threading.Thread(target=produce, args=(n,)) for n in range(producers)]
    started = perf_counter()
    for t in threads:
        t.start()
    sleep(seconds)
    stop.set()
    for t in threads:
        t.join()
    elapsed = perf_counter() - started
    return sum(counts) / elapsed


# -- pgmq's read_with_poll ------------------------------------------------------------------


def peer_queue(conn: psycopg.Connection) -> None:
    """An empty ``bench`` queue on pgmq's database."""
    if conn.execute("SELECT 1 FROM pgmq.meta WHERE queue_name = %s", [QUEUE]).fetchone():
        conn.execute("SELECT pgmq.drop_queue(%s)", [QUEUE])
    conn.execute("SELECT pgmq.create(%s)", [QUEUE])
    conn.commit()


def peer_consume(
    conn: psycopg.Connection,
    batch: int,
    on_message: Callable[[int, Any], None],
    until: Callable[[], bool],
) -> None:
    """pgmq's consumer loop: read_with_poll a batch, archive each, commit."""
    while not until():
        for msg_id, message in conn.execute(PEER_READ, [QUEUE, batch, 1]).fetchall():
            on_message(msg_id, message)
            conn.execute(PEER_ARCHIVE, [QUEUE, msg_id])
        conn.commit()


def peer_throughput(params: dict[str, Any], batch: int, count: int) -> float:
    with psycopg.connect(**params) as conn:
        peer_queue(conn)
        for start in range(0, count, 1000):
            batch_of = [Jsonb({"i": i}) for i in range(start, min(start + 1000, count))]
            conn.execute(SEND_BATCH, [QUEUE, batch_of])
        conn.commit()
        stamps: list[float] = []
        peer_consume(
            conn, batch, lambda _id, _m: stamps.append(perf_counter()), lambda: len(stamps) >= count
        )
    return rate(stamps)


def peer_latency(params: dict[str, Any], samples: int) -> list[float]:
    seen: dict[int, float] = {}
    arrived = threading.Event()
    stop = threading.Event()

    def on_message(_msg_id: int, message: Any) -> None:
        seen[message["i"]] = perf_counter()
        arrived.set()

    with psycopg.connect(**params) as conn:
        peer_queue(conn)
        consumer_conn = psycopg.connect(**params)
        thread = threading.Thread(
            target=peer_consume, args=(consumer_conn, 1, on_message, stop.is_set), daemon=True
        )
        thread.start()
        sleep(0.5)
        try:
            return measure_latency(params, samples, seen, arrived)
        finally:
            stop.set()
            thread.join(10)
            consumer_conn.close()


# -- measuring ------------------------------------------------------------------------------


def measure_latency(
    params: dict[str, Any],
    samples: int,
    seen: dict[int, float],
    arrived: threading.Event,
    gaps: tuple[float, float] = (0.01, 0.05),
) -> list[float]:
    """Send messages one by one at random gaps; each one's send-committed -> handled delay."""
    delays = []
    with psycopg.connect(**params, autocommit=True) as sender:
        for i in range(samples):
            sleep(random.uniform(*gaps))
            arrived.clear()
            sender.execute(SEND, [QUEUE, Jsonb({"i": i})])
            committed = perf_counter()
            if not arrived.wait(10):
                raise RuntimeError(f"message {i} was not handled within 10 s")
            delays.append(seen[i] - committed)
    return delays


def rate(stamps: list[float]) -> float:
    """Messages per second between the first and the last handler call."""
    return (len(stamps) - 1) / (stamps[-1] - stamps[0])


def percentile(values: list[float], p: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[p - 1]


def report(
    throughput: dict[int, tuple[float, float]],
    latency: dict[str, list[float]],
    producing: dict[bool, float],
) -> str:
    lines = [
        f"Throughput, one worker thread, no-op handler ({QUEUE!r} queue):",
        "  batch   django-pgmq worker   pgmq read_with_poll + archive   ratio",
    ]
    for batch, (ours, peer) in throughput.items():
        lines.append(
            f"  {batch:>5}   {ours:>12,.0f} msg/s   {peer:>22,.0f} msg/s   {ours / peer:>5.2f}x"
        )
    lines += [
        "",
        "Wake-up latency, send committed -> handler starts:",
        "  path                                             p50 ms    p99 ms   samples",
    ]
    for name, values in latency.items():
        p50, p99 = percentile(values, 50) * 1000, percentile(values, 99) * 1000
        lines.append(f"  {name:<47} {p50:>7.2f}   {p99:>7.2f}   {len(values):>7}")
    peer = percentile(latency[PEER], 50)
    lines += ["", "p50 ratio (pgmq read_with_poll / django-pgmq worker):"]
    for name in (LISTEN, THROTTLED, ISOLATED, POLL):
        lines.append(f"  {name:<47} {peer / percentile(latency[name], 50):>7.1f}x")
    on, off = producing[True], producing[False]
    lines += [
        "",
        f"{PRODUCERS} producers, single sends, a worker consuming (msg/s):",
        f"  notifications off {off:>10,.0f}   on (throttle 250 ms) {on:>10,.0f}   "
        f"ratio {on / off:.2f}x",
    ]
    return "\n".join(lines)


LISTEN = "worker, LISTEN/NOTIFY (throttle 0)"
THROTTLED = "worker, LISTEN/NOTIFY (throttle 250 ms, default), a send every 10-30 ms"
ISOLATED = "worker, LISTEN/NOTIFY (throttle 250 ms, default), isolated sends"
PRODUCERS = 8
POLL = f"worker, poll only (every {POLL_SECONDS:g} s)"
PEER = "pgmq read_with_poll (poll_interval_ms 100)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.worker", description=__doc__)
    parser.add_argument("--messages", type=int, default=3000, help="Per throughput run.")
    parser.add_argument("--samples", type=int, default=200, help="Latency samples per path.")
    parser.add_argument(
        "--seconds", type=float, default=5.0, help="Per producers run (notify on, off)."
    )
    parser.add_argument("--dsn", help="Server (any database on it); default: DATABASE_URL.")
    parser.add_argument("--db-prefix", default="bench_worker_", help="Scratch database prefix.")
    args = parser.parse_args(argv)

    server = server_params(args.dsn)
    ours_db, peer_db = f"{args.db_prefix}ours", f"{args.db_prefix}pgmq"
    peer = {**server, "dbname": peer_db}
    for name in (ours_db, peer_db):
        recreate(server, name)
    try:
        setup_ours(server, ours_db)
        setup_peer(peer)
        ours_params = {**server, "dbname": ours_db}
        throughput = {
            b: (ours_throughput(b, args.messages), peer_throughput(peer, b, args.messages))
            for b in BATCHES
        }
        latency = {
            LISTEN: ours_latency(ours_params, args.samples, listen=True),
            THROTTLED: ours_latency(
                ours_params, args.samples, listen=True, throttle_ms=250, gaps=(0.01, 0.03)
            ),
            ISOLATED: ours_latency(
                ours_params, args.samples // 2, listen=True, throttle_ms=250, gaps=(0.2, 0.4)
            ),
            POLL: ours_latency(ours_params, args.samples // 2, listen=False),
            PEER: peer_latency(peer, args.samples // 2),
        }
        producing = {
            notify: producers_rate(ours_params, notify, PRODUCERS, args.seconds)
            for notify in (False, True)
        }
        print(f"load average at the end: {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)")
        print(report(throughput, latency, producing))
    finally:
        from django.db import connections

        connections.close_all()
        for name in (ours_db, peer_db):
            recreate(server, name, drop_only=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
