"""The benchmark harness (``python -m benchmarks``) in its tiny mode, so it cannot rot.

It runs as a real process against the tests' server; the checks are on the
structure and sanity of what it reports, never on how fast anything was.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from benchmarks import consume
from benchmarks.plan import PEERS, TARGETS, phases
from benchmarks.profiles import PROFILES
from benchmarks.report import GOALS
from tests.debian_packages import apt_install

ROOT = Path(__file__).resolve().parents[2]
TINY = PROFILES["tiny"]

pytestmark = pytest.mark.slow


@pytest.fixture
def prefix() -> str:
    """Scratch database prefix, unique to this test process: several runs share a server, and
    CI's two legs share the checkout, where `benchmarks.two_databases` keeps its second
    server's folder (.pgdata/<prefix>second)."""
    return os.environ.get("PGMQ_TEST_DB_PREFIX", "test_") + f"bench{os.getpid()}_"


def run_process(module: str, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """``python -m <module> ARGS`` run in a subprocess (DATABASE_URL unset: it gets --dsn)."""
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def run_module(module: str, *args: str, timeout: float = 600) -> str:
    """``run_process``, which must exit 0 with no traceback. Returns its stdout."""
    done = run_process(module, *args, timeout=timeout)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    return done.stdout


def run_harness(pg_dsn: str, prefix: str, tmp_path: Path, *args: str) -> tuple[dict, str]:
    """Run the harness in a subprocess; it must exit 0. Returns (its JSON, its stdout)."""
    out = tmp_path / "figures.json"
    command = ["--tiny", "--json", str(out), "--dsn", pg_dsn, "--db-prefix", prefix, *args]
    stdout = run_module("benchmarks", *command, timeout=900)
    return json.loads(out.read_text()), stdout


def scratch_databases(pg_connect, prefix: str) -> list[str]:
    with pg_connect() as conn:
        rows = conn.execute(
            "SELECT datname FROM pg_database WHERE starts_with(datname, %s)", [prefix]
        ).fetchall()
    return [r[0] for r in rows]


def expected_runs() -> set[tuple[str, str]]:
    """Every (phase, target) the tiny mode must measure on this checkout."""
    worker = consume.available()
    found = set()
    for phase in phases():
        for target in TARGETS:
            if target.client == "worker-batch" or (target.client == "worker" and not worker):
                continue
            if phase.kind in target.kinds:
                found.add((phase.name, target.key))
    return found


def test_every_phase_runs_for_every_target(pg_dsn, pg_connect, prefix, tmp_path):
    result, stdout = run_harness(pg_dsn, prefix, tmp_path)
    rows = {(r["phase"], r["target"]): r for r in result["rows"]}

    assert set(rows) == expected_runs()
    errors = {key: row["error"] for key, row in rows.items() if row.get("error")}
    assert not errors, errors

    for (phase, target), row in rows.items():
        assert row["messages"] > 0, (phase, target)
        assert isinstance(row["disturbed"], bool)
        assert row["cpu"]["client_cores"] >= 0 and row["cpu"]["other_cores"] >= 0
        assert row["wal_bytes"] >= 0
        assert "q" in row["tables"], (phase, target)
        if row["p50_ms"] is not None:
            assert 0 < row["p50_ms"] <= row["p99_ms"], (phase, target)
        if row["ours"]:
            for peer in PEERS:
                assert row[f"vs_{peer}"] > 0, (phase, target, peer)

        kind = row["kind"]
        if kind in ("send", "read", "e2e"):
            assert row["rate"] > 0 and row["p50_ms"] is not None, (phase, target)
        if kind == "read":
            assert row["messages"] <= TINY.prefill[row["batch"]], (phase, target)
            # Each message acknowledged was read first: an update of its row.
            assert row["tables"]["q"]["upd"] >= row["messages"], (phase, target)
        if kind == "e2e":
            assert 0 <= row["backlog"]["mean"] <= row["backlog"]["max"], (phase, target)
        if kind == "notify":
            # Every message sent one by one was woken up for, read and archived.
            assert row["messages"] == row["expected"] == TINY.notify_count, (phase, target)

    meta = result["meta"]
    assert meta["profile"] == "tiny"
    assert meta["server"]["version"][:2].isdigit()
    assert {"synchronous_commit", "shared_buffers", "fsync"} <= set(meta["server"]["settings"])
    assert [(g["phase"], g["ours"], g["peer"]) for g in result["goals"]] == [
        (phase, ours, peer) for phase, ours, peer, _ in GOALS
    ]
    # One printed line per run, under the table header.
    assert stdout.count("\n") > len(rows)
    for phase, target in rows:
        assert any(line.startswith(phase) and target in line for line in stdout.splitlines())
    assert scratch_databases(pg_connect, prefix) == []


def test_rounds_alternate_the_targets_and_add_median_lines(pg_dsn, pg_connect, prefix, tmp_path):
    """``--rounds 3``: each phase three times, the order reversed in round 2, then a median
    line per target whose ratio is the median of the rounds' ratios (what the goals use)."""
    args = ("--rounds", "3", "--targets", "pgmq-sql,ours-sql", "--phases", "read+archive b10")
    result, stdout = run_harness(pg_dsn, prefix, tmp_path, *args)
    rows = [r for r in result["rows"] if r["phase"] == "read+archive b10"]  # not b100
    runs = [r for r in rows if r["round"] != "median"]
    assert not [r["error"] for r in runs if r.get("error")]
    assert [(r["round"], r["target"]) for r in runs] == [
        (1, "pgmq-sql"), (1, "ours-sql"), (2, "ours-sql"), (2, "pgmq-sql"),
        (3, "pgmq-sql"), (3, "ours-sql"),
    ]  # fmt: skip
    for number in (1, 2, 3):
        ours, peer = (
            next(r for r in runs if r["round"] == number and r["target"] == t)
            for t in ("ours-sql", "pgmq-sql")
        )
        assert ours["vs_pgmq-sql"] == pytest.approx(ours["rate"] / peer["rate"])
    medians = {r["target"]: r for r in rows if r["round"] == "median"}
    assert set(medians) == {"ours-sql", "pgmq-sql"}
    for target, line in medians.items():
        rates = sorted(r["rate"] for r in runs if r["target"] == target)
        assert line["rate"] == rates[1] and line["rounds"] == 3
    ratios = sorted(r["vs_pgmq-sql"] for r in runs if r["target"] == "ours-sql")
    assert medians["ours-sql"]["vs_pgmq-sql"] == pytest.approx(ratios[1])
    [goal] = [
        g for g in result["goals"] if g["phase"] == "read+archive b10" and g["ours"] == "ours-sql"
    ]
    assert goal["ratio"] == pytest.approx(ratios[1])
    lines = [line for line in stdout.splitlines() if line.startswith("read+archive b10 ")]
    assert sum("median of 3" in line for line in lines) == 2
    assert sum("round 2" in line for line in lines) == 2
    # Every line of ours shows its ratio, round 2's too (there ours ran before its peer).
    assert all(line.split()[6] != "-" for line in lines if " ours-sql " in line), lines
    assert scratch_databases(pg_connect, prefix) == []


def test_soak_reports_every_interval(pg_dsn, pg_connect, prefix, tmp_path):
    result, stdout = run_harness(pg_dsn, prefix, tmp_path, "--soak", "0.05", "--soak-interval", "1")
    soak = result["soak"]
    lines = soak["lines"]
    assert soak["target"] == "ours-sql"
    assert len(lines) == 3
    assert sum(line["messages"] for line in lines) > 0
    for line in lines:
        q = line["tables"]["q"]
        assert q["table_bytes"] > 0 and q["index_bytes"] > 0
        assert line["messages"] >= 0 and q["live"] >= 0 and q["dead"] >= 0
    assert soak["first_half_rate"] >= 0 and soak["second_half_rate"] >= 0
    assert "first half" in stdout
    assert scratch_databases(pg_connect, prefix) == []


def test_many_queues_reports_every_figure_with_its_ratio(pg_dsn, pg_connect, prefix):
    """``python -m benchmarks.many_queues`` at a small count: every row printed, no traceback."""
    stdout = run_module(
        "benchmarks.many_queues",
        *("--counts", "20", "--used", "5", "--dsn", pg_dsn, "--db-prefix", prefix + "many_"),
    )
    for row in ("metrics_all(), new session", "list_queues()", "pgmq_metrics", "overview"):
        assert row in stdout, f"{row!r} missing from:\n{stdout}"
    assert stdout.count("x\n") >= 8, stdout  # figures with their ratio column
    assert scratch_databases(pg_connect, prefix + "many_") == []


def test_limits_scale_reports_each_rounds_ratio(pg_dsn, pg_connect, prefix):
    """``python -m benchmarks.limits_scale --phases read-archive`` at a small size: both
    medians, their ratio, one ratio per round and their median; no scratch database left.
    An unknown phase is refused by name, before any database is made."""
    stdout = run_module(
        "benchmarks.limits_scale",
        *("--phases", "read-archive", "--messages", "200", "--rounds", "3"),
        *("--dsn", pg_dsn, "--db-prefix", prefix + "lim_"),
    )
    report = json.loads(stdout)
    assert set(report["read_archive_msgs_per_s"]) == {
        "read+archive unlimited",
        "read+archive max_in_flight 1e6",
    }
    assert all(rate > 0 for rate in report["read_archive_msgs_per_s"].values())
    rounds = report["read_archive_round_ratios"]
    assert len(rounds) == 3 and all(r > 0 for r in rounds), rounds
    assert min(rounds) <= report["read_archive_median_round_ratio"] <= max(rounds)
    assert "read_ms" not in report and not any(k.startswith("deletes") for k in report)
    assert scratch_databases(pg_connect, prefix + "lim_") == []

    refused = run_process("benchmarks.limits_scale", "--phases", "read-archive,nope", timeout=60)
    assert refused.returncode == 2 and "unknown nope" in refused.stderr, refused.stderr
    assert "Traceback" not in refused.stderr


def test_workflows_benchmark_reports_every_ratio(pg_dsn, pg_connect, prefix):
    """``python -m benchmarks.workflows`` at small sizes: every figure and ratio printed (its
    chord run checks the callback was sent exactly once), no traceback."""
    stdout = run_module(
        "benchmarks.workflows",
        *("--messages", "200", "--acks", "20", "--parents", "50", "--rounds", "1"),
        *("--dsn", pg_dsn, "--db-prefix", prefix + "wf_"),
    )
    ratios = json.loads(stdout)["ratios"]
    assert len(ratios) == 6 and all(value > 0 for value in ratios.values()), ratios
    assert scratch_databases(pg_connect, prefix + "wf_") == []


def test_two_databases_reports_both_servers_and_the_ratio(pg_dsn, pg_connect, prefix, tmp_path):
    """``python -m benchmarks.two_databases`` for one second: both figures, no traceback."""
    out = tmp_path / "two.json"
    stdout = run_module(
        "benchmarks.two_databases",
        *("--seconds", "1", "--dsn", pg_dsn, "--db-prefix", prefix + "two_", "--json", str(out)),
    )
    result = json.loads(out.read_text())
    assert result["one_server"] > 0 and len(result["two_servers"]) == 2
    assert all(rate > 0 for rate in result["two_servers"].values())  # both servers consumed
    assert "ratio" in stdout
    assert scratch_databases(pg_connect, prefix + "two_") == []


def test_worker_benchmark_reports_throughput_and_wake_up(pg_dsn, pg_connect, prefix):
    """``python -m benchmarks.worker`` with a few samples: every path printed, no traceback."""
    stdout = run_module(
        "benchmarks.worker",
        *("--messages", "200", "--samples", "6", "--seconds", "0.5"),
        *("--dsn", pg_dsn, "--db-prefix", prefix + "worker_"),
    )
    for row in ("LISTEN/NOTIFY (throttle 0)", "isolated sends", "poll only", "read_with_poll"):
        assert row in stdout, f"{row!r} missing from:\n{stdout}"
    assert "notifications off" in stdout
    assert scratch_databases(pg_connect, prefix + "worker_") == []


@pytest.fixture(scope="session")
def valgrind() -> str:
    """valgrind, from Debian's package when it is missing; skips (saying why) only if it
    cannot be installed."""
    if shutil.which("valgrind") is None:
        why = apt_install("valgrind")
        if shutil.which("valgrind") is None:
            pytest.skip(f"valgrind is missing and could not be installed: {why}")
    return str(shutil.which("valgrind"))


def test_instructions_counts_both_sides_of_a_phase_and_leaves_no_cluster(tmp_path, valgrind):
    """``python -m benchmarks.instructions`` on one phase with a few calls: valgrind counts a
    private cluster's backend for pgmq and for ours, and the cluster's folder is removed.

    The cluster's folder goes in one of this test's own (CI's two legs run this test at the
    same time), which the server's system user can traverse when the tests run as root."""
    out = tmp_path / "instructions.json"
    scratch = Path(tempfile.mkdtemp(prefix="pgmq_test_instructions_"))
    scratch.chmod(0o755)
    try:
        stdout = run_module(
            "benchmarks.instructions",
            *("--phases", "send b1", "--cycles", "2,5", "--json", str(out)),
            *("--work-dir", str(scratch)),
        )
        assert list(scratch.iterdir()) == []  # the cluster's folder is gone
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    rows = json.loads(out.read_text())
    assert [(r["phase"], r["target"]) for r in rows] == [("send b1", "pgmq"), ("send b1", "ours")]
    # a send costs tens of thousands of instructions at least; a broken script would count
    # start-up noise (near zero or negative) or fail on an ERROR line
    assert all(r["instructions"] > 10_000 for r in rows), rows
    assert rows[0]["/pgmq"] == 1.0 and 0 < rows[1]["/pgmq"] < 10, rows
    assert "send b1" in stdout and "callgrind" in stdout
