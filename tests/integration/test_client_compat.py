"""What pgmq clients rely on beyond names: untyped parameters, record text, error classes.

Drivers such as node-postgres send every parameter untyped (``unknown``), so the server
picks the overload. Which positional or named calls resolve, and which are ambiguous,
depends on the whole overload set: an overload pgmq lacks can make a call ambiguous that
works on pgmq. psycopg sends Python ``str`` untyped too, which these tests use.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

import psycopg
import pytest
from psycopg import sql
from psycopg.types.json import Jsonb

pytestmark = pytest.mark.usefixtures("django_db_setup")

# Every function of pgmq 1.13's SQL API that a client calls (trigger functions aside).
PGMQ_FUNCTIONS = frozenset(
    [
        "acquire_queue_lock",
        "archive",
        "bind_topic",
        "convert_archive_partitioned",
        "create",
        "create_fifo_index",
        "create_fifo_indexes_all",
        "create_non_partitioned",
        "create_partitioned",
        "create_unlogged",
        "delete",
        "detach_archive",
        "disable_notify_insert",
        "drop_queue",
        "enable_notify_insert",
        "format_table_name",
        "list_notify_insert_throttles",
        "list_queues",
        "list_topic_bindings",
        "metrics",
        "metrics_all",
        "pop",
        "purge_queue",
        "read",
        "read_grouped",
        "read_grouped_head",
        "read_grouped_head_with_poll",
        "read_grouped_rr",
        "read_grouped_rr_with_poll",
        "read_grouped_with_poll",
        "read_with_poll",
        "send",
        "send_batch",
        "send_batch_topic",
        "send_topic",
        "set_vt",
        "test_routing",
        "unbind_topic",
        "update_notify_insert",
        "validate_queue_name",
        "validate_routing_key",
        "validate_topic_pattern",
    ]
)

# Positional calls with only untyped arguments that pgmq 1.13 itself cannot resolve
# (several overloads differ only in the type at one position).
PGMQ_AMBIGUOUS_POSITIONAL = frozenset(
    {
        ("archive", 2),
        ("delete", 2),
        ("send", 3),
        ("send", 4),
        ("send_batch", 3),
        ("send_batch", 4),
        ("send_batch_topic", 3),
        ("send_batch_topic", 4),
        ("set_vt", 3),
    }
)
# Ours on top: send_topic(routing_key, msg, headers) exists so that a client can send
# headers without a delay, as with send(queue_name, msg, headers); like send/3, an untyped
# positional 3-argument call then needs a cast. Named calls are unaffected.
OUR_AMBIGUOUS_POSITIONAL = PGMQ_AMBIGUOUS_POSITIONAL | {("send_topic", 3)}

# Named calls with untyped arguments that pgmq 1.13 cannot resolve either.
PGMQ_AMBIGUOUS_NAMED = frozenset(
    {
        ("send", ("queue_name", "msg", "delay")),
        ("send", ("queue_name", "msg", "headers", "delay")),
        ("send_batch", ("queue_name", "msgs", "delay")),
        ("send_batch", ("queue_name", "msgs", "headers", "delay")),
        ("send_batch_topic", ("routing_key", "msgs", "delay")),
        ("send_batch_topic", ("routing_key", "msgs", "headers", "delay")),
        ("set_vt", ("queue_name", "msg_id", "vt")),
        ("set_vt", ("queue_name", "msg_ids", "vt")),
    }
)

AMBIGUOUS = "42725"


@pytest.fixture
def db(pg_connect) -> psycopg.Connection:
    return pg_connect()


@pytest.fixture
def q(db, queue_name) -> Iterator[str]:
    """A queue created with an untyped name parameter, dropped afterwards."""
    db.execute("SELECT pgmq.create(%s)", [queue_name])
    yield queue_name
    db.execute("SELECT pgmq.drop_queue(queue_name => %s::text)", [queue_name])


def overloads(conn: psycopg.Connection) -> list[tuple[str, int, int, list[str]]]:
    """(name, argument count, defaults count, argument names) of each pgmq API overload."""
    return conn.execute(
        "SELECT p.proname, p.pronargs, p.pronargdefaults, "
        "       coalesce(p.proargnames[1:p.pronargs], '{}') "
        "FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
        "WHERE n.nspname = 'pgmq' AND p.proname = ANY(%s) "
        "  AND p.prorettype <> 'trigger'::regtype",
        [sorted(PGMQ_FUNCTIONS)],
    ).fetchall()


def resolve_error(conn: psycopg.Connection, name: str, args: list[sql.Composable]) -> str | None:
    """SQLSTATE of planning `SELECT * FROM pgmq.<name>(args)` with untyped parameters, or None."""
    query = sql.SQL("PREPARE h11_probe AS SELECT * FROM pgmq.{}({})").format(
        sql.Identifier(name), sql.SQL(", ").join(args)
    )
    try:
        conn.execute(query)
    except psycopg.Error as error:
        return error.sqlstate
    conn.execute("DEALLOCATE h11_probe")
    return None


def placeholder(position: int) -> sql.Composable:
    return sql.SQL("$" + str(position))


def test_every_pgmq_function_is_installed(db):
    assert {row[0] for row in overloads(db)} == PGMQ_FUNCTIONS


def test_untyped_positional_calls_resolve_as_on_pgmq(db):
    failing: dict[tuple[str, int], str] = {}
    calls = {
        (name, n)
        for name, total, defaults, _ in overloads(db)
        for n in range(total - defaults, total + 1)
    }
    assert ("read", 3) in calls and ("send_topic", 3) in calls
    for name, n in sorted(calls):
        state = resolve_error(db, name, [placeholder(i + 1) for i in range(n)])
        if state is not None:
            failing[(name, n)] = state
    assert set(failing) == OUR_AMBIGUOUS_POSITIONAL
    assert set(failing.values()) == {AMBIGUOUS}


def test_untyped_named_calls_resolve_as_on_pgmq(db):
    """Each overload called by name: all its arguments, the required ones, or one default more."""
    calls: set[tuple[str, tuple[str, ...]]] = set()
    for name, total, defaults, names in overloads(db):
        required, optional = names[: total - defaults], names[total - defaults :]
        calls |= {(name, tuple(names)), (name, tuple(required))}
        calls |= {(name, (*required, extra)) for extra in optional}
    assert ("read", ("queue_name", "vt", "qty", "conditional")) in calls
    failing: dict[tuple[str, tuple[str, ...]], str] = {}
    for name, arg_names in sorted(calls):
        args = [
            sql.SQL("{} => {}").format(sql.Identifier(arg), placeholder(i + 1))
            for i, arg in enumerate(arg_names)
        ]
        state = resolve_error(db, name, args)
        if state is not None:
            failing[(name, arg_names)] = state
    assert set(failing) == PGMQ_AMBIGUOUS_NAMED
    assert set(failing.values()) == {AMBIGUOUS}


def test_a_client_sending_untyped_parameters_works_end_to_end(db, q):
    """The calls a node-postgres client makes: text parameters, casts only where pgmq needs them."""
    ids = [
        row[0]
        for row in db.execute(
            "SELECT * FROM pgmq.send_batch(%s::text, %s::jsonb[], %s::integer)",
            [q, [Jsonb({"n": n}) for n in range(4)], 0],
        )
    ]
    got = db.execute("SELECT msg_id, read_ct, message FROM pgmq.read(%s, %s, %s)", [q, "30", "2"])
    assert got.fetchall() == [(ids[0], 1, {"n": 0}), (ids[1], 1, {"n": 1})]
    assert db.execute("SELECT msg_id FROM pgmq.pop(%s)", [q]).fetchall() == [(ids[2],)]
    assert db.execute("SELECT pgmq.archive(%s, %s::bigint)", [q, str(ids[0])]).fetchone() == (True,)
    deleted = db.execute("SELECT pgmq.delete(%s, %s::bigint[])", [q, f"{{{ids[1]},{ids[3]}}}"])
    assert sorted(deleted.fetchall()) == [(ids[1],), (ids[3],)]  # pgmq returns them unordered
    metrics = db.execute(
        "SELECT queue_name, queue_length, total_messages FROM pgmq.metrics(%s)", [q]
    )
    assert metrics.fetchone() == (q, 0, 4)
    assert db.execute("SELECT pgmq.purge_queue(%s)", [q]).fetchone() == (0,)
    db.execute("SELECT pgmq.detach_archive(%s)", [q])


def test_read_refuses_a_fractional_untyped_vt(db, q):
    """A vt given as '1.5' is refused as integer input, as pgmq does, not rounded."""
    with pytest.raises(psycopg.errors.InvalidTextRepresentation, match="integer"):
        db.execute("SELECT * FROM pgmq.read(%s, %s, %s)", [q, "1.5", "1"])


def test_list_queues_record_text_has_pgmq_field_order(db, queue_name):
    """Clients that read the record as text split it as (name,partitioned,unlogged,created)."""
    db.execute("SELECT pgmq.create_unlogged(%s)", [queue_name])
    try:
        texts = [r[0] for r in db.execute("SELECT pgmq.list_queues()::text").fetchall()]
        [mine] = [t for t in texts if t.startswith(f"({queue_name},")]
        name, partitioned, unlogged, created = mine[1:-1].split(",", 3)
        assert (name, partitioned, unlogged) == (queue_name, "f", "t")
        assert datetime.fromisoformat(created.strip('"')).tzinfo is not None
    finally:
        assert db.execute("SELECT pgmq.drop_queue(%s)", [queue_name]).fetchone() == (True,)
    assert db.execute("SELECT pgmq.drop_queue(%s)", [queue_name]).fetchone() == (False,)


@pytest.mark.parametrize(
    ("query", "code", "text"),
    [
        ("SELECT pgmq.validate_queue_name(%s)", "PQ001", "queue name is too long"),
        ("SELECT * FROM pgmq.metrics(%s)", "PQ002", "does not exist"),
    ],
)
def test_our_error_codes_reach_psycopg_as_programming_errors(db, queue_name, query, code, text):
    """PQ00x falls in psycopg's ProgrammingError, the base of pgmq's RAISE EXCEPTION (P0001).

    Client code that catches ProgrammingError (or SQLAlchemy's, which wraps it) around a
    pgmq call therefore catches ours too; only code that names RaiseException would not.
    """
    name = "a" * 49 if code == "PQ001" else queue_name
    with pytest.raises(psycopg.ProgrammingError, match=text) as info:
        db.execute(query, [name])
    assert info.value.sqlstate == code
    assert not isinstance(info.value, psycopg.errors.RaiseException)
