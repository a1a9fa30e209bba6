"""Keep the frozen migrations and the live SQL in ``django_pgmq/sql/`` in step.

``python -m django_pgmq.sqltools.migrate check`` builds two scratch databases on the
configured server, one from every migration's frozen SQL and one from the live files,
each with a queue of every kind (`EVERY_KIND`), and lists the objects of schema ``pgmq``
that differ (exit 1 when any does): per-queue objects are compared too.

``python -m django_pgmq.sqltools.migrate make "why"`` writes the next migration, carrying
the SQL that takes the migrated schema to the live one: functions, indexes,
constraints and triggers are written for you (with the reverse; a changed function that
a queue's index uses comes with a REINDEX of every such index); a changed table,
column, type or sequence is listed as ``-- BY HAND`` for you to write, and ``check``
(and the test suite) fails until you have.

Both need ``DJANGO_SETTINGS_MODULE`` (the example project's works) and a server on
which the database user may create databases.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import textwrap
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import cast

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo

from . import schema

APP = "django_pgmq"
LIVE_FILE = re.compile(r"^\d\d_\w+\.sql$")

# (drop, create) statements per object, keyed as schema.py keys them.
_DEFINITIONS = """
SELECT format('function pgmq.%s(%s)', p.proname, pg_get_function_identity_arguments(p.oid)),
       format('DROP FUNCTION IF EXISTS %s;', p.oid::regprocedure),
       pg_get_functiondef(p.oid) || E';\\n'
       || coalesce(format(E'COMMENT ON FUNCTION %s IS %L;\\n', p.oid::regprocedure,
                          obj_description(p.oid, 'pg_proc')), ''),
       pg_get_function_result(p.oid) || ' ' || pg_get_function_arguments(p.oid),
       format(CASE WHEN has_function_privilege('public', p.oid, 'EXECUTE')
                   THEN E'GRANT EXECUTE ON FUNCTION %s TO PUBLIC;\\n'
                   ELSE E'REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC;\\n' END, p.oid::regprocedure)
FROM pg_proc p
WHERE p.pronamespace = 'pgmq'::regnamespace AND p.prokind IN ('f', 'p')
UNION ALL
SELECT format('index pgmq.%s', c.relname), format('DROP INDEX IF EXISTS pgmq.%I;', c.relname),
       pg_get_indexdef(c.oid) || E';\\n', '', ''
FROM pg_class c
WHERE c.relnamespace = 'pgmq'::regnamespace AND c.relkind IN ('i', 'I')
  AND NOT EXISTS (SELECT 1 FROM pg_constraint con WHERE con.conindid = c.oid)
UNION ALL
SELECT format('constraint %s on pgmq.%s', con.conname, c.relname),
       format('ALTER TABLE pgmq.%I DROP CONSTRAINT IF EXISTS %I;', c.relname, con.conname),
       format(E'ALTER TABLE pgmq.%I ADD CONSTRAINT %I %s;\\n', c.relname, con.conname,
              pg_get_constraintdef(con.oid)), '', ''
FROM pg_constraint con JOIN pg_class c ON c.oid = con.conrelid
WHERE c.relnamespace = 'pgmq'::regnamespace
UNION ALL
SELECT format('trigger %s on pgmq.%s', t.tgname, c.relname),
       format('DROP TRIGGER IF EXISTS %I ON pgmq.%I;', t.tgname, c.relname),
       pg_get_triggerdef(t.oid) || E';\\n', '', ''
FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
WHERE c.relnamespace = 'pgmq'::regnamespace AND NOT t.tgisinternal
"""


# Queues of every kind, made in both scratch databases before they are compared, so that
# per-queue objects (tables, partitions, indexes on functions, triggers) are compared
# too, and a changed function that a queue's index uses is seen (see `step`).
EVERY_KIND = (
    "SELECT pgmq.create('k_plain')",
    "SELECT pgmq.create_unlogged('k_unlogged')",
    "SELECT pgmq.create_partitioned('k_parted', '10', '100')",
    "SELECT pgmq.create('k_fifo')",
    "SELECT pgmq.create_fifo_index('k_fifo')",
    "SELECT pgmq.create('k_prio')",
    "SELECT pgmq.set_queue_attributes('k_prio', '{\"priorities\": true}')",
    "SELECT pgmq._enable_task_queue('k_tasks')",
    "SELECT pgmq.create('k_notify')",
    "SELECT pgmq.enable_notify_insert('k_notify', 250)",
)

# Functions of pgmq that an index uses, keyed as schema.py keys them: their regprocedure.
_INDEXED_FUNCTIONS = """
SELECT DISTINCT
       format('function pgmq.%s(%s)', p.proname, pg_get_function_identity_arguments(p.oid)),
       p.oid::regprocedure::text
FROM pg_depend d
JOIN pg_proc p ON p.oid = d.refobjid
JOIN pg_class c ON c.oid = d.objid
WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_proc'::regclass
  AND c.relkind IN ('i', 'I') AND p.pronamespace = 'pgmq'::regnamespace
"""

# Every index of an installed database that uses a function whose body changed is rebuilt.
_REINDEX = """-- Indexes that use {fn} (every queue's that has one) are rebuilt for its new body.
DO $reindex$
DECLARE
    ix regclass;
BEGIN
    FOR ix IN
        SELECT d.objid::regclass FROM pg_depend d JOIN pg_class c ON c.oid = d.objid
        WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_proc'::regclass
          AND d.refobjid = '{fn}'::regprocedure AND c.relkind IN ('i', 'I')
    LOOP
        EXECUTE format('REINDEX INDEX %s', ix);
    END LOOP;
END
$reindex$;
"""


def make_every_kind(conn: psycopg.Connection) -> None:
    """Make `EVERY_KIND`'s queues in ``conn``'s database, their wanted indexes built."""
    from django_pgmq import index_builds

    conn.execute("SET pgmq.hot_queues = '0'")  # promotions are run-time state, not schema
    for statement in EVERY_KIND:
        conn.execute(statement)
    conn.commit()
    if conn.execute("SELECT to_regproc('pgmq.pending_indexes') IS NOT NULL").fetchone() == (True,):
        conn.commit()
        conn.autocommit = True
        index_builds.build_on(conn)
        conn.autocommit = False


@dataclass(frozen=True)
class Step:
    """SQL that moves a schema from one state to another, and what it cannot write."""

    sql: str
    by_hand: list[str]


def live_sql() -> list[str]:
    """The live SQL API: the numbered files of ``django_pgmq/sql/`` in order."""
    folder = files(APP).joinpath("sql")
    names = sorted(f.name for f in folder.iterdir() if LIVE_FILE.match(f.name))
    return [folder.joinpath(name).read_text(encoding="utf-8") for name in names]


def frozen_sql() -> list[str]:
    """The SQL every migration of the app runs, in the order ``migrate`` runs them."""
    from django.db.migrations import RunSQL
    from django.db.migrations.loader import MigrationLoader

    loader = MigrationLoader(None, ignore_no_migrations=True)
    (leaf,) = loader.graph.leaf_nodes(APP)
    statements: list[str] = []
    for app, name in loader.graph.forwards_plan(leaf):
        if app != APP:
            continue
        for operation in loader.graph.nodes[app, name].operations:
            if isinstance(operation, RunSQL):
                parts = [operation.sql] if isinstance(operation.sql, str) else operation.sql
                # The app's migrations give SQL text only, never (sql, params) pairs.
                statements.extend(cast("list[str]", parts))
    return statements


def server_conninfo(alias: str | None = None) -> str:
    """A libpq connection string for the server behind a Django database alias."""
    from django.db import connections

    from django_pgmq import conf

    params = connections[alias or conf.database_alias()].get_connection_params()
    keep = {"host", "port", "user", "password", "dbname"}
    return make_conninfo(**{k: v for k, v in params.items() if k in keep and v not in (None, "")})


@contextmanager
def scratch_database(
    conninfo: str, statements: list[str], *, queues: bool = False
) -> Iterator[psycopg.Connection]:
    """A new database on conninfo's server with ``statements`` run in it (and, with
    ``queues``, a queue of every kind made); dropped after."""
    name = f"pgmq_sqlmigrate_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(conninfo, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        try:
            with psycopg.connect(make_conninfo(conninfo, dbname=name)) as conn:
                # Statement order inside the files need not follow dependencies of
                # SQL-language bodies: the catalogue, not the order, is compared.
                conn.execute("SET check_function_bodies = off")
                for text in statements:
                    conn.execute(text.encode())
                conn.commit()
                if queues:
                    make_every_kind(conn)
                yield conn
        finally:
            admin.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))


def compare(conninfo: str) -> list[str]:
    """Objects whose definition after all migrations differs from the live SQL's."""
    with (
        scratch_database(conninfo, frozen_sql(), queues=True) as migrated,
        scratch_database(conninfo, live_sql(), queues=True) as live,
    ):
        return schema.differences(schema.signature(live), schema.signature(migrated))


def _definitions(conn: psycopg.Connection) -> dict[str, tuple[str, str, str, str]]:
    """(drop, create, header, grant) per object; grant: who may run a function, else ''."""
    return {
        key: (drop, create, header, grant)
        for key, drop, create, header, grant in conn.execute(_DEFINITIONS)
    }


def _without_grant(definition: str | None) -> str | None:
    """A signature entry without its last line when that says who may run the function."""
    if definition is None or schema.PUBLIC_EXECUTE not in definition:
        return definition
    return definition.rsplit(schema.PUBLIC_EXECUTE, 1)[0]


def step(old: psycopg.Connection, new: psycopg.Connection) -> Step:
    """The SQL that takes ``old``'s pgmq schema to ``new``'s."""
    old_sig, new_sig = schema.signature(old), schema.signature(new)
    old_defs, new_defs = _definitions(old), _definitions(new)
    indexed: dict[str, str] = dict(old.execute(_INDEXED_FUNCTIONS).fetchall())
    drops, creates, reindexes, by_hand = [], [], [], []
    for key in sorted(old_sig.keys() | new_sig.keys()):
        if old_sig.get(key) == new_sig.get(key):
            continue
        if key not in old_defs and key not in new_defs:
            by_hand.append(key)
            continue
        before, after = old_defs.get(key), new_defs.get(key)
        if before and after and _without_grant(old_sig.get(key)) == _without_grant(new_sig[key]):
            creates.append(after[3])  # only who may run it changed
            continue
        if before and (after is None or after[2] != before[2] or not after[2]):
            drops.append(before[0])
        if after:
            creates.append(after[1] + after[3])
            if key in indexed:  # its body changed: the indexes built with the old one go stale
                reindexes.append(_REINDEX.format(fn=indexed[key]))
    lines = ["SET LOCAL check_function_bodies = off;", *drops, *creates, *reindexes]
    lines += [f"-- BY HAND: {key}" for key in by_hand]
    return Step(sql="\n".join(lines) + "\n", by_hand=by_hand)


def _migrations_dir() -> Path:
    return Path(str(files(f"{APP}.migrations")))


def slug(words: str, longest: int | None = None) -> str:
    """A migration name's words: lower case, underscores, at most ``longest`` characters
    of whole words ('' when nothing is left)."""
    found = re.sub(r"[^a-z0-9]+", "_", words.lower()).strip("_")
    if longest is not None and len(found) > longest:
        found = found[: longest + 1].rsplit("_", 1)[0]
    return found


def _slug(why: str) -> str:
    found = slug(why, 40)
    if not found:
        raise SystemExit('sqlmigrate: say why in a few words, for example: make "faster read"')
    return found


# Every line within ruff's 100 characters whatever the words and the name (up to 45).
MIGRATION_TEMPLATE = '''"""{why}

Written by ``python -m django_pgmq.sqltools.migrate make``. The SQL it runs is frozen,
never edited, in migrations/sql/{name}.sql
and its _reverse.
"""

from django.db import migrations

from django_pgmq.migrations import _frozen


class Migration(migrations.Migration):
    dependencies = [("django_pgmq", "{previous}")]

    operations = [
        migrations.RunSQL(
            sql=_frozen.read("{name}.sql"),
            reverse_sql=_frozen.read("{name}_reverse.sql"),
        )
    ]
'''


def migration_source(why: str, name: str, previous: str) -> str:
    """The Python module of migration ``name`` (after ``previous``), ``why`` its docstring."""
    sentence = textwrap.fill(why.strip().rstrip(".") + ".", width=96)
    return MIGRATION_TEMPLATE.format(why=sentence, name=name, previous=previous)


def make(why: str, conninfo: str) -> Path | None:
    """Write the next migration carrying what the live SQL changed; None when nothing did."""
    words = _slug(why)
    with (
        scratch_database(conninfo, frozen_sql(), queues=True) as migrated,
        scratch_database(conninfo, live_sql(), queues=True) as live,
    ):
        forward, backward = step(migrated, live), step(live, migrated)
    if forward.sql == backward.sql == "SET LOCAL check_function_bodies = off;\n":
        return None
    folder = _migrations_dir()
    numbers = [int(p.name[:4]) for p in folder.glob("[0-9][0-9][0-9][0-9]_*.py")]
    previous = max(folder.glob("[0-9][0-9][0-9][0-9]_*.py")).stem
    name = f"{max(numbers) + 1:04d}_{words}"
    header = f"-- {name}: {why}\n-- Frozen when written; never edit a released migration.\n"
    (folder / "sql" / f"{name}.sql").write_text(header + forward.sql, encoding="utf-8")
    (folder / "sql" / f"{name}_reverse.sql").write_text(header + backward.sql, encoding="utf-8")
    path = folder / f"{name}.py"
    path.write_text(migration_source(why, name, previous), encoding="utf-8")
    for key in forward.by_hand:
        print(f"write by hand in migrations/sql/{name}.sql: {key}", file=sys.stderr)
    return path


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m django_pgmq.sqltools.migrate``."""
    parser = argparse.ArgumentParser(
        prog="python -m django_pgmq.sqltools.migrate", description=__doc__
    )
    parser.add_argument("--database", help="Django database alias (default: PGMQ['DATABASE'])")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("check", help="list objects where the migrations and live SQL differ")
    make_parser = commands.add_parser("make", help="write a migration for the live SQL's changes")
    make_parser.add_argument("why", help="what the change is for, in a few words")
    args = parser.parse_args(argv)
    if not os.environ.get("DJANGO_SETTINGS_MODULE"):
        parser.error("set DJANGO_SETTINGS_MODULE (in this repository: example_project.settings)")

    import django

    django.setup()
    conninfo = server_conninfo(args.database)
    if args.command == "check":
        found = compare(conninfo)
        for line in found:
            print(line)
        print("the migrations produce the live SQL" if not found else f"{len(found)} differ")
        return 1 if found else 0
    path = make(args.why, conninfo)
    if path is None:
        print("nothing to do: the migrations already produce the live SQL")
        return 0
    print(f"wrote {path} and its SQL under {path.parent / 'sql'}")
    remaining = compare(conninfo)
    for line in remaining:
        print(line, file=sys.stderr)
    return 1 if remaining else 0


if __name__ == "__main__":
    sys.exit(main())
