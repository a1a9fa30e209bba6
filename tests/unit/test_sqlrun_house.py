"""One way to run SQL (docs/internals/running-sql.md): named statements in one registry, sent
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
    "celery_queue_length": "pgmq.metrics' queue_visible_length, for kombu's _size",
    "celery_consumer_count": "a count; the function only filters",
    "prometheus_scrape": "the queue figures' export (dashboard/prometheus.py)",
    "read_by_priority_async_commit": "read_by_priority with asynchronous commit (opt-in)",
    "task_finish_and_start_async_commit": "task_finish_and_start with asynchronous commit",
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


# The internal layer's methods run statements of their own name (docs/internals/
# running-sql.md): ``<method>``, or ``<method>_<variant>`` for a method that picks one
# of several.
INTERNAL_OPS = sorted((PACKAGE / "internal").glob("*_ops.py"))
# (method, statement) pairs that differ, each with its reason; none at present.
RUNS_OTHERWISE: dict[tuple[str, str], str] = {}


def statements_run(source: str, names: set[str]) -> list[tuple[str, str]]:
    """(method, statement) for each statement of ``names`` a function of ``source`` passes
    to ``self._fetch*``: as a string, or through a local variable assigned strings."""
    found = []
    for func in ast.walk(ast.parse(source)):
        if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        assigned: dict[str, list[ast.expr]] = {}
        for node in ast.walk(func):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        assigned.setdefault(target.id, []).append(node.value)
        for node in ast.walk(func):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr.startswith("_fetch")
                and node.args
            ):
                continue
            first = node.args[0]
            values = assigned.get(first.id, []) if isinstance(first, ast.Name) else [first]
            for value in values:
                for const in ast.walk(value):
                    if isinstance(const, ast.Constant) and const.value in names:
                        found.append((func.name, const.value))
    return found


def statement_strings(source: str, names: set[str]) -> set[str]:
    """The strings of ``source`` that name a statement, but for subscript and dict keys
    (``row["dead_letter"]`` is a column)."""
    tree = ast.parse(source)
    keys = {id(n.slice) for n in ast.walk(tree) if isinstance(n, ast.Subscript)}
    keys |= {id(k) for n in ast.walk(tree) if isinstance(n, ast.Dict) for k in n.keys if k}
    return {
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and n.value in names and id(n) not in keys
    }


def _runs_its_own(method: str, statement: str) -> bool:
    return statement == method or statement.startswith(method + "_")


def test_the_method_name_check_finds_each_statement_a_method_runs():
    names = {"a_one", "a_two", "b", "c"}
    source = (
        "class X:\n"
        "    def a(self, d):\n"
        "        query = 'a_two' if d else 'a_one'\n"
        "        return self._fetch_messages(query, {}, None)\n"
        "    def b(self):\n"
        "        return self._fetch('c', {'b': 1}, None)[0]['b']\n"
    )
    assert sorted(statements_run(source, names)) == [("a", "a_one"), ("a", "a_two"), ("b", "c")]
    assert statement_strings(source, names) == {"a_one", "a_two", "c"}
    assert [p for p in statements_run(source, names) if not _runs_its_own(*p)] == [("b", "c")]


def test_an_internal_method_runs_the_statements_of_its_name():
    names = set(sqlrun.statements())
    wrong, unseen = [], []
    for path in INTERNAL_OPS:
        source = path.read_text()
        pairs = statements_run(source, names)
        wrong += [
            f"{path.name}: {method} runs {statement}"
            for method, statement in pairs
            if not _runs_its_own(method, statement) and (method, statement) not in RUNS_OTHERWISE
        ]
        # A statement named where this check does not look (another runner) is a miss.
        unseen += sorted(statement_strings(source, names) - {s for _, s in pairs})
    assert INTERNAL_OPS and wrong == [] and unseen == []
