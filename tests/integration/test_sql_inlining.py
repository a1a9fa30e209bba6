"""SQL functions declared no less volatile than their bodies, so PostgreSQL inlines them.

PostgreSQL inlines an SQL function into its caller's plan only when the function's
declared volatility covers its body: one declared IMMUTABLE that calls format() (STABLE)
is never inlined, and its body is then parsed and planned on every call. Up to
migration 0039 the send and read routers' statement builders were such functions.
"""

from __future__ import annotations

import re

import psycopg
import pytest

pytestmark = pytest.mark.usefixtures("django_db_setup")

# Literals, quoted identifiers and comments of an SQL body: what is in them is not a call.
NOT_CODE = re.compile(r"\$(\w*)\$.*?\$\1\$|'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*", re.S)
CALL = re.compile(r"\b(?:(\w+)\.)?(\w+)\s*\(")
RANK = {"i": 0, "s": 1, "v": 2}
WORD = {"i": "IMMUTABLE", "s": "STABLE", "v": "VOLATILE"}
# Calls allowed above the caller's volatility, each with its reason.
ALLOWED = {
    # A size read in a queue figure: the figures' set-returning functions are STABLE on
    # purpose, as PostgreSQL inlines only those into metrics_all()'s plan.
    "pg_relation_size",
}
# (caller, called) pairs allowed above the caller's volatility, each with its reason.
ALLOWED_CALLS = {
    # The kept-statement check of the SQL API's fast paths: a set-returning SQL function
    # is inlined only when not VOLATILE, and inlined it runs in its (volatile) caller's
    # statement; kept_ready, which may PREPARE, runs only when the check fails.
    ("_queue_ops_kept_stmt", "_queue_ops_kept_ready"),
}


@pytest.fixture
def db(pg_connect) -> psycopg.Connection:
    return pg_connect()


def calls_above_declared(db: psycopg.Connection) -> list[str]:
    """Each SQL-language function of pgmq calling a function more volatile than itself."""
    least: dict[tuple[str, str], str] = {}
    for schema, name, volatility in db.execute(
        "SELECT n.nspname, p.proname, p.provolatile FROM pg_proc p"
        " JOIN pg_namespace n ON n.oid = p.pronamespace"
        " WHERE n.nspname IN ('pg_catalog', 'pgmq')"
    ):
        key = (schema, name)
        if key not in least or RANK[volatility] < RANK[least[key]]:
            least[key] = volatility  # the least volatile overload: never a false alarm
    found = []
    for name, declared, body in db.execute(
        "SELECT p.proname, p.provolatile, p.prosrc FROM pg_proc p"
        " JOIN pg_language l ON l.oid = p.prolang"
        " WHERE p.pronamespace = 'pgmq'::regnamespace AND l.lanname = 'sql'"
        " AND p.provolatile <> 'v' ORDER BY 1"
    ):
        for schema, called in CALL.findall(NOT_CODE.sub(" ", body)):
            schemas = [schema.lower()] if schema else ["pg_catalog", "pgmq"]
            volatility = next(
                (least[(s, called.lower())] for s in schemas if (s, called.lower()) in least), "i"
            )
            if (
                RANK[volatility] > RANK[declared]
                and called.lower() not in ALLOWED
                and (name, called.lower()) not in ALLOWED_CALLS
            ):
                found.append(f"pgmq.{name} ({WORD[declared]}) calls {called} ({WORD[volatility]})")
    return sorted(set(found))


def test_no_sql_function_is_declared_less_volatile_than_what_it_calls(db):
    assert calls_above_declared(db) == []


def test_the_check_finds_an_immutable_function_that_calls_format(db):
    db.execute(
        "CREATE FUNCTION pgmq._test_mislabelled(t text) RETURNS text LANGUAGE sql IMMUTABLE"
        " AS $fn$ SELECT format('%I', t) || ' -- now()' $fn$"
    )
    try:
        assert calls_above_declared(db) == [
            "pgmq._test_mislabelled (IMMUTABLE) calls format (STABLE)"
        ]
    finally:
        db.execute("DROP FUNCTION pgmq._test_mislabelled(text)")


@pytest.mark.parametrize(
    "call",
    [
        "pgmq._queue_ops_ids_sql(m.queue_name, 's')",
        "pgmq._queue_ops_sql_for(m.queue_name, 'r', '$9')",
        "pgmq._queue_ops_sql(m.queue_name, 'r')",
        "pgmq._read_sql(m.queue_name, true, '$9')",
        "pgmq._send_sql(m.queue_name)",
        "pgmq._read_pick_sql(m.queue_name, '0', '1', 'NULL')",
        "pgmq._read_claim_sql(m.queue_name, false, '$3', 'SELECT 1')",
        "pgmq._ack_sql(m.queue_name, true)",
        "pgmq._queue_ops_kept_sql(m.queue_name, 'r')",
        "pgmq._queue_ops_kept_prepare_sql(m.queue_name, 'a')",
        "pgmq._message_table_name(m.queue_name, 'q')",
        "pgmq._send_checks_sql(m.queue_name::jsonb)",
    ],
)
def test_the_routers_helpers_are_inlined_into_their_callers_plan(db, call):
    plan = db.execute(f"EXPLAIN (VERBOSE) SELECT {call} FROM pgmq.meta m").fetchall()
    output = " ".join(row[0] for row in plan)
    function = call.split("(")[0] + "("
    assert function not in output, output


def test_the_kept_statement_check_is_inlined_into_the_fast_paths_plan(db):
    """pgmq._queue_ops_kept_stmt, as read, pop, archive and delete call it: no call of its
    own in the plan, only its subquery (a scalar SQL function with one is never inlined)."""
    plan = db.execute(
        "EXPLAIN (VERBOSE) SELECT (SELECT k FROM pgmq._queue_ops_kept_stmt(m.queue_name, 'r') k)"
        " FROM pgmq.meta m"
    ).fetchall()
    output = " ".join(row[0] for row in plan)
    assert "_queue_ops_kept_stmt(" not in output, output
    assert "pg_prepared_statement()" in output, output
