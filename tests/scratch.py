"""Scratch databases beside the test database, for tests that run ``manage.py migrate``.

Each one is created on the test server and dropped afterwards, so the shared test
database is never migrated back and forth.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo

ROOT = Path(__file__).resolve().parents[1]
MIGRATIONS = ROOT / "django_pgmq" / "migrations"


@dataclass
class Scratch:
    """An empty database, its libpq DSN, and an environment whose DATABASE_URL names it."""

    dsn: str
    env: dict[str, str]

    def connect(self) -> psycopg.Connection:
        return psycopg.connect(self.dsn, autocommit=True)

    def manage(self, *args: str) -> subprocess.CompletedProcess:
        """Run manage.py against this database."""
        return self.python(str(ROOT / "manage.py"), *args)

    def python(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=180,
        )


@contextmanager
def scratch_database(pg_dsn: str, subprocess_env: dict[str, str]) -> Iterator[Scratch]:
    """Create an empty database on the test server; drop it afterwards."""
    name = f"{os.environ.get('PGMQ_TEST_DB_PREFIX', 'test_')}scratch_{uuid.uuid4().hex[:8]}"
    admin = psycopg.connect(make_conninfo(pg_dsn, dbname="postgres"), autocommit=True)
    admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    url = subprocess_env["DATABASE_URL"].rsplit("/", 1)[0] + "/" + name
    try:
        yield Scratch(make_conninfo(pg_dsn, dbname=name), {**subprocess_env, "DATABASE_URL": url})
    finally:
        admin.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))
        admin.close()


def fake_pgmq_extension(conn: psycopg.Connection) -> None:
    """Record the pgmq extension as installed in ``conn``'s scratch database.

    No pgmq extension is installable here, so its catalogue row is made by hand
    (superuser, in a scratch database that is dropped afterwards).
    """
    conn.execute("SET allow_system_table_mods = on")
    conn.execute(
        "INSERT INTO pg_extension (oid, extname, extowner, extnamespace, extrelocatable, "
        "extversion) SELECT (SELECT max(oid::bigint) + 1 FROM pg_extension)::oid, 'pgmq', "
        "10, 'public'::regnamespace, false, '1.13.0'"
    )
