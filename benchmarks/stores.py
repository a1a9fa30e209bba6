"""The three scratch databases of a run and what the harness does to them.

``ours`` is migrated with django-pgmq, ``pgmq`` gets pgmq's SQL from the
``pgmq`` wheel (loaded at run time; nothing of it is in this repository),
``raw`` holds a bare table. Each run of a phase starts from a fresh queue.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from importlib.resources import files
from typing import Any

import psycopg

from .server import REPO, Server
from .sqlfile import statement, statements

QUEUE = "bench"
STORE_KEYS = ("ours", "pgmq", "raw")


def django_env(server: Server, dbname: str, **extra: str) -> dict[str, str]:
    """Environment for a Django process of the example project on ``dbname``."""
    return django_env_for(server.database_url(dbname), **extra)


def django_env_for(database_url: str, **extra: str) -> dict[str, str]:
    """Environment for a Django process of the example project on ``database_url``."""
    env = dict(os.environ)
    env.update(
        DATABASE_URL=database_url,
        DJANGO_SETTINGS_MODULE="example_project.settings",
        DJANGO_DEBUG="0",
        PYTHONUNBUFFERED="1",
        **extra,
    )
    return env


@dataclass
class Store:
    """One scratch database: how to install it, reset its queue and measure it."""

    key: str
    server: Server
    dbname: str
    conn: psycopg.Connection | None = field(default=None, repr=False)

    @property
    def schema(self) -> str:
        return "raw" if self.key == "raw" else "pgmq"

    @property
    def sqlfile(self) -> str:
        return "raw.sql" if self.key == "raw" else "fn.sql"

    @property
    def channel(self) -> str:
        """The channel an insert notifies."""
        return "raw_bench" if self.key == "raw" else f"pgmq.q_{QUEUE}.INSERT"

    def conninfo(self, app: str) -> dict[str, Any]:
        return self.server.conninfo(self.dbname, app)

    # -- setup -------------------------------------------------------------

    def install(self) -> None:
        """Create the database and install what it needs."""
        self.server.create_database(self.dbname)
        if self.key == "ours":
            self._migrate()
        self.conn = self.server.admin(self.dbname)
        if self.key == "pgmq":
            self.conn.execute(pgmq_sql())
        self._try_stat_statements()

    def _migrate(self) -> None:
        migrate(django_env(self.server, self.dbname))

    def _try_stat_statements(self) -> None:
        libs = self.conn.execute("SHOW shared_preload_libraries").fetchone()[0]
        if "pg_stat_statements" in libs:
            self.conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    # -- per run -------------------------------------------------------------

    def run(self, filename: str, name: str, params: dict | None = None) -> list[tuple]:
        """Run a named statement on the admin connection; its rows."""
        query = statement(
            filename, name, schema=self.schema, queue_table=f"q_{QUEUE}", archive_table=f"a_{QUEUE}"
        )
        cur = self.conn.execute(query, params if params is not None else {})
        return cur.fetchall() if cur.description else []

    def reset(self) -> None:
        """A fresh, empty queue (and archive)."""
        if self.key == "raw":
            self.conn.execute(statements("raw.sql")["create"])
        else:
            self.run("fn.sql", "drop", {"queue": QUEUE})
            self.run("fn.sql", "create", {"queue": QUEUE})

    def prefill(self, count: int, message: str) -> None:
        """``count`` visible messages, vacuumed and analysed so every target starts alike."""
        self.run("admin.sql", "prefill", {"n": count, "msg": message})
        self.run("admin.sql", "vacuum", None)

    def enable_notify(self) -> None:
        """Notify on every insert (throttle 0); the raw table's sender notifies itself."""
        if self.key != "raw":
            self.run("fn.sql", "enable_notify", {"queue": QUEUE})

    def depth(self, conn: psycopg.Connection) -> int:
        """Messages in the queue, counted on ``conn`` (the monitor's own connection)."""
        query = statement("admin.sql", "depth", schema=self.schema, queue_table=f"q_{QUEUE}")
        return int(conn.execute(query).fetchone()[0])

    def archived(self, start: float | None = None, stop: float | None = None) -> dict:
        """Messages archived (in a window), with enqueue-to-archive latency p50/p99 in seconds."""
        if start is None:
            count, p50, p99 = self.run("admin.sql", "archived_all")[0]
        else:
            params = {"start": start, "stop": stop}
            count, p50, p99 = self.run("admin.sql", "archived_between", params)[0]
        return {"count": int(count), "p50": p50, "p99": p99}

    def table_stats(self) -> dict[str, dict]:
        """pg_stat_user_tables figures and sizes of the queue and archive tables."""
        self.run("admin.sql", "clear_stats_snapshot")
        rows = self.run(
            "admin.sql",
            "table_stats",
            {"schema": self.schema, "tables": [f"q_{QUEUE}", f"a_{QUEUE}"]},
        )
        keys = (
            "ins",
            "upd",
            "hot_upd",
            "del",
            "live",
            "dead",
            "table_bytes",
            "index_bytes",
            "autovacuums",
            "vacuums",
        )
        return {row[0][:1]: dict(zip(keys, row[1:], strict=True)) for row in rows}

    def settled_stats(self, timeout: float = 5.0) -> dict[str, dict]:
        """Table stats once the benchmark's backends have exited (a backend flushes its
        counters when it ends; until then they may be held back)."""
        deadline = time.monotonic() + timeout
        while self.backends("bench-%") and time.monotonic() < deadline:
            time.sleep(0.05)
        return self.table_stats()

    def wal_lsn(self) -> int:
        """The server's WAL position in bytes (server-wide: other databases' writes count too)."""
        hi, lo = self.run("admin.sql", "wal_lsn")[0][0].split("/")
        return (int(hi, 16) << 32) + int(lo, 16)

    def server_pids(self) -> list[int]:
        """Backends of the benchmark's clients and the server's own processes."""
        return [row[0] for row in self.run("admin.sql", "server_pids")]

    def stat_statements(self, reset: bool = False, limit: int = 6) -> list[dict]:
        """The costliest statements of this database since the last reset (pg_stat_statements)."""
        if not self.run("admin.sql", "stat_statements_available")[0][0]:
            return []
        if reset:
            self.run("admin.sql", "stat_statements_reset")
            return []
        rows = self.run("admin.sql", "stat_statements_top", {"limit": limit})
        keys = ("calls", "total_ms", "mean_ms", "rows", "query")
        return [dict(zip(keys, row, strict=True)) for row in rows]

    def backends(self, app: str) -> int:
        """Connections to this database with application name ``app``."""
        return int(self.run("admin.sql", "bench_backends", {"name": app})[0][0])


def migrate(env: dict[str, str]) -> None:
    """``manage.py migrate django_pgmq`` in the environment ``env`` (see django_env)."""
    done = subprocess.run(
        [sys.executable, str(REPO / "manage.py"), "migrate", "django_pgmq", "--noinput"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode:
        raise RuntimeError(f"manage.py migrate failed:\n{done.stdout}\n{done.stderr}")


def pgmq_sql() -> str:
    """pgmq's own SQL, from the ``pgmq`` wheel installed for the tests (never copied here)."""
    return files("pgmq").joinpath("sql", "pgmq.sql").read_text(encoding="utf-8")


def install_all(server: Server, prefix: str) -> dict[str, Store]:
    """Create and install the three scratch databases."""
    stores = {}
    for key in STORE_KEYS:
        store = Store(key, server, f"{prefix}{key}")
        store.install()
        stores[key] = store
    return stores
