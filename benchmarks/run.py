"""A whole benchmark run: scratch databases, every phase for every target, the report."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass
from typing import Any

import psutil

from . import consume, phases, report
from .plan import Phase, Target, targets
from .plan import phases as all_phases
from .profiles import PROFILES, Profile
from .server import REPO, Server, resolve
from .stores import Store, install_all


@dataclass(frozen=True)
class Options:
    profile: str = "full"
    dsn: str | None = None
    data_dir: str | None = None
    prefix: str = "bench_"
    targets: list[str] | None = None
    phases: list[str] | None = None
    keep: bool = False
    other_limit: float = 0.10
    steal_limit: float = 0.05
    rounds: int = 1  # each phase this many times, the targets' order reversed every other round


def setup_django(server: Server, store: Store) -> None:
    """Configure Django in this process on the ``ours`` database, for the QueueManager
    processes forked later (DEBUG off: it would log every query)."""
    import django

    os.environ.update(
        DATABASE_URL=server.database_url(store.dbname),
        DJANGO_SETTINGS_MODULE="example_project.settings",
        DJANGO_DEBUG="0",
    )
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    django.setup()


def git_version() -> str:
    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True)
        return done.stdout.strip()

    head = git("rev-parse", "--short", "HEAD") or "unknown"
    return head + ("+dirty" if git("status", "--porcelain", "--untracked-files=no") else "")


def worker_notes(available: bool) -> list[str]:
    if not available:
        return [
            "Python worker pending: pgmq_consume does not exist in this checkout; only the"
            " QueueManager rows measure the Python side"
        ]
    tracked = (
        subprocess.run(
            [
                "git",
                "ls-files",
                "--error-unmatch",
                "django_pgmq/management/commands/pgmq_consume.py",
            ],
            cwd=REPO,
            capture_output=True,
        ).returncode
        == 0
    )
    return [] if tracked else ["pgmq_consume measured from the working tree (not committed yet)"]


def metadata(opts: Options, profile: Profile, server: Server, chosen: list[Target]) -> dict:
    from importlib.resources import files

    import psycopg

    peer = files("pgmq").joinpath("sql", "pgmq.sql.version")
    return {
        "started": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "profile": profile.name,
        "server": server.describe(),
        "pgmq_sql_version": peer.read_text().strip() if peer.is_file() else "unknown",
        "cpus": psutil.cpu_count(),
        "memory_gb": round(psutil.virtual_memory().total / 2**30, 1),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "psycopg": psycopg.__version__,
        "loadavg_start": os.getloadavg(),
        "git": git_version(),
        "producers": profile.producers,
        "consumers": profile.consumers,
        "workers": profile.workers,
        "targets": [t.key for t in chosen],
        "thresholds": {"other": opts.other_limit, "steal": opts.steal_limit},
        "notes": [],
    }


def _wanted(phase: Phase, chosen: list[str] | None) -> bool:
    return not chosen or any(c in phase.name for c in chosen)


def benchmark(opts: Options, out: Any = sys.stdout) -> dict[str, Any]:
    """Run every phase for every target on one server; the result (also printed)."""
    profile = PROFILES[opts.profile]
    server = resolve(opts.dsn, opts.data_dir)
    available = consume.available()
    chosen = targets(profile, opts.targets, available)
    stores: dict[str, Store] = {}
    try:
        stores = install_all(server, opts.prefix)
        if any(t.client != "sql" for t in chosen):
            setup_django(server, stores["ours"])
        meta = metadata(opts, profile, server, chosen)
        meta["notes"] += worker_notes(available)
        ctx = phases.Context(profile, stores, (opts.other_limit, opts.steal_limit))
        rows = run_all(ctx, chosen, opts.phases, out, opts.rounds)
    finally:
        for store in stores.values():
            store.close()
        if not opts.keep:
            server.drop_created()
    meta["finished"] = time.strftime("%Y-%m-%d %H:%M:%S %z")
    result = {"meta": meta, "rows": rows, "goals": report.goals(rows)}
    report.print_summary(result, out)
    return result


def run_all(
    ctx: phases.Context,
    chosen: list[Target],
    wanted: list[str] | None,
    out: Any,
    rounds: int = 1,
) -> list:
    """Every phase, each for every target taking part; one line printed per run.

    With ``rounds`` above 1 each phase runs that many times, the targets in the other
    order every other round (so none always runs first), and a median line per target
    follows: its ratios are the medians of the rounds' ratios, each taken between runs
    made one after the other, so a machine that slows down or speeds up between rounds
    moves both sides of a ratio alike.
    """
    print(report.header(), file=out, flush=True)
    rows: list[dict] = []
    for phase in all_phases():
        if not _wanted(phase, wanted):
            continue
        taking = [t for t in chosen if phase.kind in t.kinds]
        ran: list[dict] = []
        for number in range(1, rounds + 1):
            this_round: list[dict] = []
            for target in taking if number % 2 else taking[::-1]:
                row = {
                    "phase": phase.name,
                    "target": target.key,
                    "label": target.label,
                    "kind": phase.kind,
                    "batch": phase.batch,
                    "ack": phase.ack,
                    "size": phase.size,
                    "ours": target.ours,
                    "round": number if rounds > 1 else None,
                }
                try:
                    row.update(phases.run(ctx, phase, target))
                except Exception:
                    row["error"] = traceback.format_exc()
                rows.append(row)
                this_round.append(row)
                if number % 2:  # in the usual order a row's peers ran before it: print it now
                    report.add_ratios(rows)
                    print(report.line(report.cells(row)), file=out, flush=True)
            if not number % 2:  # reversed: the ratios are known once the round is over
                report.add_ratios(rows)
                for row in this_round:
                    print(report.line(report.cells(row)), file=out, flush=True)
            ran += this_round
        if rounds > 1:
            for row in report.medians(ran):
                rows.append(row)
                print(report.line(report.cells(row)), file=out, flush=True)
    return rows
