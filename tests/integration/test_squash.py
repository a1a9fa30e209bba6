"""The release squash (``python -m django_pgmq.sqltools.squash``), on a copy of the
migrations package, and the schema a release's squash must keep.

The tool runs on a copy (a package of its own, named by ``MIGRATION_MODULES`` in a
settings module beside it), never on the real package: a small range at the head,
with a Django operation between two runs of SQL, is replaced by one migration that the
tool verified against what it replaces. Then ``migrate`` on the copy: a fresh install,
a database with every replaced migration applied (already at the squash) and a
database with only some applied (refused in one line, nothing changed).
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

from django_pgmq.sqltools import schema as sqlschema
from django_pgmq.sqltools import squash as sqlsquash
from tests.integration.test_migrations import applied
from tests.scratch import MIGRATIONS, ROOT, Scratch

APP = "django_pgmq"
WORDS = "figures limits and builders"


def names(prefix_from: str = "0000") -> list[str]:
    """The app's migrations from ``prefix_from`` on, by name."""
    found = MIGRATIONS.glob("[0-9][0-9][0-9][0-9]_*.py")
    return sorted(p.stem for p in found if p.stem >= prefix_from)


# From 0046 (SQL) over 0047 (Django's model options and fields) to the head (SQL): two
# runs of SQL with Django operations between. After a release squashed 0046 away, this
# module is skipped: its checks then run on the next unreleased range a release squashes.
FIRST, LAST = "0046", names()[-1][:4]
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not any(MIGRATIONS.glob(f"{FIRST}_*.py")),
        reason=f"{FIRST} was squashed by a release: the tool's tests need unreleased migrations",
    ),
]


def copy_package(tmp_path: Path) -> tuple[str, Path, dict[str, str]]:
    """A copy of the migrations package and a settings module naming it: (package,
    its folder, the environment variables that make a subprocess use it)."""
    package = f"squash_copy_{uuid.uuid4().hex[:8]}"
    folder = tmp_path / package
    shutil.copytree(MIGRATIONS, folder, ignore=shutil.ignore_patterns("__pycache__"))
    for path in folder.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        path.write_text(
            text.replace("from django_pgmq.migrations import", f"from {package} import"),
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
    return package, folder, env


def on_copy(scratch: Scratch, env: dict[str, str]) -> Scratch:
    return Scratch(scratch.dsn, {**scratch.env, **env})


@pytest.fixture(scope="module")
def squashed(tmp_path_factory, test_database_url) -> tuple[str, Path, dict[str, str], str]:
    """The copy squashed over FIRST..LAST by the tool: (package, folder, env, tool output)."""
    tmp_path = tmp_path_factory.mktemp("squash")
    package, folder, env = copy_package(tmp_path)
    fingerprint = tmp_path / "fingerprint.json"
    tool = Scratch("", {**os.environ, "DATABASE_URL": test_database_url, **env})
    done = tool.python(
        "-m", "django_pgmq.sqltools.squash", FIRST, LAST, WORDS, "--fingerprint", str(fingerprint)
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return package, folder, env, done.stdout


def migration_of(folder: Path, name: str) -> dict[str, object]:
    """replaces, dependencies and the operations' names of migration ``name`` in ``folder``."""
    tree = ast.parse((folder / f"{name}.py").read_text(encoding="utf-8"))
    found: dict[str, object] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            target = node.targets[0].id
            if target in ("replaces", "dependencies"):
                found[target] = ast.literal_eval(node.value)
            if target == "operations":
                found[target] = [
                    ast.unparse(call.func).removeprefix("migrations.")
                    for call in node.value.elts  # type: ignore[attr-defined]
                ]
    return found


def test_the_tool_replaces_the_range_by_one_migration_in_the_same_order(squashed):
    _package, folder, _env, out = squashed
    replaced = names(FIRST)
    name = f"{FIRST}_figures_limits_and_builders"
    assert "verified against the migrations it replaces" in out
    assert sorted(p.stem for p in folder.glob(f"{FIRST[:2]}*.py") if p.stem >= FIRST) == [name]
    for old in replaced:
        assert not list((folder / "sql").glob(f"{old}*")), old
    found = migration_of(folder, name)
    assert found["replaces"] == [(APP, old) for old in replaced]
    before = migration_of(MIGRATIONS, replaced[0])["dependencies"]
    assert found["dependencies"] == before
    # 0046's SQL, 0047's model options and fields (Django's, in their place), then
    # the SQL of 0048 to 0051 as one operation.
    ops = found["operations"]
    assert ops[0] == "RunSQL" and ops[-1] == "RunSQL" and ops.count("RunSQL") == 2
    assert set(ops[1:-1]) <= {"AlterModelOptions", "AlterField"} and ops[1:-1]
    part1 = (folder / "sql" / f"{name}_part1.sql").read_text(encoding="utf-8")
    part2 = (folder / "sql" / f"{name}_part2.sql").read_text(encoding="utf-8")
    reverse2 = (folder / "sql" / f"{name}_part2_reverse.sql").read_text(encoding="utf-8")
    assert re.findall(r"^-- (00\d\d_\w+)$", part1, re.MULTILINE) == replaced[:1]
    assert re.findall(r"^-- (00\d\d_\w+)$", part2, re.MULTILINE) == replaced[2:]
    marks = re.findall(r"^-- (00\d\d_\w+) \(reverse\)$", reverse2, re.MULTILINE)
    assert marks == replaced[2:][::-1]
    # the squash reads its frozen files, never the live SQL
    source = (folder / f"{name}.py").read_text(encoding="utf-8")
    assert "_frozen.read(" in source and "django_pgmq/sql" not in source


def test_the_squashed_copy_has_the_models_state(squashed, scratch):
    _package, _folder, env, _out = squashed
    done = on_copy(scratch, env).manage("makemigrations", APP, "--check", "--dry-run")
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_fresh_install_of_the_copy_shows_the_squash_applied(squashed, scratch, other_scratch):
    _package, _folder, env, _out = squashed
    copy = on_copy(scratch, env)
    done = copy.manage("migrate", "-v", "0")
    assert done.returncode == 0, done.stderr
    shown = copy.manage("showmigrations", APP).stdout
    assert f"[X] {FIRST}_figures_limits_and_builders" in shown
    # the same schema as the unsquashed package's head
    assert other_scratch.manage("migrate", "-v", "0").returncode == 0
    with scratch.connect() as a, other_scratch.connect() as b:
        assert sqlschema.differences(sqlschema.signature(b), sqlschema.signature(a)) == []


def test_a_database_with_every_replaced_migration_is_already_at_the_squash(squashed, scratch):
    _package, _folder, env, _out = squashed
    assert scratch.manage("migrate", "-v", "0").returncode == 0  # the real package: 0051
    with scratch.connect() as conn:
        before = applied(conn)
    copy = on_copy(scratch, env)
    done = copy.manage("migrate")
    assert done.returncode == 0, done.stderr
    assert "No migrations to apply." in done.stdout
    assert f"[X] {FIRST}_figures_limits_and_builders" in copy.manage("showmigrations", APP).stdout
    with scratch.connect() as conn:
        assert set(applied(conn)) >= set(before)


def test_a_database_with_some_replaced_migrations_is_refused_in_one_line(squashed, scratch):
    _package, _folder, env, _out = squashed
    middle = names(FIRST)[2]  # 0048: 0046 and 0047 applied, not the rest
    previous = names(FIRST)[1]
    assert scratch.manage("migrate", APP, previous, "-v", "0").returncode == 0
    with scratch.connect() as conn:
        before_applied, before_schema = applied(conn), sqlschema.signature(conn)
    done = on_copy(scratch, env).manage("migrate")
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"CommandError: django-pgmq: this database has {previous} applied")
    assert "Nothing was migrated." in lines[0] and middle not in lines[0]
    with scratch.connect() as conn:
        assert applied(conn) == before_applied
        assert sqlschema.differences(before_schema, sqlschema.signature(conn)) == []


def test_the_tool_writes_nothing_when_the_range_is_not_at_the_head(tmp_path, test_database_url):
    _package, folder, env = copy_package(tmp_path)
    before = sorted(p.name for p in folder.rglob("*"))
    tool = Scratch("", {**os.environ, "DATABASE_URL": test_database_url, **env})
    done = tool.python("-m", "django_pgmq.sqltools.squash", FIRST, "0049", WORDS)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"squash: {names(FIRST)[3]} is not the head ({names(FIRST)[-1]}): squash up to the head"
    ]
    assert sorted(p.name for p in folder.rglob("*")) == before


def test_verify_refuses_a_squash_that_is_not_the_same(pg_dsn):
    squash = sqlsquash.plan(names(FIRST)[-2][:4], LAST, WORDS)
    # one function more in the squashed SQL than in what it replaces
    squash.parts[-1].sql.append(
        "CREATE OR REPLACE FUNCTION pgmq._squash_probe() RETURNS int LANGUAGE sql AS 'SELECT 1';"
    )
    found = sqlsquash.verify(squash, pg_dsn)
    assert found.differences == [
        "forward: unexpected: function pgmq._squash_probe()",
        "reverse: unexpected: function pgmq._squash_probe()",
    ]


def test_the_fingerprint_is_sorted_and_names_its_squash(squashed):
    _package, folder, _env, _out = squashed
    document = json.loads((folder.parent / "fingerprint.json").read_text(encoding="utf-8"))
    assert document["squash"] == f"{FIRST}_figures_limits_and_builders"
    assert list(document["objects"]) == sorted(document["objects"])
    assert any(key.startswith("function pgmq.send(") for key in document["objects"])
