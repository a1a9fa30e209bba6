"""``python -m benchmarks [--quick] [--json FILE] [--soak MINUTES]``.

Measures django-pgmq (its SQL functions, its QueueManager, its worker) side by
side with pgmq's own SQL and a bare table, on one PostgreSQL server, in one run.
"""

from __future__ import annotations

import argparse
import sys

from .plan import TARGETS
from .run import Options, benchmark
from .soak import soak


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description=__doc__.split("\n\n")[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Server: --dsn, else DATABASE_URL, else the embedded PostgreSQL of the project "
        "(.pgdata/data, or PGMQ_EMBEDDED_DIR). Three scratch databases PREFIX{ours,pgmq,raw} "
        "are created on it and dropped at the end.",
    )
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="Short windows (under 2 minutes).")
    size.add_argument(
        "--tiny", action="store_true", help="A few seconds per phase group (the smoke test)."
    )
    parser.add_argument("--json", metavar="FILE", help="Also write every figure to FILE.")
    parser.add_argument(
        "--soak", type=float, metavar="MINUTES", help="Steady load for MINUTES, a line per minute."
    )
    parser.add_argument(
        "--soak-target",
        default="ours-sql",
        choices=[t.key for t in TARGETS],
        help="What --soak runs (default: ours-sql).",
    )
    parser.add_argument(
        "--soak-interval", type=float, default=60.0, metavar="SECONDS", help=argparse.SUPPRESS
    )
    parser.add_argument("--dsn", help="libpq DSN or URL of the server (any database on it).")
    parser.add_argument("--data-dir", help="Embedded server data folder (default: .pgdata/data).")
    parser.add_argument(
        "--db-prefix", default="bench_", help="Prefix of the scratch databases (default: bench_)."
    )
    parser.add_argument(
        "--targets",
        help="Comma-separated subset of: " + ", ".join(t.key for t in TARGETS) + ".",
    )
    parser.add_argument(
        "--phases", help="Comma-separated substrings of phase names (e.g. 'e2e,notify')."
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        metavar="N",
        help="Run each phase N times, the targets' order reversed every other round, and "
        "add a median line per target (ratios: medians of the rounds' ratios).",
    )
    parser.add_argument("--keep", action="store_true", help="Keep the scratch databases.")
    parser.add_argument(
        "--disturbed-above",
        type=float,
        default=0.10,
        metavar="SHARE",
        help="Flag a run when other processes used more than this share of the CPU (0.10).",
    )
    return parser.parse_args(argv)


def _split(text: str | None) -> list[str] | None:
    return [part.strip() for part in text.split(",") if part.strip()] if text else None


def main(argv: list[str] | None = None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    known = {t.key for t in TARGETS}
    chosen = _split(args.targets)
    if chosen and set(chosen) - known:
        print(f"unknown target(s): {', '.join(sorted(set(chosen) - known))}", file=sys.stderr)
        return 2
    if args.rounds < 1:
        print("--rounds needs a whole number, 1 or more", file=sys.stderr)
        return 2
    if args.soak is not None and args.soak <= 0:
        print("--soak needs a positive number of minutes", file=sys.stderr)
        return 2
    opts = Options(
        profile="tiny" if args.tiny else "quick" if args.quick else "full",
        dsn=args.dsn,
        data_dir=args.data_dir,
        prefix=args.db_prefix,
        targets=chosen,
        phases=_split(args.phases),
        keep=args.keep,
        other_limit=args.disturbed_above,
        rounds=args.rounds,
    )
    if args.soak is not None:
        result = soak(opts, args.soak, args.soak_interval, args.soak_target)
    else:
        result = benchmark(opts)
    if args.json:
        from .report import write_json

        write_json(result, args.json)
        print(f"figures written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
