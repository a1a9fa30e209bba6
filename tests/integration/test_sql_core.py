"""The core SQL API, called through psycopg with ``name => value`` arguments as pgmq clients do."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from psycopg.types.json import Jsonb

from django_pgmq.errors import InvalidQueueName
from django_pgmq.names import validate_queue_name
from tests.unit.name_cases import INVALID_NAMES, VALID_NAMES

pytestmark = pytest.mark.usefixtures("django_db_setup")

AT = datetime(2100, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)
HOUR = timedelta(hours=1)


# -- helpers ----------------------------------------------------------------


def rows(conn: psycopg.Connection, query: str, params: Any = None) -> list[tuple]:
    return conn.execute(query, params).fetchall()


def one(conn: psycopg.Connection, query: str, params: Any = None) -> tuple:
    return conn.execute(query, params).fetchone()


def sql_error(conn: psycopg.Connection, query: str, params: Any = None) -> psycopg.Error:
    """The error a statement raises (the connection is in autocommit, so it stays usable)."""
    with pytest.raises(psycopg.Error) as info:
        conn.execute(query, params)
    return info.value


def clock(conn: psycopg.Connection) -> datetime:
    return one(conn, "SELECT clock_timestamp()")[0]


def table_rows(conn: psycopg.Connection, queue: str, prefix: str = "q") -> list[dict]:
    """Every row of a queue's live or archive table, by msg_id, read straight from the table."""
    table = one(conn, "SELECT pgmq.format_table_name(%s, %s)", [queue, prefix])[0]
    cur = conn.cursor(row_factory=psycopg.rows.dict_row)
    query = psycopg.sql.SQL("SELECT * FROM pgmq.{} ORDER BY msg_id").format(
        psycopg.sql.Identifier(table)
    )
    return cur.execute(query).fetchall()


def pgmq_relations(conn: psycopg.Connection) -> set[str]:
    return {
        r[0]
        for r in rows(
            conn,
            "SELECT relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'pgmq'",
        )
    }


def send(conn: psycopg.Connection, queue: str, msg: Any) -> int:
    return one(conn, "SELECT * FROM pgmq.send(queue_name => %s, msg => %s)", [queue, Jsonb(msg)])[0]


def read(conn: psycopg.Connection, queue: str, vt: int = 30, qty: int = 10) -> list[tuple]:
    return rows(
        conn,
        "SELECT msg_id, read_ct, enqueued_at, last_read_at, vt, message, headers "
        "FROM pgmq.read(queue_name => %s, vt => %s, qty => %s)",
        [queue, vt, qty],
    )


@pytest.fixture
def db(pg_connect) -> psycopg.Connection:
    return pg_connect()


@pytest.fixture
def notices(db) -> list[tuple[str, str]]:
    """(severity, text) of every NOTICE/WARNING the `db` connection receives."""
    seen: list[tuple[str, str]] = []
    db.add_notice_handler(lambda d: seen.append((d.severity_nonlocalized, d.message_primary)))
    return seen


@pytest.fixture
def q(db, queue_name) -> Iterator[str]:
    """A queue created through SQL, dropped afterwards."""
    db.execute("SELECT pgmq.create(queue_name => %s)", [queue_name])
    yield queue_name
    db.execute("SELECT pgmq.drop_queue(queue_name => %s)", [queue_name])


# -- creating and dropping queues -------------------------------------------


@pytest.mark.parametrize(
    ("function", "unlogged"),
    [("create", False), ("create_non_partitioned", False), ("create_unlogged", True)],
)
def test_create_forms_make_tables_indexes_and_catalogue_row(db, queue_name, function, unlogged):
    db.execute(f"SELECT pgmq.{function}(queue_name => %s)", [queue_name])
    try:
        persistence = dict(
            rows(
                db,
                "SELECT relname, relpersistence FROM pg_class WHERE relname IN (%s, %s)",
                [f"q_{queue_name}", f"a_{queue_name}"],
            )
        )
        assert persistence == {f"q_{queue_name}": "u" if unlogged else "p", f"a_{queue_name}": "p"}
        listed = [r for r in rows(db, "SELECT * FROM pgmq.list_queues()") if r[0] == queue_name]
        assert [(r[0], r[1], r[2]) for r in listed] == [(queue_name, False, unlogged)]
        indexes = " ".join(
            r[0]
            for r in rows(
                db,
                "SELECT indexdef FROM pg_indexes "
                "WHERE schemaname = 'pgmq' AND tablename IN (%s, %s)",
                [f"q_{queue_name}", f"a_{queue_name}"],
            )
        )
        assert "(vt)" not in indexes  # reads walk the primary key; see test_sql_table_layout.py
        assert "(archived_at)" in indexes
    finally:
        db.execute("SELECT pgmq.drop_queue(queue_name => %s)", [queue_name])


def test_create_is_idempotent_and_keeps_messages(db, q):
    msg_id = send(db, q, {"keep": True})
    db.execute("SELECT pgmq.create(queue_name => %s)", [q])
    db.execute("SELECT pgmq.create_non_partitioned(queue_name => %s)", [q])
    assert [r["msg_id"] for r in table_rows(db, q)] == [msg_id]
    assert one(db, "SELECT count(*) FROM pgmq.meta WHERE queue_name = %s", [q])[0] == 1


def test_longest_name_makes_every_identifier_without_truncation(db, notices):
    name = "L" * 47
    db.execute("SELECT pgmq.create(queue_name => %s)", [name])
    try:
        assert notices == []
        mine = {r for r in pgmq_relations(db) if "l" * 47 in r}
        assert f"q_{'l' * 47}" in mine
        assert all(len(r) <= 63 for r in mine)
        archive_indexes = rows(
            db,
            "SELECT indexname FROM pg_indexes WHERE schemaname = 'pgmq' AND tablename = %s "
            "AND indexdef LIKE '%%(archived_at)'",
            [f"a_{'l' * 47}"],
        )
        assert len(archive_indexes) == 1
    finally:
        db.execute("SELECT pgmq.drop_queue(queue_name => %s)", [name])


def test_drop_queue_removes_tables_and_row_then_reports_false(db, queue_name, notices):
    db.execute("SELECT pgmq.create(queue_name => %s)", [queue_name])
    assert one(db, "SELECT pgmq.drop_queue(queue_name => %s)", [queue_name]) == (True,)
    assert {f"q_{queue_name}", f"a_{queue_name}"} & pgmq_relations(db) == set()
    assert one(db, "SELECT count(*) FROM pgmq.meta WHERE queue_name = %s", [queue_name]) == (0,)
    assert notices == []
    assert one(db, "SELECT pgmq.drop_queue(queue_name => %s)", [queue_name]) == (False,)
    assert notices == [("NOTICE", f"pgmq queue `{queue_name}` does not exist")]


def test_deprecated_drop_queue_form_warns_and_drops(db, queue_name, notices):
    db.execute("SELECT pgmq.create(queue_name => %s)", [queue_name])
    result = one(db, "SELECT pgmq.drop_queue(queue_name => %s, partitioned => false)", [queue_name])
    assert result == (True,)
    assert f"q_{queue_name}" not in pgmq_relations(db)
    [(severity, text)] = notices
    assert severity == "WARNING"
    assert text.startswith("drop_queue(queue_name, partitioned) is deprecated")


def test_purge_counts_live_messages_and_keeps_the_archive(db, q):
    ids = [send(db, q, {"n": n}) for n in range(4)]
    assert one(db, "SELECT pgmq.archive(queue_name => %s, msg_id => %s)", [q, ids[0]]) == (True,)
    assert one(db, "SELECT pgmq.purge_queue(queue_name => %s)", [q]) == (3,)
    assert table_rows(db, q) == []
    assert [r["msg_id"] for r in table_rows(db, q, "a")] == [ids[0]]
    assert one(db, "SELECT pgmq.purge_queue(queue_name => %s)", [q]) == (0,)


def test_purge_of_missing_queue_is_pq002(db, queue_name):
    error = sql_error(db, "SELECT pgmq.purge_queue(queue_name => %s)", [queue_name])
    assert error.sqlstate == "PQ002"
    assert f'queue "{queue_name}" does not exist' in str(error)


def test_list_queues_returns_queue_records_by_name(db, queue_name):
    names = [f"{queue_name}_b", f"{queue_name}_a"]
    for name in names:
        db.execute("SELECT pgmq.create(queue_name => %s)", [name])
    try:
        cur = db.execute(
            "SELECT queue_name, is_partitioned, is_unlogged, created_at FROM pgmq.list_queues()"
        )
        listed = [r for r in cur.fetchall() if r[0].startswith(queue_name)]
        assert [r[0] for r in listed] == sorted(names)
        assert all(isinstance(r[3], datetime) for r in listed)
        types = one(
            db,
            "SELECT pg_get_function_result(%s::regprocedure)",
            ["pgmq.list_queues()"],
        )
        assert types == ("SETOF pgmq.queue_record",)
    finally:
        for name in names:
            db.execute("SELECT pgmq.drop_queue(queue_name => %s)", [name])


def test_format_table_name_lower_cases_and_prefixes(db):
    assert one(db, "SELECT pgmq.format_table_name(queue_name => 'My-Q', prefix => 'a')") == (
        "a_my-q",
    )


def test_detach_archive_is_a_warning_no_op(db, q, notices):
    msg_id = send(db, q, {"a": 1})
    db.execute("SELECT pgmq.archive(queue_name => %s, msg_id => %s)", [q, msg_id])
    db.execute("SELECT pgmq.detach_archive(queue_name => %s)", [q])
    [(severity, text)] = notices
    assert severity == "WARNING"
    assert text.startswith("detach_archive(queue_name) is deprecated and is a no-op")
    assert [r["msg_id"] for r in table_rows(db, q, "a")] == [msg_id]


# -- queue names ------------------------------------------------------------

NAME_TAKING_CALLS = [
    "SELECT pgmq.validate_queue_name(queue_name => %(q)s)",
    "SELECT pgmq.format_table_name(queue_name => %(q)s, prefix => 'q')",
    "SELECT pgmq.create(queue_name => %(q)s)",
    "SELECT pgmq.create_non_partitioned(queue_name => %(q)s)",
    "SELECT pgmq.create_unlogged(queue_name => %(q)s)",
    "SELECT pgmq.create_partitioned(queue_name => %(q)s)",
    "SELECT pgmq.drop_queue(queue_name => %(q)s)",
    "SELECT pgmq.purge_queue(queue_name => %(q)s)",
    "SELECT pgmq.detach_archive(queue_name => %(q)s)",
    "SELECT * FROM pgmq.metrics(queue_name => %(q)s)",
]

# pgmq's per-message functions check only the characters pgmq forbids; any other bad name
# names no table, so they fail with 42P01 as pgmq's do.
MESSAGE_CALLS = [
    "SELECT * FROM pgmq.send(queue_name => %(q)s, msg => '{}')",
    "SELECT * FROM pgmq.send_batch(queue_name => %(q)s, msgs => ARRAY['{}'::jsonb])",
    "SELECT * FROM pgmq.read(queue_name => %(q)s, vt => 1, qty => 1)",
    "SELECT * FROM pgmq.read_with_poll(queue_name => %(q)s, vt => 1, qty => 1, "
    "max_poll_seconds => 0)",
    "SELECT * FROM pgmq.pop(queue_name => %(q)s)",
    "SELECT pgmq.archive(queue_name => %(q)s, msg_id => 1)",
    "SELECT pgmq.delete(queue_name => %(q)s, msg_id => 1)",
    "SELECT * FROM pgmq.set_vt(queue_name => %(q)s, msg_id => 1, vt => 1)",
    "SELECT * FROM pgmq.read_grouped(queue_name => %(q)s, vt => 1, qty => 1)",
]

PGMQ_INVALID_CHARACTERS = "queue name contains invalid characters: $, ;, --, or \\'"


def message_call_error(name: str | None) -> tuple[str, str]:
    """(SQLSTATE, start of the text) pgmq's per-message functions raise for a bad name."""
    if name is None:
        return "PQ001", "queue name"
    if any(bad in name for bad in ("$", ";", "--", "'")):
        return "PQ001", PGMQ_INVALID_CHARACTERS
    return "42P01", 'relation "pgmq.q_'


@pytest.mark.parametrize("name", [n for _, n in INVALID_NAMES], ids=[i for i, _ in INVALID_NAMES])
def test_invalid_names_are_refused_by_python_and_every_sql_function(db, name):
    with pytest.raises(InvalidQueueName):
        validate_queue_name(name)
    before = pgmq_relations(db)
    meta_before = rows(db, "SELECT queue_name FROM pgmq.meta")
    wrong = {}
    for query in NAME_TAKING_CALLS:
        try:
            db.execute(query, {"q": name})
            wrong[query] = "no error"
        except psycopg.Error as exc:
            if exc.sqlstate != "PQ001" or not str(exc).startswith("queue name"):
                wrong[query] = f"{exc.sqlstate}: {exc}"
    state, text = message_call_error(name)
    for query in MESSAGE_CALLS:
        try:
            db.execute(query, {"q": name})
            wrong[query] = "no error"
        except psycopg.Error as exc:
            if exc.sqlstate != state or not str(exc).startswith(text):
                wrong[query] = f"{exc.sqlstate}: {exc}"
    assert wrong == {}
    assert pgmq_relations(db) == before
    assert rows(db, "SELECT queue_name FROM pgmq.meta") == meta_before


@pytest.mark.parametrize("name", VALID_NAMES)
def test_valid_names_are_accepted_by_python_and_sql(db, name):
    assert validate_queue_name(name) == name
    db.execute("SELECT pgmq.validate_queue_name(queue_name => %s)", [name])
    assert one(db, "SELECT pgmq.format_table_name(%s, 'q')", [name]) == ("q_" + name.lower(),)


def test_sql_too_long_message_starts_with_pgmq_text(db):
    error = sql_error(db, "SELECT pgmq.create(queue_name => %s)", ["n" * 48])
    assert str(error).startswith("queue name is too long, maximum length is 47 characters")


@pytest.mark.parametrize("query", MESSAGE_CALLS)
def test_message_functions_check_names_in_pgmq_order(db, query):
    """A 48-character name names no table (42P01); a long one holding ';' has bad characters."""
    error = sql_error(db, query, {"q": "n" * 48})
    assert (error.sqlstate, str(error).splitlines()[0]) == (
        "42P01",
        f'relation "pgmq.q_{"n" * 48}" does not exist',
    )
    error = sql_error(db, query, {"q": "n" * 60 + ";"})
    assert error.sqlstate == "PQ001"
    assert str(error).startswith(PGMQ_INVALID_CHARACTERS)


def test_admin_functions_keep_the_length_check(db):
    for query in NAME_TAKING_CALLS[2:]:
        error = sql_error(db, query, {"q": "n" * 60 + ";"})
        assert error.sqlstate == "PQ001", query
        assert str(error).startswith("queue name is too long, maximum length is 47"), query


def test_names_differing_only_in_case_are_refused(db, queue_name):
    upper = queue_name.upper()
    db.execute("SELECT pgmq.create(queue_name => %s)", [upper])
    try:
        error = sql_error(db, "SELECT pgmq.create(queue_name => %s)", [queue_name])
        assert error.sqlstate == "PQ003"
        assert upper in str(error) and queue_name in str(error)
        tables = [r for r in pgmq_relations(db) if r == f"q_{queue_name}"]
        assert tables == [f"q_{queue_name}"]
        assert rows(
            db,
            "SELECT queue_name FROM pgmq.list_queues() WHERE lower(queue_name) = %s",
            [queue_name],
        ) == [(upper,)]
        # the name as created stays usable, and create stays idempotent for it
        db.execute("SELECT pgmq.create(queue_name => %s)", [upper])
    finally:
        db.execute("SELECT pgmq.drop_queue(queue_name => %s)", [upper])


# -- send and send_batch ----------------------------------------------------

SEND_FORMS = {
    "msg": ("msg => %(msg)s", None),
    "msg_delay_int": ("msg => %(msg)s, delay => %(secs)s::integer", "int"),
    "msg_delay_tz": ("msg => %(msg)s, delay => %(at)s::timestamptz", "tz"),
    "msg_headers": ("msg => %(msg)s, headers => %(headers)s", None),
    "msg_headers_delay_int": (
        "msg => %(msg)s, headers => %(headers)s, delay => %(secs)s::integer",
        "int",
    ),
    "msg_headers_delay_tz": (
        "msg => %(msg)s, headers => %(headers)s, delay => %(at)s::timestamptz",
        "tz",
    ),
}


def check_vt(vt: datetime, delay: str | None, before: datetime, after: datetime) -> None:
    """vt lies where the delay puts it, between two database clock readings."""
    if delay == "tz":
        assert vt == AT
    else:
        shift = HOUR if delay == "int" else timedelta(0)
        assert before + shift <= vt <= after + shift


@pytest.mark.parametrize("form", SEND_FORMS)
def test_send_forms(db, q, form):
    args, delay = SEND_FORMS[form]
    with_headers = "headers" in args
    params = {
        "q": q,
        "msg": Jsonb({"form": form}),
        "headers": Jsonb({"h": form}),
        "secs": 3600,
        "at": AT,
    }
    before = clock(db)
    result = rows(db, f"SELECT * FROM pgmq.send(queue_name => %(q)s, {args})", params)
    after = clock(db)
    [(msg_id,)] = result
    [row] = table_rows(db, q)
    assert row["msg_id"] == msg_id
    assert row["message"] == {"form": form}
    assert row["headers"] == ({"h": form} if with_headers else None)
    assert row["read_ct"] == 0 and row["last_read_at"] is None
    check_vt(row["vt"], delay, before, after)
    assert [r[0] for r in read(db, q)] == ([] if delay else [msg_id])


@pytest.mark.parametrize("form", SEND_FORMS)
def test_send_batch_forms(db, q, form):
    args, delay = SEND_FORMS[form]
    args = args.replace("msg =>", "msgs =>").replace(
        "headers => %(headers)s", "headers => %(headers)s::jsonb[]"
    )
    with_headers = "headers" in args
    params = {
        "q": q,
        "msg": [Jsonb({"n": n}) for n in range(5)],
        "headers": [Jsonb({"h": n}) for n in range(5)],
        "secs": 3600,
        "at": AT,
    }
    before = clock(db)
    ids = [
        r[0]
        for r in rows(db, f"SELECT * FROM pgmq.send_batch(queue_name => %(q)s, {args})", params)
    ]
    after = clock(db)
    assert ids == sorted(ids) and len(set(ids)) == 5
    stored = table_rows(db, q)
    assert [r["msg_id"] for r in stored] == ids
    assert [r["message"] for r in stored] == [{"n": n} for n in range(5)]
    assert [r["headers"] for r in stored] == (
        [{"h": n} for n in range(5)] if with_headers else [None] * 5
    )
    for r in stored:
        check_vt(r["vt"], delay, before, after)


def test_send_batch_keeps_the_order_given(db, q):
    msgs = [Jsonb({"k": k}) for k in ["z", "a", "m", "b"]]
    ids = [
        r[0]
        for r in rows(db, "SELECT * FROM pgmq.send_batch(queue_name => %s, msgs => %s)", [q, msgs])
    ]
    read_back = {r[0]: r[5]["k"] for r in read(db, q)}
    assert [read_back[i] for i in ids] == ["z", "a", "m", "b"]
    assert ids == sorted(ids)


@pytest.mark.parametrize(
    ("query", "text", "state"),
    [
        (
            "SELECT * FROM pgmq.send_batch(queue_name => %(q)s, msgs => ARRAY['1', '2']::jsonb[], "
            "headers => ARRAY['{}']::jsonb[])",
            "headers array length (1) must match msgs array length (2)",
            "PQ004",
        ),
        (
            "SELECT * FROM pgmq.send_batch(queue_name => %(q)s, msgs => ARRAY[]::jsonb[])",
            "msgs cannot be NULL or empty",
            "PQ004",
        ),
        (
            "SELECT * FROM pgmq.send_batch(queue_name => %(q)s, msgs => NULL::jsonb[])",
            "msgs cannot be NULL or empty",
            "PQ004",
        ),
        (
            "SELECT * FROM pgmq.send(queue_name => %(q)s, msg => '1', delay => -1)",
            "delay cannot be negative",
            "PQ004",
        ),
        (
            "SELECT * FROM pgmq.send_batch(queue_name => %(q)s, msgs => ARRAY['1']::jsonb[], "
            "delay => -5)",
            "delay cannot be negative",
            "PQ004",
        ),
    ],
    ids=["headers-mismatch", "empty-batch", "null-batch", "negative-delay", "negative-batch-delay"],
)
def test_send_refuses_bad_arguments(db, q, query, text, state):
    error = sql_error(db, query, {"q": q})
    assert error.sqlstate == state
    assert str(error).startswith(text)
    assert table_rows(db, q) == []


def test_send_to_a_missing_queue_fails(db, queue_name):
    error = sql_error(db, "SELECT * FROM pgmq.send(queue_name => %s, msg => '1')", [queue_name])
    assert error.sqlstate in ("42P01", "PQ002")
    assert queue_name in str(error)


# -- read, read_with_poll, pop -------------------------------------------------


def test_read_claims_oldest_first_and_hides_claimed(db, q):
    ids = [send(db, q, {"n": n}) for n in range(5)]
    before = clock(db)
    first = read(db, q, vt=30, qty=3)
    assert [r[0] for r in first] == ids[:3]
    for _id, read_ct, enqueued_at, last_read_at, vt, _msg, _headers in first:
        assert read_ct == 1
        assert last_read_at >= before and last_read_at >= enqueued_at
        assert vt >= before + timedelta(seconds=30)
    assert [r[1] for r in first] == [1, 1, 1]
    stored = {r["msg_id"]: r for r in table_rows(db, q)}
    assert all(stored[i]["read_ct"] == 1 for i in ids[:3])
    assert all(stored[i]["read_ct"] == 0 for i in ids[3:])
    assert [r[0] for r in read(db, q, qty=10)] == ids[3:]
    assert read(db, q) == []


def test_message_reappears_after_its_visibility_timeout(db, q):
    msg_id = send(db, q, {"a": 1})
    [first] = read(db, q, vt=1, qty=1)
    assert read(db, q, vt=1) == []
    time.sleep(1.05)
    [second] = read(db, q, vt=30, qty=1)
    assert (second[0], second[1]) == (msg_id, 2)
    assert second[3] > first[3]


def test_read_with_zero_vt_leaves_message_visible(db, q):
    msg_id = send(db, q, {"a": 1})
    assert [r[0] for r in read(db, q, vt=0)] == [msg_id]
    assert [(r[0], r[1]) for r in read(db, q, vt=0)] == [(msg_id, 2)]


def test_read_conditional_uses_jsonb_containment(db, q):
    a1 = send(db, q, {"type": "a", "n": 1})
    send(db, q, {"type": "b"})
    a2 = send(db, q, {"type": "a", "n": 2, "tags": ["x", "y"]})
    query = "SELECT msg_id FROM pgmq.read(queue_name => %s, vt => 30, qty => 10, conditional => %s)"
    assert [r[0] for r in rows(db, query, [q, Jsonb({"tags": ["y"]})])] == [a2]
    assert [r[0] for r in rows(db, query, [q, Jsonb({"type": "a"})])] == [a1]
    assert len(rows(db, query, [q, Jsonb({})])) == 1


def test_read_refuses_negative_qty(db, q):
    error = sql_error(db, "SELECT * FROM pgmq.read(queue_name => %s, vt => 1, qty => -1)", [q])
    assert error.sqlstate == "PQ004"
    assert "qty" in str(error)


def test_read_of_a_missing_queue_fails_naming_it(db, queue_name):
    error = sql_error(
        db, "SELECT * FROM pgmq.read(queue_name => %s, vt => 1, qty => 1)", [queue_name]
    )
    assert queue_name in str(error)


def test_read_with_poll_returns_a_message_sent_meanwhile(db, pg_connect, q):
    reader = pg_connect()
    started = clock(db)
    result: list = []
    thread = threading.Thread(
        target=lambda: result.extend(
            rows(
                reader,
                "SELECT msg_id, enqueued_at, last_read_at FROM pgmq.read_with_poll("
                "queue_name => %s, vt => 30, qty => 5, max_poll_seconds => 20, "
                "poll_interval_ms => 20)",
                [q],
            )
        )
    )
    thread.start()
    time.sleep(0.2)
    msg_id = send(db, q, {"late": True})
    thread.join(timeout=30)
    assert not thread.is_alive()
    [(got, enqueued_at, last_read_at)] = result
    assert got == msg_id
    assert enqueued_at > started
    assert last_read_at < started + timedelta(seconds=20)


def test_read_with_poll_gives_up_after_max_poll_seconds(db, q):
    before = clock(db)
    assert (
        rows(
            db,
            "SELECT * FROM pgmq.read_with_poll(queue_name => %s, vt => 30, qty => 1, "
            "max_poll_seconds => 1, poll_interval_ms => 50)",
            [q],
        )
        == []
    )
    assert clock(db) - before >= timedelta(seconds=1)


def test_read_with_poll_defaults_and_conditional(db, q):
    send(db, q, {"k": 1})
    wanted = send(db, q, {"k": 2})
    got = rows(
        db,
        "SELECT msg_id FROM pgmq.read_with_poll(queue_name => %s, vt => 30, qty => 5, "
        "conditional => %s)",
        [q, Jsonb({"k": 2})],
    )
    assert got == [(wanted,)]


def test_pop_reads_and_deletes(db, q):
    ids = [send(db, q, {"n": n}) for n in range(4)]
    db.execute("SELECT * FROM pgmq.send(queue_name => %s, msg => '9', delay => 3600)", [q])
    [(first, read_ct)] = rows(db, "SELECT msg_id, read_ct FROM pgmq.pop(queue_name => %s)", [q])
    assert (first, read_ct) == (ids[0], 0)
    rest = rows(db, "SELECT msg_id, message FROM pgmq.pop(queue_name => %s, qty => 10)", [q])
    assert rest == [(i, {"n": n}) for n, i in enumerate(ids) if n > 0]
    assert [r["message"] for r in table_rows(db, q)] == [9]
    assert table_rows(db, q, "a") == []


# -- delete, archive, set_vt --------------------------------------------------


def test_delete_one_and_many(db, q):
    ids = [send(db, q, n) for n in range(4)]
    assert one(db, "SELECT pgmq.delete(queue_name => %s, msg_id => %s)", [q, ids[0]]) == (True,)
    assert one(db, "SELECT pgmq.delete(queue_name => %s, msg_id => %s)", [q, ids[0]]) == (False,)
    gone = rows(
        db,
        "SELECT * FROM pgmq.delete(queue_name => %s, msg_ids => %s::bigint[])",
        [q, [ids[1], ids[2], 10**12]],
    )
    assert sorted(r[0] for r in gone) == ids[1:3]
    assert [r["msg_id"] for r in table_rows(db, q)] == [ids[3]]
    assert table_rows(db, q, "a") == []


def test_archive_one_moves_the_row_with_its_columns(db, q):
    msg_id = one(
        db,
        "SELECT * FROM pgmq.send(queue_name => %s, msg => %s, headers => %s)",
        [q, Jsonb({"a": 1}), Jsonb({"h": "v"})],
    )[0]
    read(db, q, vt=30)
    [live] = table_rows(db, q)
    before = clock(db)
    assert one(db, "SELECT pgmq.archive(queue_name => %s, msg_id => %s)", [q, msg_id]) == (True,)
    assert one(db, "SELECT pgmq.archive(queue_name => %s, msg_id => %s)", [q, msg_id]) == (False,)
    assert table_rows(db, q) == []
    [archived] = table_rows(db, q, "a")
    archived_at = archived.pop("archived_at")
    assert archived_at >= before
    assert archived == live
    assert live["read_ct"] == 1 and live["last_read_at"] is not None


def test_archive_many_returns_the_ids_moved(db, q):
    ids = [send(db, q, n) for n in range(5)]
    moved = rows(
        db,
        "SELECT * FROM pgmq.archive(queue_name => %s, msg_ids => %s::bigint[])",
        [q, [ids[0], ids[3], 10**12]],
    )
    assert sorted(r[0] for r in moved) == [ids[0], ids[3]]
    assert [r["msg_id"] for r in table_rows(db, q, "a")] == [ids[0], ids[3]]
    assert [r["msg_id"] for r in table_rows(db, q)] == [ids[1], ids[2], ids[4]]
    result_type = one(
        db, "SELECT pg_get_function_result(%s::regprocedure)", ["pgmq.archive(text, bigint[])"]
    )
    assert result_type == ("SETOF bigint",)


SET_VT_FORMS = {
    "id_int": ("msg_id => %(id)s, vt => 3600", False),
    "id_tz": ("msg_id => %(id)s, vt => %(at)s::timestamptz", False),
    "ids_int": ("msg_ids => %(ids)s::bigint[], vt => 3600", True),
    "ids_tz": ("msg_ids => %(ids)s::bigint[], vt => %(at)s::timestamptz", True),
}


@pytest.mark.parametrize("form", SET_VT_FORMS)
def test_set_vt_forms(db, q, form):
    args, many = SET_VT_FORMS[form]
    ids = [send(db, q, n) for n in range(3)]
    targets = ids[:2] if many else ids[:1]
    before = clock(db)
    result = rows(
        db,
        f"SELECT msg_id, vt, message FROM pgmq.set_vt(queue_name => %(q)s, {args})",
        {"q": q, "id": ids[0], "ids": [*targets, 10**12], "at": AT},
    )
    after = clock(db)
    assert [r[0] for r in result] == targets
    stored = {r["msg_id"]: r["vt"] for r in table_rows(db, q)}
    for msg_id, vt, _message in result:
        assert stored[msg_id] == vt
        check_vt(vt, "tz" if form.endswith("tz") else "int", before, after)
    assert [r[0] for r in read(db, q)] == [i for i in ids if i not in targets]


def test_set_vt_zero_releases_a_claimed_message(db, q):
    msg_id = send(db, q, {"a": 1})
    read(db, q, vt=3600)
    assert read(db, q) == []
    db.execute("SELECT * FROM pgmq.set_vt(queue_name => %s, msg_id => %s, vt => 0)", [q, msg_id])
    assert [(r[0], r[1]) for r in read(db, q)] == [(msg_id, 2)]


def test_set_vt_of_unknown_id_returns_nothing(db, q):
    assert rows(db, "SELECT * FROM pgmq.set_vt(queue_name => %s, msg_id => 1, vt => 5)", [q]) == []


# -- metrics ------------------------------------------------------------------


def metrics(db: psycopg.Connection, queue: str) -> dict:
    cur = db.cursor(row_factory=psycopg.rows.dict_row)
    return cur.execute(
        "SELECT *, now() AS now FROM pgmq.metrics(queue_name => %s)", [queue]
    ).fetchone()


def test_metrics_of_an_empty_queue(db, q):
    m = metrics(db, q)
    assert m["queue_name"] == q
    assert (m["queue_length"], m["queue_visible_length"], m["total_messages"]) == (0, 0, 0)
    assert m["newest_msg_age_sec"] is None and m["oldest_msg_age_sec"] is None
    assert m["default_partition_length"] is None
    assert m["scrape_time"] == m["now"]


def test_metrics_counts_lengths_ages_and_all_time_total(db, q):
    ids = [send(db, q, n) for n in range(4)]
    db.execute("SELECT * FROM pgmq.send(queue_name => %s, msg => '9', delay => 3600)", [q])
    read(db, q, vt=3600, qty=1)
    db.execute(
        psycopg.sql.SQL(
            "UPDATE pgmq.{} SET enqueued_at = now() - interval '100 seconds' WHERE msg_id = %s"
        ).format(psycopg.sql.Identifier(f"q_{q}")),
        [ids[0]],
    )
    m = metrics(db, q)
    assert (m["queue_length"], m["queue_visible_length"], m["total_messages"]) == (5, 3, 5)
    assert m["oldest_msg_age_sec"] >= 100
    assert 0 <= m["newest_msg_age_sec"] < 100
    db.execute("SELECT pgmq.delete(queue_name => %s, msg_id => %s)", [q, ids[1]])
    db.execute("SELECT pgmq.archive(queue_name => %s, msg_id => %s)", [q, ids[2]])
    db.execute("SELECT pgmq.purge_queue(queue_name => %s)", [q])
    m = metrics(db, q)
    assert (m["queue_length"], m["total_messages"]) == (0, 5)


def test_metrics_of_a_missing_queue_is_pq002(db, queue_name):
    error = sql_error(db, "SELECT * FROM pgmq.metrics(queue_name => %s)", [queue_name])
    assert error.sqlstate == "PQ002"
    assert queue_name in str(error)


def test_metrics_all_has_one_row_per_queue(db, q, queue_name):
    other = f"{q}_x"
    db.execute("SELECT pgmq.create(queue_name => %s)", [other])
    try:
        send(db, other, 1)
        send(db, other, 2)
        send(db, q, 1)
        cur = db.cursor(row_factory=psycopg.rows.dict_row)
        all_rows = cur.execute("SELECT * FROM pgmq.metrics_all()").fetchall()
        assert len(all_rows) == one(db, "SELECT count(*) FROM pgmq.meta")[0]
        mine = {
            r["queue_name"]: r["queue_length"] for r in all_rows if r["queue_name"] in (q, other)
        }
        assert mine == {q: 1, other: 2}
        result_type = one(
            db, "SELECT pg_get_function_result(%s::regprocedure)", ["pgmq.metrics_all()"]
        )
        assert result_type == ("SETOF pgmq.metrics_result",)
    finally:
        db.execute("SELECT pgmq.drop_queue(queue_name => %s)", [other])


def test_metrics_all_agrees_with_metrics_for_idle_and_counted_queues(db, queue_name):
    """Queues whose tables have no pages (idle) are answered from the catalogue, the
    others are counted, 200 to a statement: both agree with pgmq.metrics, in name order."""
    names = [f"{queue_name}_{n:03d}" for n in range(205)]
    for name in names:
        db.execute("SELECT pgmq.create(queue_name => %s)", [name])
    try:
        for name in names[:201]:  # more than one statement's worth of counted queues
            send(db, name, 1)
        send(db, names[1], 2)
        read(db, names[4], vt=3600)
        db.execute("SELECT pgmq.purge_queue(queue_name => %s)", [names[2]])  # pages, no rows
        db.execute(
            psycopg.sql.SQL("TRUNCATE pgmq.{}").format(psycopg.sql.Identifier(f"q_{names[3]}"))
        )
        cur = db.cursor(row_factory=psycopg.rows.dict_row)
        all_rows = cur.execute("SELECT * FROM pgmq.metrics_all()").fetchall()
        listed = [r[0] for r in rows(db, "SELECT queue_name FROM pgmq.list_queues()")]
        assert [r["queue_name"] for r in all_rows] == listed
        mine = {r["queue_name"]: r for r in all_rows if r["queue_name"] in names}
        figures = ("queue_length", "queue_visible_length", "total_messages")
        assert [mine[n][f] for n in names[1:5] for f in figures] == [
            *(2, 2, 2),  # counted
            *(0, 0, 1),  # purged: counted, total kept
            *(0, 0, 1),  # truncated: idle, total from the sequence
            *(1, 0, 1),  # read: not visible
        ]
        assert [mine[n][f] for f in figures for n in names[201:]] == [0] * 12
        for name in names:
            alone = metrics(db, name)
            got = mine[name]
            assert [got[f] for f in figures] == [alone[f] for f in figures], name
            assert got["default_partition_length"] is alone["default_partition_length"] is None
            for age in ("newest_msg_age_sec", "oldest_msg_age_sec"):
                assert (got[age] is None) == (alone[age] is None), name
                assert got[age] is None or abs(got[age] - alone[age]) <= 1, name
    finally:
        for name in names:
            db.execute("SELECT pgmq.drop_queue(queue_name => %s)", [name])


def test_the_facts_of_many_queues_are_those_of_each_queue_alone(db, queue_name):
    """Past 64 names the sequences come from one pass over pg_sequence: each queue's
    facts (its sequence above all) are what a look-up of that queue alone gives."""
    names = [f"{queue_name}_{n:02d}" for n in range(66)]
    makers = ["create_unlogged", "create_partitioned"] + ["create"] * 64
    for name, maker in zip(names, makers, strict=True):
        db.execute(
            psycopg.sql.SQL("SELECT pgmq.{}(%s)").format(psycopg.sql.Identifier(maker)), [name]
        )
    try:
        for name in names[::7]:
            send(db, name, 1)
        query = "SELECT n, qtable, qoid, seq, spill, idle FROM pgmq._metrics_facts(%s) ORDER BY o"
        together = rows(db, query, [[*names, "missing_one"]])
        alone = [rows(db, query, [[name]])[0] for name in [*names, "missing_one"]]
        assert together == alone
        seqs = [row[3] for row in together]
        assert None not in seqs[:-1] and len(set(seqs[:-1])) == len(names)
        assert together[-1][2:4] == (None, None)  # no table, no sequence
    finally:
        for name in names:
            db.execute("SELECT pgmq.drop_queue(queue_name => %s)", [name])


def test_metrics_result_fields_are_in_pgmq_order(db):
    fields = rows(
        db,
        "SELECT attname FROM pg_attribute WHERE attrelid = 'pgmq.metrics_result'::regclass "
        "AND attnum > 0 ORDER BY attnum",
    )
    assert [f[0] for f in fields] == [
        "queue_name",
        "queue_length",
        "newest_msg_age_sec",
        "oldest_msg_age_sec",
        "total_messages",
        "scrape_time",
        "queue_visible_length",
        "default_partition_length",
    ]
