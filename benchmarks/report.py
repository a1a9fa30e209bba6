"""Ratios, the printed table and the JSON file of a run."""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable
from typing import Any, TextIO

from .plan import PEERS

# The speed goals at batch 10: (phase, ours target, peer target, minimum ratio).
GOALS = [
    ("read+archive b10", "ours-sql", "pgmq-sql", 1.3),
    ("e2e 22B", "ours-sql", "pgmq-sql", 1.3),
    ("e2e 22B", "ours-worker", "pgmq-sql", 1.2),
    # the floors the static SQL core must hold (no code written at run time)
    ("e2e 22B", "ours-sql", "pgmq-sql", 1.5),
    # ... and the manager, with psycopg's prepared statements on (its own statements)
    ("read+archive b10", "ours-manager-prepared", "pgmq-sql", 1.3),
    ("e2e 22B", "ours-manager-prepared", "pgmq-sql", 1.5),
    # queue attributes
    ("read+archive b10", "ours-priorities", "pgmq-sql", 1.0),
    ("send b100", "ours-dedup", "ours-sql", 0.7),
    ("send b100", "ours-dedup", "ours-dedup-ids", 0.7),
]


def interleaved_runs(calls: dict, rounds: int, warm_up: bool = False) -> dict[str, list[float]]:
    """Each call's figure in each of ``rounds`` rounds, the calls taken in turn and the
    order rotated each round: a shared machine's load drifts, and back-to-back runs of
    one figure would each catch a different part of it. ``warm_up`` runs each call once
    first, untimed (a session speeds up as it warms)."""
    keys = list(calls)
    if warm_up:
        for key in keys:
            calls[key]()
    runs: dict[str, list[float]] = {k: [] for k in keys}
    for r in range(rounds):
        for key in keys[r % len(keys) :] + keys[: r % len(keys)]:
            runs[key].append(calls[key]())
    return runs


def interleaved(calls: dict, rounds: int, warm_up: bool = False) -> dict[str, float]:
    """Each call's median over the rounds of ``interleaved_runs``."""
    return {k: statistics.median(v) for k, v in interleaved_runs(calls, rounds, warm_up).items()}


LEGEND = [
    "msg/s: messages per second (send: sent; read: read and acknowledged; e2e: archived"
    " in the window).",
    "p50/p99 ms: per call (send), per read+ack (read), enqueue->archive (e2e),"
    " commit->archive of a NOTIFY-woken consumer (notify).",
    "/pgmq, /raw: ours divided by the peer (latency phases: peer p50 / ours p50);"
    " above 1 ours is better.",
    "srv, cli, other: CPU cores used by the server, by the benchmark's processes, by"
    " everything else.",
    "srv us, cli us: CPU microseconds per message in the server and in the benchmark's"
    " processes (less sensitive to other load than msg/s).",
    "WAL/msg: bytes of WAL per message (server-wide). HOT: share of the queue table's"
    " updates that were HOT.",
]

COLUMNS = [
    ("phase", 16, "<"),
    ("target", 17, "<"),
    ("msg/s", 8, ">"),
    ("p50 ms", 7, ">"),
    ("p99 ms", 7, ">"),
    ("/pgmq", 6, ">"),
    ("/raw", 6, ">"),
    ("srv", 5, ">"),
    ("cli", 5, ">"),
    ("other", 5, ">"),
    ("srv us", 6, ">"),
    ("cli us", 6, ">"),
    ("WAL/msg", 7, ">"),
    ("HOT", 4, ">"),
    ("", 20, "<"),
]


def ratio(row: dict, peer: dict | None) -> float | None:
    """Ours against a peer: throughput ratio, or for latency-only phases peer p50 / ours p50
    (either way above 1 means ours is better)."""
    if peer is None or row.get("error") or peer.get("error"):
        return None
    if row.get("rate") and peer.get("rate"):
        return row["rate"] / peer["rate"]
    if row.get("rate") is None and row.get("p50_ms") and peer.get("p50_ms"):
        return peer["p50_ms"] / row["p50_ms"]
    return None


def _key(row: dict, target: str | None = None) -> tuple:
    return (row["phase"], target or row["target"], row.get("round"))


def add_ratios(rows: list[dict]) -> None:
    """Give every django-pgmq row its ratios against pgmq's SQL and the raw table, each
    against the peer's run of the same round (median lines are made by `medians`)."""
    by_key = {_key(r): r for r in rows}
    for row in rows:
        if not row.get("ours") or row.get("round") == "median":
            continue
        for peer in PEERS:
            row[f"vs_{peer}"] = ratio(row, by_key.get(_key(row, peer)))


def medians(ran: list[dict]) -> list[dict]:
    """One line per target for the rounds of one phase: the run whose rate is the median
    (the lower of the middle two for an even count), with the medians of the rounds'
    ratios against each peer."""
    lines = []
    for target in dict.fromkeys(r["target"] for r in ran):
        runs = [r for r in ran if r["target"] == target and not r.get("error")]
        if not runs:
            continue
        runs.sort(key=lambda r: r.get("rate") or 0)
        row = {**runs[(len(runs) - 1) // 2], "round": "median", "rounds": len(runs)}
        if row.get("ours"):
            for peer in PEERS:
                found = [r[f"vs_{peer}"] for r in runs if r.get(f"vs_{peer}") is not None]
                row[f"vs_{peer}"] = statistics.median(found) if found else None
        lines.append(row)
    return lines


def goals(rows: list[dict]) -> list[dict]:
    """The speed goals, each with the measured ratio and whether it is met (from the
    median lines when the phases ran in rounds)."""
    if any(r.get("round") == "median" for r in rows):
        rows = [r for r in rows if r.get("round") == "median"]
    by_key = {(r["phase"], r["target"]): r for r in rows}
    found = []
    for phase, ours, peer, minimum in GOALS:
        row = by_key.get((phase, ours), {})
        value = row.get(f"vs_{peer}") if row.get("round") == "median" and peer in PEERS else None
        if value is None:
            value = ratio(row, by_key.get((phase, peer)))
        found.append(
            {
                "phase": phase,
                "ours": ours,
                "peer": peer,
                "minimum": minimum,
                "ratio": value,
                "met": None if value is None else value >= minimum,
            }
        )
    return found


def _num(value: float | None, digits: int = 0) -> str:
    if value is None:
        return "-"
    return f"{value:,.{digits}f}"


def cells(row: dict) -> list[str]:
    """One table line's cells."""
    if row.get("error"):
        return [
            row["phase"],
            row["target"],
            "ERROR",
            *[""] * 11,
            row["error"].splitlines()[-1][:60],
        ]
    cpu = row["cpu"]
    hot = row.get("hot_ratio")
    return [
        row["phase"],
        row["target"],
        _num(row.get("rate")),
        _num(row.get("p50_ms"), 2),
        _num(row.get("p99_ms"), 2),
        _num(row.get("vs_pgmq-sql"), 2),
        _num(row.get("vs_raw"), 2),
        _num(cpu.get("server_cores"), 2),
        _num(cpu["client_cores"], 2),
        _num(cpu["other_cores"], 2),
        _num(row.get("server_us_per_msg")),
        _num(row.get("client_us_per_msg")),
        _num(row.get("wal_per_msg")),
        "-" if hot is None else f"{hot:.0%}",
        _note(row),
    ]


def _note(row: dict) -> str:
    """The last cell: the round (when the phases ran in rounds) and whether it was disturbed."""
    parts = []
    if row.get("round") == "median":
        parts.append(f"median of {row['rounds']}")
    elif row.get("round"):
        parts.append(f"round {row['round']}")
    if row.get("disturbed") and row.get("round") != "median":
        parts.append("disturbed")
    return ", ".join(parts)


def line(values: Iterable[str]) -> str:
    parts = []
    for value, (_, width, align) in zip(values, COLUMNS, strict=False):
        parts.append(f"{value:{align}{width}}")
    return " ".join(parts).rstrip()


def header() -> str:
    return line(name for name, _, _ in COLUMNS)


def print_table(rows: list[dict], out: TextIO) -> None:
    print(header(), file=out)
    print("-" * len(header()), file=out)
    last = None
    for row in rows:
        if last is not None and row["phase"] != last:
            print(file=out)
        last = row["phase"]
        print(line(cells(row)), file=out)


def print_summary(result: dict, out: TextIO) -> None:
    """Legend, setup and the speed goals under the table."""
    meta = result["meta"]
    server = meta["server"]
    print("\n" + "\n".join(LEGEND), file=out)
    print(
        f"\nPostgreSQL {server['version']} ({server['source']}); {meta['cpus']} CPUs; profile"
        f" {meta['profile']}; {meta['producers']} producers, {meta['consumers']} consumers,"
        f" {meta['workers']} worker processes; git {meta['git']}",
        file=out,
    )
    settings = ", ".join(f"{k}={v}" for k, v in server["settings"].items())
    print(f"settings: {settings}", file=out)
    if meta.get("notes"):
        for note in meta["notes"]:
            print(f"note: {note}", file=out)
    disturbed = [r for r in result["rows"] if r.get("disturbed")]
    if disturbed:
        print(
            f"{len(disturbed)} of {len(result['rows'])} rows ran while other load used the"
            " machine (column 'other'); their figures are noisy.",
            file=out,
        )
    for goal in result["goals"]:
        verdict = {True: "met", False: "NOT met", None: "not measured"}[goal["met"]]
        print(
            f"goal: {goal['phase']}: {goal['ours']} / {goal['peer']} >= {goal['minimum']}:"
            f" {_num(goal['ratio'], 2)} ({verdict})",
            file=out,
        )


def write_json(result: dict[str, Any], path: str) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=1, default=str)
        fh.write("\n")
