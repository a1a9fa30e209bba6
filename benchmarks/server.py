"""The PostgreSQL server of a run: the embedded one or a DSN, and its scratch databases."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

from .sqlfile import statement

REPO = Path(__file__).resolve().parent.parent
KEEP_PARAMS = ("host", "port", "user", "password", "dbname")
# Settings that shape the figures; recorded with every run.
SETTINGS = [
    "shared_buffers",
    "synchronous_commit",
    "fsync",
    "wal_level",
    "full_page_writes",
    "wal_compression",
    "max_wal_size",
    "checkpoint_timeout",
    "autovacuum",
    "autovacuum_naptime",
    "autovacuum_vacuum_scale_factor",
    "autovacuum_vacuum_insert_scale_factor",
    "work_mem",
    "max_connections",
    "jit",
    "huge_pages",
    "shared_preload_libraries",
    "plan_cache_mode",
]


@dataclass
class Server:
    """Connection parameters of the server (``dbname`` is a maintenance database)."""

    params: dict[str, Any]
    source: str
    created: list[str] = field(default_factory=list)

    def conninfo(self, dbname: str, app: str = "bench") -> dict[str, Any]:
        """psycopg keyword arguments for ``dbname``, tagged with an application name."""
        return {**self.params, "dbname": dbname, "application_name": app}

    def database_url(self, dbname: str) -> str:
        """A DATABASE_URL for Django (manage.py, the Python worker) on ``dbname``."""
        p = self.params
        host = quote(str(p.get("host") or "localhost"), safe="")
        password = f":{quote(str(p['password']), safe='')}" if p.get("password") else ""
        port = f":{p['port']}" if p.get("port") else ""
        user = quote(str(p.get("user") or "postgres"), safe="")
        return f"postgres://{user}{password}@{host}{port}/{dbname}"

    def admin(self, dbname: str | None = None) -> psycopg.Connection:
        """An autocommit connection for the harness itself."""
        return psycopg.connect(**self.conninfo(dbname or self.params["dbname"]), autocommit=True)

    def create_database(self, name: str) -> None:
        """A fresh database (dropped first if a crashed run left it)."""
        with self.admin() as conn:
            self._drop(conn, name)
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        self.created.append(name)

    def drop_created(self) -> None:
        """Drop the databases this run created."""
        with self.admin() as conn:
            for name in self.created:
                with contextlib.suppress(psycopg.Error):
                    self._drop(conn, name)
        self.created.clear()

    @staticmethod
    def _drop(conn: psycopg.Connection, name: str) -> None:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )

    def describe(self) -> dict[str, Any]:
        """Version and key settings, for the report."""
        with self.admin() as conn:
            short, full = conn.execute(statement("admin.sql", "server_version")).fetchone()
            rows = conn.execute(statement("admin.sql", "server_settings"), {"names": SETTINGS})
            settings = dict(rows.fetchall())
        return {"version": short, "version_full": full, "source": self.source, "settings": settings}


def resolve(dsn: str | None, data_dir: str | None) -> Server:
    """``--dsn`` (or DATABASE_URL), else the embedded server in ``data_dir``."""
    dsn = dsn or os.environ.get("DATABASE_URL")
    if dsn:
        params = {k: v for k, v in conninfo_to_dict(dsn).items() if k in KEEP_PARAMS}
        params.setdefault("dbname", "postgres")
        return Server(params, "dsn")
    from django_pgmq import embedded

    folder = data_dir or os.environ.get("PGMQ_EMBEDDED_DIR") or str(REPO / ".pgdata" / "data")
    params = embedded.connection_params(folder, "postgres")
    return Server(params, f"embedded ({folder})")
