"""The release squash (``python -m django_pgmq.sqltools.squash``), on copies of the
migrations package, never on the real one.

A copy (a package of its own, named by ``MIGRATION_MODULES`` in a settings module
beside it) gets four development migrations after today's head: SQL, a Django
operation, then two of SQL that define the same function twice. A second copy of it is
squashed by the tool over those four: one migration in the same order, verified
against what it replaces, its redundant definition left out. Then ``migrate`` with
the squashed copy: a fresh install, a database with all four applied by the first
copy (already at the squash), and one with only some (refused in one line, nothing
changed). The tests run the same before and after a release squashed the real package.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import uuid
from pathlib import Path

import pytest

from django_pgmq.sqltools import migrate as sqlmigrate
from django_pgmq.sqltools import schema as sqlschema
from django_pgmq.sqltools import squash as sqlsquash
from tests.integration.test_migrations import applied
from tests.scratch import MIGRATIONS, ROOT, Scratch

pytestmark = pytest.mark.slow

APP = "django_pgmq"
HEAD = max(p.stem for p in MIGRATIONS.glob("[0-9][0-9][0-9][0-9]_*.py"))
NUMBER = int(HEAD[:4])
ADDED = [
    f"{NUMBER + 1:04d}_probe_table",
    f"{NUMBER + 2:04d}_probe_state",
    f"{NUMBER + 3:04d}_probe_functions",
    f"{NUMBER + 4:04d}_probe_functions_again",
]
SQUASH = f"{NUMBER + 1:04d}_probes_for_the_squash"
WORDS = "probes for the squash"


def definition(name: str, body: str) -> str:
    """A function definition as ``sqltools.migrate make`` writes one."""
    return (
        f"CREATE OR REPLACE FUNCTION pgmq.{name}(x integer)\n RETURNS integer\n"
        f" LANGUAGE sql\n IMMUTABLE\nAS $function$ {body} $function$\n;\n"
        f"COMMENT ON FUNCTION pgmq.{name}(integer) IS 'probe {body}';\n"
        f"REVOKE EXECUTE ON FUNCTION pgmq.{name}(integer) FROM PUBLIC;\n"
    )


SET = "SET LOCAL check_function_bodies = off;\n"
DROP_BOTH = (
    "DROP FUNCTION IF EXISTS pgmq._probe_a(integer);\n"
    "DROP FUNCTION IF EXISTS pgmq._probe_b(integer);\n"
)
# name -> (forward SQL, reverse SQL); the second migration is Django's.
SQL = {
    ADDED[0]: (
        SET + "CREATE TABLE pgmq.probe_t (id integer);\n",
        "DROP TABLE pgmq.probe_t;\n",
    ),
    ADDED[2]: (
        SET + definition("_probe_a", "SELECT x + 2") + definition("_probe_b", "SELECT x + 1"),
        SET + DROP_BOTH,
    ),
    ADDED[3]: (
        SET
        + definition("_probe_a", "SELECT x + 3")
        + "SELECT pgmq._probe_b(0);\n"
        + definition("_probe_b", "SELECT x + 4"),
        SET + definition("_probe_a", "SELECT x + 2") + definition("_probe_b", "SELECT x + 1"),
    ),
}
SOURCE = '''"""A probe of the squash tool's tests."""

from django.db import migrations

from {package} import _frozen


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "{previous}")]

    operations = [{operations}]
'''


def copy_package(tmp_path: Path, source: Path, source_package: str) -> tuple[Path, dict[str, str]]:
    """A copy of a migrations package and a settings module naming it: (its folder,
    the environment variables that make a subprocess use it)."""
    package = f"squash_copy_{uuid.uuid4().hex[:8]}"
    folder = tmp_path / package
    shutil.copytree(source, folder, ignore=shutil.ignore_patterns("__pycache__"))
    for path in folder.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        path.write_text(
            text.replace(f"from {source_package} import", f"from {package} import"),
            encoding="utf-8",
        )
    (tmp_path / f"{package}_settings.py").write_text(
        f"from example_project.settings import *  # noqa: F403\n\n"
        f'MIGRATION_MODULES = {{"{APP}": "{package}"}}\n',
        encoding="utf-8",
    )
    env = {
        "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)]),
        "DJANGO_SETTINGS_MODULE": f"{package}_settings",
    }
    return folder, env


def add_probes(folder: Path) -> None:
    """Four development migrations after the head of the package in ``folder``."""
    package = folder.name
    previous = HEAD
    for name in ADDED:
        if name in SQL:
            forward, reverse = SQL[name]
            (folder / "sql" / f"{name}.sql").write_text(forward, encoding="utf-8")
            (folder / "sql" / f"{name}_reverse.sql").write_text(reverse, encoding="utf-8")
            operations = (
                f'migrations.RunSQL(sql=_frozen.read("{name}.sql"), '
                f'reverse_sql=_frozen.read("{name}_reverse.sql"))'
            )
        else:
            operations = (
                "migrations.SeparateDatabaseAndState(state_operations=[], database_operations=[])"
            )
        text = SOURCE.format(package=package, previous=previous, operations=operations)
        (folder / f"{name}.py").write_text(text, encoding="utf-8")
        previous = name


def on(scratch: Scratch, env: dict[str, str]) -> Scratch:
    """``scratch`` with a copy's environment."""
    return Scratch(scratch.dsn, {**scratch.env, **env})


@pytest.fixture(scope="module")
def copies(tmp_path_factory, test_database_url) -> dict[str, object]:
    """The copy with the probes (``plain``) and a copy of it squashed by the tool."""
    tmp_path = tmp_path_factory.mktemp("squash")
    plain, plain_env = copy_package(tmp_path, MIGRATIONS, "django_pgmq.migrations")
    add_probes(plain)
    squashed, squashed_env = copy_package(tmp_path, plain, plain.name)
    fingerprint = tmp_path / "fingerprint.json"
    tool = Scratch("", {**os.environ, "DATABASE_URL": test_database_url, **squashed_env})
    done = tool.python(
        "-m", "django_pgmq.sqltools.squash", ADDED[0][:4], ADDED[-1][:4], WORDS,
        "--fingerprint", str(fingerprint),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return {
        "plain": plain,
        "plain_env": plain_env,
        "squashed": squashed,
        "env": squashed_env,
        "out": done.stdout,
        "fingerprint": fingerprint,
        "tmp": tmp_path,
        "database_url": test_database_url,
    }


def migration_of(folder: Path, name: str) -> dict[str, object]:
    """replaces, dependencies and the operations' names of migration ``name`` in ``folder``."""
    tree = ast.parse((folder / f"{name}.py").read_text(encoding="utf-8"))
    found: dict[str, object] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            target = node.targets[0].id
            if target in ("replaces", "dependencies"):
                found[target] = ast.literal_eval(node.value)
            if target == "operations" and isinstance(node.value, ast.List):
                found[target] = [
                    ast.unparse(call.func).removeprefix("migrations.")
                    for call in node.value.elts
                    if isinstance(call, ast.Call)
                ]
    return found


def test_the_tool_replaces_the_range_by_one_migration_in_the_same_order(copies):
    folder = copies["squashed"]
    assert "verified against the migrations it replaces" in copies["out"]
    mine = sorted(p.stem for p in folder.glob("[0-9][0-9][0-9][0-9]_*.py") if p.stem > HEAD)
    assert mine == [SQUASH]
    for old in ADDED:
        assert not list((folder / "sql").glob(f"{old}*")), old
    found = migration_of(folder, SQUASH)
    assert found["replaces"] == [(APP, name) for name in ADDED]
    assert found["dependencies"] == [(APP, HEAD)]
    # the first migration's SQL, the Django operation in its place, then the SQL of
    # the last two as one operation
    assert found["operations"] == ["RunSQL", "SeparateDatabaseAndState", "RunSQL"]
    sql = folder / "sql"
    part1 = (sql / f"{SQUASH}_part1.sql").read_text(encoding="utf-8")
    part2 = (sql / f"{SQUASH}_part2.sql").read_text(encoding="utf-8")
    reverse2 = (sql / f"{SQUASH}_part2_reverse.sql").read_text(encoding="utf-8")
    assert "CREATE TABLE pgmq.probe_t" in part1
    assert re.findall(r"^-- (\d{4}_\w+)$", part2, re.MULTILINE) == ADDED[2:]
    marks = re.findall(r"^-- (\d{4}_\w+) \(reverse\)$", reverse2, re.MULTILINE)
    assert marks == ADDED[2:][::-1]
    # _probe_a's first body is re-created with nothing between that runs or names it:
    # left out. _probe_b's first body is run by a SELECT before it is re-created: kept.
    assert "SELECT x + 2" not in part2 and "SELECT x + 3" in part2
    assert "SELECT x + 1" in part2 and "SELECT x + 4" in part2
    source = (folder / f"{SQUASH}.py").read_text(encoding="utf-8")
    assert "_frozen.read(" in source and "django_pgmq/sql" not in source


def test_the_squashed_copy_has_the_models_state(copies, scratch):
    done = on(scratch, copies["env"]).manage("makemigrations", APP, "--check", "--dry-run")
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_fresh_install_of_the_squash_equals_the_replaced_chain(copies, scratch, other_scratch):
    squashed, plain = on(scratch, copies["env"]), on(other_scratch, copies["plain_env"])
    assert squashed.manage("migrate", "-v", "0").returncode == 0
    assert f"[X] {SQUASH}" in squashed.manage("showmigrations", APP).stdout
    assert plain.manage("migrate", "-v", "0").returncode == 0
    with scratch.connect() as a, other_scratch.connect() as b:
        assert sqlschema.differences(sqlschema.signature(b), sqlschema.signature(a)) == []
        got = a.execute("SELECT pgmq._probe_a(1), pgmq._probe_b(1)").fetchone()
        assert got == (4, 5)


def test_a_database_with_every_replaced_migration_is_already_at_the_squash(copies, scratch):
    assert on(scratch, copies["plain_env"]).manage("migrate", "-v", "0").returncode == 0
    with scratch.connect() as conn:
        before = applied(conn)
    squashed = on(scratch, copies["env"])
    done = squashed.manage("migrate")
    assert done.returncode == 0, done.stderr
    assert "No migrations to apply." in done.stdout
    assert f"[X] {SQUASH}" in squashed.manage("showmigrations", APP).stdout
    with scratch.connect() as conn:
        assert set(applied(conn)) >= set(before)


def test_a_database_with_some_replaced_migrations_is_refused_in_one_line(copies, scratch):
    done = on(scratch, copies["plain_env"]).manage("migrate", APP, ADDED[1], "-v", "0")
    assert done.returncode == 0, done.stderr
    with scratch.connect() as conn:
        before_applied, before_schema = applied(conn), sqlschema.signature(conn)
    done = on(scratch, copies["env"]).manage("migrate")
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(
        f"CommandError: django-pgmq: this database has {ADDED[1]} applied, one of the "
        f"development migrations that {SQUASH} replaces, but not the 2 after it"
    )
    assert lines[0].endswith("Nothing was migrated.")
    with scratch.connect() as conn:
        assert applied(conn) == before_applied
        assert sqlschema.differences(before_schema, sqlschema.signature(conn)) == []


def test_the_tool_writes_nothing_when_the_range_is_not_at_the_head(copies):
    folder, env = copy_package(copies["tmp"], copies["plain"], copies["plain"].name)
    before = sorted(p.name for p in folder.rglob("*"))
    tool = Scratch("", {**os.environ, "DATABASE_URL": copies["database_url"], **env})
    done = tool.python("-m", "django_pgmq.sqltools.squash", ADDED[0], ADDED[2], WORDS)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"squash: {ADDED[2]} is not the head ({ADDED[3]}): squash up to the head"
    ]
    assert sorted(p.name for p in folder.rglob("*")) == before


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (
            "CREATE FUNCTION pgmq._squash_probe() RETURNS int LANGUAGE sql AS 'SELECT 1';\n",
            [
                "forward: unexpected: function pgmq._squash_probe()",
                "forward: unexpected: grants on function pgmq._squash_probe()",
                "reverse: unexpected: function pgmq._squash_probe()",
                "reverse: unexpected: grants on function pgmq._squash_probe()",
            ],
        ),
        ("GRANT SELECT ON pgmq.probe_t TO PUBLIC;\n", ["forward: differs: grants on probe_t"]),
    ],
)
def test_verify_refuses_a_squash_that_is_not_the_same(pg_dsn, extra, expected):
    forward, reverse = SQL[ADDED[0]]
    plan = sqlsquash.Plan(
        name=SQUASH,
        replaced=ADDED[:1],
        dependencies=[(APP, HEAD)],
        before=sqlmigrate.frozen_sql(),
        chain=[(forward, reverse)],
        parts=[sqlsquash.Part(sql=[forward + extra], reverse=[reverse])],
        folder=MIGRATIONS,
        package="django_pgmq.migrations",
    )
    found = sqlsquash.verify(plan, pg_dsn).differences
    assert [line.split("\n")[0] for line in found] == expected


def test_prune_keeps_a_definition_that_something_between_runs_or_names():
    first, again = definition("_p", "SELECT 1"), definition("_p", "SELECT 2")
    other = definition("_q", "SELECT 3")
    assert sqlsquash.prune(first + other + SET + again) == other + SET + again
    for between in ("SELECT pgmq._q(1);\n", "DROP FUNCTION IF EXISTS pgmq._p(integer);\n"):
        text = first + between + again
        assert sqlsquash.prune(text) == text, between
    granted = again.replace("REVOKE EXECUTE", "GRANT EXECUTE").replace("FROM PUBLIC", "TO PUBLIC")
    assert sqlsquash.prune(first + granted) == first + granted


def test_the_fingerprint_is_sorted_and_names_its_squash(copies):
    document = json.loads(copies["fingerprint"].read_text(encoding="utf-8"))
    assert document["squash"] == SQUASH
    assert document["replaces"] == [ADDED[0], ADDED[-1]]
    [(server, objects)] = document["servers"].items()
    assert server.isdigit() and int(server) >= 14
    assert list(objects) == sorted(objects)
    assert "function pgmq._probe_a(x integer)" in objects
    assert "table pgmq.probe_t" in objects
    assert "grants on function pgmq._probe_a(integer)" in objects
