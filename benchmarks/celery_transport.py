"""Celery brokers side by side: django-pgmq:// against Redis, RabbitMQ, kombu's SQLAlchemy
transport and kombu's own pgmq:// transport on our SQL.

``python -m benchmarks.celery [--tasks N] [--latency-tasks N] [--pools P ...] [--dsn DSN]``
(``python -m benchmarks.celery_transport`` is the same)

For each broker and each worker pool (prefork and threads, 2 each), with the same no-op task:

* publish rate: N tasks sent one by one with no worker running;
* worker throughput: a worker started on those N tasks, from first start to last start;
* latency: with the worker idle, tasks sent 20 ms apart; enqueue-to-start per task.

Ratios are django-pgmq:// divided by the other broker: above 1 is better for rates, below 1
is better for latencies.

django-pgmq://, SQLAlchemy and kombu's pgmq:// (``init_extension`` off) use the same
PostgreSQL (a scratch database on the embedded server, or ``--dsn``/``DATABASE_URL``'s
server, migrated by django-pgmq); Redis is measured when one answers on 127.0.0.1:6379,
RabbitMQ when one answers on 127.0.0.1:5672 (guest/guest). Each worker appends "sent
start" lines to a file; no result backend. This module is also the workers' Celery app
(``BENCH_BROKER_URL``, ``BENCH_BROKER_OPTIONS``, ``BENCH_OUT``).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from celery import Celery

import django_pgmq.contrib.celery  # noqa: F401  (registers django-pgmq://)

CELERY = str(Path(sys.executable).with_name("celery"))
REPO = Path(__file__).resolve().parent.parent
TASK = "bench.noop"
REDIS = ("127.0.0.1", 6379, 13)  # host, port, database number used for the run
RABBITMQ = "amqp://guest:guest@127.0.0.1:5672//"
POOLS = ("prefork", "threads")

app = Celery("bench", broker=os.environ.get("BENCH_BROKER_URL", "memory://"))
app.conf.update(
    broker_transport_options=json.loads(os.environ.get("BENCH_BROKER_OPTIONS", "{}")),
    task_ignore_result=True,
    broker_connection_retry_on_startup=True,
    worker_hijack_root_logger=False,
)


@app.task(name=TASK)
def noop(sent: float) -> None:
    """Write when it was sent and when it started, to the file in ``BENCH_OUT``."""
    started = time.time()
    with open(os.environ["BENCH_OUT"], "a") as out:
        out.write(f"{sent} {started}\n")


# -- brokers ------------------------------------------------------------------


@dataclass
class Broker:
    name: str
    url: str
    options: dict | None = None  # kombu transport options


def postgres_brokers(dsn: str | None) -> tuple[list[Broker], object, str]:
    """django-pgmq:// and SQLAlchemy on a scratch database migrated with django-pgmq."""
    from benchmarks.server import resolve

    server = resolve(dsn, None)
    dbname = f"bench_celery_{uuid.uuid4().hex[:8]}"
    server.create_database(dbname)
    migrate = subprocess.run(
        [sys.executable, str(REPO / "manage.py"), "migrate", "django_pgmq", "--noinput"],
        cwd=REPO,
        env={**os.environ, "DATABASE_URL": server.database_url(dbname)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    if migrate.returncode:
        server.drop_created()
        raise SystemExit(f"manage.py migrate failed:\n{migrate.stdout}\n{migrate.stderr}")
    p = server.params
    user = quote(str(p.get("user") or "postgres"), safe="")
    password = f":{quote(str(p['password']), safe='')}" if p.get("password") else ""
    host = str(p.get("host") or "localhost")
    port = str(p.get("port") or 5432)
    if host.startswith("/"):  # a Unix socket directory: SQLAlchemy wants it as a query argument
        sqla = (
            f"sqla+postgresql+psycopg://{user}{password}@/{dbname}?host={quote(host)}&port={port}"
        )
    else:
        sqla = f"sqla+postgresql+psycopg://{user}{password}@{host}:{port}/{dbname}"
    brokers = [Broker("django-pgmq://", "django-pgmq+" + server.database_url(dbname))]
    if importlib.util.find_spec("sqlalchemy") is None:
        print("sqlalchemy: not installed (pip install sqlalchemy); skipped")
    else:
        brokers.append(Broker("sqlalchemy", sqla))
    if importlib.util.find_spec("pgmq") is None:
        print(
            "kombu pgmq://: the pgmq client is not installed (pip install 'kombu[pgmq]'); skipped"
        )
    else:
        from psycopg.conninfo import make_conninfo

        conninfo = make_conninfo(**{**p, "dbname": dbname})
        options = {"init_extension": False, "conn_string": conninfo, "use_notify": True}
        brokers.append(Broker("kombu pgmq://", "pgmq://", options))
    return brokers, server, dbname


def rabbitmq_broker() -> Broker | None:
    """RabbitMQ on 127.0.0.1:5672 (guest) when one answers, else None."""
    from kombu import Connection

    try:
        with Connection(RABBITMQ, connect_timeout=2) as conn:
            conn.connect()
    except Exception as exc:
        print(f"rabbitmq: nothing answers on 127.0.0.1:5672 ({exc}); skipped")
        return None
    return Broker("rabbitmq", RABBITMQ)


def redis_broker() -> Broker | None:
    """Redis on 127.0.0.1:6379 when one answers (database 13), else None."""
    host, port, db = REDIS
    if importlib.util.find_spec("redis") is None:
        print("redis: the redis package is not installed (pip install redis); skipped")
        return None
    import redis

    try:
        redis.Redis(host=host, port=port, db=db, socket_timeout=1).ping()
    except redis.RedisError:
        print(f"redis: nothing answers on {host}:{port}; skipped")
        return None
    return Broker("redis", f"redis://{host}:{port}/{db}")


# -- one broker -----------------------------------------------------------------


class Worker:
    """``celery -A benchmarks.celery_transport worker`` on one queue."""

    def __init__(self, broker: Broker, queue: str, out: Path, pool: str) -> None:
        env = {
            **os.environ,
            "BENCH_BROKER_URL": broker.url,
            "BENCH_BROKER_OPTIONS": json.dumps(broker.options or {}),
            "BENCH_OUT": str(out),
        }
        env.pop("DJANGO_SETTINGS_MODULE", None)
        command = [
            CELERY, "-A", "benchmarks.celery_transport", "worker", "-P", pool, "-c", "2",
            "-Q", queue, "-n", f"{queue}@%h", "-l", "INFO", "--without-gossip",
            "--without-mingle", "--without-heartbeat",
        ]  # fmt: skip
        self.ready = threading.Event()
        self.lines: list[str] = []
        self.proc = subprocess.Popen(
            command,
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        threading.Thread(target=self._read, daemon=True).start()
        if not self.ready.wait(60):
            self.stop()
            raise SystemExit(f"{broker.name}: worker did not start:\n{''.join(self.lines[-40:])}")

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)
            if " ready." in line:
                self.ready.set()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)


def starts(out: Path) -> list[tuple[float, float]]:
    """(sent, started) pairs the worker wrote so far."""
    if not out.exists():
        return []
    lines = out.read_text().splitlines()
    return [(float(a), float(b)) for a, b in (line.split() for line in lines if " " in line)]


def wait_for(out: Path, count: int, seconds: float) -> list[tuple[float, float]]:
    deadline = time.monotonic() + seconds
    while len(found := starts(out)) < count:
        if time.monotonic() > deadline:
            raise SystemExit(f"only {len(found)} of {count} tasks started in {seconds:.0f}s")
        time.sleep(0.05)
    return found


def measure(broker: Broker, tasks: int, latency_tasks: int, pool: str) -> dict[str, float]:
    """Publish rate, worker throughput and enqueue-to-start latency for one broker."""
    queue = f"bench_{uuid.uuid4().hex[:8]}"
    client = Celery("bench-client", broker=broker.url)
    client.conf.update(
        broker_transport_options=broker.options or {},
        task_ignore_result=True,
        broker_connection_retry_on_startup=True,
    )
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "starts.txt"
        with client.producer_or_acquire() as producer:

            def send() -> None:
                client.send_task(TASK, (time.time(),), queue=queue, producer=producer)

            send()  # declares the queue; not timed
            began = time.perf_counter()
            for _ in range(tasks - 1):
                send()
            publish_rate = (tasks - 1) / (time.perf_counter() - began)

            worker = Worker(broker, queue, out, pool)
            try:
                backlog = wait_for(out, tasks, 600)
                first, last = min(s for _, s in backlog), max(s for _, s in backlog)
                throughput = (tasks - 1) / (last - first)
                for _ in range(latency_tasks):
                    send()
                    time.sleep(0.02)
                timed = wait_for(out, tasks + latency_tasks, 120)[tasks:]
            finally:
                worker.stop()
    client.close()
    if broker.name == "redis":
        forget_redis_keys(broker, queue)
    latencies = sorted((started - sent) * 1000 for sent, started in timed)
    return {
        "publish/s": publish_rate,
        "tasks/s": throughput,
        "latency p50 ms": statistics.median(latencies),
        "latency p95 ms": latencies[int(0.95 * (len(latencies) - 1))],
    }


# -- report ---------------------------------------------------------------------


def report(results: dict[str, dict[str, float]], out=sys.stdout) -> None:
    """A table of figures, then django-pgmq:// against each other broker."""
    names = list(results)
    metrics = list(next(iter(results.values())))
    for name in names:
        row = ", ".join(f"{metric} {results[name][metric]:.1f}" for metric in metrics)
        print(f"{name:30} {row}", file=out)
    for pool in POOLS:
        ours = results.get(f"django-pgmq:// {pool}")
        if not ours:
            continue
        for name in names:
            if not name.endswith(f" {pool}") or name.startswith("django-pgmq://"):
                continue
            other = results[name]
            ratios = ", ".join(
                f"{metric} x{ours[metric] / other[metric]:.2f}"
                for metric in metrics
                if other[metric]
            )
            print(f"django-pgmq:// / {name}: {ratios}", file=out)


def forget_redis_keys(broker: Broker, queue: str) -> None:
    """Delete the keys this run left in the Redis database (its queue and binding)."""
    import redis

    client = redis.Redis.from_url(broker.url)
    for key in client.scan_iter(match=f"*{queue}*"):
        client.delete(key)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=1000, help="backlog size (default 1000)")
    parser.add_argument("--latency-tasks", type=int, default=100, help="default 100")
    parser.add_argument("--dsn", help="PostgreSQL server (default DATABASE_URL, else embedded)")
    parser.add_argument(
        "--only",
        nargs="*",
        help="broker names to run (django-pgmq://, sqlalchemy, 'kombu pgmq://', redis, rabbitmq)",
    )
    parser.add_argument("--pools", nargs="*", default=list(POOLS), choices=POOLS)
    args = parser.parse_args(argv)

    brokers, server, dbname = postgres_brokers(args.dsn)
    for extra in (redis_broker(), rabbitmq_broker()):
        if extra is not None:
            brokers.append(extra)
    if args.only:
        brokers = [b for b in brokers if b.name in args.only]
    print(f"PostgreSQL database {dbname} ({server.source}); {args.tasks} tasks, no-op task")
    print(f"load average at the start: {os.getloadavg()[0]:.2f}")
    results: dict[str, dict[str, float]] = {}
    try:
        for pool in args.pools:
            for broker in brokers:
                print(f"... {broker.name} {pool}", flush=True)
                results[f"{broker.name} {pool}"] = measure(
                    broker, args.tasks, args.latency_tasks, pool
                )
    finally:
        with contextlib.suppress(Exception):
            server.drop_created()
    report(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
