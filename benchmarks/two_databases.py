"""Two PostgreSQL servers against one: what a second database adds, end to end.

Each server gets a database migrated with django-pgmq and one queue; per server,
2 producer processes send batches and 4 consumer processes read and archive them
through the SQL API, for a short window. The figure is messages archived per second:
one server alone, then both at once (each with its own crew). On a machine where both
servers share the same cores (the embedded servers here do), the ratio shows what
routing costs and what is left to gain, not what two real machines would give.

    python -m benchmarks.two_databases [--seconds 5] [--batch 10] [--json out.json]
        [--dsn DSN] [--db-prefix bench_two_]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from typing import Any

from .crew import Crew, Role
from .server import REPO, Server, resolve
from .stores import Store

PRODUCERS = 2
CONSUMERS = 4


def second_server(folder: str) -> Server:
    """The second server: an embedded cluster of its own (started if needed)."""
    from django_pgmq import embedded

    return Server(embedded.connection_params(folder, "postgres"), f"embedded ({folder})")


def roles(store: Store, batch: int) -> list[Role]:
    """The crew of one server: 2 producers, 4 consumers (archiving), batches of ``batch``."""
    made = [
        Role("produce", "sql", f"two_db_p{i}", batch=batch, conninfo=store.conninfo("p"))
        for i in range(PRODUCERS)
    ]
    made += [
        Role("consume", "sql", f"two_db_c{i}", batch=batch, conninfo=store.conninfo("c"))
        for i in range(CONSUMERS)
    ]
    return made


def run(stores: list[Store], seconds: float, batch: int) -> dict[str, float]:
    """One window with a crew per store; messages archived per second, per store."""
    for store in stores:
        store.reset()
    crew = Crew([role for store in stores for role in roles(store, batch)])
    try:
        start = crew.start(window=seconds)
        crew.collect()
        errors = crew.errors()
        if errors:
            raise RuntimeError(errors)
        stop = start + seconds
        return {store.dbname: store.archived(start, stop)["count"] / seconds for store in stores}
    finally:
        crew.finish()


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="window per run (5)")
    parser.add_argument("--batch", type=int, default=10, help="messages per send and read (10)")
    parser.add_argument("--json", metavar="PATH", help="also write the result as JSON")
    parser.add_argument(
        "--dsn", help="the first server (default: DATABASE_URL, else the embedded server)"
    )
    parser.add_argument(
        "--db-prefix", default="bench_two_", help="scratch database prefix (bench_two_)"
    )
    opts = parser.parse_args(argv)
    first = resolve(opts.dsn, None)
    folder = str(REPO / ".pgdata" / f"{opts.db_prefix}second" / "data")
    second = second_server(folder)
    stores = [
        Store("ours", first, f"{opts.db_prefix}a"),
        Store("ours", second, f"{opts.db_prefix}b"),
    ]
    try:
        for store in stores:
            store.install()
        alone = run(stores[:1], opts.seconds, opts.batch)
        both = run(stores, opts.seconds, opts.batch)
    finally:
        for store in stores:
            store.close()
        first.drop_created()
        second.drop_created()
        from django_pgmq import embedded

        embedded.stop(folder)
        shutil.rmtree(os.path.dirname(folder), ignore_errors=True)
    one = alone[stores[0].dbname]
    two = sum(both.values())
    result = {
        "seconds": opts.seconds,
        "batch": opts.batch,
        "cpus": os.cpu_count(),
        "one_server": round(one),
        "two_servers": {name: round(rate) for name, rate in both.items()},
        "two_servers_total": round(two),
        "ratio": round(two / one, 2) if one else None,
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    print(
        f"end to end, {PRODUCERS} producers / {CONSUMERS} consumers per server, batch "
        f"{opts.batch}, {opts.seconds:g} s, {result['cpus']} CPUs shared by both servers:\n"
        f"  one server : {one:10.0f} msg/s\n"
        f"  two servers: {two:10.0f} msg/s "
        f"({', '.join(f'{rate:.0f}' for rate in both.values())})\n"
        f"  ratio      : {result['ratio']}x"
    )
    if opts.json:
        with open(opts.json, "w") as out:
            json.dump(result, out, indent=2)
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
