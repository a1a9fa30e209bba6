"""One statement builder per message operation: every path that reads, pops, sends,
archives or deletes on a queue runs the text of that operation's one builder
(sql/15_queue_ops.sql: _read_sql with its pick _read_pick_sql and its claim
_read_claim_sql, _send_sql, _ack_sql), FIFO group reads, Spark claims and a
deduplicating queue's fast send included. The one exception, a workflow chain's next
step inserted by the acknowledging trigger with its own text (through the builder it
cost a chain step 105,000 instructions more, sql/56_workflow_progress.sql), is held to
the builder's columns by the last test.

Each test plants a change in one builder, inside a transaction that is rolled back (so
pg_proc is as before), and runs the operation through every path: the router's EXECUTE
(a session's first calls), the session's kept statement (prepared by the router on the
fourth call) and its fast path (later calls), a client's own statement (the text
pgmq._queue_ops_client_sql gives the Python manager), queues with attributes
(priorities, redrive, a max_in_flight limit, a delivery delay, a deduplication window),
the FIFO group readers and pgmq.spark_claim. Every path showing the
planted change proves it took its text from the builder; the same run without the plant
shows the test can fail.
"""

from __future__ import annotations

import re
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
    "dedup": {"deduplication_window": 60},
}

# Messages each queue holds: enough for every read path of a test.
HELD = 8 * CALLS

# Marks a message the planted send wrote.
PLANTED = "'{\"planted\": 1}'::jsonb"


@pytest.fixture
def db(pg_connect) -> psycopg.Connection:
    # no prepared statements of psycopg's own: it would DEALLOCATE ALL at each rollback
    return pg_connect(autocommit=False, prepare_threshold=None)


@pytest.fixture
def queues(db: psycopg.Connection, queue_name: str) -> Iterator[dict[str, str]]:
    """One queue of each kind, each holding HELD messages."""
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
            [q, HELD],
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
    calls = {
        "read": "SELECT count(*) FROM pgmq.read(%s, 30, 1)",
        "pop": "SELECT count(*) FROM pgmq.pop(%s, 1)",
        "spark_claim": "SELECT count(b) FROM pgmq.spark_claim(%s, 'c', 30, 1, NULL, NULL) b",
    }
    for kind, q in queues.items():
        if kind == "delayed":  # its messages are not visible yet: a send's attribute
            continue
        for fn, call in calls.items():
            found[f"{fn} {kind}"] = [db.execute(call, [q]).fetchone()[0] for _ in range(CALLS)]
    q = queues["plain"]
    found["client read"] = [len(client(db, q, "r", 30))]
    found["client pop"] = [len(client(db, q, "p"))]
    return found


def claims(db: psycopg.Connection, queues: dict[str, str]) -> dict[str, list[int]]:
    """Rows each FIFO group read, read, pop and Spark claim returned, call by call."""
    found: dict[str, list[int]] = {}
    for kind, q in queues.items():
        if kind == "delayed":
            continue
        # vt 0: the group's front is visible again for the next call
        for fn in ("read_grouped", "read_grouped_rr", "read_grouped_head"):
            found[f"{fn} {kind}"] = [
                db.execute(f"SELECT count(*) FROM pgmq.{fn}(%s, 0, 1)", [q]).fetchone()[0]
                for _ in range(CALLS)
            ]
    return found | reads(db, queues)


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
    """For each id a send path returned, 1 when its message carries the planted mark."""

    def marked(q: str, rows: list[tuple]) -> list[int]:
        query = sql.SQL("SELECT (message ? 'planted')::int FROM pgmq.{} WHERE msg_id = %s")
        table = sql.Identifier(f"q_{q}")
        return [db.execute(query.format(table), [r[0]]).fetchone()[0] for r in rows]

    batch = "ARRAY['{\"s\": 1}', '{\"s\": 2}']::jsonb[]"
    found: dict[str, list[int]] = {}
    for kind, q in queues.items():
        found[f"send {kind}"] = marked(
            q, db.execute("SELECT * FROM pgmq.send(%s, '{\"s\": 1}'::jsonb)", [q]).fetchall()
        )
        found[f"send_batch {kind}"] = marked(
            q, db.execute(f"SELECT * FROM pgmq.send_batch(%s, {batch})", [q]).fetchall()
        )
    q = queues["dedup"]  # new deduplication ids: the fast send records them
    found["send_batch dedup ids"] = marked(
        q,
        db.execute(
            f"SELECT * FROM pgmq.send_batch(%s, {batch}, ARRAY["
            '\'{"deduplication_id": "a"}\', \'{"deduplication_id": "b"}\']::jsonb[])',
            [q],
        ).fetchall(),
    )
    # the same id twice in a batch: the send that claims ids within the window
    found["send_batch dedup window"] = marked(
        q,
        db.execute(
            f"SELECT * FROM pgmq.send_batch(%s, {batch}, ARRAY["
            '\'{"deduplication_id": "c"}\', \'{"deduplication_id": "c"}\']::jsonb[])',
            [q],
        ).fetchall(),
    )
    q = queues["plain"]
    found["client send"] = marked(q, client(db, q, "s", [Jsonb({"s": 1})], None))
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
        lambda: plant(db, "pgmq._read_pick_sql", "q.vt <= %7$s", "q.vt <= %7$s AND q.read_ct < 0"),
    )
    assert planted.keys() == found.keys()
    assert {k: v for k, v in planted.items() if v != [0] * len(v)} == {}
    # the session prepared the planted text for its kept reads (plain, and limited: 'm',
    # the read on a short claim's slots)
    for q, op in ((queues["plain"], "r"), (queues["plain"], "p"), (queues["limited"], "m")):
        assert "q.read_ct < 0" in kept(db, q, op), (q, op)


def test_every_claim_updates_with_the_one_claim(db, queues):
    """Reads, pops, Spark claims and FIFO group reads all claim with _read_claim_sql."""
    found = each_path(db, queues, claims, None)
    assert {k: v for k, v in found.items() if v != [1] * len(v)} == {}
    planted = each_path(
        db,
        queues,
        claims,
        lambda: plant(
            db,
            "pgmq._read_claim_sql",
            "WHERE m.msg_id = ANY(ARRAY(",
            "WHERE false AND m.msg_id = ANY(ARRAY(",
        ),
    )
    assert planted.keys() == found.keys()
    assert {k: v for k, v in planted.items() if v != [0] * len(v)} == {}
    for q, op in ((queues["plain"], "r"), (queues["plain"], "p"), (queues["limited"], "m")):
        assert "WHERE false AND" in kept(db, q, op), (q, op)


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
    assert {k: v for k, v in found.items() if not v or v != [0] * len(v)} == {}

    def mark() -> None:
        plant(db, "pgmq._send_sql", "u.msg, u.hdr", f"u.msg || {PLANTED}, u.hdr")
        plant(db, "pgmq._send_sql", "(%3$s)[1], ", f"(%3$s)[1] || {PLANTED}, ")

    planted = each_path(db, queues, sends, mark)
    assert planted.keys() == found.keys()
    assert {k: v for k, v in planted.items() if not v or v != [1] * len(v)} == {}


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
    # the read on a short claim's slots ('m'): the same builder, given the queue's slots
    short = db.execute(
        "SELECT pgmq._queue_ops_kept_sql(pgmq.format_table_name(%s, 'q'), 'm')", [q]
    ).fetchone()[0]
    short_built = db.execute(
        "SELECT pgmq._read_sql(pgmq.format_table_name(%s, 'q'), false, '$9', slots => lower(%s))",
        [q, q],
    ).fetchone()[0]
    db.rollback()
    assert plain == kept == built
    assert short == short_built and "pgmq._limit_record(" in short


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


def test_the_chain_steps_own_insert_writes_the_builders_columns(db):
    """pgmq._workflow_ack inserts a chain's next step with an id taken beforehand, in a
    text of its own: the columns it writes are those of the send builder's form with
    ids given (a column a send starts to write fails here until the trigger does too)."""
    trigger = db.execute("SELECT pg_get_functiondef('pgmq._workflow_ack'::regproc)").fetchone()[0]
    own = re.findall(r"\(([a-z_, ]+)\)\s*OVERRIDING SYSTEM VALUE", trigger)
    text = db.execute("SELECT pgmq._send_sql('q_x', rows => 'r')").fetchone()[0]
    builder = re.findall(r"AS q \(([a-z_, ]+)\)\s*OVERRIDING SYSTEM VALUE", text)
    assert len(own) == 1 and len(builder) == 1, (own, builder)
    assert own[0].replace(" ", "").split(",") == builder[0].replace(" ", "").split(",")
