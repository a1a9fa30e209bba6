"""One way to run SQL (design.md, "Running SQL"): named statements in one registry, sent
through `django_pgmq.sqlrun` only."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from django_pgmq import sqlfiles, sqlrun

PACKAGE = Path(__file__).resolve().parents[2] / "django_pgmq"

# Modules that may send SQL themselves, each for its reason.
ALLOWED = {
    "sqlrun.py": "the runner",
    "embedded.py": "the embedded server's CREATE DATABASE, before django-pgmq exists",
    "index_builds.py": "CREATE INDEX CONCURRENTLY outside a transaction, with its locks",
}
# Whole directories: the frozen migrations, and the SQL developer tooling (sqltools:
# scratch databases, schema signatures, code generation), which nothing at run time imports.
ALLOWED_DIRS = ("migrations", "sqltools")
ALLOWED_STEMS = ("sqlmigrate",)  # the deprecated alias of sqltools.migrate


def _allowed(path: Path) -> bool:
    rel = path.relative_to(PACKAGE)
    if rel.as_posix() in ALLOWED or any(part in ALLOWED_DIRS for part in rel.parts[:-1]):
        return True
    return any(part.startswith(ALLOWED_STEMS) for part in rel.parts)


def direct_sql(source: str) -> list[str]:
    """The calls in ``source`` that send SQL without the runner, as ``line: call``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        attr, owner = node.func.attr, node.func.value
        if attr in ("execute", "executemany"):
            if isinstance(owner, ast.Call) and getattr(owner.func, "id", None) == "super":
                continue  # a management command's BaseCommand.execute
            found.append(f"{node.lineno}: .{attr}(")
        elif attr == "cursor" and not node.args and not node.keywords:
            found.append(f"{node.lineno}: .cursor()")
        elif attr == "raw" and isinstance(owner, ast.Attribute) and owner.attr == "objects":
            found.append(f"{node.lineno}: objects.raw(")
        elif attr == "queries" and getattr(owner, "id", None) == "sqlfiles":
            found.append(f"{node.lineno}: sqlfiles.queries(")
    return sorted(found, key=lambda hit: int(hit.split(":")[0]))


def test_the_house_check_finds_each_way_around_the_runner():
    source = (
        "conn.execute('SELECT 1')\n"
        "cur.executemany(q, rows)\n"
        "with conn.cursor() as cur: pass\n"
        "Result.objects.raw(q)\n"
        "sqlfiles.queries()['send']\n"
        "super().execute(*args)\n"  # not SQL
        "sqlrun.run(conn, 'send', params)\n"
    )
    assert [hit.split(": ")[1] for hit in direct_sql(source)] == [
        ".execute(",
        ".executemany(",
        ".cursor()",
        "objects.raw(",
        "sqlfiles.queries(",
    ]


def test_no_module_outside_the_runner_sends_sql_itself():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if not _allowed(path):
            found += [f"{path.relative_to(PACKAGE)}:{hit}" for hit in direct_sql(path.read_text())]
    assert found == [], "send SQL through django_pgmq.sqlrun (CONTRIBUTING.md)"


def test_every_named_statement_is_in_one_registry():
    registry = sqlrun.statements()
    for filename in sqlrun.FILES:
        for name, text in sqlfiles.parse(sqlfiles.read(filename)):
            assert registry[name] == text
    shipped = {p.name for p in (PACKAGE / "sql").glob("*queries.sql")}
    assert shipped == set(sqlrun.FILES)


def test_a_name_defined_twice_is_an_error():
    files = {"a.sql": [("send", "SELECT 1")], "b.sql": [("read", "SELECT 2"), ("send", "x")]}
    with pytest.raises(sqlrun.DuplicateStatement, match=r"'send' is defined in a\.sql and in b"):
        sqlrun.collect(files)
    with pytest.raises(sqlrun.DuplicateStatement, match=r"in a\.sql and in a\.sql"):
        sqlrun.collect({"a.sql": sqlfiles.parse("-- name: x\nSELECT 1;\n-- name: x\nSELECT 2;")})


def test_an_unknown_name_says_where_it_was_looked_for():
    with pytest.raises(KeyError, match=r"no SQL statement named 'nope' in queries\.sql"):
        sqlrun.text("nope")


# Statements that call one SQL function are named after it (a leading underscore
# dropped); these differ for a reason.
NAMED_OTHERWISE = {
    "send_at": "send with an absolute time",
    "send_batch_at": "send_batch with an absolute time",
    "set_vt_at": "set_vt with an absolute time",
    "send_batch_topic_at": "send_batch_topic with an absolute time",
    "list_queue_topic_bindings": "list_topic_bindings of one queue",
    "celery_queue_length": "pgmq.metrics' queue_length, for kombu",
    "celery_consumer_count": "a count; the function only filters",
    "prometheus_scrape": "the queue figures' export (dashboard/prometheus.py)",
}


def test_a_statement_calling_one_function_is_named_after_it():
    wrong = []
    for name, text in sqlrun.statements().items():
        body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("--"))
        called = set(re.findall(r"pgmq\.(\w+)\s*\(", body))
        if len(called) == 1 and name not in NAMED_OTHERWISE:
            (function,) = called
            if name != function.lstrip("_"):
                wrong.append(f"{name} calls pgmq.{function}")
    assert wrong == []


def test_each_caller_keeps_its_words_for_a_missing_schema():
    import psycopg

    from django_pgmq.contrib.celery import database
    from django_pgmq.errors import FeatureNotAvailable, QueueNotFound

    no_schema = psycopg.errors.InvalidSchemaName('schema "pgmq" does not exist')
    no_function = psycopg.errors.UndefinedFunction("function pgmq.celery_read() does not exist")
    manager = sqlrun.translate(no_schema, "q")
    assert isinstance(manager, FeatureNotAvailable)
    assert "the pgmq SQL API is not installed" in str(manager)
    for exc in (no_schema, no_function):
        celery = sqlrun.translate(exc, "q", database.ERRORS)
        assert isinstance(celery, FeatureNotAvailable)
        assert "the Celery transport's SQL is not installed" in str(celery)
    assert sqlrun.translate(no_function, "q") is None  # the manager re-raises it as it is
    missing = psycopg.errors.UndefinedTable('relation "pgmq.q_q" does not exist')
    for errors in (sqlrun.DEFAULT, database.ERRORS):
        assert isinstance(sqlrun.translate(missing, "q", errors), QueueNotFound)
