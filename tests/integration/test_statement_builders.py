"""One statement builder per message operation: every path that reads, pops, sends,
archives or deletes on a queue runs the text of that operation's one builder
(sql/15_queue_ops.sql: _read_sql with its pick _read_pick_sql, _send_sql, _ack_sql).

Each test plants a change in one builder, inside a transaction that is rolled back (so
pg_proc is as before), and runs the operation through every path: the router's EXECUTE
(a session's first calls), the session's kept statement (prepared by the router on the
fourth call) and its fast path (later calls), a client's own statement (the text
pgmq._queue_ops_client_sql gives the Python manager), and queues with attributes
(priorities, redrive, a max_in_flight limit, a delivery delay). Every path showing the
planted change proves it took its text from the builder; the same run without the plant
shows the test can fail.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import psycopg
import pytest
from django.db import connection
from psycopg import sql
from psycopg.types.json import Jsonb

pytestmark = pytest.mark.usefixtures("django_db_setup")

# Calls per path: the first three run the router's EXECUTE, the fourth prepares the
# session's kept statement, the later ones run the fast path.
CALLS = 6

# The queues each test runs on, with their attributes (None: a plain queue).
KINDS: dict[str, dict | None] = {
    "plain": None,
    "priorities": {"priorities": True},
    "redrive": {"max_receive_count": 5, "dead_letter_queue": "{q}_dlq"},
    "limited": {"max_in_flight": 100},
    "delayed": {"delivery_delay": 1},
}


@pytest.fixture
def db(pg_connect) -> psycopg.Connection:
    # no prepared statements of psycopg's own: it would DEALLOCATE ALL at each rollback
    return pg_connect(autocommit=False, prepare_threshold=None)


@pytest.fixture
def queues(db: psycopg.Connection, queue_name: str) -> Iterator[dict[str, str]]:
    """One queue of each kind, each holding 4 * CALLS messages."""
    made = {}
    for kind, attrs in KINDS.items():
        q = f"{queue_name}_{kind[:3]}"
        db.execute("SELECT pgmq.create(%s)", [q])
        if attrs is not None:
            attrs = {k: v.format(q=q) if isinstance(v, str) else v for k, v in attrs.items()}
            db.execute("SELECT pgmq.set_queue_attributes(%s, %s)", [q, Jsonb(attrs)])
        made[kind] = q
    for q in made.values():
        db.execute(
            "SELECT pgmq.send_batch(%s, array_fill('{\"n\": 1}'::jsonb, ARRAY[%s]), 0)",
            [q, 4 * CALLS],
        )
    db.commit()
    yield made
    db.rollback()
    for q in made.values():
        for name in (q, f"{q}_dlq"):
            if db.execute("SELECT 1 FROM pgmq.meta WHERE queue_name = %s", [name]).fetchone():
                db.execute("SELECT pgmq.drop_queue(%s)", [name])
    db.commit()


def plant(db: psycopg.Connection, function: str, old: str, new: str) -> None:
    """Replace ``old`` by ``new`` in the body of the builder ``function`` (in this transaction)."""
    source = db.execute("SELECT pg_get_functiondef(%s::regproc)", [function]).fetchone()[0]
    assert old in source, source
    db.execute(source.replace(old, new))


def ids(db: psycopg.Connection, q: str, n: int) -> list[int]:
    """The ids of the ``n`` oldest messages of ``q``."""
    query = sql.SQL("SELECT msg_id FROM pgmq.{} ORDER BY msg_id LIMIT %s")
    rows = db.execute(query.format(sql.Identifier(f"q_{q}")), [n]).fetchall()
    return [r[0] for r in rows]


def client(db: psycopg.Connection, q: str, op: str, *args) -> list[tuple]:
    """Run the client's own statement of ``op`` (what the manager prepares)."""
    text = db.execute("SELECT pgmq._queue_ops_client_sql(%s, %s, 1)", [q, op]).fetchone()[0]
    with psycopg.RawCursor(db) as cursor:  # the text's parameters are PostgreSQL's $1
        return cursor.execute(text, list(args)).fetchall()


def reads(db: psycopg.Connection, queues: dict[str, str]) -> dict[str, list[int]]:
    """Rows each read and pop path returned, call by call."""
    found: dict[str, list[int]] = {}
    for kind, q in queues.items():
        if kind == "delayed":  # its messages are not visible yet: a send's attribute
            continue
        for fn in ("read", "pop"):
            call = "pgmq.read(%s, 30, 1)" if fn == "read" else "pgmq.pop(%s, 1)"
            found[f"{fn} {kind}"] = [
                db.execute(f"SELECT count(*) FROM {call}", [q]).fetchone()[0] for _ in range(CALLS)
            ]
    q = queues["plain"]
    found["client read"] = [len(client(db, q, "r", 30))]
    found["client pop"] = [len(client(db, q, "p"))]
    return found


def acks(db: psycopg.Connection, queues: dict[str, str]) -> dict[str, list[int]]:
    """Messages each archive and delete path acknowledged, call by call."""
    found: dict[str, list[int]] = {}
    for kind, q in queues.items():
        for fn in ("archive", "delete"):
            found[f"{fn} {kind}"] = [
                db.execute(
                    f"SELECT count(*) FROM pgmq.{fn}(%s, %s::bigint[])", [q, ids(db, q, 1)]
                ).fetchone()[0]
                for _ in range(CALLS)
            ]
        found[f"record archive {kind}"] = [
            db.execute(
                "SELECT count(*) FROM pgmq._queue_ops_route(%s, 'a', NULL, NULL, NULL,"
                " %s::bigint[], NULL, NULL, NULL)",
                [q, ids(db, q, 1)],
            ).fetchone()[0]
        ]
    q = queues["plain"]
    found["client archive"] = [len(client(db, q, "a", ids(db, q, 1)))]
    found["client delete"] = [len(client(db, q, "d", ids(db, q, 1)))]
    return found


def sends(db: psycopg.Connection, queues: dict[str, str]) -> dict[str, list[int]]:
    """The sign of the ids each send path returned (1 positive, -1 otherwise)."""

    def sign(rows: list[tuple]) -> list[int]:
        return [1 if r[0] > 0 else -1 for r in rows]

    found: dict[str, list[int]] = {}
    for kind, q in queues.items():
        found[f"send {kind}"] = sign(
            db.execute("SELECT * FROM pgmq.send(%s, '{\"s\": 1}'::jsonb)", [q]).fetchall()
        )
        found[f"send_batch {kind}"] = sign(
            db.execute(
                "SELECT * FROM pgmq.send_batch(%s, ARRAY['{\"s\": 1}', '{\"s\": 2}']::jsonb[])", [q]
            ).fetchall()
        )
    found["client send"] = sign(client(db, queues["plain"], "s", [Jsonb({"s": 1})], None))
    return found


def kept(db: psycopg.Connection, q: str, op: str) -> str:
    """The text of the session's kept statement of ``op`` on ``q`` ('' when none)."""
    row = db.execute(
        "SELECT statement FROM pg_prepared_statements WHERE name = %s",
        [f"pgmq_{op}g_q_{q}"],
    ).fetchone()
    return row[0] if row else ""


def each_path(
    db: psycopg.Connection, queues: dict[str, str], run: Callable, planted: Callable | None
) -> dict[str, list[int]]:
    """What ``run`` found on every path, in one transaction rolled back afterwards."""
    try:
        if planted is not None:
            planted()
        return run(db, queues)
    finally:
        db.rollback()


def test_every_read_and_pop_claims_with_the_one_pick(db, queues):
    found = each_path(db, queues, reads, None)
    assert {k: v for k, v in found.items() if v != [1] * len(v)} == {}
    planted = each_path(
        db,
        queues,
        reads,
        lambda: plant(
            db,
            "pgmq._read_pick_sql",
            "q.vt <= pg_catalog.clock_timestamp()",
            "q.vt <= pg_catalog.clock_timestamp() AND q.read_ct < 0",
        ),
    )
    assert planted.keys() == found.keys()
    assert {k: v for k, v in planted.items() if v != [0] * len(v)} == {}
    # the session prepared the planted text for its kept reads (plain, and limited: 'l')
    for q, op in ((queues["plain"], "r"), (queues["plain"], "p"), (queues["limited"], "l")):
        assert "q.read_ct < 0" in kept(db, q, op), (q, op)


def test_every_archive_and_delete_runs_the_one_acknowledgement(db, queues):
    found = each_path(db, queues, acks, None)
    assert {k: v for k, v in found.items() if v != [1] * len(v)} == {}
    planted = each_path(
        db,
        queues,
        acks,
        lambda: plant(
            db, "pgmq._ack_sql", "WHERE q.msg_id = ANY(", "WHERE false AND q.msg_id = ANY("
        ),
    )
    assert planted.keys() == found.keys()
    assert {k: v for k, v in planted.items() if v != [0] * len(v)} == {}
    for q in queues.values():  # kept for every queue, attributes or not
        for op in ("a", "d"):
            assert "WHERE false AND" in kept(db, q, op), (q, op)


def test_every_send_runs_the_one_send(db, queues):
    found = each_path(db, queues, sends, None)
    assert {k: v for k, v in found.items() if not v or v != [1] * len(v)} == {}
    planted = each_path(
        db,
        queues,
        sends,
        lambda: plant(db, "pgmq._send_sql", "RETURNING q.msg_id", "RETURNING -q.msg_id"),
    )
    assert planted.keys() == found.keys()
    assert {k: v for k, v in planted.items() if not v or v != [-1] * len(v)} == {}


def test_a_queue_with_only_limits_reads_the_plain_statement(db, queues):
    """The limited queue's kept read ('l') is the plain read's text."""
    q = queues["plain"]
    plain = db.execute("SELECT pgmq._queue_ops_sql(%s, 'r', '$9')", [q]).fetchone()[0]
    kept = db.execute(
        "SELECT pgmq._queue_ops_kept_sql(pgmq.format_table_name(%s, 'q'), 'l')", [q]
    ).fetchone()[0]
    built = db.execute(
        "SELECT pgmq._read_sql(pgmq.format_table_name(%s, 'q'), false, '$9')", [q]
    ).fetchone()[0]
    db.rollback()
    assert plain == kept == built


def test_the_manager_prepares_the_builders_texts(manager, queue):
    """The manager's own statements (prepared statements on) are the builders' texts."""
    connection.ensure_connection()
    pg = connection.connection
    pg.prepare_threshold = 5
    try:
        ids = manager.send_batch(queue, [{"n": n} for n in range(4)])
        manager.read(queue, vt=30, qty=2)
        manager.archive(queue, ids[0])
        manager.pop(queue, 1)
        manager.delete(queue, ids[3])
        held = {
            r[0]
            for r in pg.execute(
                "SELECT statement FROM pg_prepared_statements WHERE name LIKE '\\_pg3\\_%'"
            )
        }
        expected = {
            pg.execute(
                "SELECT pgmq._queue_ops_client_sql(%s, %s, %s)", [queue, op, qty]
            ).fetchone()[0]
            for op, qty in (("s", 1), ("r", 2), ("a", 1), ("p", 1), ("d", 1))
        }
        assert expected <= held
    finally:
        pg.prepare_threshold = None
