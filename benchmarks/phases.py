"""Run one phase for one target: fresh queue, processes, a measured window, figures.

Throughput of send and read runs is counted by the processes themselves; end
to end and notify runs count on the server (archived rows whose
``archived_at`` falls in the window), so the Python worker is measured the
same way as the SQL clients.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

from . import machine
from .clients import payload
from .consume import WorkerPool
from .crew import Crew, Role
from .plan import Phase, Target
from .profiles import Profile
from .stores import QUEUE, Store

MONITOR_EVERY = 0.1


def percentile(values: list[float], q: float) -> float | None:
    """The q-quantile (nearest rank) of ``values``, None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


class Context:
    """What every run needs: the profile, the stores, the thresholds."""

    def __init__(self, profile: Profile, stores: dict[str, Store], limits: tuple[float, float]):
        self.profile = profile
        self.stores = stores
        self.limits = limits


def _roles(ctx: Context, target: Target, kind: str, processes: int, **kw: Any) -> list[Role]:
    store = ctx.stores[target.store]
    # The worker targets measure pgmq_consume: their producers (and the notify sender) are
    # the same SQL clients as every SQL target's, so a row compares consumers alone.
    client = target.client if target.client.startswith("manager") else "sql"
    return [
        Role(
            kind=kind,
            client=client,
            app=f"bench-{kind}-{i}",
            conninfo=store.conninfo("bench"),
            sqlfile=target.sqlfile or store.sqlfile,
            channel=store.channel,
            **kw,
        )
        for i in range(processes)
    ]


class Window:
    """CPU and WAL counters between two points in time."""

    def __init__(self, ctx: Context, store: Store) -> None:
        self.ctx, self.store = ctx, store
        self.pids = store.server_pids()
        self.cpu = machine.snapshot(self.pids)
        self.wal = store.wal_lsn()
        self.start = self.cpu.at

    def close(self) -> dict[str, Any]:
        pids = sorted(set(self.pids) | set(self.store.server_pids()))
        end = machine.snapshot(pids)
        usage = machine.usage(self.cpu, end, *self.ctx.limits)
        return {"cpu": usage, "wal_bytes": self.store.wal_lsn() - self.wal, "stop": end.at}


def _self_counted(results: list[dict]) -> tuple[int, float, list[float]]:
    """Messages, seconds and per-call latencies reported by the processes."""
    count = sum(r["count"] for r in results)
    start = min(r["start"] for r in results)
    last = max(r["last"] for r in results)
    latencies = [x for r in results for x in r["latencies"]]
    return count, max(last - start, 1e-6), latencies


def run_send_or_read(ctx: Context, phase: Phase, target: Target) -> dict[str, Any]:
    """Producers for ``window`` seconds, or consumers of a prefilled queue until it runs dry."""
    p, store = ctx.profile, ctx.stores[target.store]
    if phase.kind == "send":
        roles = _roles(ctx, target, "produce", p.producers, batch=phase.batch, size=phase.size)
        window = p.send_window
    else:
        store.prefill(p.prefill[phase.batch], _message(phase.size))
        roles = _roles(
            ctx,
            target,
            "consume",
            p.consumers,
            batch=phase.batch,
            ack=phase.ack,
            stop_when_empty=True,
        )
        window = p.read_window
    crew = Crew(roles)
    try:
        crew.start(window)
        win = Window(ctx, store)
        results = crew.collect()
        if crew.errors():
            raise RuntimeError(crew.errors())
        measured = win.close()
    finally:
        crew.finish()
    count, seconds, latencies = _self_counted(results)
    row = _row(
        count, seconds, latencies, measured, "per call" if phase.kind == "send" else "read+ack"
    )
    if phase.kind == "read":
        row["drained"] = store.run("admin.sql", "depth")[0][0] == 0
    return row


@contextlib.contextmanager
def _monitor(store: Store, crew: Crew, samples: list[int]) -> Iterator[None]:
    """Keep the crew's backlog figure current (producers pause at the bound)."""
    done = threading.Event()

    def loop() -> None:
        with store.server.admin(store.dbname) as conn:
            conn.execute("SET application_name = 'bench-monitor'")
            while not done.is_set():
                depth = store.depth(conn)
                crew.sync.depth.value = depth
                samples.append(depth)
                done.wait(MONITOR_EVERY)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join(5)


@contextlib.contextmanager
def steady_load(
    ctx: Context, target: Target, batch: int, size: int
) -> Iterator[tuple[Crew, list[int]]]:
    """Producers and consumers (or worker processes) running, backlog bounded, until exit."""
    p, store = ctx.profile, ctx.stores[target.store]
    roles = _roles(ctx, target, "produce", p.producers, batch=batch, size=size)
    pool = None
    if target.client.startswith("worker"):
        pool = WorkerPool(store, target.client, p.workers, batch)
    else:
        roles += _roles(ctx, target, "consume", p.consumers, batch=batch, ack="archive")
    crew = Crew(roles)
    crew.sync.bound.value = p.backlog
    samples: list[int] = []
    with _running(crew, pool), _monitor(store, crew, samples):
        yield crew, samples


@contextlib.contextmanager
def _running(crew: Crew, pool: WorkerPool | None) -> Iterator[None]:
    """Start the worker pool (if any) and the crew; stop both on exit, raising what failed."""
    try:
        if pool:
            pool.start()
        crew.start()
        yield
        crew.stop()
        crew.collect()
    finally:
        crew.finish()
        problems = pool.stop() if pool else []
    errors = crew.errors() + "\n".join(problems)
    if errors.strip():
        raise RuntimeError(errors)


def run_e2e(ctx: Context, phase: Phase, target: Target) -> dict[str, Any]:
    """Steady state: warm up, then count what was archived inside the window."""
    p, store = ctx.profile, ctx.stores[target.store]
    with steady_load(ctx, target, phase.batch, phase.size) as (_, samples):
        time.sleep(p.e2e_warmup)
        first = len(samples)
        win = Window(ctx, store)
        time.sleep(p.e2e_window)
        measured = win.close()
        backlog = samples[first:] or [0]
    done = store.archived(win.start, measured["stop"])
    row = _row(done["count"], measured["stop"] - win.start, [], measured, "enqueue->archive")
    row.update(p50_ms=_ms(done["p50"]), p99_ms=_ms(done["p99"]))
    row["backlog"] = {"max": max(backlog), "mean": sum(backlog) / len(backlog), "bound": p.backlog}
    return row


def run_notify(ctx: Context, phase: Phase, target: Target) -> dict[str, Any]:
    """One sender, paced; one listener (or one worker process) woken by NOTIFY."""
    p, store = ctx.profile, ctx.stores[target.store]
    store.enable_notify()
    roles = _roles(ctx, target, "notify_send", 1, count=p.notify_count)
    pool = None
    if target.client.startswith("worker"):
        pool = WorkerPool(store, target.client, 1, 10)
    else:
        roles += _roles(ctx, target, "notify_listen", 1)
    with _running(Crew(roles), pool):
        win = Window(ctx, store)
        deadline = time.monotonic() + p.notify_count * 0.05 + 15
        while store.archived()["count"] < p.notify_count and time.monotonic() < deadline:
            time.sleep(0.05)
        measured = win.close()
    done = store.archived()
    row = _row(done["count"], measured["stop"] - win.start, [], measured, "notify wake-up")
    row.update(p50_ms=_ms(done["p50"]), p99_ms=_ms(done["p99"]), rate=None)
    row["expected"] = p.notify_count
    return row


def _message(size: int) -> str:
    import json

    return json.dumps(payload(size))


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * 1000


def _per_message(cores: float | None, cpu: dict, count: int) -> float | None:
    """CPU microseconds per message: less sensitive to other load than msg/s."""
    if cores is None or not count:
        return None
    return cores * cpu["seconds"] / count * 1e6


def _row(count: int, seconds: float, latencies: list[float], measured: dict, lat_kind: str) -> dict:
    cpu = measured["cpu"]
    return {
        "messages": count,
        "seconds": seconds,
        "rate": count / seconds if seconds > 0 else None,
        "latency": lat_kind,
        "p50_ms": _ms(percentile(latencies, 0.5)),
        "p99_ms": _ms(percentile(latencies, 0.99)),
        "cpu": cpu,
        "server_us_per_msg": _per_message(cpu["server_cores"], cpu, count),
        "client_us_per_msg": _per_message(cpu["client_cores"], cpu, count),
        "disturbed": cpu["disturbed"],
        "wal_bytes": measured["wal_bytes"],
        "wal_per_msg": measured["wal_bytes"] / count if count else None,
    }


RUNNERS = {"send": run_send_or_read, "read": run_send_or_read, "e2e": run_e2e, "notify": run_notify}


def run(ctx: Context, phase: Phase, target: Target) -> dict[str, Any]:
    """One phase for one target on a fresh queue, with table and statement figures added."""
    began = time.monotonic()
    store = ctx.stores[target.store]
    store.reset()
    if target.attributes:
        store.run("fn.sql", "set_attributes", {"queue": QUEUE, "attributes": target.attributes})
    store.stat_statements(reset=True)
    row = RUNNERS[phase.kind](ctx, phase, target)
    row["run_seconds"] = time.monotonic() - began
    tables = store.settled_stats()
    q = tables.get("q", {})
    row["tables"] = tables
    row["hot_ratio"] = q["hot_upd"] / q["upd"] if q.get("upd") else None
    row["statements"] = store.stat_statements()
    return row
