"""The child of tests/integration/test_migration_round_trip.py: migration round trips in one
process, on the database DATABASE_URL names (a scratch database).

``python tests/migration_round_trip.py 0022 0023 ...``: migrates to the head, makes queues
of every kind with attributes set, notes the schema and what every attribute does, then
for each migration N named: migrates back to N's predecessor and forward to the head,
and checks the schema and the attributes' behaviour again. Prints one JSON line: per N,
the problems found ([] when none) and the seconds the round trip took.

Going back past 0013 (the attributes table) is refused while any queue has attributes
(django_pgmq.schema_guard); for such an N the refusal is checked, the attributes are
cleared for the round trip and set again after it.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "example_project.settings")

import django

django.setup()

import psycopg  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connections  # noqa: E402
from django.db.migrations.loader import MigrationLoader  # noqa: E402

from django_pgmq import index_builds  # noqa: E402
from django_pgmq.sqltools import migrate as sqlmigrate  # noqa: E402
from django_pgmq.sqltools import schema  # noqa: E402

APP = "django_pgmq"
ATTRIBUTES_FROM = "0008"  # the release squash (0008) holds 0013, which made the attributes table

# Queues of every kind (sqlmigrate.EVERY_KIND), and one per behaviour-bearing attribute.
ATTRIBUTES: dict[str, dict[str, Any]] = {
    "k_limited": {"max_in_flight": 2},
    "k_rated": {"rate_limit": {"count": 3, "seconds": 3600}},
    "k_dedup": {"deduplication_window": 3600},
    "k_paused": {"paused": True},
    "k_delayed": {"delivery_delay": 3600},
    "k_prio": {"priorities": True},
    "k_dead": {"max_receive_count": 1, "dead_letter_queue": "k_dlq"},
}
PLAIN = ["k_plain", "k_unlogged", "k_parted", "k_fifo", "k_tasks", "k_notify", "k_dlq"]


def plan() -> list[str]:
    loader = MigrationLoader(None, ignore_no_migrations=True)
    (leaf,) = loader.graph.leaf_nodes(APP)
    return [name for app, name in loader.graph.forwards_plan(leaf) if app == APP]


def migrate(target: str | None) -> None:
    args = [APP] if target is None else [APP, target]
    call_command("migrate", *args, verbosity=0)
    for connection in connections.all(initialized_only=True):
        connection.close()


def set_attributes(conn: psycopg.Connection, clear: bool = False) -> None:
    for queue, attrs in ATTRIBUTES.items():
        value = dict.fromkeys(attrs) if clear else attrs
        conn.execute("SELECT pgmq.set_queue_attributes(%s, %s::jsonb)", [queue, json.dumps(value)])


def make_queues(conn: psycopg.Connection, dsn: str) -> None:
    conn.execute("SET pgmq.hot_queues = '0'")
    for statement in sqlmigrate.EVERY_KIND:
        conn.execute(statement)
    for queue in [*ATTRIBUTES, "k_dlq"]:
        conn.execute("SELECT pgmq.create(%s)", [queue])
    set_attributes(conn)
    index_builds.build_pending_dsn(dsn)


def count(conn: psycopg.Connection, queue: str) -> int:
    table = psycopg.sql.Identifier(f"q_{queue}")
    return conn.execute(psycopg.sql.SQL("SELECT count(*) FROM pgmq.{}").format(table)).fetchone()[0]


def send(conn: psycopg.Connection, queue: str, n: int = 1, headers: Any = None) -> None:
    for i in range(n):
        conn.execute(
            "SELECT pgmq.send(%s, %s::jsonb, %s::jsonb)",
            [queue, json.dumps({"n": i}), json.dumps(headers)],
        )


def read(conn: psycopg.Connection, queue: str, qty: int, vt: int = 30) -> list[tuple]:
    return conn.execute(
        "SELECT msg_id, message, headers FROM pgmq.read(%s, %s, %s)", [queue, vt, qty]
    ).fetchall()


def purge(conn: psycopg.Connection) -> None:
    for queue in [*ATTRIBUTES, *PLAIN]:
        ids = conn.execute(
            psycopg.sql.SQL("SELECT array_agg(msg_id) FROM pgmq.{}").format(
                psycopg.sql.Identifier(f"q_{queue}")
            )
        ).fetchone()[0]
        if ids:
            conn.execute("SELECT pgmq.delete(%s, %s::bigint[])", [queue, ids])


def hold(conn: psycopg.Connection) -> None:
    """One message of k_limited read and not acknowledged: in flight across the round trip."""
    purge(conn)
    send(conn, "k_limited")
    read(conn, "k_limited", 1, vt=3600)


def behaviour(conn: psycopg.Connection, round_: int) -> list[str]:
    """What each attribute must do, each checked (one message of k_limited in flight,
    `hold`); the problems (none: [])."""
    problems = []

    send(conn, "k_limited", 10)
    got = len(read(conn, "k_limited", 10))
    if got != 1:
        problems.append(f"max_in_flight 2, 1 in flight: a read of 10 got {got}")
    purge(conn)

    send(conn, "k_rated", 10)
    got = len(read(conn, "k_rated", 10))
    if got > 3:
        problems.append(f"rate_limit 3/h: a read of 10 got {got}")

    key = {"deduplication_id": f"round-{round_}"}
    send(conn, "k_dedup", 1, key)
    send(conn, "k_dedup", 1, key)
    if count(conn, "k_dedup") != 1:
        problems.append(f"deduplication_window: {count(conn, 'k_dedup')} messages of one id")

    send(conn, "k_paused")
    if read(conn, "k_paused", 1):
        problems.append("paused: a read got a message")

    send(conn, "k_delayed")
    if read(conn, "k_delayed", 1):
        problems.append("delivery_delay 1h: a read got a message at once")

    send(conn, "k_prio", 1, {"priority": 1})
    send(conn, "k_prio", 1, {"priority": 5})
    first = read(conn, "k_prio", 1)
    if not first or first[0][2] != {"priority": 5}:
        problems.append(f"priorities: the first read got {first}")

    send(conn, "k_dead")
    read(conn, "k_dead", 1, vt=0)
    read(conn, "k_dead", 1, vt=0)
    if count(conn, "k_dlq") != 1:
        problems.append(f"dead_letter_queue: {count(conn, 'k_dlq')} messages in k_dlq")

    for queue in PLAIN[:-1]:
        send(conn, queue)
        if len(read(conn, queue, 5)) != 1:
            problems.append(f"{queue}: a send then a read did not get the message")
    purge(conn)
    return problems


def attributes(conn: psycopg.Connection) -> dict[str, Any]:
    return {
        q: conn.execute("SELECT pgmq.get_queue_attributes(%s)", [q]).fetchone()[0]
        for q in ATTRIBUTES
    }


def main(targets: list[str]) -> None:
    dsn = sqlmigrate.server_conninfo()
    names = plan()
    migrate(None)
    out: dict[str, Any] = {}
    with psycopg.connect(dsn, autocommit=True) as conn:
        make_queues(conn, dsn)
        signature = schema.signature(conn)
        attrs = attributes(conn)
        hold(conn)
        before = behaviour(conn, 0)
        out["head"] = {"problems": before, "seconds": 0.0}
    for round_, prefix in enumerate(targets, 1):
        [name] = [n for n in names if n.startswith(prefix)]
        previous = names[names.index(name) - 1]
        started = time.monotonic()
        problems = []
        with psycopg.connect(dsn, autocommit=True) as conn:
            hold(conn)
            cleared = previous[:4] < ATTRIBUTES_FROM
            if cleared:
                try:
                    migrate(previous)
                    problems.append(f"going back to {previous} with attributes was not refused")
                except BaseException as exc:  # the guard's CommandError / SystemExit
                    if "would drop the attributes" not in str(exc):
                        problems.append(f"going back to {previous}: {exc!r}")
                set_attributes(conn, clear=True)
        migrate(previous)
        migrate(None)
        with psycopg.connect(dsn, autocommit=True) as conn:
            if cleared:
                set_attributes(conn)
            conn.execute("SET pgmq.hot_queues = '0'")
            index_builds.build_pending_dsn(dsn)
            if attributes(conn) != attrs:
                problems.append(f"attributes changed: {attributes(conn)} != {attrs}")
            problems += behaviour(conn, round_)
            problems += [
                f"schema: {d}" for d in schema.differences(signature, schema.signature(conn))
            ]
        out[name] = {"problems": problems, "seconds": round(time.monotonic() - started, 2)}
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1:])
