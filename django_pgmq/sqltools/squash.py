"""Squash a range of unreleased migrations into one, as a release does.

    python -m django_pgmq.sqltools.squash FIRST LAST "what they do, in a few words"

replaces migrations FIRST..LAST of the app (four-digit prefixes or full names; LAST must
be the head) with ONE migration ``<FIRST's number>_<slug of the words>`` that has
``replaces`` naming every one of them and FIRST's dependencies. Its operations keep
their order: consecutive ``RunSQL`` become one ``RunSQL`` whose SQL is frozen in
``migrations/sql/<name>[_partN].sql`` (the reverse in ``..._reverse.sql``: the replaced
reverses in reverse order); Django's model and state operations are written out in
their place (Django's optimizer merges only runs of them with no SQL in between).

The SQL is made smaller where that is provably the same (`prune`): a function that a
later statement of the same run creates again is not created twice.

Nothing is written before the result is verified on two scratch databases of the
configured server, both at FIRST's predecessor with queues of every kind holding
messages (`populate`): one runs the replaced migrations' SQL, the other the squashed
SQL; their ``pgmq`` schemas (``sqltools.schema``, and every object's grants) and
messages must be equal, and so after each runs its reverse, which must also give back
the schema they started from. Then the replaced ``.py`` files and their frozen SQL are
deleted, and the replaced chain's schema is written as a fingerprint
(``tests/fixtures/last_unsquashed_schema.json``, `FINGERPRINT`) for the test that a
fresh install equals it. The catalogue differs between PostgreSQL versions (18 records
NOT NULL as constraints, 17 adds the MAINTAIN privilege), so the fingerprint is kept
per server major version: the squash writes its server's, and
``python -m django_pgmq.sqltools.squash --fingerprint-of DSN`` adds another server's
from a database at the last replaced migration (``migrate`` there with the commit
before the squash) in which nothing else was made.

Needs ``DJANGO_SETTINGS_MODULE`` (the example project's works; a settings module with
``MIGRATION_MODULES`` squashes a copy of the package) and a server on which the
database user may create databases.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import psycopg

from . import migrate as sqlmigrate
from . import schema

APP = sqlmigrate.APP
ROOT = Path(__file__).resolve().parents[2]
FINGERPRINT = ROOT / "tests" / "fixtures" / "last_unsquashed_schema.json"
_FROZEN_READ = re.compile(r"""_frozen\.read\(\s*["']([^"']+)["']\s*\)""")

# Queues of every kind a database at 0.1.0 (or later) can make, with messages: some
# read, some archived, one dead-lettered, one sent to a topic. The same in both scratch
# databases and in the fingerprint test. (tests/integration/test_schema_upgrade.py's set.)
QUEUE_SETUP = (
    "SELECT pgmq.create('plain')",
    "SELECT pgmq.create_unlogged('unlogged')",
    "SELECT pgmq.create_partitioned('parted', '10', '100')",
    "SELECT pgmq.create('notified')",
    "SELECT pgmq.enable_notify_insert('notified', 250)",
    "SELECT pgmq.create('fifo')",
    "SELECT pgmq.create_fifo_index('fifo')",
    "SELECT pgmq.create('topical')",
    "SELECT pgmq.bind_topic('orders.*', 'topical')",
    "SELECT pgmq.create('Mixed-Case_q')",
)
QUEUES = ("plain", "unlogged", "parted", "notified", "fifo", "topical", "Mixed-Case_q")
SENT_PER_QUEUE = 5


class SquashError(Exception):
    """The squash cannot be made, or is not the same as what it replaces: nothing written."""


@dataclass
class Part:
    """One operation of the squashed migration: SQL (forward, reverse) or a Django one."""

    sql: list[str] = field(default_factory=list)
    reverse: list[str] | None = field(default_factory=list)
    operations: list[Any] = field(default_factory=list)

    @property
    def is_sql(self) -> bool:
        return not self.operations

    def forward(self) -> str:
        """The SQL it runs forward: the replaced SQL in order, pruned (`prune`)."""
        return prune("\n".join(self.sql))

    def backward(self) -> str | None:
        """The SQL it runs back: the replaced reverses in reverse order, pruned."""
        return None if self.reverse is None else prune("\n".join(self.reverse))


@dataclass
class Plan:
    """What the squash replaces and what it writes."""

    name: str
    replaced: list[str]
    dependencies: list[tuple[str, str]]
    before: list[str]  # the SQL of every migration before FIRST, in order
    chain: list[tuple[str, str | None]]  # each replaced RunSQL's (sql, reverse)
    parts: list[Part]
    folder: Path
    package: str


def slug(words: str) -> str:
    """The migration name's words (``sqltools.migrate.slug``, not shortened)."""
    found = sqlmigrate.slug(words)
    if not found:
        raise SquashError('say what the migrations do, for example: "attributes and limits"')
    return found


def _loader() -> Any:
    from django.db.migrations.loader import MigrationLoader

    return MigrationLoader(None, ignore_no_migrations=True)


def _pick(names: list[str], wanted: str) -> str:
    found = [n for n in names if n == wanted or n.startswith(f"{wanted}_") or n[:4] == wanted]
    if len(found) != 1:
        raise SquashError(f"no single migration {wanted!r} in {APP} ({len(found)} match)")
    return found[0]


def _sql_of(operation: Any, migration: str) -> tuple[str, str | None]:
    if operation.hints or operation.state_operations or not isinstance(operation.sql, str):
        raise SquashError(f"{migration}: a RunSQL with hints, state or parameters: squash by hand")
    reverse = operation.reverse_sql
    if reverse is not None and not isinstance(reverse, str):
        raise SquashError(f"{migration}: a RunSQL whose reverse has parameters: squash by hand")
    return operation.sql, reverse


def plan(first: str, last: str, words: str) -> Plan:
    """The squash of ``first``..``last`` (checked: a straight chain ending at the head)."""
    from django.db.migrations import RunPython, RunSQL
    from django.db.migrations.optimizer import MigrationOptimizer

    loader = _loader()
    leaves = loader.graph.leaf_nodes(APP)
    if len(leaves) != 1:
        raise SquashError(f"{APP} has {len(leaves)} heads: merge them first")
    order = [name for app, name in loader.graph.forwards_plan(leaves[0]) if app == APP]
    start, end = order.index(_pick(order, first)), order.index(_pick(order, last))
    if end != len(order) - 1:
        raise SquashError(f"{order[end]} is not the head ({order[-1]}): squash up to the head")
    if end <= start:
        raise SquashError("LAST must come after FIRST")
    replaced = order[start : end + 1]
    migrations = [loader.disk_migrations[APP, name] for name in replaced]
    for migration in migrations:
        if getattr(migration, "replaces", None):
            raise SquashError(f"{migration.name} is itself a squash: start after it")
        if not migration.atomic or migration.run_before:
            raise SquashError(f"{migration.name} is not atomic or has run_before: squash by hand")
    for migration in migrations[1:]:
        outside = [
            d for d in migration.dependencies if d[0] == APP and d[1] not in replaced[:-1]
        ] + [d for d in migration.dependencies if d[0] != APP]
        for dependency in outside:
            if dependency not in migrations[0].dependencies:
                raise SquashError(f"{migration.name} depends on {dependency}, outside the range")

    before: list[str] = []
    for name in order[:start]:
        for operation in loader.disk_migrations[APP, name].operations:
            if isinstance(operation, RunSQL):
                before.append(_sql_of(operation, name)[0])

    chain: list[tuple[str, str | None]] = []
    parts: list[Part] = []
    for migration in migrations:
        for operation in migration.operations:
            if isinstance(operation, RunPython):
                raise SquashError(f"{migration.name}: RunPython cannot be frozen: squash by hand")
            if isinstance(operation, RunSQL):
                forward, reverse = _sql_of(operation, migration.name)
                chain.append((forward, reverse))
                if not parts or not parts[-1].is_sql:
                    parts.append(Part())
                part = parts[-1]
                part.sql.append(f"-- {migration.name}\n{forward}")
                if reverse is None or part.reverse is None:
                    part.reverse = None
                else:
                    part.reverse.insert(0, f"-- {migration.name} (reverse)\n{reverse}")
            else:
                if not parts or parts[-1].is_sql:
                    parts.append(Part(sql=[], reverse=[], operations=[]))
                parts[-1].operations.append(operation)
    for part in parts:
        if not part.is_sql:  # merged only within a run of Django operations
            part.operations = MigrationOptimizer().optimize(part.operations, APP)
    module = loader.migrations_module(APP)[0]
    folder = Path(str(__import__(module, fromlist=["_"]).__path__[0]))
    return Plan(
        name=f"{replaced[0][:4]}_{slug(words)}",
        replaced=replaced,
        dependencies=list(migrations[0].dependencies),
        before=before,
        chain=chain,
        parts=parts,
        folder=folder,
        package=module,
    )


# ---------------------------------------------------------------------------------------
# Smaller SQL where it is provably the same.

# A function definition as sqltools.migrate writes it (pg_get_functiondef's form).
_DEFINITION = re.compile(
    r"^CREATE OR REPLACE FUNCTION (pgmq\.\w+)\([^\n]*\n(?: [^\n]*\n)*"  # its header lines
    r"AS \$function\$.*?\$function\$\n;\n",
    re.MULTILINE | re.DOTALL,
)
# The lines that follow it for the same signature: its comment, who may run it.
_FOLLOWER = re.compile(
    r"COMMENT ON FUNCTION (pgmq\.\w+\([^()]*\)) IS (?:NULL|E?'(?:[^']|'')*');\n"
    r"|(?:REVOKE|GRANT) EXECUTE ON FUNCTION (pgmq\.\w+\([^()]*\)) (?:FROM|TO) PUBLIC;\n"
)
# Statements between two definitions that run no function (nor a body of one), so
# dropping the first definition cannot change what they do; any other is a barrier.
_INERT = re.compile(
    r"SET LOCAL check_function_bodies = off;"
    r"|DROP FUNCTION IF EXISTS pgmq\.\w+\([^()]*\);"
    r"|DROP INDEX IF EXISTS pgmq\.\w+;"
    r"|ALTER TABLE pgmq\.\w+ (?:RENAME TO \w+|RENAME COLUMN \w+ TO \w+|(?:SET|RESET) \([^()]*\));"
    r"|ALTER TYPE pgmq\.\w+ RENAME ATTRIBUTE \w+ TO \w+;"
)


@dataclass
class _Unit:
    """A stretch of SQL text: a function definition with its followers, or anything else."""

    text: str
    name: str = ""  # pgmq.name of a definition
    signature: str = ""  # its regprocedure form, from its followers
    followers: tuple[str, ...] = ()


def _units(text: str) -> list[_Unit]:
    """``text`` cut into definitions (with their comment and grant lines) and the rest."""
    found: list[_Unit] = []
    position = 0
    for match in _DEFINITION.finditer(text):
        if match.start() > position:
            found.append(_Unit(text[position : match.start()]))
        end, signature, followers = match.end(), "", []
        while follower := _FOLLOWER.match(text, end):
            named = follower.group(1) or follower.group(2)
            if named != (signature or named) or not named.startswith(f"{match.group(1)}("):
                break
            signature = named
            followers.append(follower.group(0))
            end = follower.end()
        found.append(_Unit(text[match.start() : end], match.group(1), signature, tuple(followers)))
        position = end
    if position < len(text):
        found.append(_Unit(text[position:]))
    return found


def _runs_nothing(text: str) -> bool:
    """Whether every statement of ``text`` (outside definitions) is `_INERT`."""
    import sqlparse

    for statement in sqlparse.split(text):
        code = "\n".join(
            line for line in statement.splitlines() if not line.lstrip().startswith("--")
        ).strip()
        if code and not _INERT.fullmatch(code):
            return False
    return True


def _mentions(text: str, name: str) -> bool:
    return re.search(rf"\b{re.escape(name.split('.', 1)[1])}\b", text) is not None


def _same_followers(first: _Unit, later: _Unit) -> bool:
    """Whether ``later``'s followers leave what ``first``'s would: the same grants, and a
    comment of its own when ``first`` had one."""
    grants = [line for line in first.followers if not line.startswith("COMMENT")]
    again = [line for line in later.followers if not line.startswith("COMMENT")]
    commented = any(line.startswith("COMMENT") for line in later.followers)
    return grants == again and (commented or len(grants) == len(first.followers))


def prune(text: str) -> str:
    """``text`` (one run of consecutive SQL) without each function definition that a
    later one of the same signature replaces, where provably nothing changes: between
    the two, outside other definitions, only statements that run no function and do not
    mention its name (`_INERT`), and the later one leaves the same grants and a comment.

    CREATE OR REPLACE replaces a function's body, result, attributes and settings; its
    owner and grants stay. With ``check_function_bodies = off`` (every frozen file's
    first line) no definition looks at another. The result is verified all the same.
    """
    units = _units(text)
    inert = [bool(unit.name) or _runs_nothing(unit.text) for unit in units]
    kept = [True] * len(units)
    for i, unit in enumerate(units):
        if not unit.signature:
            continue
        for j in range(i + 1, len(units)):
            later = units[j]
            if later.signature == unit.signature:
                kept[i] = not _same_followers(unit, later)
                break
            if not later.name and (not inert[j] or _mentions(later.text, unit.name)):
                break  # a barrier: the definition stays
    return "".join(unit.text for unit, keep in zip(units, kept, strict=True) if keep)


# ---------------------------------------------------------------------------------------
# Verification on scratch databases.


def populate(conn: psycopg.Connection) -> None:
    """`QUEUE_SETUP`'s queues with messages (works on 0.1.0 and every later schema)."""
    conn.execute("SET pgmq.hot_queues = '0'")  # promotions are run-time state, not schema
    for statement in QUEUE_SETUP:
        conn.execute(statement)
    for queue in QUEUES:
        headers = {"x-group-id": "g1"} if queue == "fifo" else None
        for n in range(SENT_PER_QUEUE):
            conn.execute(
                "SELECT pgmq.send(queue_name => %s, msg => %s, headers => %s)",
                [queue, json.dumps({"queue": queue, "n": n}), json.dumps(headers)],
            )
        conn.execute("SELECT pgmq.read(queue_name => %s, vt => 0, qty => 2)", [queue])
        conn.execute("SELECT pgmq.archive(queue_name => %s, msg_id => 1)", [queue])
    conn.execute("SELECT pgmq.send_topic('orders.new', '{\"topic\": true}')")
    conn.execute("SELECT pgmq._dead_letter('plain', 2, 'plain_dlq', 'failed 5 times')")
    conn.commit()


def contents(conn: psycopg.Connection) -> dict[str, list[Any]]:
    """Every message of every queue and archive: (msg_id, read_ct, message, headers)."""
    found: dict[str, list[Any]] = {}
    for (name,) in conn.execute("SELECT queue_name FROM pgmq.meta ORDER BY 1").fetchall():
        for kind in ("q", "a"):
            (table,) = cast(
                "tuple[str]",
                conn.execute("SELECT pgmq.format_table_name(%s, %s)", [name, kind]).fetchone(),
            )
            query = psycopg.sql.SQL(
                "SELECT msg_id, read_ct, message, headers FROM pgmq.{} ORDER BY msg_id"
            ).format(psycopg.sql.Identifier(table))
            found[f"{kind}_{name}"] = conn.execute(query).fetchall()
    return found


def _run(conn: psycopg.Connection, texts: Sequence[str]) -> None:
    """Each text in its own transaction, as ``migrate`` runs each migration."""
    for text in texts:
        conn.execute(text.encode())
        conn.commit()


# Who may do what to each object of pgmq, by role: schema.py compares only what PUBLIC
# may run, and a grant to a role survives CREATE OR REPLACE (see `prune`).
_GRANTS = """
WITH objects(key, acl) AS (
    SELECT 'grants on function ' || p.oid::regprocedure::text,
           coalesce(p.proacl, acldefault('f', p.proowner))
    FROM pg_proc p WHERE p.pronamespace = 'pgmq'::regnamespace
    UNION ALL
    SELECT 'grants on ' || c.relname,
           coalesce(c.relacl, acldefault((CASE c.relkind WHEN 'S' THEN 's' ELSE 'r' END)::"char",
                                         c.relowner))
    FROM pg_class c WHERE c.relnamespace = 'pgmq'::regnamespace
    UNION ALL
    SELECT 'grants on schema pgmq', coalesce(n.nspacl, acldefault('n', n.nspowner))
    FROM pg_namespace n WHERE n.nspname = 'pgmq'
)
SELECT o.key,
       coalesce((SELECT string_agg(g.grant_, ', ' ORDER BY g.grant_)
                 FROM (SELECT format('%s %s%s',
                                     CASE a.grantee WHEN 0 THEN 'PUBLIC'
                                                    ELSE a.grantee::regrole::text END,
                                     a.privilege_type,
                                     CASE WHEN a.is_grantable THEN ' grantable' END) AS grant_
                       FROM aclexplode(o.acl) a) g), '')
FROM objects o
"""


def described(conn: psycopg.Connection) -> schema.Signature:
    """``conn``'s pgmq schema (``sqltools.schema``) and who may use each object."""
    found = schema.signature(conn)
    found.update(dict(conn.execute(_GRANTS).fetchall()))
    return found


def fingerprint(signature: schema.Signature) -> dict[str, str]:
    """A signature as sorted keys and the SHA-256 of each definition."""
    return {key: hashlib.sha256(signature[key].encode()).hexdigest() for key in sorted(signature)}


@dataclass
class Verified:
    """What the verification found: differences (none: []) and the chain's schema."""

    differences: list[str]
    upgraded: schema.Signature
    server: str  # the server's major version, e.g. "15"


def verify(squash: Plan, conninfo: str) -> Verified:
    """Run the replaced SQL and the squashed SQL from FIRST's predecessor with live
    queues, forward then back; the differences between the two (none: [])."""
    squashed_forward = [part.forward() for part in squash.parts if part.is_sql]
    squashed_reverse = [
        cast("str", part.backward()) for part in reversed(squash.parts) if part.is_sql
    ]
    chain_reverse = [reverse for _forward, reverse in reversed(squash.chain) if reverse]
    problems: list[str] = []
    with ExitStack() as stack:
        old = stack.enter_context(sqlmigrate.scratch_database(conninfo, squash.before))
        new = stack.enter_context(sqlmigrate.scratch_database(conninfo, squash.before))
        server = server_major(old)
        for conn in (old, new):
            populate(conn)
        at_start, kept, kept_new = described(old), contents(old), contents(new)
        _run(old, [forward for forward, _reverse in squash.chain])
        _run(new, squashed_forward)
        upgraded = described(old)
        problems += [f"forward: {d}" for d in schema.differences(upgraded, described(new))]
        if contents(old) != kept:
            problems.append("forward: the replaced migrations changed the messages")
        if contents(new) != kept_new:
            problems.append("forward: the squashed SQL changed the messages")
        if all(reverse is not None for _forward, reverse in squash.chain):
            _run(old, chain_reverse)
            _run(new, squashed_reverse)
            back = described(old)
            problems += [f"reverse: {d}" for d in schema.differences(back, described(new))]
            problems += [
                f"reverse, against the start: {d}" for d in schema.differences(at_start, back)
            ]
            if contents(new) != kept_new:
                problems.append("reverse: the squashed reverse changed the messages")
    return Verified(problems, upgraded, server)


def server_major(conn: psycopg.Connection) -> str:
    """The server's major version as the fingerprint keys it ("15", "18")."""
    return str(conn.info.server_version // 10000)


def record_fingerprint(conn: psycopg.Connection, path: Path = FINGERPRINT) -> str:
    """Add (or replace) ``conn``'s server entry in the fingerprint: ``conn`` is a
    database at the last replaced migration with nothing made in it yet; its queues
    are made here, as in the scratch databases. Returns the server's major version."""
    document = json.loads(path.read_text(encoding="utf-8"))
    populate(conn)
    server = server_major(conn)
    document["servers"][server] = fingerprint(described(conn))
    document["servers"] = dict(sorted(document["servers"].items()))
    path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return server


# ---------------------------------------------------------------------------------------
# Writing.

MIGRATION_TEMPLATE = '''"""{why}

Written by ``python -m django_pgmq.sqltools.squash`` for a release. It replaces the
development migrations from {first}
to {last}:
a database with all of them applied is already here, one with some is refused
(schema_guard.refuse_partly_squashed). Its SQL is frozen in migrations/sql/
({name}*.sql) and is never edited.
"""

{imports}

{own_imports}


class Migration(migrations.Migration):
    replaces = [
{replaces}
    ]

    dependencies = [{dependencies}]

    operations = [
{operations}
    ]
'''


def _file_names(squash: Plan, index: int, count: int) -> tuple[str, str]:
    stem = squash.name if count == 1 else f"{squash.name}_part{index}"
    return f"{stem}.sql", f"{stem}_reverse.sql"


def render(squash: Plan, why: str) -> tuple[str, dict[str, str]]:
    """The squashed migration's source and its frozen SQL files (name -> text)."""
    from django.db.migrations.writer import OperationWriter

    imports = {"from django.db import migrations"}
    sql_parts = [part for part in squash.parts if part.is_sql]
    files: dict[str, str] = {}
    operations: list[str] = []
    header = f"-- {squash.name}: {why}\n-- Frozen when written; never edit a released migration.\n"
    for part in squash.parts:
        if part.is_sql:
            index = sql_parts.index(part) + 1
            forward, reverse = _file_names(squash, index, len(sql_parts))
            files[forward] = header + part.forward()
            reverse_arg = "None"
            backward = part.backward()
            if backward is not None:
                files[reverse] = header + backward
                reverse_arg = f'_frozen.read("{reverse}")'
            operations.append(
                "        migrations.RunSQL(\n"
                f'            sql=_frozen.read("{forward}"),\n'
                f"            reverse_sql={reverse_arg},\n"
                "        ),"
            )
            continue
        for operation in part.operations:
            text, needed = OperationWriter(operation, indentation=2).serialize()
            imports |= needed
            operations.append(text)
    if "from django.db import models" in imports:
        imports -= {"from django.db import models", "from django.db import migrations"}
        imports.add("from django.db import migrations, models")
    ordered = sorted(imports, key=lambda line: line.split()[1])
    plain = [line for line in ordered if line.startswith("import ")]
    rest = [line for line in ordered if not line.startswith("import ")]
    sentence = why.strip().rstrip(".")
    source = MIGRATION_TEMPLATE.format(
        why=sentence[:1].upper() + sentence[1:] + ".",
        own_imports=f"from {squash.package} import _frozen",
        first=squash.replaced[0],
        last=squash.replaced[-1],
        name=squash.name,
        imports="\n".join(plain + rest),
        replaces="\n".join(f'        ("{APP}", "{name}"),' for name in squash.replaced),
        dependencies=", ".join(f'("{app}", "{name}")' for app, name in squash.dependencies),
        operations="\n".join(operations),
    )
    return source, files


def _frozen_files(path: Path) -> list[str]:
    return _FROZEN_READ.findall(path.read_text(encoding="utf-8"))


def write(
    squash: Plan,
    why: str,
    upgraded: schema.Signature | None,
    fingerprint_path: Path = FINGERPRINT,
    server: str = "",
) -> Path:
    """Write the squashed migration and its SQL, delete what it replaces, and (given
    the chain's schema) write the fingerprint; the new migration's path."""
    source, files = render(squash, why)
    doomed: list[Path] = []
    for name in squash.replaced:
        path = squash.folder / f"{name}.py"
        doomed += [path, *(squash.folder / "sql" / f for f in _frozen_files(path))]
    for path in doomed:
        path.unlink(missing_ok=True)
    for filename, text in files.items():
        (squash.folder / "sql" / filename).write_text(text, encoding="utf-8")
    target = squash.folder / f"{squash.name}.py"
    target.write_text(source, encoding="utf-8")
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    if Path(ruff).exists():
        subprocess.run([ruff, "format", "-q", str(target)], check=False)
    if upgraded is not None:
        fingerprint_path.parent.mkdir(parents=True, exist_ok=True)
        document = {
            "squash": squash.name,
            "replaces": [squash.replaced[0], squash.replaced[-1]],
            "queues": list(QUEUE_SETUP),
            "servers": {server: fingerprint(upgraded)},
        }
        fingerprint_path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return target


def squash(
    first: str, last: str, words: str, conninfo: str, *, fingerprint_path: Path | None = FINGERPRINT
) -> Path:
    """Plan, verify, then write the squash of ``first``..``last``; raise SquashError
    (nothing written) when it cannot be made or is not the same."""
    squash_plan = plan(first, last, words)
    found = verify(squash_plan, conninfo)
    if found.differences:
        raise SquashError(
            "the squashed SQL is not the same as the migrations it replaces; nothing written:\n"
            + "\n".join(found.differences)
        )
    if fingerprint_path is None:
        return write(squash_plan, words, None)
    return write(squash_plan, words, found.upgraded, fingerprint_path, found.server)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m django_pgmq.sqltools.squash``."""
    parser = argparse.ArgumentParser(
        prog="python -m django_pgmq.sqltools.squash", description=__doc__.split("\n")[0]
    )
    parser.add_argument("first", nargs="?", help="the first migration replaced (e.g. 0008)")
    parser.add_argument("last", nargs="?", help="the last migration replaced: the head")
    parser.add_argument("words", nargs="?", help="what the migrations do, in a few words: its name")
    parser.add_argument(
        "--fingerprint-of",
        metavar="DSN",
        help="instead of squashing: add this database's server to the fingerprint (a "
        "database at the last replaced migration, with nothing made in it)",
    )
    parser.add_argument("--database", help="Django database alias (default: PGMQ['DATABASE'])")
    parser.add_argument(
        "--fingerprint",
        type=Path,
        default=FINGERPRINT,
        help="where the replaced chain's schema is written (default: %(default)s)",
    )
    parser.add_argument("--no-fingerprint", action="store_true", help="do not write it")
    args = parser.parse_args(argv)
    if args.fingerprint_of:
        with psycopg.connect(args.fingerprint_of, autocommit=True) as conn:
            server = record_fingerprint(conn, args.fingerprint)
        print(f"recorded PostgreSQL {server}'s schema in {args.fingerprint}")
        return 0
    if not (args.first and args.last and args.words):
        parser.error("FIRST, LAST and WORDS are needed to squash")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "example_project.settings")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    try:
        path = squash(
            args.first,
            args.last,
            args.words,
            sqlmigrate.server_conninfo(args.database),
            fingerprint_path=None if args.no_fingerprint else args.fingerprint,
        )
    except SquashError as exc:
        print(f"squash: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {path} and its SQL; verified against the migrations it replaces")
    return 0


if __name__ == "__main__":
    sys.exit(main())
