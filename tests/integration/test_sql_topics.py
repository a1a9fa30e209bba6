"""Topic routing (60_topics.sql): patterns, validation, bindings, send_topic, send_batch_topic."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import psycopg
import pytest
from psycopg import sql
from psycopg.types.json import Jsonb


@pytest.fixture
def conn(pg_connect: Callable[..., psycopg.Connection]) -> psycopg.Connection:
    return pg_connect()


@pytest.fixture
def tx_make_queue(tx: psycopg.Connection) -> Callable[[], str]:
    """Create more queues inside the test's transaction."""

    def make() -> str:
        name = f"t_{uuid.uuid4().hex[:16]}"
        tx.execute("SELECT pgmq.create(%s)", [name])
        return name

    return make


@pytest.fixture
def key() -> Callable[[str], str]:
    """Routing keys under a prefix unique to the test, so other bindings never match."""
    prefix = f"k{uuid.uuid4().hex[:12]}"
    return lambda rest="": f"{prefix}.{rest}" if rest else prefix


def bind(conn: psycopg.Connection, pattern: str, queue: str) -> None:
    conn.execute("SELECT pgmq.bind_topic(pattern => %s, queue_name => %s)", [pattern, queue])


def bindings(conn: psycopg.Connection, queue: str) -> list[tuple[str, str]]:
    rows = conn.execute(
        "SELECT pattern, compiled_regex FROM pgmq.list_topic_bindings(queue_name => %s)", [queue]
    ).fetchall()
    return sorted(rows)


def messages(conn: psycopg.Connection, queue: str) -> list[tuple]:
    """(msg_id, message, headers, visible now) of every live message, oldest first."""
    query = sql.SQL(
        "SELECT msg_id, message::text, headers::text, vt <= clock_timestamp() FROM {}"
        " ORDER BY msg_id"
    ).format(sql.Identifier("pgmq", f"q_{queue}"))
    rows = conn.execute(query).fetchall()
    return [(i, json.loads(m), h and json.loads(h), visible) for i, m, h, visible in rows]


def sql_error(conn: psycopg.Connection, query: str, params: list) -> psycopg.Error:
    """The error a statement raises; a savepoint keeps an enclosing transaction usable."""
    with pytest.raises(psycopg.Error) as caught, conn.transaction():
        conn.execute(query, params)
    return caught.value


PATTERNS = ["orders.*", "orders.#", "#.created", "*.created", "orders.created", "a.*.c", "a.#.c"]

# routing key -> the patterns above it matches ('#' spans dots, but needs its dot neighbours).
ROUTES = {
    "orders": [],
    "orders.created": ["#.created", "*.created", "orders.#", "orders.*", "orders.created"],
    "orders.eu.created": ["#.created", "orders.#"],
    "ordersXcreated": [],  # a literal dot matches only a dot
    "orders.createdX": ["orders.#", "orders.*"],
    "created": [],
    "x.y.created": ["#.created"],
    "a.b.c": ["a.#.c", "a.*.c"],
    "a.c": [],
    "a.b.d.c": ["a.#.c"],
}


def test_patterns_route_keys_as_pgmq_does(tx_queue, tx):
    for pattern in PATTERNS:
        bind(tx, pattern, tx_queue)
    for routing_key, expected in ROUTES.items():
        rows = tx.execute(
            "SELECT pattern FROM pgmq.test_routing(routing_key => %s) WHERE queue_name = %s",
            [routing_key, tx_queue],
        ).fetchall()
        assert sorted(p for (p,) in rows) == sorted(expected), routing_key


def test_hash_alone_matches_every_key(tx_queue, tx, key):
    bind(tx, "#", tx_queue)
    for routing_key in (key(), key("a"), key("a.b-c_d.e")):
        rows = tx.execute(
            "SELECT queue_name FROM pgmq.test_routing(%s) WHERE pattern = '#'", [routing_key]
        ).fetchall()
        assert (tx_queue,) in rows


def test_binding_compiles_the_pattern_once_and_is_idempotent(tx_queue, tx):
    bind(tx, "orders.#", tx_queue)
    bind(tx, "orders.#", tx_queue)
    bind(tx, "*.eu", tx_queue)
    assert bindings(tx, tx_queue) == [("*.eu", r"^[^.]+\.eu$"), ("orders.#", r"^orders\..*$")]
    every = tx.execute(
        "SELECT pattern FROM pgmq.list_topic_bindings() WHERE queue_name = %s", [tx_queue]
    ).fetchall()
    assert sorted(every) == [("*.eu",), ("orders.#",)]


def test_unbind_reports_whether_a_binding_went(tx_queue, tx):
    bind(tx, "a.*", tx_queue)
    query = "SELECT pgmq.unbind_topic(pattern => %s, queue_name => %s)"
    assert tx.execute(query, ["a.*", tx_queue]).fetchone() == (True,)
    assert tx.execute(query, ["a.*", tx_queue]).fetchone() == (False,)
    assert bindings(tx, tx_queue) == []


def test_bind_needs_an_existing_queue(conn, queue_name):
    err = sql_error(conn, "SELECT pgmq.bind_topic('a.b', %s)", [queue_name])
    assert err.sqlstate == "PQ002"
    assert err.diag.message_primary.startswith(
        f'Queue "{queue_name}" does not exist. Create the queue first using pgmq.create()'
    )


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "routing_key cannot be NULL or empty"),
        ("", "routing_key cannot be NULL or empty"),
        ("a" * 256, "routing_key length cannot exceed 255 characters, got 256 characters"),
        (
            "a b",
            "routing_key contains invalid characters. Only alphanumeric, dots, hyphens, "
            "and underscores are allowed. Got: a b",
        ),
        ("a.*", "routing_key contains invalid characters."),
        (".a", "routing_key cannot start with a dot. Got: .a"),
        ("a.", "routing_key cannot end with a dot. Got: a."),
        ("a..b", "routing_key cannot contain consecutive dots. Got: a..b"),
    ],
)
def test_invalid_routing_keys_are_refused(conn, value, text):
    err = sql_error(conn, "SELECT pgmq.validate_routing_key(%s)", [value])
    assert err.sqlstate == "PQ004"
    assert err.diag.message_primary.startswith(text)
    err = sql_error(conn, "SELECT pgmq.send_topic(%s, '{}'::jsonb)", [value])
    assert err.diag.message_primary.startswith(text)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("", "pattern cannot be NULL or empty"),
        ("a" * 256, "pattern length cannot exceed 255 characters, got 256 characters"),
        (
            "a!",
            "pattern contains invalid characters. Only alphanumeric, dots, hyphens, "
            "underscores, *, and # are allowed. Got: a!",
        ),
        (".a", "pattern cannot start with a dot. Got: .a"),
        ("a.", "pattern cannot end with a dot. Got: a."),
        ("a..b", "pattern cannot contain consecutive dots. Got: a..b"),
        ("a.**", "pattern cannot contain consecutive stars (**). Use # for multi-segment"),
        ("a.##", "pattern cannot contain consecutive hashes (##). A single # already matches"),
        ("a.*#", "pattern cannot contain adjacent wildcards (*# or #*)."),
        ("#*.a", "pattern cannot contain adjacent wildcards (*# or #*)."),
    ],
)
def test_invalid_patterns_are_refused(conn, queue_name, value, text):
    err = sql_error(conn, "SELECT pgmq.validate_topic_pattern(%s)", [value])
    assert err.sqlstate == "PQ004"
    assert err.diag.message_primary.startswith(text)
    # The pattern is checked before the queue is looked up.
    err = sql_error(conn, "SELECT pgmq.bind_topic(%s, %s)", [value, queue_name])
    assert err.diag.message_primary.startswith(text)


def test_valid_keys_and_patterns_pass(conn):
    row = conn.execute(
        "SELECT pgmq.validate_routing_key('app.user-service.auth_1'),"
        " pgmq.validate_topic_pattern('app.*.#'), pgmq.validate_topic_pattern('#')"
    ).fetchone()
    assert row == (True, True, True)


def test_send_topic_counts_each_matching_queue_once(tx_make_queue, tx, key):
    first, second, other = tx_make_queue(), tx_make_queue(), tx_make_queue()
    bind(tx, key("*"), first)
    bind(tx, key("#"), first)  # a second match on the same queue
    bind(tx, key("eu"), second)
    bind(tx, key("us"), other)
    query = "SELECT pgmq.send_topic(routing_key => %s, msg => %s)"
    assert tx.execute(query, [key("eu"), Jsonb({"n": 1})]).fetchone() == (2,)
    assert tx.execute(query, [key("asia"), Jsonb({"n": 2})]).fetchone() == (1,)
    assert tx.execute(query, [key(), Jsonb({"n": 3})]).fetchone() == (0,)
    assert [m[1] for m in messages(tx, first)] == [{"n": 1}, {"n": 2}]
    assert [m[1] for m in messages(tx, second)] == [{"n": 1}]
    assert messages(tx, other) == []


def test_send_topic_honours_headers_and_delay(tx_queue, tx, key):
    bind(tx, key("#"), tx_queue)
    tx.execute(
        "SELECT pgmq.send_topic(routing_key => %s, msg => %s, headers => %s, delay => %s)",
        [key("a"), Jsonb({"n": 1}), Jsonb({"h": 1}), 60],
    )
    tx.execute(
        "SELECT pgmq.send_topic(routing_key => %s, msg => %s, delay => %s)",
        [key("a"), Jsonb({"n": 2}), 0],
    )
    tx.execute(
        "SELECT pgmq.send_topic(routing_key => %s, msg => %s, headers => %s)",
        [key("a"), Jsonb({"n": 3}), Jsonb({"h": 3})],
    )
    assert [m[1:] for m in messages(tx, tx_queue)] == [
        ({"n": 1}, {"h": 1}, False),
        ({"n": 2}, None, True),
        ({"n": 3}, {"h": 3}, True),
    ]


@pytest.mark.parametrize(
    ("query", "params", "text"),
    [
        ("SELECT pgmq.send_topic(%s, NULL::jsonb)", [], "msg cannot be NULL"),
        ("SELECT pgmq.send_topic(%s, '{}'::jsonb, -1)", [], "delay cannot be negative, got: -1"),
        (
            "SELECT * FROM pgmq.send_batch_topic(%s, ARRAY[]::jsonb[])",
            [],
            "msgs cannot be NULL or empty",
        ),
        (
            "SELECT * FROM pgmq.send_batch_topic("
            "%s, ARRAY['{}']::jsonb[], ARRAY['{}', '{}']::jsonb[])",
            [],
            "headers array length (2) must match msgs array length (1)",
        ),
    ],
)
def test_bad_send_arguments_are_refused_even_without_a_match(conn, key, query, params, text):
    err = sql_error(conn, query, [key("nobody"), *params])
    assert err.sqlstate == "PQ004"
    assert err.diag.message_primary.startswith(text)


def test_send_batch_topic_returns_queue_and_id_per_message(tx_make_queue, tx, key):
    first, second = sorted([tx_make_queue(), tx_make_queue()])
    bind(tx, key("#"), first)
    bind(tx, key("*"), second)
    rows = tx.execute(
        "SELECT queue_name, msg_id FROM pgmq.send_batch_topic(routing_key => %s, msgs => %s)",
        [key("x"), [Jsonb({"n": 1}), Jsonb({"n": 2})]],
    ).fetchall()
    stored = {q: [m[0] for m in messages(tx, q)] for q in (first, second)}
    assert rows == [(first, i) for i in stored[first]] + [(second, i) for i in stored[second]]
    assert [m[1] for m in messages(tx, second)] == [{"n": 1}, {"n": 2}]


# Each send_batch_topic form: its arguments, whether messages are visible at once,
# whether they carry headers.
BATCH_FORMS = [
    ("msgs => %(msgs)s", True, False),
    ("msgs => %(msgs)s, headers => %(headers)s", True, True),
    ("msgs => %(msgs)s, delay => 60", False, False),
    ("msgs => %(msgs)s, delay => %(later)s", False, False),
    ("msgs => %(msgs)s, headers => %(headers)s, delay => 60", False, True),
    ("msgs => %(msgs)s, headers => %(headers)s, delay => %(later)s", False, True),
]


def test_every_send_batch_topic_form(tx_queue, tx, key):
    bind(tx, key("#"), tx_queue)
    params = {
        "key": key("b"),
        "msgs": [Jsonb({"n": 1}), Jsonb({"n": 2})],
        "headers": [Jsonb({"h": 1}), Jsonb({"h": 2})],
        "later": datetime.now(UTC) + timedelta(minutes=5),
    }
    for args, visible, with_headers in BATCH_FORMS:
        tx.execute("SELECT pgmq.purge_queue(%s)", [tx_queue])
        query = (
            "SELECT queue_name, msg_id FROM pgmq.send_batch_topic(routing_key => %(key)s, "
            + args
            + ")"
        )
        rows = tx.execute(query, params).fetchall()
        stored = messages(tx, tx_queue)
        assert rows == [(tx_queue, m[0]) for m in stored], args
        headers = [{"h": 1}, {"h": 2}] if with_headers else [None, None]
        assert [m[1:] for m in stored] == [
            ({"n": 1}, headers[0], visible),
            ({"n": 2}, headers[1], visible),
        ], args


def test_dropping_a_queue_removes_its_bindings(tx_queue, tx, key):
    bind(tx, key("#"), tx_queue)
    tx.execute("SELECT pgmq.drop_queue(%s)", [tx_queue])
    assert bindings(tx, tx_queue) == []
    assert tx.execute("SELECT pgmq.send_topic(%s, '{}'::jsonb)", [key("x")]).fetchone() == (0,)


def test_pgmq_python_client_routes_through_topics(queue, pg_dsn, key):
    from pgmq import PGMQueue
    from psycopg_pool import ConnectionPool

    with ConnectionPool(pg_dsn, min_size=1, max_size=2) as pool:
        client = PGMQueue(pool=pool, init_extension=False)
        client.bind_topic(key("#"), queue)
        assert client.send_topic(key("a"), {"n": 1}, headers={"h": 1}) == 1
        assert len(client.send_batch_topic(key("a"), [{"n": 2}, {"n": 3}])) == 2
        message = client.read(queue, vt=30)
        assert (message.message, message.headers) == ({"n": 1}, {"h": 1})


# Topic sends and a target queue's delivery_delay: the forms that give no delay (or an
# integer 0, "none given") and what each queue's copy gets.
NO_DELAY_FORMS = [
    "SELECT pgmq.send_topic(routing_key => %(key)s, msg => %(msg)s)",
    "SELECT pgmq.send_topic(routing_key => %(key)s, msg => %(msg)s, headers => %(header)s)",
    "SELECT pgmq.send_topic(routing_key => %(key)s, msg => %(msg)s, delay => 0)",
    "SELECT pgmq.send_topic(routing_key => %(key)s, msg => %(msg)s, headers => %(header)s,"
    " delay => 0)",
    "SELECT * FROM pgmq.send_batch_topic(routing_key => %(key)s, msgs => %(msgs)s)",
    "SELECT * FROM pgmq.send_batch_topic(routing_key => %(key)s, msgs => %(msgs)s,"
    " headers => %(headers)s)",
    "SELECT * FROM pgmq.send_batch_topic(routing_key => %(key)s, msgs => %(msgs)s, delay => 0)",
    "SELECT * FROM pgmq.send_batch_topic(routing_key => %(key)s, msgs => %(msgs)s,"
    " headers => %(headers)s, delay => 0)",
]
EXPLICIT_FORMS = [
    "SELECT * FROM pgmq.send_batch_topic(routing_key => %(key)s, msgs => %(msgs)s,"
    " delay => %(at)s)",
    "SELECT * FROM pgmq.send_batch_topic(routing_key => %(key)s, msgs => %(msgs)s,"
    " headers => %(headers)s, delay => %(at)s)",
]


def delays(conn: psycopg.Connection, queue: str) -> list[str]:
    """Of each live message, oldest first: "visible", "600 s" (visible in 590 to 600 s)
    or "other"."""
    query = sql.SQL(
        "SELECT CASE WHEN vt <= clock_timestamp() THEN 'visible'"
        " WHEN vt BETWEEN clock_timestamp() + interval '590 s'"
        " AND clock_timestamp() + interval '600 s' THEN '600 s' ELSE 'other' END"
        " FROM {} ORDER BY msg_id"
    ).format(sql.Identifier("pgmq", f"q_{queue}"))
    return [r[0] for r in conn.execute(query)]


def topic_params(key: Callable[[str], str], at: datetime) -> dict:
    return {
        "key": key("d"),
        "msg": Jsonb({"n": 1}),
        "header": Jsonb({"h": 1}),
        "msgs": [Jsonb({"n": 1}), Jsonb({"n": 2})],
        "headers": [Jsonb({"h": 1}), Jsonb({"h": 2})],
        "at": at,
    }


@pytest.mark.parametrize("form", NO_DELAY_FORMS)
def test_a_topic_send_without_a_delay_takes_each_queues_delivery_delay(
    tx_make_queue, tx, key, form
):
    delayed, plain = tx_make_queue(), tx_make_queue()
    tx.execute("SELECT pgmq.set_queue_attributes(%s, '{\"delivery_delay\": 600}')", [delayed])
    bind(tx, key("#"), delayed)
    bind(tx, key("#"), plain)
    tx.execute(form, topic_params(key, datetime.now(UTC)))
    sent = len(delays(tx, plain))
    assert sent in (1, 2)
    assert delays(tx, delayed) == ["600 s"] * sent
    assert delays(tx, plain) == ["visible"] * sent


@pytest.mark.parametrize("form", EXPLICIT_FORMS)
def test_a_topic_send_with_a_timestamp_keeps_it_on_every_queue(tx_make_queue, tx, key, form):
    delayed, plain = tx_make_queue(), tx_make_queue()
    tx.execute("SELECT pgmq.set_queue_attributes(%s, '{\"delivery_delay\": 600}')", [delayed])
    bind(tx, key("#"), delayed)
    bind(tx, key("#"), plain)
    at = datetime.now(UTC) - timedelta(seconds=1)  # explicit, and already past
    tx.execute(form, topic_params(key, at))
    for queue in (delayed, plain):
        assert delays(tx, queue) == ["visible", "visible"]


def test_pgmq_python_client_topic_sends_take_the_delivery_delay(manager, queue_name, pg_dsn, key):
    from pgmq import PGMQueue
    from psycopg_pool import ConnectionPool

    manager.create_queue(queue_name)
    try:
        manager.set_queue_attributes(queue_name, delivery_delay=600)
        with ConnectionPool(pg_dsn, min_size=1, max_size=2) as pool:
            client = PGMQueue(pool=pool, init_extension=False)
            client.bind_topic(key("#"), queue_name)
            assert client.send_topic(key("a"), {"n": 1}) == 1
            assert client.send_topic(key("a"), {"n": 2}, headers={"h": 2}) == 1
            assert len(client.send_batch_topic(key("a"), [{"n": 3}, {"n": 4}])) == 2
            assert client.read(queue_name, vt=30) is None
            with pool.connection() as conn:
                assert delays(conn, queue_name) == ["600 s"] * 4
    finally:
        manager.drop_queue(queue_name)
