"""``--soak MINUTES``: steady load on one target, one line per interval, so bloat shows.

Each line: throughput in the interval, enqueue-to-archive latency, backlog,
queue table and index sizes, live and dead tuples, autovacuum runs, CPU.
At the end, the first half's throughput against the second half's.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

from . import phases
from .plan import TARGETS, Phase
from .profiles import PROFILES
from .run import Options, metadata, setup_django
from .server import resolve
from .stores import Store

MB = 2**20
# (header, width, cell) of each column of a soak line.
COLUMNS: list[tuple[str, int, Callable[[dict, dict, dict], str]]] = [
    ("min", 5, lambda r, q, a: f"{r['elapsed'] / 60:.1f}"),
    ("msg/s", 7, lambda r, q, a: f"{r['rate']:.0f}"),
    ("p50 ms", 7, lambda r, q, a: f"{r['p50_ms'] or 0:.2f}"),
    ("p99 ms", 7, lambda r, q, a: f"{r['p99_ms'] or 0:.2f}"),
    ("backlog", 7, lambda r, q, a: str(r["backlog"])),
    ("q MB", 6, lambda r, q, a: f"{q.get('table_bytes', 0) / MB:.1f}"),
    ("q idx MB", 8, lambda r, q, a: f"{q.get('index_bytes', 0) / MB:.1f}"),
    ("a MB", 6, lambda r, q, a: f"{a.get('table_bytes', 0) / MB:.0f}"),
    ("live", 8, lambda r, q, a: str(q.get("live", 0))),
    ("dead", 8, lambda r, q, a: str(q.get("dead", 0))),
    ("autovac", 7, lambda r, q, a: str(q.get("autovacuums", 0))),
    ("srv", 5, lambda r, q, a: f"{r['cpu']['server_cores'] or 0:.2f}"),
    ("cli", 5, lambda r, q, a: f"{r['cpu']['client_cores']:.2f}"),
    ("other", 5, lambda r, q, a: f"{r['cpu']['other_cores']:.2f}"),
    ("", 9, lambda r, q, a: "disturbed" if r["cpu"]["disturbed"] else ""),
]


def _header() -> str:
    return " ".join(f"{name:>{width}}" for name, width, _ in COLUMNS).rstrip()


def _line(row: dict) -> str:
    q, a = row["tables"].get("q", {}), row["tables"].get("a", {})
    return " ".join(f"{cell(row, q, a):>{width}}" for _, width, cell in COLUMNS).rstrip()


def soak(
    opts: Options,
    minutes: float,
    interval: float = 60.0,
    target_key: str = "ours-sql",
    out: Any = sys.stdout,
) -> dict[str, Any]:
    """Run ``target_key`` end to end (batch 10, 22-byte messages) for ``minutes``."""
    profile = PROFILES[opts.profile]
    target = next(t for t in TARGETS if t.key == target_key)
    server = resolve(opts.dsn, opts.data_dir)
    store = Store(target.store, server, f"{opts.prefix}{target.store}")
    lines: list[dict] = []
    try:
        store.install()
        if target.client != "sql":
            setup_django(server, store)
        meta = metadata(opts, profile, server, [target])
        ctx = phases.Context(profile, {target.store: store}, (opts.other_limit, opts.steal_limit))
        store.reset()
        phase = Phase("soak", "e2e", 10, "archive", 22)
        print(f"soak: {target.label}, {minutes:g} min, a line every {interval:g} s", file=out)
        print(_header(), file=out, flush=True)
        with phases.steady_load(ctx, target, phase.batch, phase.size) as (_, samples):
            lines = _intervals(ctx, store, minutes * 60, interval, samples, out)
    finally:
        store.close()
        if not opts.keep:
            server.drop_created()
    result = {"meta": meta, "soak": {"target": target_key, "minutes": minutes, "lines": lines}}
    halves = _halves(lines)
    result["soak"].update(halves)
    print(
        f"first half {halves['first_half_rate']:.0f} msg/s, second half "
        f"{halves['second_half_rate']:.0f} msg/s (ratio {halves['decay_ratio']:.2f})",
        file=out,
    )
    return result


def _intervals(
    ctx: phases.Context, store: Store, seconds: float, interval: float, samples: list[int], out: Any
) -> list[dict]:
    started = time.time()
    lines = []
    while time.time() - started < seconds - 1e-3:
        win = phases.Window(ctx, store)
        time.sleep(min(interval, max(0.0, started + seconds - time.time())))
        measured = win.close()
        done = store.archived(win.start, measured["stop"])
        row = {
            "elapsed": measured["stop"] - started,
            "messages": done["count"],
            "seconds": measured["stop"] - win.start,
            "rate": done["count"] / max(measured["stop"] - win.start, 1e-6),
            "p50_ms": done["p50"] and done["p50"] * 1000,
            "p99_ms": done["p99"] and done["p99"] * 1000,
            "backlog": samples[-1] if samples else 0,
            "tables": store.table_stats(),
            "cpu": measured["cpu"],
            "wal_bytes": measured["wal_bytes"],
        }
        lines.append(row)
        print(_line(row), file=out, flush=True)
    return lines


def _halves(lines: list[dict]) -> dict[str, float]:
    """Throughput of the first and second half of the intervals."""
    half = max(1, len(lines) // 2)
    first, second = lines[:half], lines[half:] or lines[:half]

    def rate(part: list[dict]) -> float:
        return sum(r["messages"] for r in part) / max(sum(r["seconds"] for r in part), 1e-6)

    a, b = rate(first), rate(second)
    return {"first_half_rate": a, "second_half_rate": b, "decay_ratio": b / a if a else 0.0}
