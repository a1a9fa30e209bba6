"""Producer and consumer processes: each opens its own connection, waits for the
start, works until told to stop, reports, and exits when released.

Processes are forked, so a run starts in milliseconds; the harness's own
connections are never used by a child.
"""

from __future__ import annotations

import multiprocessing
import random
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .clients import Client, ManagerClient, SqlClient

FOREVER = 1e18
EMPTY_PAUSE = 0.005  # a consumer that found nothing waits this long before reading again
FULL_PAUSE = 0.002  # a producer waits this long while the backlog is at its bound
START_TIMEOUT = 120.0

_ctx = multiprocessing.get_context("fork")


@dataclass(frozen=True)
class Role:
    """What one process does."""

    kind: str  # produce | consume | notify_send | notify_listen
    client: str  # sql | manager | manager-prepared
    app: str  # application_name of its connection
    batch: int = 1
    size: int = 22
    ack: str = "archive"
    stop_when_empty: bool = False
    conninfo: dict | None = None
    sqlfile: str = "fn.sql"
    channel: str = ""
    count: int = 0  # notify_send: messages to send
    gap: tuple[float, float] = (0.005, 0.025)  # notify_send: pause between messages


class Sync:
    """Shared state of one crew: start barrier, stop time, backlog depth, results."""

    def __init__(self, processes: int) -> None:
        self.barrier = _ctx.Barrier(processes + 1)
        self.stop_at = _ctx.RawValue("d", FOREVER)
        self.depth = _ctx.RawValue("q", 0)
        self.bound = _ctx.RawValue("q", 0)  # 0: no backlog bound
        self.results = _ctx.Queue()
        self.release = _ctx.Event()


def _open(role: Role) -> Client:
    if role.client.startswith("manager"):
        return ManagerClient(role.app, role.size, prepared=role.client == "manager-prepared")
    return SqlClient(
        {**role.conninfo, "application_name": role.app}, role.sqlfile, role.size, role.channel
    )


def _produce(client: Client, role: Role, sync: Sync, out: dict) -> None:
    latencies = out["latencies"]
    while time.time() < sync.stop_at.value:
        if sync.bound.value and sync.depth.value >= sync.bound.value:
            time.sleep(FULL_PAUSE)
            continue
        t0 = time.perf_counter()
        out["count"] += client.send(role.batch)
        latencies.append(time.perf_counter() - t0)
        out["last"] = time.time()


def _consume(client: Client, role: Role, sync: Sync, out: dict) -> None:
    latencies = out["latencies"]
    while time.time() < sync.stop_at.value:
        t0 = time.perf_counter()
        ids = client.read(role.batch)
        if not ids:
            if role.stop_when_empty:
                break
            time.sleep(EMPTY_PAUSE)
            continue
        out["count"] += client.ack(ids, role.ack)
        latencies.append(time.perf_counter() - t0)
        out["last"] = time.time()


def _notify_send(client: Client, role: Role, sync: Sync, out: dict) -> None:
    rng = random.Random(0)
    for _ in range(role.count):
        if time.time() >= sync.stop_at.value:
            break
        out["count"] += client.send_notify()
        out["last"] = time.time()
        time.sleep(rng.uniform(*role.gap))


def _notify_listen(client: Client, role: Role, sync: Sync, out: dict) -> None:
    """Drain the queue, then sleep until a notification (or a 0.25 s fallback poll).

    A notification that arrives while draining waits in psycopg's backlog and
    ends the next ``notifies()`` at once, so none is missed.
    """
    client.listen()
    while time.time() < sync.stop_at.value:
        while ids := client.read(10):
            out["count"] += client.ack(ids, "archive")
            out["last"] = time.time()
        for _ in client.conn.notifies(timeout=0.25, stop_after=1):
            pass


LOOPS: dict[str, Callable[[Client, Role, Sync, dict], None]] = {
    "produce": _produce,
    "consume": _consume,
    "notify_send": _notify_send,
    "notify_listen": _notify_listen,
}


def _child(role: Role, sync: Sync) -> None:
    out: dict[str, Any] = {"kind": role.kind, "count": 0, "latencies": [], "error": None}
    client = None
    try:
        client = _open(role)
        sync.barrier.wait(START_TIMEOUT)
        out["start"] = out["last"] = time.time()
        LOOPS[role.kind](client, role, sync, out)
    except Exception:
        sync.barrier.abort()
        out["error"] = traceback.format_exc()
    out["end"] = time.time()
    sync.results.put(out)
    sync.release.wait(START_TIMEOUT)
    if client is not None:
        client.close()


class Crew:
    """Start processes for ``roles``, let them work, collect their reports."""

    def __init__(self, roles: list[Role], stop_at: float | None = None) -> None:
        self.roles = roles
        self.sync = Sync(len(roles))
        if stop_at is not None:
            self.sync.stop_at.value = stop_at
        self.processes = [
            _ctx.Process(target=_child, args=(r, self.sync), daemon=True) for r in roles
        ]
        self.results: list[dict] = []

    def start(self, window: float | None = None) -> float:
        """Start every process and release them together; the start time.

        With ``window`` they stop by themselves that many seconds after the start.
        """
        for proc in self.processes:
            proc.start()
        if window is not None:
            self.sync.stop_at.value = time.time() + window + 0.05
        try:
            self.sync.barrier.wait(START_TIMEOUT)
        except Exception:
            self.collect()
            raise RuntimeError("a process did not start: " + self.errors()) from None
        return time.time()

    def stop(self) -> None:
        self.sync.stop_at.value = time.time()

    def collect(self, timeout: float = START_TIMEOUT) -> list[dict]:
        """Every process's report (they stay alive, for CPU accounting, until `finish`)."""
        deadline = time.monotonic() + timeout
        while len(self.results) < len(self.processes) and time.monotonic() < deadline:
            try:
                self.results.append(self.sync.results.get(timeout=0.5))
            except Exception:
                if not any(p.is_alive() for p in self.processes):
                    break
        return self.results

    def errors(self) -> str:
        return "\n".join(r["error"] for r in self.results if r.get("error"))

    def finish(self) -> None:
        """Release the processes and wait for them to exit."""
        self.sync.release.set()
        for proc in self.processes:
            proc.join(10)
            if proc.is_alive():
                proc.kill()
                proc.join(5)
