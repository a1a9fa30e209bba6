"""CPU accounting over a measurement window: server, clients, everything else.

Busy CPU of the whole machine (from /proc/stat via psutil) minus the CPU of
the server's processes and of this harness and its children is load from
elsewhere; above a threshold the window is flagged "disturbed".
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import psutil

DISTURBED_OTHER = 0.10  # share of the machine's CPU used by other processes
DISTURBED_STEAL = 0.05  # share of the machine's CPU stolen by the hypervisor


def _busy(times: Any) -> float:
    """Seconds of CPU spent on work (idle, iowait and steal excluded)."""
    return (
        times.user
        + times.nice
        + times.system
        + getattr(times, "irq", 0.0)
        + getattr(times, "softirq", 0.0)
    )


def _process_cpu(pids: Iterable[int]) -> dict[tuple[int, float], float]:
    """CPU seconds of each live process, keyed by (pid, start time) so reused pids never mix."""
    result = {}
    for pid in pids:
        try:
            proc = psutil.Process(pid)
            with proc.oneshot():
                t = proc.cpu_times()
                result[(pid, proc.create_time())] = t.user + t.system
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return result


def client_pids() -> list[int]:
    """This process and all its descendants (producers, consumers, worker processes)."""
    me = psutil.Process()
    return [me.pid, *(p.pid for p in me.children(recursive=True))]


def local_postgres(pids: Iterable[int]) -> list[int]:
    """The pids that are postgres processes on this machine (none for a remote server)."""
    found = []
    for pid in pids:
        try:
            if "postgres" in psutil.Process(pid).name():
                found.append(pid)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


@dataclass
class Snapshot:
    at: float
    busy: float
    steal: float
    server: dict[tuple[int, float], float]
    clients: dict[tuple[int, float], float]
    server_seen: bool


def snapshot(server_pids: Iterable[int]) -> Snapshot:
    """CPU counters now; ``server_pids`` are the server's processes serving the benchmark."""
    cpu = psutil.cpu_times()
    local = local_postgres(server_pids)
    return Snapshot(
        at=time.time(),
        busy=_busy(cpu),
        steal=getattr(cpu, "steal", 0.0),
        server=_process_cpu(local),
        clients=_process_cpu(client_pids()),
        server_seen=bool(local),
    )


def _delta(start: dict, stop: dict, since: float) -> float:
    """CPU used between two snapshots; a process born in the window counts from zero."""
    total = 0.0
    for key, value in stop.items():
        if key in start:
            total += value - start[key]
        elif key[1] >= since - 0.5:
            total += value
    return total


def usage(start: Snapshot, stop: Snapshot, other_limit: float, steal_limit: float) -> dict:
    """Cores used by server, clients and others during the window, and whether it was disturbed."""
    seconds = max(stop.at - start.at, 1e-6)
    cores = psutil.cpu_count() or 1
    server = _delta(start.server, stop.server, start.at) if stop.server_seen else None
    clients = _delta(start.clients, stop.clients, start.at)
    busy = stop.busy - start.busy
    other = max(0.0, busy - clients - (server or 0.0))
    steal = max(0.0, stop.steal - start.steal)
    other_share = other / (seconds * cores)
    steal_share = steal / (seconds * cores)
    reasons = []
    if server is not None and other_share > other_limit:
        reasons.append(f"other processes used {other_share:.0%} of the CPU")
    if steal_share > steal_limit:
        reasons.append(f"CPU steal {steal_share:.0%}")
    return {
        "seconds": seconds,
        "cores": cores,
        "server_cores": None if server is None else server / seconds,
        "client_cores": clients / seconds,
        "other_cores": other / seconds,
        "other_share": other_share,
        "steal_share": steal_share,
        "loadavg": os.getloadavg()[0],
        "disturbed": bool(reasons),
        "reasons": reasons,
        "server_visible": server is not None,
    }
